"""RAGAS importer against files written by ragas 0.4.3 and 0.1.21 themselves (see tests/data/ragas)."""

from __future__ import annotations

import csv
import json
import shutil
import statistics
from pathlib import Path

import pytest

from ragtui.core.model import stable_case_id
from ragtui.importers import ImportFormatError, ImportOptions, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "ragas"
V04 = [
    "ragas_v04_refunds.csv",
    "ragas_v04_refunds_index_semicolon.csv",
    "ragas_v04_refunds.jsonl",
    "ragas_v04_refunds.json",
]
# the questions and first chunk exactly as scripts/fixtures/make_ragas.py gave them to ragas
QUESTIONS = [
    "Who approves refunds requested more than 30 days after renewal?",
    "Which currencies can invoices be issued in?",
    "How do I reset my password?",
    "Do gift cards expire?",
    "How long does standard shipping take?",
]
REFUND_CHUNK = (
    "Refunds requested more than 30 days after renewal need manager approval. "
    "Such refunds are issued as account credit, not cash."
)


def _means(run_file) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for case in run_file.cases:
        for metric, score in case.scores.items():
            out.setdefault(metric, []).append(score.raw)
    return {m: statistics.fmean(v) for m, v in out.items()}


@pytest.mark.parametrize("name", V04)
def test_v04_matches_what_ragas_reported(name: str) -> None:
    path = DATA / name
    assert detect(path).name == "ragas"
    [run_file] = load_file(path)
    expected = json.loads((DATA / "ragas_v04_refunds_expected.json").read_text())
    assert len(run_file.cases) == expected["n"] == 5
    assert [c.question for c in run_file.cases] == QUESTIONS
    # every metric ragas reported, with the mean ragas printed (nanmean: failed cases left out)
    assert set(_means(run_file)) == set(expected["means"])
    for metric, mean in _means(run_file).items():
        assert mean == pytest.approx(expected["means"][metric], abs=1e-9), metric
    gift = run_file.cases[3]
    assert set(gift.errors) == {"faithfulness", "factual_correctness(mode=f1)"}
    assert "faithfulness" not in gift.scores
    assert sum(len(c.errors) for c in run_file.cases) == 2
    assert [c.case_id for c in run_file.cases] == [stable_case_id(q) for q in QUESTIONS]
    assert run_file.cases[0].contexts[0].text == REFUND_CHUNK
    assert len(run_file.cases[0].contexts) == 2
    assert run_file.run.source is not None and run_file.run.source.format == "ragas"


def test_v01_numpy_repr_contexts_and_float_artefacts() -> None:
    path = DATA / "ragas_v01_refunds.csv"
    assert "' '" in path.read_text() or "'\n '" in path.read_text()  # numpy repr, no commas
    [run_file] = load_file(path)
    expected = json.loads((DATA / "ragas_v01_refunds_expected.json").read_text())
    for metric, mean in _means(run_file).items():
        assert mean == pytest.approx(expected["means"][metric], abs=1e-9)
    first = run_file.cases[0]
    assert first.contexts[0].text == REFUND_CHUNK
    assert len(first.contexts) == 2 and [c.rank for c in first.contexts] == [1, 2]
    assert first.reference == "A manager approves them, and they are issued as account credit."
    precision = first.scores["context_precision"]
    assert precision.raw == 0.99999999995 and precision.value == 0.99999999995
    assert set(run_file.cases[3].errors) == {"faithfulness"}


def test_pandas_column_orient_json(tmp_path: Path) -> None:
    # DataFrame.to_json() without orient= writes {column: {row: value}}
    records = json.loads((DATA / "ragas_v04_refunds.json").read_text())
    columns = {k: {str(i): r[k] for i, r in enumerate(records)} for k in records[0]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(columns))
    [run_file] = load_file(path)
    [reference] = load_file(DATA / "ragas_v04_refunds.json")
    assert [(c.case_id, dict(c.scores), dict(c.errors)) for c in run_file.cases] == [
        (c.case_id, dict(c.scores), dict(c.errors)) for c in reference.cases
    ]


