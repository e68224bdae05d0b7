"""The per-case rows of a comparison as Compare lists them: filtered (metric, regressions
only, class, text), worst first, made printable and cut to fit; and the classes joined in.

Pure Arrow work, done in thread workers: a 100,000-case list filters without the UI waiting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ragtui.core.case_history import CaseClass
from ragtui.format import printable, short_pts, signed_pts
from ragtui.tui.widgets.literal import excerpt

QUESTION_WIDTH = 70
# the class column in narrow tables; Help and the caption give the full names
SHORT_CLASSES = {
    "newly broken": "broken",
    "newly fixed": "fixed",
    "flaky": "flaky",
    "stable pass": "pass",
    "stable fail": "fail",
    "varies by config": "varies",
    "no history": "new",
    "unscored": "unscored",
}
CLASS_SCHEMA = pa.schema(
    [("case_id", pa.string()), ("metric", pa.string()), ("class", pa.string())]
)


@dataclass(frozen=True)
class CaseFilter:
    metric: str
    regressions_only: bool = False
    text: str = ""
    klass: str | None = None  # a case history class (core.case_history.CLASSES)


def class_table(classes: Sequence[CaseClass]) -> pa.Table:
    return pa.table(
        {
            "case_id": [c.case_id for c in classes],
            "metric": [c.metric for c in classes],
            "class": [c.klass for c in classes],
        },
        schema=CLASS_SCHEMA,
    )


def with_classes(cases: pa.Table, classes: pa.Table) -> pa.Table:
    """The case rows (case_id, metric, a, b, delta, question) with a "class" column, still
    worst first (a join does not keep order)."""
    if "class" in cases.column_names:
        cases = cases.drop_columns(["class"])
    joined = cases.join(classes, ["case_id", "metric"], join_type="left outer")
    return joined.sort_by(
        [("delta", "ascending"), ("metric", "ascending"), ("case_id", "ascending")]
    )


def filter_cases(cases: pa.Table, f: CaseFilter) -> pa.Table:
    """The rows a filter keeps, still worst first (the engine's order)."""
    mask = pc.equal(cases["metric"], f.metric)
    if f.regressions_only:
        mask = pc.and_(mask, pc.less(cases["delta"], 0))
    if f.klass is not None and "class" in cases.column_names:
        mask = pc.and_(mask, pc.fill_null(pc.equal(cases["class"], f.klass), False))
    if f.text:
        hit = pc.or_kleene(
            pc.match_substring(cases["case_id"], f.text, ignore_case=True),
            pc.match_substring(cases["question"], f.text, ignore_case=True),
        )
        mask = pc.and_(mask, pc.fill_null(hit, False))
    return cases.filter(mask)


def display_table(
    rows: pa.Table, pane_width: int = QUESTION_WIDTH + 40, short_classes: bool = False
) -> pa.Table:
    """What the case table shows: untrusted text made printable, values in points, the
    question cut to what the other columns leave of `pane_width` (at least 12 characters).

    ASCII only where the data allows (no arrow, an ASCII ellipsis): fastdatatable measures an
    all-ASCII column with Arrow alone, but any other column cell by cell in Python.
    """
    ids = rows["case_id"].to_pylist()
    out = {
        "case": [printable(i, multiline=False) for i in ids],
        "A": [short_pts(x) for x in rows["a"].to_pylist()],
        "B": [short_pts(x) for x in rows["b"].to_pylist()],
        "Δ pts": [signed_pts(x) for x in rows["delta"].to_pylist()],
    }
    if "class" in rows.column_names:
        names = rows["class"].to_pylist()
        out["class"] = [
            "" if k is None else SHORT_CLASSES.get(k, k) if short_classes else k for k in names
        ]
    # each column is as wide as its widest cell (a sample of rows) plus one cell of padding
    # on each side; 2 more for the vertical scrollbar
    used = sum(
        max([len(name), *(len(v) for v in values[:1000])]) + 2 for name, values in out.items()
    )
    width = max(12, pane_width - used - 2 - 2)
    out["question"] = [excerpt(q, width, ellipsis="...") for q in rows["question"].to_pylist()]
    return pa.table(out)


def export_rows(rows: pa.Table) -> pa.Table:
    """The filtered rows as exported: fractions (as --json), full question text."""
    keep = [
        c
        for c in ("case_id", "metric", "a", "b", "delta", "class", "question")
        if c in rows.column_names
    ]
    return rows.select(keep)
