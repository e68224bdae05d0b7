"""Hostile values in every importer's format raise only RagtuiError, and whatever imports can be
written as a native run file (nothing JSON allows that a run file cannot store slips through).

Each case takes a real fixture of the format, puts a generated hostile value (huge or
non-finite numbers, lone surrogates, control and bidi characters, deep nesting, long text) in
one of its fields, imports it, and writes what was imported.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragtui.core.errors import RagtuiError
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.importers import load_file
from tests.importers.json_fields import field_paths, with_value

DATA = Path(__file__).resolve().parents[1] / "data"

_TEXT = st.lists(
    st.sampled_from(["a", " ", "\x1b[31m", "\u202e", "\x00", "[b]", "\ud800", "é", "\n"]),
    max_size=12,
).map("".join)
HOSTILE = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.sampled_from([2**53 + 1, -(2**63), 10**400 // 10**300]),
        st.floats(allow_nan=True, allow_infinity=True),
        _TEXT,
        st.sampled_from(["C", "P", "1e308", "NaN", "-0", "9" * 30, "x" * 5000, "lone \ud800"]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _dump(doc: Any) -> str:
    # json.dumps writes lone surrogates as \ud800 escapes and NaN/Infinity as tokens that
    # Python's reader accepts: exactly the hostile documents a file can hold
    return json.dumps(doc)


def _import_and_write(path: Path, fmt: str | None = None) -> None:
    try:
        runs = load_file(path, fmt)
    except RagtuiError:
        return
    with tempfile.TemporaryDirectory() as out:
        for run_file in runs:
            with contextlib.suppress(RagtuiError):
                write_run_file(
                    Path(out) / f"{run_file.run.id}{SUFFIX}", run_file.run, run_file.cases
                )


def _json_case(name: str, depth: int, skip: frozenset[str] = frozenset()):
    source = DATA / name
    doc = json.loads(source.read_text())
    paths = field_paths(doc, depth, skip)

    @SETTINGS
    @given(index=st.integers(0, len(paths) - 1), value=HOSTILE)
    def check(index: int, value: Any) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / source.name
            path.write_text(_dump(with_value(doc, paths[index], value)))
            _import_and_write(path)

    return check


test_mlflow_split_json = _json_case("mlflow/eval_results_table.json", 3)
test_inspect_json_log = _json_case(
    "inspect/refunds.json", 5, frozenset({"events", "messages", "plan", "stats"})
)
test_deepeval_run = _json_case("deepeval/latest_test_run.json", 5)
test_promptfoo_output = _json_case("promptfoo/promptfoo_v3_refunds.json", 4)
test_ragas_json_records = _json_case("ragas/ragas_v04_refunds.json", 3)


@SETTINGS
@given(cells=st.lists(_TEXT | st.sampled_from(["7", "1e999", "-", "0.5"]), min_size=3, max_size=3))
def test_ragas_csv_cells(cells: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for header in ("user_input,response,faithfulness", "metric,score,extra"):
            path = Path(tmp) / "r.csv"
            quoted = ",".join('"' + c.replace('"', '""') + '"' for c in cells)
            path.write_text(f"{header}\n{quoted}\n", errors="surrogatepass")
            _import_and_write(path)


@SETTINGS
@given(
    column=st.sampled_from(["result", "calls_json", "input", "output", "record_json", "status"]),
    value=HOSTILE,
)
def test_trulens_database(column: str, value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "default.sqlite"
        path.write_bytes((DATA / "trulens" / "default.sqlite").read_bytes())
        cell = (
            value if isinstance(value, int | float | str) and column == "result" else _dump(value)
        )
        table = (
            "trulens_records"
            if column in ("input", "output", "record_json")
            else "trulens_feedbacks"
        )
        try:
            with sqlite3.connect(path) as con:
                con.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = 1", (cell,))
        except (sqlite3.Error, OverflowError, UnicodeEncodeError):
            return  # sqlite itself cannot hold it: no such file exists
        _import_and_write(path, "trulens")