def test_case_ids_are_stable_across_versions_and_formats() -> None:
    ids = {
        name: [c.case_id for c in load_file(DATA / name)[0].cases]
        for name in [*V04, "ragas_v01_refunds.csv"]
    }
    assert len({tuple(v) for v in ids.values()}) == 1


def test_real_public_file() -> None:
    path = DATA / "ragas_v0.2plus_elasticsearch_ragas_evaluation.csv"
    [run_file] = load_file(path)
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(run_file.cases) == len(rows) == 4
    for metric in ("context_precision", "faithfulness", "context_recall"):
        mean = statistics.fmean(float(r[metric]) for r in rows)
        assert statistics.fmean(c.scores[metric].raw for c in run_file.cases) == pytest.approx(mean)
    # mixed quoting in the list repr: a chunk with an apostrophe is double-quoted
    assert any("'" in chunk.text for c in run_file.cases for chunk in c.contexts)
    assert len(run_file.cases[0].contexts) >= 3


def test_config_key_groups_only_what_the_user_groups(tmp_path: Path) -> None:
    a, b = tmp_path / "baseline.csv", tmp_path / "strict.csv"
    shutil.copy(DATA / "ragas_v04_refunds.csv", a)
    shutil.copy(DATA / "ragas_v0.2plus_elasticsearch_ragas_evaluation.csv", b)
    # nothing in a RAGAS file says which config produced it: unrelated files are not reruns
    assert load_file(a)[0].run.config_key != load_file(b)[0].run.config_key
    same = ImportOptions(overrides={"config": "baseline"})
    assert load_file(a, None, same)[0].run.config_key == load_file(b, None, same)[0].run.config_key


def test_value_clamped_raw_kept(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("user_input,response,faithfulness\nq1,a1,1.0000000002\nq2,a2,-0.0000000001\n")
    cases = load_file(path)[0].cases
    assert cases[0].scores["faithfulness"].value == 1.0
    assert cases[0].scores["faithfulness"].raw == 1.0000000002
    assert cases[1].scores["faithfulness"].value == 0.0


def test_a_repeated_question_is_told_apart_by_order_and_said(tmp_path: Path) -> None:
    """Ids come from the questions' hashes: the second asking of q1 becomes id-2, silently
    before; pairing it with another run depends on both listing it in the same order."""
    path = tmp_path / "r.csv"
    path.write_text("user_input,response,faithfulness\nq1,a1,1\nq2,a2,0\nq1,a3,0.5\n")
    notices: list[str] = []
    cases = load_file(path, notices=notices)[0].cases
    first = stable_case_id("q1")
    assert [c.case_id for c in cases] == [first, stable_case_id("q2"), f"{first}-2"]
    assert [c.scores["faithfulness"].value for c in cases] == [1.0, 0.0, 0.5]
    (said,) = [n for n in notices if "an earlier question" in n]
    assert said.startswith(f"{path}: 1 case repeats an earlier question: told apart by their ")
    assert f"'{first}-2'" in said and "same order" in said


@pytest.mark.parametrize(
    "traces", ["ragas_v04_refunds_traces.json", "ragas_v04_refunds_str.traces.json"]
)
def test_traces_become_claims(traces: str) -> None:
    [run_file] = load_file(
        DATA / "ragas_v04_refunds.csv", None, ImportOptions(traces=str(DATA / traces))
    )
    password = run_file.cases[2]
    assert [(c.text, c.verdict) for c in password.claims] == [
        ("Reset it from the login page.", "SUPPORTED"),
        ("Support approves resets within 24 hours.", "UNSUPPORTED"),
    ]
    for case in run_file.cases:
        if "faithfulness" in case.scores:
            # ragas' faithfulness is the supported share of the statements: claims must agree
            supported = sum(c.verdict == "SUPPORTED" for c in case.claims) / len(case.claims)
            assert supported == pytest.approx(case.scores["faithfulness"].value)
        else:
            assert case.claims == ()  # the failed verification left no verdicts


def test_sibling_traces_picked_up_only_when_they_line_up(tmp_path: Path) -> None:
    shutil.copy(DATA / "ragas_v04_refunds.csv", tmp_path / "results.csv")
    shutil.copy(DATA / "ragas_v04_refunds_traces.json", tmp_path / "results_traces.json")
    assert load_file(tmp_path / "results.csv")[0].cases[0].claims
    short = json.loads((tmp_path / "results_traces.json").read_text())[:2]
    (tmp_path / "results_traces.json").write_text(json.dumps(short))
    assert all(not c.claims for c in load_file(tmp_path / "results.csv")[0].cases)
    with pytest.raises(ImportFormatError, match="2 entries, but the results have 5 cases"):
        load_file(
            tmp_path / "results.csv",
            None,
            ImportOptions(traces=str(tmp_path / "results_traces.json")),
        )


def test_printed_evaluation_result_is_rejected_with_advice(tmp_path: Path) -> None:
    path = DATA / "ragas_evaluationresult_repr.txt"
    assert detect(path).name == "ragas"
    with pytest.raises(ImportFormatError, match=r"EvaluationResult.*to_pandas\(\)\.to_csv") as info:
        load_file(path)
    assert str(path) in str(info.value)
    other = tmp_path / "result.txt"
    other.write_text("EvaluationResult(scores=[{'faithfulness': 1.0}], dataset=...)\n")
    with pytest.raises(ImportFormatError, match="to_pandas"):
        load_file(other)


def test_traces_file_alone_is_explained() -> None:
    with pytest.raises(ImportFormatError, match="traces file"):
        load_file(DATA / "ragas_v04_refunds_traces.json", "ragas")


def test_traces_file_with_a_bom_is_explained_too(tmp_path: Path) -> None:
    # the sniffer read past a BOM only by accident of lstrip(): U+FEFF is no whitespace
    path = tmp_path / "traces.json"
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / "ragas_v04_refunds_traces.json").read_bytes())
    assert detect(path).name == "ragas"
    with pytest.raises(ImportFormatError, match="traces file"):
        load_file(path)


