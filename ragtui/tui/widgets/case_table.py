"""The per-case rows of a comparison as Compare lists them: filtered (metric, regressions
only, class, text), worst first, made printable and cut to fit; the classes joined in; and the
CaseList widget that shows them.

Filtering is Arrow work, done in a thread worker: a 100,000-case list filters without the UI
waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static
from textual_fastdatatable import ArrowBackend
from textual_fastdatatable import DataTable as FastTable

from ragtui.core.case_history import CaseClass
from ragtui.format import cells, middle_cut_all, printable, pts, short_metrics, signed_pts
from ragtui.tui.widgets.literal import excerpt, join, lit

QUESTION_WIDTH = 70
QUESTION_MIN = 8  # the question column is never cut below this
CASE_MIN = 16  # nor a case id below this (the table scrolls sideways instead)
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
    question cut to what the other columns leave of `pane_width` (at least 8 characters).

    ASCII only where the data allows (no arrow, an ASCII ellipsis): fastdatatable measures an
    all-ASCII column with Arrow alone, but any other column cell by cell in Python.
    """
    ids = [printable(i, multiline=False) for i in rows["case_id"].to_pylist()]
    # one format a column (one decimal: "87.5" over "75.0", not "75"), right-aligned
    out = {
        "A": _right([pts(x) for x in rows["a"].to_pylist()]),
        "B": _right([pts(x) for x in rows["b"].to_pylist()]),
        "Δ pts": _right([signed_pts(x) for x in rows["delta"].to_pylist()]),
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
    # the figures always show: a case id longer than the room they leave (beside a question
    # of QUESTION_MIN) is cut in the middle, its distinct end kept
    room = max(CASE_MIN, pane_width - used - 2 - 2 - QUESTION_MIN - 2)
    if any(cells(i) > room for i in ids):
        cut = middle_cut_all(ids, room)
        ids = [cut[i] for i in ids]
    out = {"case": ids, **out}
    used += max([len("case"), *(cells(i) for i in ids[:1000])]) + 2
    width = max(QUESTION_MIN, pane_width - used - 2 - 2)
    out["question"] = [excerpt(q, width, ellipsis="...") for q in rows["question"].to_pylist()]
    return pa.table(out)


def _right(values: list[str]) -> list[str]:
    """Figures padded to one width, so the column lines them up on the right."""
    width = max((len(v) for v in values), default=0)
    return [v.rjust(width) for v in values]


def export_rows(rows: pa.Table) -> pa.Table:
    """The filtered rows as exported: fractions (as --json), full question text."""
    keep = [
        c
        for c in ("case_id", "metric", "a", "b", "delta", "class", "question")
        if c in rows.column_names
    ]
    return rows.select(keep)


class CaseTable(FastTable):
    """The case list's table. textual-fastdatatable binds tab / shift+tab to its next / previous
    cell, which took the key from the screen: Compare's `tab` (metric table / case list) moved
    the row cursor down instead, and the focus never went back to the metric table."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "app.focus_next", "next pane", show=False),
        Binding("shift+tab", "app.focus_previous", "previous pane", show=False),
    ]


class CaseList(Vertical):
    """A comparison's cases under their caption, with the filter box: `show` filters in a
    thread worker (Arrow) and swaps in a textual-fastdatatable when the rows are ready."""

    class Filtered(Message):
        """The rows for filter `f` are ready to show."""

        def __init__(self, f: CaseFilter, ids: list[str], shown: ArrowBackend, total: int):
            super().__init__()
            self.f, self.ids, self.shown, self.total = f, ids, shown, total

    class FilterFailed(Message):
        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.visible_ids: list[str] = []
        self.current: CaseFilter | None = None  # the filter shown (or on its way)
        self._swap = asyncio.Lock()
        self._shown: tuple[pa.Table, int, bool, int] | None = None  # show's data and width

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter cases by id or question text", id="case-search")
        yield CaseCaption(id="case-caption", markup=False)
        yield Vertical(id="case-holder")

    @property
    def table(self) -> FastTable | None:
        tables = self.query("#case-table")
        return tables.first(FastTable) if tables else None

    @property
    def highlighted(self) -> int | None:
        """The cursor's row in the visible list (None when the list is empty)."""
        table = self.table
        if table is None or not self.visible_ids:
            return None
        return min(max(table.cursor_row, 0), len(self.visible_ids) - 1)

    def show(self, cases: pa.Table, f: CaseFilter, total: int, short_classes: bool) -> None:
        self.current = f
        width = self.size.width or 80
        self._shown = (cases, total, short_classes, width)
        self.query_one("#case-holder").loading = True
        self.refilter(cases, f, total, width, short_classes)

    def on_resize(self, event: events.Resize) -> None:
        """The question column is cut to the width the list had: made again at the new one
        (it stayed 15 characters wide beside 90 empty columns after a terminal grew)."""
        if self._shown is None or self.current is None or event.size.width == self._shown[3]:
            return
        cases, total, short_classes, _ = self._shown
        self.show(cases, self.current, total, short_classes)

    @work(thread=True, exclusive=True, group="case-filter", exit_on_error=False)
    def refilter(
        self, cases: pa.Table, f: CaseFilter, total: int, width: int, short_classes: bool
    ) -> None:
        try:
            rows = filter_cases(cases, f)
            backend = ArrowBackend(display_table(rows, width, short_classes))
            backend.render_markup = False  # untrusted text: shown literally
            # measured here, off the UI thread: a non-ASCII column is measured cell by cell,
            # about 1.5 s for 100,000 rows; the table reuses the cached widths
            _ = backend.column_content_widths
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.post_message(self.FilterFailed(str(err)))
            return
        self.post_message(self.Filtered(f, rows["case_id"].to_pylist(), backend, total))

    @on(FilterFailed)
    def _filter_failed(self, message: FilterFailed) -> None:
        text = f"case list: {message.error}"
        self.query_one("#case-holder").loading = False
        self.query_one(CaseCaption).show_error(lit(text, "bold red"))
        self.app.notify(printable(text), severity="error", markup=False)

    @on(Filtered)
    async def _filtered(self, message: Filtered) -> None:
        async with self._swap:  # one table swap at a time: the new table reuses the id
            if message.f != self.current or not self.is_attached:
                return  # a newer filter is on its way
            await self._swap_table(message)

    async def _swap_table(self, message: Filtered) -> None:
        f, ids = message.f, message.ids
        self.visible_ids = ids
        holder = self.query_one("#case-holder")
        holder.loading = False
        old = self.table
        had_focus = old is not None and old.has_focus
        cursor = old.cursor_row if old is not None and had_focus else 0
        await holder.remove_children()
        table = CaseTable(
            backend=message.shown,
            cursor_type="row",
            render_markup=False,  # untrusted text: shown literally
            show_row_labels=False,
            id="case-table",
        )
        await holder.mount(table)
        if had_focus:
            table.focus()
            if 0 < cursor < len(ids):
                table.move_cursor(row=cursor)
        self.query_one(CaseCaption).show(f, len(ids), message.total)


class CaseCaption(Static):
    """The line over the case list, fitted to its width when drawn (caption_text), so a
    resize or the filter box opening never cuts its count."""

    def __init__(self, *, id: str | None = None, markup: bool = False) -> None:
        super().__init__(id=id, markup=markup)
        self._caption: tuple[CaseFilter, int, int] | None = None

    def show(self, f: CaseFilter, shown: int, total: int) -> None:
        self._caption = (f, shown, total)
        self.refresh()

    def show_error(self, text: Text) -> None:
        self._caption = None
        self.update(text)

    def render(self) -> RenderResult:
        if self._caption is None:
            return super().render()
        return caption_text(*self._caption, max(self.content_size.width, 1))


FILTER_MIN = 8  # a filter's text is not cut below this in the caption


def caption_text(f: CaseFilter, shown: int, total: int, width: int) -> Text:
    """The line over the case list, fitted to `width` cells and always ending in the count
    ("· 15 of 48"): the hint goes first, then the words shorten ("regressions only" ->
    "regressions", the class and metric abbreviated, the filter's text cut); at the very
    last the description is cut with an ellipsis, never the count (a caption cut to
    "regressions only · 15 of" hid how many cases the list holds)."""
    count = f" · {shown} of {total}"
    hints = (
        ("  enter opens a case · tab switches tables", "  enter opens a case", "")
        if shown
        else ("  no case matches", "")
    )

    def build(level: int, hint: str) -> Text:
        head = ("cases, worst first · ", "worst first · ", "")[min(max(level - 1, 0), 2)]
        metric = short_metrics([f.metric])[f.metric] if level >= 5 else f.metric
        regressions = " · regressions" if level >= 2 else " · regressions only"
        klass = SHORT_CLASSES.get(f.klass, f.klass) if f.klass and level >= 4 else f.klass
        needle = f.text if level < 6 else excerpt(f.text, FILTER_MIN)
        return join(
            (head, "bold"),
            (metric, "bold"),
            regressions if f.regressions_only else "",
            (f" · {klass}" if klass else "", "bold"),
            (f" · filter “{needle}”" if f.text else "", ""),
            count,
            Text(hint, style="dim" if shown else "yellow"),
        )

    for hint in hints:  # the hint gives way first
        text = build(0, hint)
        if text.cell_len <= width:
            return text
    for level in range(1, 7):
        text = build(level, "")
        if text.cell_len <= width:
            return text
    text.truncate(max(width - len(count), 1), overflow="ellipsis")
    text.append(count)
    text.truncate(width)
    return text
