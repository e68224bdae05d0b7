"""Text made from folder data in places added late: the stale line's labels, commands the
user is told to paste, CSV headers, and cells echoed in messages."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pyarrow as pa

from ragtui.core.export import write_table
from ragtui.importers._columns import comma_numbers_notice, decimal_comma_error
from ragtui.importers._common import unreadable_encoding
from ragtui.tui.widgets.stale_line import stale_text

HOSTILE = "x\x1b]0;PWNED\x07\x1b[41mRED\x9b32m\u202eRTL"


def test_a_stale_line_naming_a_run_shows_its_escapes_literally() -> None:
    plain = stale_text([f"a new config ({HOSTILE})", f"candidate {HOSTILE}"]).plain
    assert not any(ch in plain for ch in "\x1b\x07\x9b\u202e"), repr(plain)
    assert plain.endswith("appeared on disk: u updates the figures") and " changed and " in plain


def test_a_command_to_paste_quotes_the_file_name(tmp_path: Path) -> None:
    """`iconv ... u$(touch PWNED).csv > ...` ran the name's command when pasted."""
    name = "u$(touch${IFS}PWNED).csv"
    line = unreadable_encoding(tmp_path / name, b"\xff\xfe" + "q".encode("utf-16-le"))
    assert line is not None
    command = line.split("(", 1)[1].rsplit("), then", 1)[0]
    subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, check=False)
    assert not (tmp_path / "PWNED").exists(), command
    gz = unreadable_encoding(tmp_path / "a;touch PWNED.csv.gz", b"\x1f\x8b\x08")
    assert gz is not None and "'a;touch PWNED.csv.gz'" in gz


def test_csv_headers_are_defused_like_cells(tmp_path: Path) -> None:
    table = pa.table({'=HYPERLINK("http://evil.example","x")': [0.5], "@SUM(1)": ["=cmd"]})
    out = write_table(table, tmp_path / "runs.csv", "csv")
    with out.open(newline="", encoding="utf-8") as handle:
        header, row = list(csv.reader(handle))
    assert header == ['\'=HYPERLINK("http://evil.example","x")', "'@SUM(1)"]
    assert row == ["0.5", "'=cmd"]


def test_a_huge_cell_is_echoed_by_its_start_only() -> None:
    cell = "1" * 5_000_000 + ",9"
    assert len(decimal_comma_error("row 2", "recall", cell)) < 400
    assert len(comma_numbers_notice(Path("f.csv"), "source_pages", cell)) < 500


def test_an_exported_json_file_holds_no_raw_terminal_controls_and_reads_back_whole(
    tmp_path: Path,
) -> None:
    """`cat export.json` sent the C1 CSI (\\x9b) and the bidi override of a case's text to
    the terminal raw (json.dumps escapes only C0); spelled as \\u escapes it cannot, and
    decodes to the very same text."""
    import json

    table = pa.table({"question": [HOSTILE], HOSTILE: [0.5]})
    out = write_table(table, tmp_path / "cases.json", "json")
    raw = out.read_bytes().decode("utf-8")
    assert not any(ch in raw for ch in "\x1b\x07\x9b\u202e"), repr(raw)
    assert json.loads(raw) == [{"question": HOSTILE, HOSTILE: 0.5}]
