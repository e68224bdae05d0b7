"""A run's case table as Arrow, and the widget that shows it (textual-fastdatatable, which
renders only the rows on screen): built by the store in DuckDB, untrusted text made
printable, filtered and sorted with Arrow compute, widths measured in Arrow, exported as data,
a row copied as Markdown. Everything here but CaseGrid runs in worker threads."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import var
from textual_fastdatatable import ArrowBackend, DataTable

from ragtui.core.store import Store
from ragtui.format import CASE_COLUMNS, UNSAFE_RE2, md_code, md_inline, md_table, printable
from ragtui.format.text import metric_columns
from ragtui.tui.widgets.column_focus import ColumnFocus, ColumnFocused

# The characters printable() escapes (RE2 syntax): finds the values that need it.
_CONTROL_RE = UNSAFE_RE2
TEXT_COLUMNS = ("case", "question", "answer")
RAW_ID = "case_id"  # the id as the run file has it; "case" is its printable one-line form
EXACT_WIDTHS_UP_TO = 5_000  # non-ASCII values measured exactly; more: an upper bound


def case_table(store: Store, run_id: str, limit: int | None = None) -> tuple[pa.Table, list[str]]:
    """(table, metrics): #, case, one string column per metric, question, answer, ms, and
    last the raw `case_id` (not shown: the Case screen looks cases up by it).

    Scores show as points with one decimal, `error` where the metric failed, null where the
    case was never scored on it (the store builds it: `Store.case_grid`). Untrusted text is
    flattened to one line and made printable. `limit`: the first cases only.
    """
    table, metrics = store.case_grid(run_id, limit)
    for name in TEXT_COLUMNS:
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, literal_column(table.column(name)))
    names = ["#", "case", *metrics, "question", "answer", "ms", RAW_ID]
    return table.rename_columns(names), metrics


def literal_column(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """`printable()` applied to the (usually zero) values holding control characters."""
    mask = pc.fill_null(pc.match_substring_regex(column, _CONTROL_RE), False)
    if not pc.any(mask).as_py():
        return column
    values = column.to_pylist()
    for i in np.flatnonzero(mask.to_numpy(zero_copy_only=False)):
        values[i] = printable(values[i])
    return pa.array(values, pa.string())


def middle_cut_column(column: pa.ChunkedArray, width: int) -> pa.ChunkedArray:
    """The values longer than `width` characters cut in the middle with "…" (as
    format.middle_cut), in Arrow: a run of a million cases is not cut value by value."""
    lengths = pc.utf8_length(column)
    long = pc.fill_null(pc.greater(lengths, width), False)
    if width < 3 or not pc.any(long).as_py():
        return column
    tail = width // 2
    head = width - 1 - tail
    cut = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(column, 0, head),
        pc.utf8_slice_codeunits(column, -tail),
        "…",
    )
    return pc.if_else(long, cut, column)


def filter_table(table: pa.Table, needle: str) -> pa.Table:
    """Rows whose case id, question or answer contain `needle` (case-insensitive)."""
    if not needle:
        return table
    mask = None
    for name in TEXT_COLUMNS:
        hit = pc.fill_null(pc.match_substring(table.column(name), needle, ignore_case=True), False)
        mask = hit if mask is None else pc.or_(mask, hit)
    return table.filter(mask)


def sort_table(table: pa.Table, metric: str | None) -> pa.Table:
    """Lowest score first (then errors, then unscored); the file's order when metric is None.

    The score cells are "%5.1f" strings, so string order is numeric order ("  7.0" < " 50.0"
    < "100.0"), and "error" sorts after every number.
    """
    if metric is None:
        return table
    return table.sort_by([(metric, "ascending"), ("#", "ascending")])


class CaseBackend(ArrowBackend):
    """An Arrow backend that measures its text columns in Arrow: exactly where every value
    is ASCII (a character, a cell) or the non-ASCII values are few, else an upper bound (two
    cells a character) so a column of a million non-ASCII questions is never measured value
    by value in Python. The grid caps wide columns anyway."""

    @property
    def column_content_widths(self) -> list[int]:
        if not self._column_content_widths:
            self._column_content_widths = [self._width(c) for c in self.data.columns]
        return self._column_content_widths

    def _width(self, column: pa.ChunkedArray) -> int:
        if not pa.types.is_string(column.type) or column.num_chunks == 0:
            return self._measure(column) or 0
        chars = pc.utf8_length(column)
        odd = pc.not_equal(pc.binary_length(column), chars)  # a non-ASCII value
        n_odd = pc.sum(odd).as_py() or 0
        if not n_odd:
            return int(pc.max(chars).as_py() or 0)
        if n_odd <= EXACT_WIDTHS_UP_TO:
            return self._measure(column.fill_null("")) or 0
        return int(pc.max(pc.if_else(odd, pc.multiply(chars, 2), chars)).as_py() or 0)


def measured_backend(table: pa.Table, case_width: int | None = None) -> ArrowBackend:
    """A backend whose column widths are measured now: callers do it in a worker and the UI
    thread only mounts the finished table. `case_width`: longer case ids are cut in the middle
    to it (shown only: filter, sort, open and export keep the whole id), so ids that share a
    long prefix still read apart by their ends, where the table would cut them all to that
    prefix."""
    shown = table.drop_columns([RAW_ID])
    if case_width is not None:
        index = shown.schema.get_field_index("case")
        shown = shown.set_column(index, "case", middle_cut_column(shown.column("case"), case_width))
    backend = CaseBackend(shown)
    backend.render_markup = False  # as the widget will set it: widths are measured literally
    _ = backend.column_content_widths  # computed once and cached by the backend
    return backend


def describe(key: str, metrics: list[str]) -> str:
    if key in metrics:
        return f"{printable(key)}: {CASE_COLUMNS['metric']}"
    return CASE_COLUMNS.get(key, key)


class CaseGrid(ColumnFocus, DataTable):
    """The Arrow-backed case table; a double click opens the case (one click highlights)."""

    ColumnFocused = ColumnFocused

    class Opened(Message):
        """The user double-clicked a row."""

    focused_column: var[int] = var(-1, init=False)

    def __init__(self, *, labels: list[Text], keys: list[str], metrics: list[str], **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(column_labels=list(labels), **kw)
        self._labels, self._keys, self._metrics = labels, keys, metrics

    @property
    def column_keys(self) -> list[str]:
        return self._keys

    def header_label(self, index: int) -> Text:
        return self._labels[index].copy()

    def describe(self, key: str) -> str:
        return describe(key, self._metrics)

    def watch_focused_column(self, old: int, new: int) -> None:
        self._show_focused_column(old, new)

    def on_click(self, event: events.Click) -> None:
        if event.chain == 2:
            self.post_message(self.Opened())


def export_cases(store: Store, run_id: str, ids: pa.ChunkedArray) -> pa.Table:
    """The cases `ids` (in that order) of a run as data: case_id, n, question, answer,
    latency_ms, each metric's value (a fraction) and its error message."""
    table, metrics = store.case_values(run_id)
    names = ["case_id", "n", "question", "answer", "latency_ms"]
    named = metric_columns(metrics, names, (" error",))
    for m in metrics:
        names += [named[m], f"{named[m]} error"]
    table = table.rename_columns(names)
    order = pc.index_in(ids, value_set=table.column("case_id"))
    return table.take(order)


def case_row_markdown(row: dict[str, object], metrics: list[str], run_name: str) -> str:
    """A case-list row as Markdown (the `y` copy): id, question, answer, scores."""
    out = [
        f"## case {md_code(row[RAW_ID])} of {md_inline(run_name)}",
        "",
        f"**Question** {md_inline(row['question'])}",
        "",
        f"**Answer** {md_inline(row['answer'])}",
        "",
    ]
    out += md_table(
        ["metric", "score (points)"],
        [[m, "—" if row[m] is None else str(row[m]).strip()] for m in metrics],
    )
    if row.get("ms") is not None:
        out += ["", f"latency {row['ms']} ms"]
    return "\n".join(out) + "\n"