def test_an_explicit_case_id_and_latency_are_read_as_generic_reads_them(tmp_path: Path) -> None:
    # question/answer/contexts make it RAGAS's; its case_id was ignored (ids became question
    # hashes, so it paired with no case of the same table without contexts, which generic
    # imports) and case_id, latency_ms became metrics failing on every case
    rows = [
        ("101", "What is the refund window?", "30 days", "0.9", "812"),
        ("102", "How do I reset my password?", "Use the link", "0.5", "640"),
        ("103", "What is the API rate limit?", "100 rps", "1.0", "1020"),
    ]
    with_contexts = tmp_path / "g1.csv"
    with_contexts.write_text(
        "case_id,question,answer,contexts,faithfulness,latency_ms,prompt_tokens\n"
        + "".join(f'{i},{q},{a},"[""chunk""]",{f},{ms},300\n' for i, q, a, f, ms in rows)
    )
    without = tmp_path / "g2.csv"
    without.write_text(
        "case_id,question,answer,faithfulness,latency_ms\n"
        + "".join(f"{i},{q},{a},{f},{ms}\n" for i, q, a, f, ms in rows)
    )
    assert (detect(with_contexts).name, detect(without).name) == ("ragas", "generic")
    notices: list[str] = []
    [a] = load_file(with_contexts, notices=notices)
    [b] = load_file(without)
    assert [c.case_id for c in a.cases] == [c.case_id for c in b.cases] == ["101", "102", "103"]
    assert all(set(c.scores) == {"faithfulness"} and not c.errors for c in a.cases)
    paired = {c.case_id: c.scores["faithfulness"].value for c in a.cases}
    assert paired == {c.case_id: c.scores["faithfulness"].value for c in b.cases}
    assert paired == {"101": 0.9, "102": 0.5, "103": 1.0}
    assert [c.latency_ms for c in a.cases] == [812, 640, 1020]
    assert a.cases[0].metadata == {"prompt_tokens": "300"}  # case_id is the id, not metadata
    assert any(
        n.startswith(f"{with_contexts}: column 'prompt_tokens': numbers kept as case metadata")
        for n in notices
    ), notices


