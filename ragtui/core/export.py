"""Write a table (an Arrow table of what a screen shows) to CSV, JSON or Parquet.

Figures stay fractions, as in --json. The path is the user's (typed in the export dialog),
never built from run data. CSV cells that a spreadsheet would run as a formula (text from a
run file starting with = + - @, tab or CR) get a leading apostrophe, the usual defence against
CSV injection; JSON and Parquet keep every value as it is (JSON spells C1 controls, bidi and
invisible characters as \\u escapes, as --json does: `cat` of the file cannot drive the
terminal, and it decodes to the same values).
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ragtui.core.errors import RagtuiError
from ragtui.core.runwrite import ordinary_mode
from ragtui.format.text import json_text

FORMATS = ("csv", "json", "parquet")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def format_of(path: Path) -> str | None:
    """The format a file name asks for (by its extension), None when it names none."""
    ext = path.suffix.lower().lstrip(".")
    return {"csv": "csv", "json": "json", "parquet": "parquet", "pq": "parquet"}.get(ext)


def _defused(table: pa.Table) -> pa.Table:
    """String cells that would start a spreadsheet formula, prefixed with an apostrophe."""
    columns = []
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            risky = pc.fill_null(pc.match_substring_regex(column, r"^[=+\-@\t\r]"), False)
            column = pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)
        columns.append(column)
    # a header is a cell to a spreadsheet too (a metric named '=HYPERLINK(...)')
    names = [f"'{n}" if n[:1] in _FORMULA else n for n in table.column_names]
    return pa.table(columns, names=names)


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # strict JSON has no NaN or infinity
    return value


def _json_bytes(table: pa.Table) -> bytes:
    rows = [{k: _json_value(v) for k, v in row.items()} for row in table.to_pylist()]
    return json_text(rows, allow_nan=False, indent=1).encode("utf-8") + b"\n"


def write_table(table: pa.Table, path: str | Path, fmt: str, *, overwrite: bool = False) -> Path:
    """Write `table` to `path` in `fmt` (one of FORMATS); the file appears whole or not at all
    (written beside it, then renamed). Returns the absolute path written."""
    if fmt not in FORMATS:
        raise RagtuiError(f"export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    target = Path(path).expanduser()
    if not target.name or target.is_dir():
        raise RagtuiError(f"{target}: expected a file name, found a folder")
    if not target.parent.is_dir():
        raise RagtuiError(f"{target}: the folder {target.parent} does not exist")
    if target.exists() and not overwrite:
        raise RagtuiError(f"{target} exists: choose another name, or confirm to replace it")
    tmp = None
    try:
        # inside the try: a folder the user cannot write to fails here, and is one line
        # naming the file, not a bare PermissionError about a temporary name
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        os.close(fd)
        os.chmod(tmp, ordinary_mode())  # mkstemp makes 0600: an export is an ordinary file
        if fmt == "csv":
            pacsv.write_csv(_defused(table), tmp)
        elif fmt == "json":
            Path(tmp).write_bytes(_json_bytes(table))
        else:
            pq.write_table(table, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        raise RagtuiError(f"cannot write {target}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return target.resolve()
