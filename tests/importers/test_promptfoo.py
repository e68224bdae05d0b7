"""promptfoo importer against outputs of promptfoo 0.121.20 (results v3) and 0.43.1 (v2)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from ragtui.core.model import stable_case_id
from ragtui.importers import ImportFormatError, ImportOptions, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "promptfoo"
V3 = DATA / "promptfoo_v3_refunds.json"
V2 = DATA / "promptfoo_v2_refunds.json"
QUERIES = [
    "Who approves refunds requested more than 30 days after renewal?",
    "Which currencies can invoices be issued in?",
    "Do gift cards expire?",
    "How long is the warranty?",
]


def _by_pair(run_files) -> dict[tuple[str, str], object]:
    return {(r.run.config["prompt"], r.run.config["provider"]): r for r in run_files}


def test_v3_every_prompt_provider_pair_is_a_run() -> None:
    assert detect(V3).name == "promptfoo"
    run_files = load_file(V3)
    summary = json.loads(V3.read_text())["results"]
    assert len(run_files) == len(summary["prompts"]) == 4
    assert len({r.run.config_key for r in run_files}) == 4
    assert len({r.run.id for r in run_files}) == 4
    by_name = {r.run.name: r for r in run_files}
    for prompt in summary["prompts"]:
        run_file = by_name[f"refunds helpdesk [{prompt['label']} · {prompt['provider']}]"]
        assert len(run_file.cases) == 4
        # promptfoo's own per-prompt sums and counts of each named score
        for metric, total in prompt["metrics"]["namedScores"].items():
            values = [c.scores[metric].value for c in run_file.cases if metric in c.scores]
            # promptfoo counts a grading that failed as a 0; here it is an error instead
            ungraded = [
                c for c in run_file.cases if "grader gave no grade" in c.errors.get(metric, "")
            ]
            assert len(values) + len(ungraded) == prompt["metrics"]["namedScoresCount"][metric]
            assert sum(values) == pytest.approx(total)
        errored = [
            c
            for c in run_file.cases
            if c.errors and not c.scores and "400" in c.errors.get("faithfulness", "")
        ]
        assert len(errored) == prompt["metrics"]["testErrorCount"] == 1
    assert (
        sum(1 for r in run_files for c in r.cases if c.errors and not c.scores)
        == summary["stats"]["errors"] + 2
    )


def test_v3_case_fields_ids_and_errors() -> None:
    run_files = load_file(V3)
    for run_file in run_files:
        assert [c.case_id for c in run_file.cases] == [stable_case_id(q) for q in QUERIES]
        assert [c.question for c in run_file.cases] == QUERIES
        refund = run_file.cases[0]
        assert refund.reference == "A manager approves them, as account credit."
        assert refund.contexts[0].text.startswith("Refunds requested more than 30 days")
        assert refund.scores["faithfulness"].reason == "Mentions the rubric topic."
        assert refund.scores["faithfulness"].label == "PASS"
        warranty = run_file.cases[3]
        assert warranty.scores == {}
        assert set(warranty.errors) == {"faithfulness", "mentions_credit"}
        assert "400" in warranty.errors["faithfulness"]
        assert run_file.run.judge.model == "openai:chat:fake-judge"
        assert run_file.run.created_at == "2026-12-01T07:41:37Z"
    pairs = _by_pair(run_files)
    small = pairs[("terse", "openai:chat:fake-gen-small")]
    large = pairs[("terse", "openai:chat:fake-gen-large")]
    # the grader could not grade the small model's gift-card answer: an error, not a 0
    assert small.cases[2].scores == {}
    assert (
        small.cases[2]
        .errors["faithfulness"]
        .startswith("the grader gave no grade: Could not extract JSON")
    )
    assert large.cases[2].scores["faithfulness"].value == 1.0
    assert large.cases[2].answer == "Gift cards expire 12 months after purchase."


def _score_table(run_files) -> dict[tuple[str, str, str], dict[str, float]]:
    out = {}
    for r in run_files:
        provider = r.run.config["provider"].split(":")[-1].replace("fake-", "")
        for c in r.cases:
            out[(r.run.config["prompt"], provider, c.case_id)] = {
                m: s.value for m, s in c.scores.items()
            }
    return out


def _error_table(run_files) -> dict[tuple[str, str, str], set[str]]:
    out = {}
    for r in run_files:
        provider = r.run.config["provider"].split(":")[-1].replace("fake-", "")
        for c in r.cases:
            out[(r.run.config["prompt"], provider, c.case_id)] = set(c.errors)
    return out


@pytest.mark.parametrize("name", ["promptfoo_v3_refunds.jsonl", "promptfoo_v3_refunds.csv"])
def test_jsonl_and_csv_say_what_the_json_says(name: str) -> None:
    path = DATA / name
    assert detect(path).name == "promptfoo"
    other = load_file(path)
    assert len(other) == 4
    assert _score_table(other) == _score_table(load_file(V3))
    assert _error_table(other) == _error_table(load_file(V3))
    assert sum(1 for r in other for c in r.cases if c.errors) == 6


@pytest.mark.parametrize("name", ["promptfoo_v3_refunds.json", "promptfoo_v3_refunds.jsonl"])
def test_a_utf8_bom_imports_like_the_file_without_it(tmp_path: Path, name: str) -> None:
    # Windows editors save JSON with a BOM; it was refused with the generic importer's reason
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / name).read_bytes())
    assert detect(path).name == "promptfoo"
    with_bom = load_file(path)
    assert len(with_bom) == 4 and all(len(r.cases) == 4 for r in with_bom)
    assert _score_table(with_bom) == _score_table(load_file(V3))
    assert _error_table(with_bom) == _error_table(load_file(V3))


def test_v2_results() -> None:
    assert detect(V2).name == "promptfoo"
    run_files = load_file(V2)
    raw = json.loads(V2.read_text())["results"]
    assert raw["version"] == 2
    assert len(run_files) == 4 and all(len(r.cases) == 4 for r in run_files)
    # per-run means over the scored cases, straight from the results list
    for r in run_files:
        results = [
            x
            for x in raw["results"]
            if x["provider"]["id"] == r.run.config["provider"]
            and (
                x["prompt"]["display"].startswith(
                    r.run.config["prompt"].rstrip("…").split(" Context")[0][:30]
                )
            )
        ]
        scored = [
            x
            for x in results
            if x.get("response")
            and x["response"].get("output")
            and "malformed" not in (x.get("error") or "")
        ]
        expected = statistics.fmean(x["namedScores"]["faithfulness"] for x in scored)
        got = statistics.fmean(
            c.scores["faithfulness"].value for c in r.cases if "faithfulness" in c.scores
        )
        assert got == pytest.approx(expected)
        errored = [x for x in results if not (x.get("response") or {}).get("output")]
        assert (
            sum(
                1
                for c in r.cases
                if c.errors and not c.scores and "API" in c.errors["faithfulness"]
            )
            == len(errored)
            == 1
        )


def test_v3_without_metadata_block(tmp_path: Path) -> None:
    data = json.loads(V3.read_text())
    del data["metadata"]
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    assert _score_table(load_file(path)) == _score_table(load_file(V3))


def test_map_overrides_the_var_names() -> None:
    [first, *_] = load_file(
        V3, None, ImportOptions(mapping={"question": "context", "reference": "query"})
    )
    assert first.cases[0].question.startswith("Refunds requested more than 30 days")
    assert first.cases[0].reference == QUERIES[0]


def test_name_and_set(tmp_path: Path) -> None:
    run_files = load_file(
        V3, None, ImportOptions(name="nightly", overrides={"top_k": "3", "judge.model": "gpt-x"})
    )
    assert {r.run.name for r in run_files} == {
        "nightly [terse · gen-small]",
        "nightly [strict · gen-small]",
        "nightly [terse · gen-large]",
        "nightly [strict · gen-large]",
    }
    assert all(r.run.config["top_k"] == 3 and r.run.judge.model == "gpt-x" for r in run_files)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("TRUNCATED", r"out\.json:\d+:\d+: invalid JSON .*truncated\?"),
        ('{"results": {"version": 3, "results": "none"}}', "results.results to be a list"),
        (
            '{"results": {"version": 3, "results": [{"namedScores": "high", "vars": {}}]}}',
            "namedScores: expected an object",
        ),
        (
            '{"results": {"version": 3, "results": [{"namedScores": {"f": "x"}, "vars": {}}]}}',
            r"namedScores\.f: expected a number",
        ),
        ('{"results": {"version": 3, "results": []}}', "no results"),
        ("", "empty"),
        ("BINARY", "binary|UTF-8"),
    ],
)
def test_malformed(tmp_path: Path, text: str, pattern: str) -> None:
    path = tmp_path / "out.json"
    if text == "TRUNCATED":
        data = V3.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif text == "BINARY":
        path.write_bytes(b"\xff\xfe\x00junk" * 50)
    else:
        path.write_text(text)
    with pytest.raises(ImportFormatError, match=pattern) as info:
        load_file(path, "promptfoo")
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_malformed_csv(tmp_path: Path) -> None:
    lines = (DATA / "promptfoo_v3_refunds.csv").read_text().splitlines()
    path = tmp_path / "out.csv"
    path.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2] + "\n")
    with pytest.raises(ImportFormatError, match=r"row 2: expected \d+ cells|not valid CSV"):
        load_file(path, "promptfoo")
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ImportFormatError, match="provider"):
        load_file(path, "promptfoo")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("promptfoo/promptfoo_v3_refunds.csv", "promptfoo"), ("ragas/ragas_v04_refunds.csv", "ragas")],
)
def test_a_csv_cut_inside_a_quoted_cell_names_its_line_and_says_truncated(
    tmp_path: Path, name: str, fmt: str
) -> None:
    """It said 'not valid CSV (unexpected end of data)': no line, and no word of the cause."""
    text = (DATA.parent / name).read_text(encoding="utf-8")
    opened = text.index(',"', text.index("\n"))  # a quoted cell of the first row
    cut = text[: opened + 3]
    path = tmp_path / "cut.csv"
    path.write_text(cut, encoding="utf-8")
    with pytest.raises(ImportFormatError) as info:
        load_file(path, fmt)
    lines = cut.count("\n") + 1  # the cell runs to the file's last line
    assert str(info.value) == (
        f"{path}: line {lines}: not valid CSV (a quoted cell runs to the end of the file: "
        "truncated? import a whole copy (one its tool finished))"
    )