def test_scores_all_written_as_percentages_are_refused_not_dropped(tmp_path: Path) -> None:
    # every cell text: the column went to metadata and faithfulness was silently lost
    path = tmp_path / "pct.csv"
    path.write_text("user_input,response,faithfulness\nq1,a1,\nq2,a2,66.7%\nq3,a3,100.0%\n")
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert str(info.value) == (
        f"{path}: row 3, column 'faithfulness': expected a score (a number, or empty for a failed "
        "metric), found '66.7%'; RAGAS writes scores as fractions in [0, 1]: save them as "
        "numbers, or import the file with --format generic, which reads percentages"
    )
    # the way out it names: the percent sign declares the scale
    [run] = load_file(path, "generic")
    assert [c.scores["faithfulness"].value for c in run.cases[1:]] == pytest.approx([0.667, 1.0])


def test_a_column_of_comma_lists_beside_ragas_scores_is_kept_as_text(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        'user_input,response,faithfulness,source_pages\nq1,a1,1.0,"3,4"\nq2,a2,0.5,"1,2"\n'
    )
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert [set(c.scores) for c in run.cases] == [{"faithfulness"}] * 2
    assert any("column 'source_pages': values such as '3,4' kept as text" in n for n in notices)


def test_scores_with_decimal_commas_are_refused_not_dropped(tmp_path: Path) -> None:
    # a spreadsheet's ';' CSV: every metric went to metadata, the run had no metric at all
    path = tmp_path / "decomma.csv"
    path.write_text("user_input;response;faithfulness\nq1;a1;0,5\nq2;a2;1,0\n")
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert str(info.value) == (
        f"{path}: row 2, column 'faithfulness': expected a score with '.' decimals, found '0,5' "
        "(a decimal comma?); ragtui does not guess whether ',' separates decimals or thousands: "
        "save the file with '.' as the decimal separator"
    )


def _malformed(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = (DATA / "ragas_v04_refunds.csv").read_text()
    cases = {
        "truncated": (good[: len(good) // 2], r"row \d+|not valid CSV"),
        "wrong_columns": ("a,b,c\n1,2,3\n", "expected RAGAS columns"),
        "wrong_types": (
            "user_input,response,faithfulness\nq1,a1,0.5\nq2,a2,high\n",
            r"row 3, column 'faithfulness'.*'high'",
        ),
        "empty": ("", "empty"),
        "header_only": ("user_input,response,faithfulness\n", "no rows"),
        "no_question": (
            "user_input,response,faithfulness\n,a1,0.5\n",
            "expected the question text",
        ),
        "bad_json": ('[{"user_input": "q", "response": "a"', r"csv:1:\d+: invalid JSON"),
        "json_scalar": ("[1, 2, 3]", "expected JSON records, found a list"),
    }
    out = {}
    for name, (text, pattern) in cases.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(text)
        out[name] = (path, pattern)
    junk = tmp_path / "junk.csv"
    junk.write_bytes(bytes(range(256)) * 4)
    out["binary"] = (junk, "binary|UTF-8")
    return out


@pytest.mark.parametrize(
    "case",
    [
        "truncated",
        "wrong_columns",
        "wrong_types",
        "empty",
        "header_only",
        "no_question",
        "bad_json",
        "json_scalar",
        "binary",
    ],
)
def test_malformed_files_give_one_clear_error(tmp_path: Path, case: str) -> None:
    path, pattern = _malformed(tmp_path)[case]
    with pytest.raises(ImportFormatError, match=pattern) as info:
        load_file(path, "ragas")
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message


def test_a_file_cut_inside_a_utf8_character_is_refused_as_truncated(tmp_path: Path) -> None:
    """The real public CSV cut in the middle of a multi-byte character (a copy taken while its
    tool was writing it) was 'expected UTF-8 text, found binary data at byte N'."""
    data = (DATA / "ragas_v0.2plus_elasticsearch_ragas_evaluation.csv").read_bytes()
    lead = next(i for i, b in enumerate(data) if b >= 0xC0)  # the first multi-byte character
    path = tmp_path / "cut.csv"
    path.write_bytes(data[: lead + 1])
    for fmt in (None, "ragas"):
        with pytest.raises(ImportFormatError) as info:
            load_file(path, fmt)
        assert str(info.value) == (
            f"{path}: the file ends inside a UTF-8 character (byte {lead}): truncated? "
            "import a whole copy (one its tool finished)"
        )
