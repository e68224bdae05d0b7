"""Generic tables: home-grown CSV with --map, JSONL by common names, a Markdown report."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.core.model import stable_case_id
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.importers import ImportFormatError, ImportOptions, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "generic"
MAP = {
    "question": "query",
    "answer": "generated",
    "reference": "gold",
    "contexts": "retrieved",
    "case_id": "qid",
    "score:faithfulness": "judge_faith",
    "score:correct": "judge_correct",
}


def test_csv_with_map() -> None:
    [run_file] = load_file(DATA / "homegrown.csv", "generic", ImportOptions(mapping=MAP))
    cases = run_file.cases
    assert [c.case_id for c in cases] == ["r1", "r2", "r3"]
    assert [c.scores["faithfulness"].value for c in cases[:2]] == [0.9, 0.4]
    assert cases[2].errors == {"faithfulness": "no score in the source file (empty cell)"}
    assert [(c.scores["correct"].value, c.scores["correct"].label) for c in cases] == [
        (1.0, "PASS"),
        (0.0, "FAIL"),
        (0.0, "FAIL"),
    ]
    assert [ch.text for ch in cases[0].contexts] == [
        "Late refunds need manager approval.",
        "Refunds are issued as credit.",
    ]
    assert cases[2].contexts == ()
    assert cases[0].reference == "A manager approves them." and cases[0].latency_ms == 812
    assert cases[0].metadata == {"tokens": "120"}  # unmapped columns are kept, not scored


def test_csv_without_map_imports_the_question_and_says_the_answer_is_missing() -> None:
    # `query` is a known name for the question; the answer column (`generated`) is not
    path = DATA / "homegrown.csv"
    assert detect(path).name == "generic"
    notices: list[str] = []
    [run_file] = load_file(path, notices=notices)
    assert run_file.cases[0].question == "Who approves late refunds?"
    assert all(c.answer == "" for c in run_file.cases)
    assert any("no answer column" in n and "--map answer=COL" in n for n in notices), notices


def test_jsonl_by_common_names() -> None:
    path = DATA / "harness.jsonl"
    assert detect(path).name == "generic"
    [run_file] = load_file(path, options=ImportOptions(scales={"answer_relevance": (1.0, 5.0)}))
    first, _, gift = run_file.cases
    assert first.case_id == stable_case_id("Who approves late refunds?")
    assert first.contexts[0].source == "refund_policy.md" and first.contexts[0].score == 0.83
    # the declared 1-5 scale: (4 - 1) / (5 - 1)
    assert (
        first.scores["answer_relevance"].value == 0.75 and first.scores["answer_relevance"].raw == 4
    )
    assert first.scores["answer_relevance"].scale == (1.0, 5.0)
    assert gift.scores["answer_relevance"].value == 0.0
    assert "faithfulness" in gift.errors


def test_undeclared_rating_is_an_error_with_the_raw_value_kept() -> None:
    notices: list[str] = []
    [run_file] = load_file(DATA / "harness.jsonl", notices=notices)
    first = run_file.cases[0]
    assert "answer_relevance" not in first.scores
    assert first.errors["answer_relevance"].startswith(
        "scale unknown for answer_relevance (value 4"
    )
    assert "--scale answer_relevance=LOW:HIGH" in first.errors["answer_relevance"]
    assert first.metadata["raw_score:answer_relevance"] == 4
    assert any("answer_relevance: 3 value(s) not scored" in n for n in notices), notices


def test_markdown_report_table() -> None:
    path = DATA / "harness_report.md"
    assert detect(path).name == "generic"
    [run_file] = load_file(path, scales={"relevance": (1.0, 5.0)})
    assert [c.case_id for c in run_file.cases] == ["refund-01", "billing-02", "login-03", "gift-04"]
    faith = [c.scores["faithfulness"].value for c in run_file.cases if "faithfulness" in c.scores]
    assert (
        sum(faith) / len(faith) == 0.5
    )  # the report's own line: "Mean faithfulness: 0.5 (3 scored, 1 judge error)"
    assert sum("faithfulness" in c.errors for c in run_file.cases) == 1
    assert run_file.cases[1].scores["relevance"].value == 0.75


def test_percent_and_label_scores(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("question,answer,acc,verdict\nq1,a1,85%,YES\nq2,a2,40%,PARTIAL\n")
    cases = load_file(path)[0].cases
    assert [c.scores["acc"].value for c in cases] == [0.85, 0.4]
    assert [c.scores["verdict"].value for c in cases] == [1.0, 0.5]


def test_a_repeated_id_is_renamed_with_a_notice_and_never_onto_an_id_of_the_file(
    tmp_path: Path,
) -> None:
    # ids a, a, a-2: the repeat was silently renamed a-2, and the write then failed naming a
    # line of the output file ragtui wrote
    path = tmp_path / "dupid.csv"
    path.write_text("id,question,answer,faithfulness\na,q1,x,0.9\na,q2,y,0.5\na-2,q3,z,1.0\n")
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert [(c.case_id, c.question) for c in run.cases] == [
        ("a", "q1"),
        ("a-3", "q2"),
        ("a-2", "q3"),
    ]
    assert (
        f"{path}: row 3: case id 'a' is used again (first at row 2); imported as 'a-3'" in notices
    )
    out = tmp_path / "out.ragtui.jsonl"
    write_run_file(out, run.run, run.cases)  # the ids are unique: the run file can be written
    assert [c.case_id for c in read_run_file(out).cases] == ["a", "a-3", "a-2"]


def test_metric_names_with_token_rank_or_k_in_them_are_metrics(tmp_path: Path) -> None:
    # a filter on parts of names kept token_f1, reciprocal_rank and recall_at_k out, unsaid
    path = tmp_path / "g3.csv"
    path.write_text(
        "question,answer,token_f1,reciprocal_rank,recall_at_k,prompt_tokens,top_k,"
        "time_taken,time_to_first_token,total_token,length_ratio\n"
        "q1,a1,0.8,1.0,1.0,512,5,1.82,0.41,600,0.9\n"
        "q2,a2,0.4,0.5,0.0,300,5,2.40,0.37,350,0.7\n"
    )
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert all(set(c.scores) == {"token_f1", "reciprocal_rank", "recall_at_k"} for c in run.cases)
    means = {
        m: sum(c.scores[m].value for c in run.cases) / 2
        for m in ("token_f1", "reciprocal_rank", "recall_at_k")
    }
    assert means == pytest.approx({"token_f1": 0.6, "reciprocal_rank": 0.75, "recall_at_k": 0.5})
    # the columns that describe the case stay metadata, each with a word about it (a rule on
    # the first and last words only made time_taken and time_to_first_token metrics)
    described = ("prompt_tokens", "top_k", "time_taken", "time_to_first_token", "total_token")
    described += ("length_ratio",)
    assert set(run.cases[0].metadata) == set(described)
    for column in described:
        assert any(
            n.startswith(f"{path}: column {column!r}: numbers kept as case metadata")
            and f"--scale {column}=LOW:HIGH" in n
            for n in notices
        ), notices


def test_a_column_of_comma_lists_is_kept_as_text_and_said(tmp_path: Path) -> None:
    """Page numbers "3,4" look like decimal commas: refusing them failed a file that imported
    before. A name that names no grade keeps them as text, with a notice."""
    path = tmp_path / "pages.csv"
    path.write_text(
        'question,answer,faithfulness,source_pages\nq1,a1,0.9,"3,4"\nq2,a2,0.5,"10,12"\n'
    )
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert [c.scores["faithfulness"].value for c in run.cases] == [0.9, 0.5]
    assert [c.metadata["source_pages"] for c in run.cases] == ["3,4", "10,12"]
    assert any("column 'source_pages': values such as '3,4' kept as text" in n for n in notices)


def test_a_score_column_with_decimal_commas_is_refused_not_dropped(tmp_path: Path) -> None:
    # `0,9` is no number: the column was silently left out and faithfulness lost
    path = tmp_path / "dec2.csv"
    path.write_text("question;answer;faithfulness;passed\nq1;a1;0,9;PASS\nq2;a2;0,5;FAIL\n")
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert str(info.value) == (
        f"{path}: row 2, column 'faithfulness': expected a score with '.' decimals, found '0,9' "
        "(a decimal comma?); ragtui does not guess whether ',' separates decimals or thousands: "
        "save the file with '.' as the decimal separator"
    )
    # a text column that holds a "3,4" among words is no column of scores: kept as metadata
    text = tmp_path / "pages.csv"
    text.write_text('question,answer,faithfulness,pages\nq1,a1,0.5,"3,4"\nq2,a2,0.7,intro\n')
    [run] = load_file(text)
    assert [c.metadata["pages"] for c in run.cases] == ["3,4", "intro"]
    assert [c.scores["faithfulness"].value for c in run.cases] == [0.5, 0.7]


@pytest.mark.parametrize(
    ("text", "mapping", "pattern"),
    [
        (
            "question,answer,f\nq,a,0.5\n",
            {"question": "nope"},
            r"--map question=nope: no such column",
        ),
        ("question,answer,f\nq,a,0.5\n", {"colour": "f"}, "unknown field"),
        ("query,f\n7,lots\n", {}, "no score columns"),
        ("id,text,f\n7,hello,0.5\n", {}, r"no question column \(columns: id, text, f\)"),
        ("question,answer,f\nq,a,0.5\nq2,a2,lots\n", {"score:f": "f"}, r"row 3, column 'f'"),
        ("question,answer\n", {}, "no rows"),
        ("", {}, "empty"),
    ],
)
def test_malformed(tmp_path: Path, text: str, mapping: dict, pattern: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(ImportFormatError, match=pattern) as info:
        load_file(path, "generic", ImportOptions(mapping=mapping))
    assert str(info.value).startswith(str(path))


def test_truncated_and_binary(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    text = (DATA / "harness_report.md").read_text()
    path.write_text(text[: text.index("| login-03") + 20])
    with pytest.raises(ImportFormatError, match=r"line \d+: expected 5 cells"):
        load_file(path, "generic")
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" * 30)
    with pytest.raises(ImportFormatError, match=r"binary|UTF-8"):
        load_file(junk, "generic")


def test_a_markdown_report_longer_than_the_sniffed_head_imports_every_row(tmp_path: Path) -> None:
    """Past 64 KB the head the sniffer reads ends inside a row: that row is not an error
    ('head: line 799: expected 5 cells, found 3' refused the whole report)."""
    lines = (DATA / "harness_report.md").read_text().splitlines()
    table = [ln for ln in lines if ln.startswith("|")]
    header, rows = table[:2], table[2:]
    out = list(header)
    for k in range(1500):  # 6000 rows, ~500 KB: ids made unique, cells otherwise the file's own
        out += [ln.replace("| ", f"| c{k}-", 1) for ln in rows]
    path = tmp_path / "nightly.md"
    path.write_text("\n".join(out) + "\n")
    assert path.stat().st_size > 65536
    [run_file] = load_file(path, scales={"relevance": (1.0, 5.0)})
    assert len(run_file.cases) == 6000
    faith = [c.scores["faithfulness"].value for c in run_file.cases if "faithfulness" in c.scores]
    assert len(faith) == 4500 and sum(faith) / len(faith) == pytest.approx(0.5)


def test_a_cut_markdown_report_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.md"
    text = (DATA / "harness_report.md").read_text()
    path.write_text(text[: text.index("| login-03") + 20])
    with pytest.raises(ImportFormatError) as info:
        load_file(path)  # found by detection, as `ragtui import` and an opened folder do
    assert str(info.value) == f"{path}: line 9: expected 5 cells, found 2"


def test_a_windows_1252_byte_past_the_first_64_kb_is_named_with_its_line(tmp_path: Path) -> None:
    """Detection looks at the first 64 KB; an accented Windows-1252 byte after it was called
    'binary data' instead of an encoding to convert from."""
    rows = ["question,answer,faithfulness"] + [f"q{i},a{i},0.5" for i in range(8000)]
    rows.append("caf\xe9?,r\xe9ponse,0.5")
    path = tmp_path / "excel.csv"
    path.write_bytes(("\n".join(rows) + "\n").encode("cp1252"))
    offset = path.read_bytes().index(b"\xe9")
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:8002: not UTF-8 text (byte 0xE9 at offset {offset};")
    assert "iconv -f CP1252 -t UTF-8" in message and "\n" not in message


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_pretty_printed_object_of_records_imports_whatever_its_suffix(
    tmp_path: Path, suffix: str
) -> None:
    """A JSON object holding its records, pretty-printed over several lines, in a file named
    .jsonl: its first line is no record, so it is read as JSON, as the same file named .json
    (taking every .jsonl for JSONL refused it: 'line 1: invalid JSON')."""
    path = tmp_path / f"results{suffix}"
    path.write_text(
        "{\n"
        '  "records": [\n'
        '    {"question": "q1", "answer": "a1", "faithfulness": 0.25},\n'
        '    {"question": "q2", "answer": "a2", "faithfulness": 1.0}\n'
        "  ]\n"
        "}\n"
    )
    for fmt in (None, "generic"):  # found by detection (`ragtui import`), and named
        [run_file] = load_file(path, fmt)
        assert [(c.question, c.answer) for c in run_file.cases] == [("q1", "a1"), ("q2", "a2")]
        assert [c.scores["faithfulness"].value for c in run_file.cases] == [0.25, 1.0]
