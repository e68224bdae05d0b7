"""JSONL and JSON result files of real tools (tests/data), read line by line as their writers
meant: a line ends at "\\n" only, and a parse error says 'truncated?' only where the file ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.importers import ImportFormatError, load_file

DATA = Path(__file__).resolve().parents[1] / "data"
# (file, its format, the case count its tool wrote, where a record keeps the answer text)
JSONL = [
    ("ragas/ragas_v04_refunds.jsonl", "ragas", 5, ("response",)),
    ("promptfoo/promptfoo_v3_refunds.jsonl", "promptfoo", 16, ("response", "output")),
    ("generic/harness.jsonl", "generic", 3, ("output",)),
]
# characters str.splitlines() breaks at that JSON writers leave raw inside strings
# (JSON.stringify, json.dumps(ensure_ascii=False)): LINE SEPARATOR, NEL, PARAGRAPH SEPARATOR
RAW = "one\u2028two\u0085three\u2029four"


def _records(name: str) -> list[dict]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def _set(record: dict, keys: tuple[str, ...], value: str) -> None:
    for key in keys[:-1]:
        record = record[key]
    record[keys[-1]] = value


@pytest.mark.parametrize(("name", "fmt", "count", "keys"), JSONL)
def test_a_jsonl_answer_holding_a_line_separator_imports_whole(
    tmp_path: Path, name: str, fmt: str, count: int, keys: tuple[str, ...]
) -> None:
    """It was 'line 1: invalid JSON (Unterminated string …); the file ends there: truncated?'."""
    records = _records(name)
    _set(records[0], keys, RAW)
    path = tmp_path / Path(name).name
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = load_file(path)
    assert runs[0].run.source.format == fmt
    assert sum(len(r.cases) for r in runs) == count
    assert RAW in {c.answer for r in runs for c in r.cases}


@pytest.mark.parametrize(("name", "fmt", "count", "keys"), JSONL)
def test_a_jsonl_line_cut_before_the_last_is_not_called_the_end_of_the_file(
    tmp_path: Path, name: str, fmt: str, count: int, keys: tuple[str, ...]
) -> None:
    lines = (DATA / name).read_text(encoding="utf-8").rstrip("\n").split("\n")
    cut = 2  # line 2 of several: corruption in the middle, not a file still being written
    lines[cut - 1] = lines[cut - 1][: len(lines[cut - 1]) // 2]
    path = tmp_path / Path(name).name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{cut}:") and "invalid JSON" in message
    assert "truncated" not in message and "ends there" not in message
    # the same cut on the last line is where the file ends: that one says so
    whole = (DATA / name).read_text(encoding="utf-8").rstrip("\n").split("\n")
    whole[-1] = whole[-1][: len(whole[-1]) // 2]
    path.write_text("\n".join(whole), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"the file ends there: truncated\?"):
        load_file(path)


def test_a_json_file_ending_inside_a_string_with_escaped_quotes_says_truncated(
    tmp_path: Path,
) -> None:
    """DeepEval's verbose logs hold escaped JSON (\\"verdict\\"): cut inside them, the file
    still ends inside that string."""
    data = (DATA / "deepeval" / "latest_test_run.json").read_text(encoding="utf-8")
    start = data.index('"Verdicts:')  # a string with escaped quotes in it, cut half way
    path = tmp_path / "latest_test_run.json"
    path.write_text(data[: start + 60], encoding="utf-8")
    assert '\\"' in path.read_text(encoding="utf-8")[start:]
    line = data[:start].count("\n") + 1
    column = start - (data.rfind("\n", 0, start) + 1) + 1
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert str(info.value) == (
        f"{path}:{line}:{column}: invalid JSON (Unterminated string starting at); "
        "the file ends there: truncated? import a whole copy (one its tool finished)"
    )


def test_a_markdown_cell_holding_a_line_separator_stays_in_its_row(tmp_path: Path) -> None:
    text = (DATA / "generic" / "harness_report.md").read_text(encoding="utf-8")
    path = tmp_path / "report.md"
    path.write_text(text.replace("Call support.", f"Call {RAW}."), encoding="utf-8")
    [run_file] = load_file(path, scales={"relevance": (1.0, 5.0)})
    assert [c.case_id for c in run_file.cases] == ["refund-01", "billing-02", "login-03", "gift-04"]
    assert run_file.cases[2].answer == f"Call {RAW}."


@pytest.mark.parametrize(("name", "fmt", "count", "keys"), JSONL)
def test_a_jsonl_of_one_record_imports_as_one_case(
    tmp_path: Path, name: str, fmt: str, count: int, keys: tuple[str, ...]
) -> None:
    """The first line alone (an eval of one case): RAGAS refused it as 'an object with keys
    … and no list of records'; the harness file took its chunk list for the records."""
    [first, *_] = _records(name)
    path = tmp_path / Path(name).name
    path.write_text(json.dumps(first, ensure_ascii=False) + "\n", encoding="utf-8")
    [run_file] = load_file(path)
    assert run_file.run.source.format == fmt
    [case] = run_file.cases
    answer = first
    for key in keys:
        answer = answer[key]
    assert case.answer == answer
