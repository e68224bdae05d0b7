"""`ragtui diagnose`, `report` and `history` through click on small hand-made run files: the
per-metric fall rule where A's reruns are identical, report -m against diagnose, history of
reruns of one config, --class and --worst in --json, and a grade that failed on one side.
Expected values worked out by hand from README's Diagnosis section."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragtui.cli import cli
from tests.core.diagnosis_builder import case, chunks, write


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _cached_recall(root: Path) -> str:
    """A has two reruns, identical on context_recall (a cache hit) and different on
    faithfulness; B's recall of y1 is 15 points below A's: a fall by the 10-point rule only."""
    ctx = chunks("d-1", "d-2")
    for r, day in ((0, 1), (1, 2)):
        a = [
            case("y1", {"context_recall": 1.0, "faithfulness": (1.0, 0.9)[r]}, contexts=ctx),
            case("y2", {"context_recall": 0.5, "faithfulness": (0.8, 0.9)[r]}, contexts=ctx),
            case("y3", {"context_recall": 0.7, "faithfulness": (0.6, 0.7)[r]}, contexts=ctx),
        ]
        write(root, f"a{r}", a, day=day, name="A")
    b = [
        case("y1", {"context_recall": 0.85, "faithfulness": 1.0}, contexts=ctx, answer="b1"),
        case("y2", {"context_recall": 0.5, "faithfulness": 0.9}, contexts=ctx, answer="b2"),
        case("y3", {"context_recall": 0.7, "faithfulness": 0.7}, contexts=ctx, answer="b3"),
    ]
    write(root, "b", b, day=3, config={"generator": "b"}, name="B")
    return str(root)


RULE = (
    "context_recall: a case fell when it dropped by at least 10 points (A's reruns are "
    "identical on it: no per-case noise to measure)"
)


def test_the_fall_rule_of_a_metric_with_identical_reruns_is_said(tmp_path: Path) -> None:
    folder = _cached_recall(tmp_path)
    text = run("diagnose", "a0", "b", folder)
    assert "a case fell when B is below every one of A's 2 reruns" in text
    assert "    " + RULE in text.splitlines()
    got = json.loads(run("diagnose", "a0", "b", folder, "--json"))
    rules = {m["metric"]: (m["noise_rule"], m["a_reruns_identical"]) for m in got["metrics"]}
    assert rules == {"context_recall": ("min_drop", 1), "faithfulness": ("reruns", 0)}
    recall = next(m for m in got["metrics"] if m["metric"] == "context_recall")
    assert [c["case_id"] for c in recall["cases"]] == ["y1"]  # 100 -> 85: 15 points
    report = run("report", "a0", "b", folder)
    assert RULE in report.replace("\\_", "_")


def test_report_with_some_metrics_has_the_stages_diagnose_gives(tmp_path: Path) -> None:
    # q1: recall fell and the chunks changed -> faithfulness's fall is a retrieval miss, which
    # needs context_recall even when the report shows faithfulness only
    a = [case(f"q{i}", {"faithfulness": 1, "context_recall": 1}, contexts=chunks("r-1"))
         for i in range(3)]  # fmt: skip
    b = [
        case("q0", {"faithfulness": 0, "context_recall": 0}, contexts=chunks("x-1"), answer="x"),
        case("q1", {"faithfulness": 1, "context_recall": 1}, contexts=chunks("r-1")),
        case("q2", {"faithfulness": 1, "context_recall": 1}, contexts=chunks("r-1")),
    ]
    write(tmp_path, "a", a, day=1)
    write(tmp_path, "b", b, day=2, config={"generator": "b"})
    report = run("report", "a", "b", str(tmp_path), "-m", "faithfulness")
    assert "q0 faithfulness 100 → 0 (-100.0) retrieval: retrieval miss (context recall fell)" in (
        " ".join(report.replace("\\_", "_").split())
    )
    assert "needs context_recall" not in report.replace("\\_", "_")
    text = run("diagnose", "a", "b", str(tmp_path), "-m", "faithfulness")
    assert "retrieval: retrieval miss (context recall fell)" in text


def _two_configs(root: Path) -> str:
    """Config A (a1, a2) passes every case; config B's reruns b1, b2: k1 fails in both, k2
    fails in b1 only (b1 and b2 disagree: flaky), k3 passes in both."""
    for rid, day in (("a1", 1), ("a2", 2)):
        write(root, rid, [case(k, {"faithfulness": 1}) for k in ("k1", "k2", "k3")], day=day)
    for rid, day, k2 in (("b1", 3, 0), ("b2", 4, 1)):
        cases = [case("k1", {"faithfulness": 0}), case("k2", {"faithfulness": k2}),
                 case("k3", {"faithfulness": 1})]  # fmt: skip
        write(root, rid, cases, day=day, config={"generator": "b"})
    return str(root)


def test_two_reruns_of_one_config_get_the_same_history(tmp_path: Path) -> None:
    folder = _two_configs(tmp_path)
    got = {}
    for rid in ("b1", "b2"):
        h = json.loads(run("history", rid, folder, "--json"))
        assert h["baseline_runs"] == ["a1", "a2"]  # never b1, the candidate's own config
        got[rid] = {c["case_id"]: c["class"] for c in h["cases"]}
    assert got["b1"] == got["b2"] == {"k1": "newly broken", "k2": "flaky", "k3": "stable pass"}
    text = run("history", "b2", folder)
    assert text.splitlines()[0] == (
        "b2 against every earlier run of another config of its dataset (2 runs) · "
        "its own config: 2 runs"
    )


def test_reruns_alone_make_a_case_flaky_not_no_history(tmp_path: Path) -> None:
    folder = _two_configs(tmp_path)
    h = json.loads(run("history", "b1", folder, "--json", "--base", "b2"))
    assert h["baseline_runs"] == ["b2"]  # --base names the same config: unchanged path
    # a1 alone: its config's runs a1, a2 and nothing earlier
    first = json.loads(run("history", "a1", folder, "--json"))
    assert first["baseline_runs"] == [] and first["candidate_runs"] == ["a1", "a2"]
    assert {c["class"] for c in first["cases"]} == {"no history"}
    # b-config only: write a folder with B's reruns alone
    only = tmp_path / "only"
    for rid, day, k2 in (("b1", 3, 0), ("b2", 4, 1)):
        write(only, rid, [case("k2", {"faithfulness": k2}), case("k3", {"faithfulness": 1})],
              day=day, config={"generator": "b"})  # fmt: skip
    h = json.loads(run("history", "b1", str(only), "--json"))
    assert {c["case_id"]: c["class"] for c in h["cases"]} == {"k2": "flaky", "k3": "no history"}
    text = run("history", "b1", str(only))
    assert "(0 runs) · its own config: 2 runs" in text.splitlines()[0]


def test_history_json_honours_class(tmp_path: Path) -> None:
    folder = _two_configs(tmp_path)
    h = json.loads(run("history", "b1", folder, "--json", "--class", "flaky"))
    assert [(c["case_id"], c["class"]) for c in h["cases"]] == [("k2", "flaky")]
    assert h["counts"]["faithfulness"]["newly broken"] == 1  # the counts stay whole


def test_diagnose_json_honours_worst(tmp_path: Path) -> None:
    folder = _two_configs(tmp_path)
    got = json.loads(run("diagnose", "a1", "b1", folder, "--json", "--worst", "1"))
    assert len(got["worst"]) == 1 and got["metrics"][0]["n_fell"] == 2
    assert json.loads(run("diagnose", "a1", "b1", folder, "--json", "--worst", "0"))["worst"] == []


def test_one_case_shows_a_metric_that_failed_on_a_side(tmp_path: Path) -> None:
    ctx = chunks("x-1")
    write(tmp_path, "a", [case("e", {"faithfulness": "judge timeout", "context_recall": 1},
                                contexts=ctx)], day=1)  # fmt: skip
    write(tmp_path, "b", [case("e", {"faithfulness": 0, "context_recall": 1}, contexts=ctx)],
          day=2, config={"generator": "b"})  # fmt: skip
    text = run("diagnose", "a", "b", str(tmp_path), "--case", "e")
    assert "  faithfulness  error in A (judge timeout) → 0 · not compared" in text.splitlines()
