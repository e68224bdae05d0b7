"""DeepEval importer, on files written by deepeval's own `evaluate()` (tests/data/deepeval/README.md).

Expected values come from deepeval itself: `expected.json` is the EvaluationResult its
`evaluate()` returned, `metricsScores` is its own per-metric tally inside the file, and
`evaluate_stdout.txt` holds the aggregate table it printed.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from ragtui.core.model import stable_case_id
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.importers import detect
from ragtui.importers.base import ImportFormatError, ImportOptions
from ragtui.importers.deepeval import DEEPEVAL, metric_key, parse_verbose_logs
from tests.importers.json_fields import WRONG, field_paths, with_value

DATA = Path(__file__).resolve().parents[1] / "data" / "deepeval"
LATEST = DATA / "latest_test_run.json"
TEMP = DATA / "temp_test_run_data.json"
RESULTS = next(DATA.glob("test_run_2*.json"))
EXPECTED: list[dict[str, Any]] = json.loads((DATA / "expected.json").read_text())
INPUTS = {c["name"]: c["input"] for c in json.loads(LATEST.read_text())["testRunData"]["testCases"]}


def load(path: Path) -> Any:
    (run_file,) = DEEPEVAL.load(path, ImportOptions())
    return run_file


def case_id_of(name: str) -> str:
    return stable_case_id(INPUTS[name]) if re.fullmatch(r"test_case_\d+", name) else name


def test_scores_and_errors_equal_what_deepeval_returned() -> None:
    run = load(LATEST)
    cases = {c.case_id: c for c in run.cases}
    assert len(cases) == len(EXPECTED) == 4
    for result in EXPECTED:
        case = cases[case_id_of(result["name"])]
        for metric in result["metrics"]:
            key = metric_key(metric["name"])
            if metric["error"]:
                assert case.errors[key] == metric["error"]
                assert key not in case.scores
            else:
                assert case.scores[key].value == metric["score"]
                assert case.scores[key].threshold == metric["threshold"]
    names = {metric_key(m["name"]) for r in EXPECTED for m in r["metrics"]}
    assert names == {"faithfulness", "answer_relevancy", "contextual_precision"}


def test_means_and_error_counts_equal_deepeval_aggregates() -> None:
    run = load(LATEST)
    tally = json.loads(LATEST.read_text())["testRunData"]["metricsScores"]
    printed = dict(
        re.findall(
            r"^│\s{2}(\w[\w ]*?)\s+│ ([0-9.]+)\s+│ [0-9.]+% \|",
            (DATA / "evaluate_stdout.txt").read_text(),
            re.M,
        )
    )
    assert set(printed) == {t["metric"] for t in tally}
    for entry in tally:
        key = metric_key(entry["metric"])
        values = [c.scores[key].value for c in run.cases if key in c.scores]
        assert statistics.mean(values) == pytest.approx(statistics.mean(entry["scores"]))
        assert f"{statistics.mean(values):.2f}" == printed[entry["metric"]]
        assert sum(key in c.errors for c in run.cases) == entry["errors"]


def test_header_judge_config_and_case_fields() -> None:
    run = load(LATEST)
    assert run.run.judge.model == "gpt-4.1-mini"
    assert run.run.config == {"generator": "llama3.2:3b", "top_k": "2", "prompt": "strict-v2"}
    assert run.run.source is not None and run.run.source.format == "deepeval"
    case = next(c for c in run.cases if c.case_id == "invoice-currency")
    assert case.question == "Can invoices be issued in euros?"
    assert case.answer.startswith("Yes, invoices can be issued in euros.")
    assert case.reference == "Yes: invoices can be issued in USD, EUR or GBP."
    assert [(c.id, c.rank) for c in case.contexts] == [("c1", 1), ("c2", 2)]
    assert case.contexts[1].text == "Invoices can be issued in USD, EUR or GBP."
    faith = case.scores["faithfulness"]
    assert faith.reason is not None and "not every Monday" in faith.reason
    assert faith.reply is not None and faith.reply.startswith("Truths (limit=None):")


def test_claims_from_verbose_logs() -> None:
    cases = {c.case_id: c for c in load(LATEST).cases}
    invoice = [c for c in cases["invoice-currency"].claims if c.metric == "faithfulness"]
    assert [(c.text, c.verdict) for c in invoice] == [
        ("Invoices can be issued in euros.", "SUPPORTED"),
        ("Invoices are emailed every Monday.", "UNSUPPORTED"),
    ]
    assert invoice[1].reason is not None and "first business day" in invoice[1].reason
    support = cases[stable_case_id("How fast does support reply?")]
    borderline = [c for c in support.claims if c.metric == "faithfulness"][1]
    assert (borderline.verdict, borderline.text) == (
        "PARTIAL",
        "Support often replies within an hour.",
    )
    precision = [c for c in cases["invoice-currency"].claims if c.metric == "contextual_precision"]
    # claims of other metrics keep DeepEval's own words: relevance, not support
    assert [(c.chunks, c.verdict) for c in precision] == [(("c1",), "no"), (("c2",), "yes")]
    relevancy = [
        c.verdict for c in cases["invoice-currency"].claims if c.metric == "answer_relevancy"
    ]
    assert relevancy == ["yes", "borderline"]
    assert not [c for c in cases["sso-plans"].claims if c.metric == "faithfulness"]  # errored


def test_results_folder_file_equals_latest_and_dates_from_its_name() -> None:
    latest, results = load(LATEST), load(RESULTS)
    assert results.cases == latest.cases
    assert results.run.config_key == latest.run.config_key
    stamp = re.search(r"(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)", RESULTS.name)
    assert stamp is not None
    assert results.run.created_at == "{}-{}-{}T{}:{}:{}Z".format(*stamp.groups())


def test_interrupted_temp_file_imports_with_a_notice() -> None:
    run = load(TEMP)
    assert any("unfinished" in n for n in DEEPEVAL.last_notices)
    latest = {c.case_id: c for c in load(LATEST).cases}
    assert [c.case_id for c in run.cases] == ["refund-late", "invoice-currency"]
    for case in run.cases:  # stable ids: the same cases as in the finished run
        assert case.scores == latest[case.case_id].scores


def test_cases_without_scores_are_errors_for_the_declared_metrics(tmp_path: Path) -> None:
    body = json.loads(TEMP.read_text())
    body["testCases"][1].pop("metricsData")  # a case the run had not scored yet
    path = tmp_path / ".temp_test_run_data.json"
    path.write_text(json.dumps(body))
    unscored = load(path).cases[1]
    assert unscored.scores == {}
    assert set(unscored.errors) == {"faithfulness", "answer_relevancy", "contextual_precision"}
    assert all("not scored" in e for e in unscored.errors.values())


def test_repeated_names_are_suffixed_apart_from_every_name_in_the_file(tmp_path: Path) -> None:
    # names a, a, a-2: the repeat became a-2 too, and the run could not be written
    body = json.loads(LATEST.read_text())
    cases = body["testRunData"]["testCases"]
    for tc, name in zip(cases, ["a", "a", "a-2"], strict=False):
        tc["name"] = name
    path = tmp_path / "latest_test_run.json"
    path.write_text(json.dumps(body))
    run = load(path)
    assert [c.case_id for c in run.cases][:3] == ["a", "a-3", "a-2"]
    assert f"{path}: case id 'a' is used again; imported as 'a-3'" in DEEPEVAL.last_notices


def test_older_idk_verdicts_and_unescaped_quotes() -> None:
    logs = 'Claims:\n[\n    "He said "hi" twice.",\n    "It rained."\n] \n \nVerdicts:\n[\n    {\n        "verdict": "idk",\n        "reason": null\n    }\n]'
    sections = parse_verbose_logs(logs)
    assert sections["Claims"] == ['He said "hi" twice.', "It rained."]
    assert sections["Verdicts"] == [{"verdict": "idk", "reason": None}]
    text = LATEST.read_text().replace('\\"borderline\\"', '\\"idk\\"')
    assert '\\"idk\\"' in text


def test_idk_maps_to_partial(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(LATEST.read_text().replace('\\"borderline\\"', '\\"idk\\"'))
    support = next(
        c for c in load(path).cases if c.case_id == stable_case_id("How fast does support reply?")
    )
    assert [c.verdict for c in support.claims if c.metric == "faithfulness"] == [
        "SUPPORTED",
        "PARTIAL",
    ]


def test_round_trip_through_native_files(tmp_path: Path) -> None:
    for path in (LATEST, TEMP, RESULTS):
        run = load(path)
        out = write_run_file(tmp_path / f"{run.run.id}.ragtui.jsonl", run.run, run.cases)
        assert read_run_file(out) == run


def test_sniffer_and_detect() -> None:
    for path in (LATEST, TEMP, RESULTS):
        assert DEEPEVAL.sniff(path, path.read_bytes()[:65536]).matches
        assert detect(path).name == "deepeval"
    # a results-folder file whose first case is longer than the sniffed head
    big = json.loads(RESULTS.read_text())
    big["testCases"][0]["retrievalContext"].append("x" * 70_000)
    head = json.dumps(big).encode()[:65536]
    assert b'"metricsData"' not in head and DEEPEVAL.sniff(RESULTS, head).matches
    inspect_log = DATA.parent / "inspect" / "refunds.json"
    assert not DEEPEVAL.sniff(inspect_log, inspect_log.read_bytes()[:65536]).matches
    assert not DEEPEVAL.sniff(Path("a.csv"), b"input,actual_output\n").matches


def _variants(tmp: Path) -> list[tuple[Path, str]]:
    text = LATEST.read_text()
    body = json.loads(text)["testRunData"]

    def case_with(**changes: Any) -> bytes:
        tc = dict(body["testCases"][0], **changes)
        return json.dumps({"testRunData": dict(body, testCases=[tc])}).encode()

    metric = dict(body["testCases"][0]["metricsData"][0], score="high")
    rows = [
        ("empty.json", b"  \n", "the file is empty"),
        ("truncated.json", text[: len(text) // 2].encode(), "invalid JSON"),
        ("junk.json", bytes(range(256)) * 8, "expected UTF-8 JSON"),
        ("array.json", b"[]", "expected a DeepEval test run object, found an array"),
        ("link.json", b'{"testRunLink": "https://example.invalid/run/1"}', "only a link"),
        ("wrapped.json", b'{"testRunData": []}', "field 'testRunData': expected an object"),
        (
            "cases.json",
            json.dumps(dict(body, testCases={})).encode(),
            "field 'testCases': expected an array",
        ),
        (
            "none.json",
            json.dumps(dict(body, testCases=[])).encode(),
            "holds no (single-turn) test cases",
        ),
        (
            "input.json",
            case_with(input=42),
            "testCases[0]: field 'input': expected a string, found a number 42",
        ),
        (
            "context.json",
            case_with(retrievalContext="one chunk"),
            "field 'retrievalContext': expected an array",
        ),
        (
            "score.json",
            case_with(metricsData=[metric]),
            "field 'metricsData[0].score': expected a number or null",
        ),
        (
            "metric.json",
            case_with(metricsData=[{"score": 1}]),
            "field 'metricsData[0]': expected an object with a 'name'",
        ),
    ]
    out = []
    for name, content, message in rows:
        (tmp / name).write_bytes(content)
        out.append((tmp / name, message))
    return out


def test_malformed_files_give_one_clear_error(tmp_path: Path) -> None:
    for path, message in _variants(tmp_path):
        DEEPEVAL.last_notices = ["untouched"]
        with pytest.raises(ImportFormatError) as caught:
            DEEPEVAL.load(path, ImportOptions())
        text = str(caught.value)
        assert text.startswith(f"{path}:"), text
        assert message in text, (path.name, text)
        assert "\n" not in text
        assert DEEPEVAL.last_notices == ["untouched"]


# ---------------------------------------------------------------- wrong types anywhere


def test_wrong_types_anywhere_never_crash(tmp_path: Path) -> None:
    """Any field replaced by any other JSON type: a clean import or one ImportFormatError,
    never another exception, and what is imported is a valid native run."""
    doc = json.loads(LATEST.read_text())
    # optional fields the fixture lacks, so that they are tried too
    doc["testRunData"].update(
        identifier="x", datasetAlias="d", datasetVersion="1", prompts=[{"alias": "p"}]
    )
    doc["testRunData"]["testCases"][0].update(
        metadata={"k": "v"}, tags=["t"], context=["c"], completionTime=1.5, comments="c"
    )
    paths = field_paths(doc, 6, frozenset({"verboseLogs"}))
    assert len(paths) > 40
    target = tmp_path / "variant.json"
    for path in paths:
        for new in WRONG:
            target.write_text(json.dumps(with_value(doc, path, new)))
            try:
                run_files = DEEPEVAL.load(target, ImportOptions())
            except ImportFormatError as err:
                assert str(err).startswith(str(target)), (path, new, err)
                continue
            for run_file in run_files:
                out = write_run_file(tmp_path / "out.ragtui.jsonl", run_file.run, run_file.cases)
                assert read_run_file(out) == run_file, (path, new)


def test_pytest_positional_names_are_no_case_ids(tmp_path: Path) -> None:
    # `deepeval test run` on @pytest.mark.parametrize("test_case", dataset) names each case by
    # its place: test_rag[test_case0] is another question in a run whose dataset was reordered
    files = []
    for name, order in (("a.json", [0, 1, 2, 3]), ("b.json", [3, 2, 1, 0])):
        data = json.loads(LATEST.read_text())
        cases = [data["testRunData"]["testCases"][k] for k in order]
        for place, tc in enumerate(cases):
            tc["name"], tc["order"] = f"test_rag[test_case{place}]", place
        data["testRunData"]["testCases"] = cases
        (tmp_path / name).write_text(json.dumps(data))
        files.append(load(tmp_path / name))
    a, b = ({c.case_id: c for c in run.cases} for run in files)
    assert set(a) == set(b) == {stable_case_id(q) for q in INPUTS.values()}
    for case_id, case in a.items():
        assert b[case_id].question == case.question  # the same question pairs, not the place
        assert case.metadata["deepeval_name"].startswith("test_rag[test_case")
    assert any("pytest parametrize" in n for n in DEEPEVAL.last_notices)


@pytest.mark.parametrize("name", ["test_rag[refund-late]", "test_rag[refund_late]", "refund01"])
def test_pytest_names_given_by_ids_stay_case_ids(tmp_path: Path, name: str) -> None:
    data = json.loads(LATEST.read_text())
    data["testRunData"]["testCases"][0]["name"] = name
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert name in {c.case_id for c in load(tmp_path / "r.json").cases}


@pytest.mark.timeout(20)
def test_a_huge_name_is_told_positional_or_not_in_linear_time(tmp_path: Path) -> None:
    """A case name of a megabyte of digits in brackets: the first pattern for pytest's names
    backtracked quadratically (16,000 digits took 4 s; a megabyte, hours)."""
    data = json.loads(LATEST.read_text())
    data["testRunData"]["testCases"][0]["name"] = "x[a" + "1" * 1_000_000 + "x"
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert len(load(tmp_path / "r.json").cases) == len(data["testRunData"]["testCases"])


@pytest.mark.parametrize(
    "names",
    [
        ["test_rag[q1]", "test_rag[q2]", "test_rag[q3]", "test_rag[q4]"],  # from 1: the user's
        ["test_rag[refund_01]", "test_rag[gpt4]", "test_rag[sso2]", "test_rag[api7]"],
        ["test_rag[x0]", "test_rag[x1]", "test_rag[y2]", "test_rag[x3]"],  # not one argname
    ],
)
def test_ids_a_user_gave_that_end_in_digits_stay_case_ids(tmp_path: Path, names: list) -> None:
    """Review: any bracketed id ending in a digit was taken for pytest's own (q1, gpt4), so a
    user's chosen ids stopped pairing with earlier imports. pytest's are one argname with
    indices 0..k-1 across the file."""
    data = json.loads(LATEST.read_text())
    cases = data["testRunData"]["testCases"][:4]
    for tc, name in zip(cases, names, strict=True):
        tc["name"] = name
    data["testRunData"]["testCases"] = cases
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert sorted(c.case_id for c in load(tmp_path / "r.json").cases) == sorted(names)
