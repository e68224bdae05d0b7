"""What Excel does to a RAGAS CSV a user opened and saved: a `sep=;` first line (its exports
for locales whose list separator is `;`), or Windows-1252 text ("CSV (comma delimited)")."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from ragtui.importers import ImportFormatError, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "ragas"
SOURCE = DATA / "ragas_v04_refunds_index_semicolon.csv"  # a pandas index column, ';' cells
EXPECTED = json.loads((DATA / "ragas_v04_refunds_expected.json").read_text())


def test_a_sep_line_names_the_delimiter_and_the_table_imports_as_its_figures_say(
    tmp_path: Path,
) -> None:
    path = tmp_path / "saved.csv"
    path.write_bytes(b"sep=;\r\n" + SOURCE.read_bytes())
    (run_file,) = load_file(path)
    assert len(run_file.cases) == EXPECTED["n"]
    for metric, mean in EXPECTED["means"].items():
        values = [c.scores[metric].value for c in run_file.cases if metric in c.scores]
        assert statistics.fmean(values) == pytest.approx(mean), metric


def test_a_bad_row_after_a_sep_line_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    lines[3] += ";one cell too many"  # the file's line 5 once the sep line is above it
    path = tmp_path / "saved.csv"
    path.write_text("sep=;\n" + "\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"row 5: expected 10 cells, found 11"):
        load_file(path, "ragas")


def test_windows_1252_text_is_refused_naming_the_byte_its_line_and_the_fix(
    tmp_path: Path,
) -> None:
    text = SOURCE.read_text(encoding="utf-8").replace("renewal", "renouvellement été", 1)
    path = tmp_path / "excel ansi.csv"
    path.write_bytes(text.encode("cp1252"))
    at = text.encode("cp1252").index("é".encode("cp1252"))
    line = text[: text.index("é")].count("\n") + 1
    with pytest.raises(ImportFormatError) as err:
        load_file(path)
    said = str(err.value)
    assert said.startswith(f"{path}:{line}: not UTF-8 text (byte 0xE9 at offset {at};")
    assert "iconv -f CP1252 -t UTF-8 'excel ansi.csv' > 'utf8-excel ansi.csv'" in said
