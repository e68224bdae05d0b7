"""Native run files given to the importer: validated, then taken as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.core.model import Case, Run, Score
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.importers import ImportFormatError, detect, load_file


def _write(path: Path) -> Path:
    run = Run(id="base-1", name="baseline", created_at="2026-11-20T10:00:00Z", config={"top_k": 3})
    cases = [
        Case(
            case_id="c1",
            question="q",
            answer="a",
            scores={"faithfulness": Score(value=0.5, raw="PARTIAL")},
        )
    ]
    return write_run_file(path, run, cases)


def test_native_is_detected_and_loaded(tmp_path: Path) -> None:
    path = _write(tmp_path / "base.ragtui.jsonl")
    assert detect(path).name == "native"
    [run_file] = load_file(path)
    assert run_file == read_run_file(path)


def test_broken_native_names_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "base.ragtui.jsonl")
    path.write_text(path.read_text().replace('"value": 0.5', '"value": 5'))
    with pytest.raises(
        ImportFormatError, match=r"base\.ragtui\.jsonl:2: field 'scores\.faithfulness\.value'"
    ):
        load_file(path)


@pytest.mark.parametrize(
    ("mutate", "pattern"),
    [
        (lambda text: text[: len(text) - 20], r":2: expected one JSON object per line"),
        (lambda text: "", "empty"),
        (
            lambda text: text.replace('"ragtui_run": 1', '"ragtui_run": 7'),
            r":1: field 'ragtui_run': expected format version 1",
        ),
        (
            lambda text: text.replace('"case_id": "c1"', '"case_id": 5'),
            r":2: field 'case_id': expected a string, found int 5$",
        ),
        (  # a missing field said as missing (it said "expected a string" and no more)
            lambda text: text.replace('"case_id": "c1", ', ""),
            r":2: field 'case_id': expected a string, found no such field$",
        ),
        (  # a header line of a byte-order mark alone is an empty line
            lambda text: "\ufeff\n" + text.split("\n", 1)[1],
            r":1: expected a run header on line 1, found an empty line$",
        ),
    ],
)
def test_malformed_native(tmp_path: Path, mutate, pattern: str) -> None:
    path = _write(tmp_path / "base.ragtui.jsonl")
    path.write_text(mutate(path.read_text()))
    with pytest.raises(ImportFormatError, match=pattern) as info:
        load_file(path, "native")
    assert str(info.value).startswith(str(path))


def test_binary_junk_as_native(tmp_path: Path) -> None:
    path = tmp_path / "junk.ragtui.jsonl"
    path.write_bytes(b'{"ragtui_run": 1, \xff\xfe\x00\x01}\n')
    with pytest.raises(ImportFormatError, match=r"UTF-8|JSON"):
        load_file(path, "native")
