"""`ragtui diagnose`, `history` and `compare BASE C1 C2` through click, on real run files in a
temp folder: --json of each (strict JSON, nothing a terminal could act on), the text forms,
untrusted text, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.format import printable
from tests.core.diagnosis_builder import case, chunks, claim, write

HOSTILE = "\x1b[31mred\x1b]52;c;Zm9v\x07 [bold]x[/bold] \u00e9"
FULL = ("faithfulness", "context_recall", "context_precision", "answer_relevance")


def s(faith: float, recall: float, precision: float, relevance: float) -> dict[str, float]:
    return dict(zip(FULL, (faith, recall, precision, relevance), strict=True))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("cli") / "runs"
    ok = [claim("Refunds take 5-10 business days.", "SUPPORTED", "refund-1")]
    a = [
        case("q1", s(1, 1, 1, 1), contexts=chunks("refund-1", "refund-2"), claims=ok,
             answer="They need manager approval and are issued as credit.", latency_ms=800),
        case("q2", s(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok, latency_ms=1000),
        case("q3", s(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok, latency_ms=1200),
    ]  # fmt: skip
    b = [
        case("q1", s(0, 0.5, 1, 1), contexts=chunks("billing-7", "refund-2"),
             claims=[claim("Refunds take 5-10 business days.", "UNSUPPORTED", "refund-1"),
                     claim(HOSTILE, "UNSUPPORTED")],
             answer="They need support approval and are paid by card. " + HOSTILE,
             latency_ms=400),
        case("q2", s(0.5, 1, 1, 1), contexts=chunks("refund-1"), claims=ok, latency_ms=500),
        case("q3", s(1, 1, 1, 0.25), contexts=chunks("refund-1"), claims=ok, latency_ms=600),
    ]  # fmt: skip
    write(root, "a", a, day=1, name="baseline")
    write(root, "b", b, day=2, config={"generator": "tiny"}, name=HOSTILE)
    write(root, "c", a, day=3, config={"generator": "same"}, name="same")
    return str(root)


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def json_of(result) -> dict:
    assert result.exit_code == 0, result.output
    assert printable(result.stdout) == result.stdout  # nothing a terminal could act on
    return json.loads(result.stdout)


def test_diagnose_json(folder: str) -> None:
    data = json_of(run("diagnose", "a", "b", folder, "--json"))
    assert (data["a"], data["b"], data["noise_rule"], data["min_drop"]) == (
        "a",
        "b",
        "min_drop",
        0.1,
    )
    faith = next(m for m in data["metrics"] if m["metric"] == "faithfulness")
    assert faith["delta"] == pytest.approx((-1 - 0.5 + 0) / 3)
    assert {c["case_id"]: c["cause"] for c in faith["cases"]} == {
        "q1": "retrieval miss",  # recall fell
        "q2": "ignored context",  # faithfulness fell, recall held, no unsupported claim
    }
    assert faith["by_stage"] == {"generation": 1, "retrieval": 1, "judge": 0, "unattributed": 0}
    rel = next(m for m in data["metrics"] if m["metric"] == "answer_relevance")
    assert [(c["case_id"], c["cause"]) for c in rel["cases"]] == [("q3", "off-intent")]
    assert data["retrieval"]["with_added"] == 1 and data["retrieval"]["unchanged"] == 2
    assert data["claims"]["lost_support"] == 1 and data["claims"]["lost_support_chunk_gone"] == 1
    assert data["claims"]["new_unsupported"] == 1
    assert data["classes"]["faithfulness"]["newly broken"] == 1  # q1: 1 -> 0 (q2: 0.5 passes)
    latency = next(c for c in data["costs"] if c["field"] == "latency_ms")
    assert (latency["mean_a"], latency["mean_b"]) == (1000.0, 500.0)
    assert data["worst"][0]["case_id"] == "q1" and data["worst"][0]["delta"] == -1.0


def test_diagnose_text(folder: str) -> None:
    result = run("diagnose", "a", "b", folder, "--metric", "faithfulness")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "faithfulness -50.0 pts: 2 cases fell — 1 generation, 1 retrieval" in out
    assert "a case fell when it dropped by at least 10 points" in out
    assert "latency: mean 1,000 ms → 500 ms (×0.50)" in out
    assert "q1  faithfulness  100 → 0 (-100.0)  retrieval: retrieval miss" in out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[31mred" in out


def test_diagnose_one_case(folder: str) -> None:
    data = json_of(run("diagnose", "a", "b", folder, "--case", "q1", "--json"))
    assert {(c["mark"], c["id_a"], c["id_b"]) for c in data["retrieval"]["chunks"]} == {
        ("added", None, "billing-7"),
        ("kept", "refund-2", "refund-2"),
        ("removed", "refund-1", None),
    }
    segments = data["answer_diff"]["segments"]
    assert segments[:3] == [
        {"kind": "equal", "text": "They need "},
        {"kind": "removed", "text": "manager "},
        {"kind": "added", "text": "support "},
    ]
    assert any(HOSTILE in seg["text"] for seg in segments)  # literal in the data
    changes = {c["change"]: c for c in data["claims"]["changes"]}
    assert changes["lost support"]["chunk_gone"] is True
    assert changes["new"]["verdict_b"] == "UNSUPPORTED"
    text = run("diagnose", "a", "b", folder, "--case", "q1")
    assert text.exit_code == 0, text.output
    assert "[-manager -]{+support +}" in text.stdout
    assert (
        "lost support  SUPPORTED → UNSUPPORTED; its chunk refund-1 left B's retrieval"
        in text.stdout
    )
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout


def test_history_json_and_text(folder: str) -> None:
    data = json_of(run("history", "b", folder, "--json", "-m", "faithfulness"))
    assert data["baseline_runs"] == ["a"]
    assert {c["case_id"]: c["class"] for c in data["cases"]} == {
        "q1": "newly broken",
        "q2": "stable pass",  # 0.5 passes the default threshold
        "q3": "stable pass",
    }
    based = json_of(
        run("history", "c", folder, "--base", "a", "--json", "--pass", "faithfulness=90")
    )
    assert based["base"] == "a" and based["counts"]["faithfulness"]["stable pass"] == 3
    text = run("history", "b", folder, "--class", "newly broken", "-m", "faithfulness")
    assert text.exit_code == 0, text.output
    assert "q1" in text.stdout and "q3" not in text.stdout and "✓ → ✗" in text.stdout
    assert "pass: the source's threshold, else ≥ 50" in text.stdout.splitlines()
    given = run("history", "b", folder, "--pass", "faithfulness=90", "-m", "faithfulness")
    # the words `diagnose` says its case classes with
    rule = "faithfulness ≥ 90 (--pass), other metrics: the source's threshold, else ≥ 50"
    assert f"pass: {rule}" in given.stdout.splitlines()
    diagnosed = run("diagnose", "a", "b", folder, "--pass", "faithfulness=90")
    assert f"pass: {rule})" in diagnosed.stdout
    bad = run("history", "b", folder, "--class", "broken-ish")
    assert bad.exit_code == 2 and "newly broken" in bad.output


def test_compare_several_candidates_json_and_text(folder: str) -> None:
    data = json_of(run("compare", "a", "b", "c", folder, "--json", "--sort", "faithfulness"))
    assert [c["id"] for c in data["candidates"]] == ["b", "c"]
    assert data["order"] == ["c", "b"]
    assert len(data["cells"]) == 8 and data["adjustment"].startswith("Holm over all")
    cell = next(c for c in data["cells"] if c["candidate"] == "b" and c["metric"] == "faithfulness")
    assert cell["delta"] == pytest.approx(-0.5)
    assert data["folder"] == folder and data["skipped"] == []
    text = run("compare", "a", "b", "c", "-p", folder)
    assert text.exit_code == 0, text.output
    assert "Holm over 8 tests" in text.stdout and "\x1b" not in text.stdout
    # headers are unique abbreviations, explained by a legend; run ids are never cut
    assert "faith = faithfulness" in text.stdout and "ctx rec = context_recall" in text.stdout
    first_words = [line.split()[0] for line in text.stdout.splitlines() if line.strip()]
    assert "b" in first_words and "c" in first_words  # each candidate's id on its own line
    # the old name stays, as an alias: the same table, even for one candidate
    alias = json_of(run("compare-many", "a", "b", folder, "--json"))
    assert [c["id"] for c in alias["candidates"]] == ["b"]
    assert run("compare", "a", "b", "c", folder, "--rerun-values").exit_code == 2
    assert run("compare", "a", "b", folder, "--sort", "faithfulness").exit_code == 2


def test_bad_input_is_a_clear_error(folder: str) -> None:
    unknown = run("diagnose", "a", "b", folder, "--metric", "nope")
    assert unknown.exit_code == 2 and "metric 'nope' is not scored in both runs" in unknown.output
    role = run("diagnose", "a", "b", folder, "--role", "context_recall")
    assert role.exit_code == 2 and "ROLE=METRIC" in role.output
    threshold = run("diagnose", "a", "b", folder, "--pass", "faithfulness=high")
    assert threshold.exit_code == 2 and "METRIC=POINTS" in threshold.output
    assert run("compare-many", "a", folder).exit_code == 2
    missing = run("diagnose", "a", "b", folder, "--case", "nope", "--json")
    assert missing.exit_code == 2 and "no case 'nope'" in missing.output
    assert "Traceback" not in missing.output


def test_commands_are_listed(folder: str) -> None:
    out = run("--help").stdout
    assert "diagnose" in out and "history" in out and "compare-many" in out
    assert Path(folder).is_dir()


def test_the_readme_diagnosis_excerpt_is_what_diagnose_prints(tmp_path: Path) -> None:
    """Each line of the README's `ragtui diagnose baseline bm25` excerpt is a line the command
    prints on the demo (a line cut with "…" in the README: its beginning)."""
    import shutil

    repo = Path(__file__).resolve().parents[2]
    folder = tmp_path / "sample_runs"
    shutil.copytree(repo / "sample_runs", folder, ignore=shutil.ignore_patterns(".ragtui*"))
    text = (repo / "README.md").read_text(encoding="utf-8")
    start = text.index("$ ragtui diagnose baseline bm25\n") + len(
        "$ ragtui diagnose baseline bm25\n"
    )
    excerpt = text[start : text.index("```", start)].rstrip("\n").splitlines()
    result = CliRunner().invoke(cli, ["diagnose", "baseline", "bm25", str(folder)])
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    for line in excerpt:
        head = line.removesuffix("…").rstrip(" ·,")
        assert any(p.startswith(head) for p in printed), (line, printed)


def test_a_chunk_without_an_id_is_listed_by_its_text_not_as_none(tmp_path: Path) -> None:
    from ragtui.core.model import Chunk

    kept = Chunk("c1", "Invoices can be issued in EUR or USD.", None, 1, 0.8)
    extra = Chunk("", "The Starter plan allows 3 members.", None, 2, 0.7)
    write(tmp_path, "a", [case("e1", s(1, 1, 1, 1), contexts=[kept])], day=1)
    write(tmp_path, "b", [case("e1", s(1, 1, 1, 1), contexts=[kept, extra])], day=2)
    out = run("diagnose", "a", "b", str(tmp_path), "--case", "e1")
    assert out.exit_code == 0, out.output
    (line,) = [x for x in out.stdout.splitlines() if "Starter plan" in x]
    assert line.startswith("  +  A#- B#2") and "None" not in line
