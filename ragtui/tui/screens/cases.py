"""A run's case list: one row per case with its metric scores (points), Arrow-backed.

The table is built by the store in DuckDB (scores pivoted into one column per metric, joined
to the cases) and handed to textual-fastdatatable as Arrow, which renders only the rows on
screen: a run of 100,000 cases opens without a per-row Python loop anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, LoadingIndicator, Static
from textual_fastdatatable import ArrowBackend, DataTable

from ragtui.core.store import Store
from ragtui.format import UNSAFE_RE2, printable, short_metrics
from ragtui.tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp

# The characters printable() escapes (RE2 syntax): finds the values that need it.
_CONTROL_RE = UNSAFE_RE2
TEXT_COLUMNS = ("case", "question", "answer")
RAW_ID = "case_id"  # the id as the run file has it; "case" is its printable one-line form
DEBOUNCE_FROM_ROWS = 20_000  # filtering more rows than this waits for a pause in the typing
DEBOUNCE_S = 0.15


def case_table(store: Store, run_id: str) -> tuple[pa.Table, list[str]]:
    """(table, metrics): #, case, one string column per metric, question, answer, ms, and
    last the raw `case_id` (not shown: the Case screen looks cases up by it).

    Scores show as points with one decimal, `error` where the metric failed, null where the
    case was never scored on it (the store builds it: `Store.case_grid`). Untrusted text is
    flattened to one line and made printable.
    """
    table, metrics = store.case_grid(run_id)
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


def filter_table(table: pa.Table, needle: str) -> pa.Table:
    """Rows whose case id, question or answer contain `needle` (case-insensitive)."""
    if not needle:
        return table
    mask = None
    for name in TEXT_COLUMNS:
        hit = pc.fill_null(pc.match_substring(table.column(name), needle, ignore_case=True), False)
        mask = hit if mask is None else pc.or_(mask, hit)
    return table.filter(mask)


def measured_backend(table: pa.Table) -> ArrowBackend:
    """An Arrow backend whose column widths are measured now: that scans every row, so
    callers do it in a worker and the UI thread only mounts the finished table."""
    backend = ArrowBackend(table.drop_columns([RAW_ID]))
    backend.render_markup = False  # as the widget will set it: widths are measured literally
    _ = backend.column_content_widths  # computed once and cached by the backend
    return backend


def sort_table(table: pa.Table, metric: str | None) -> pa.Table:
    """Lowest score first (then errors, then unscored); the file's order when metric is None.

    The score cells are "%5.1f" strings, so string order is numeric order ("  7.0" < " 50.0"
    < "100.0"), and "error" sorts after every number.
    """
    if metric is None:
        return table
    return table.sort_by([(metric, "ascending"), ("#", "ascending")])


class CaseGrid(DataTable):
    """The Arrow-backed case table; a double click opens the case (one click highlights)."""

    class Opened(Message):
        """The user double-clicked a row."""

    def on_click(self, event: events.Click) -> None:
        if event.chain == 2:
            self.post_message(self.Opened())


class CaseListScreen(Screen[None]):
    HELP = (
        "One run's cases with their scores in points; **s** sorts by a metric (worst first), "
        "**/** filters, **enter** opens a case."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open_case",
            "open case",
            priority=True,
            tooltip="Open the highlighted case (]/[ step through this list there)",
        ),
        Binding(
            "s",
            "sort",
            "sort",
            tooltip="Sort by the next metric, lowest first (then the next; last: file order)",
        ),
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="Filter cases by id, question or answer",
        ),
        Binding("escape", "back", "back", tooltip="Clear the filter, else back to the runs"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.full: pa.Table | None = None
        self.shown: pa.Table | None = None
        self.metrics: list[str] = []
        self.needle = ""
        self.sort_metric: str | None = None
        self._debounce: Timer | None = None
        self.run_name = run_id

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield Input(placeholder="filter cases by id, question or answer…", id="filter")
        yield LoadingIndicator(id="loading")
        yield Vertical(id="table-box")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self._title()
        self.query_one("#status", Static).update(Text("loading cases…", style="dim"))
        store = self.ragtui.store
        if store is not None:
            self.load(store)

    def on_resize(self) -> None:
        self._title()
        self.query_one(Footer).compact = self.size.width < 120

    def _title(self) -> None:
        title = Text("ragtui", style="bold")
        title.append(" · Cases  ")
        title.append(printable(self.run_name), style="bold")
        if self.run_name != self.run_id:
            title.append(f"  {printable(self.run_id)}", style="dim")
        self.query_one(TitleBar).set_title(title, str(self.ragtui.folder))

    @work(thread=True, exclusive=True, group="cases")
    def load(self, store: Store) -> None:
        try:
            name = store.run(self.run_id).name
            table, metrics = case_table(store, self.run_id)
        except Exception as err:  # e.g. the run file deleted meanwhile; never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        backend = measured_backend(table)
        self.app.call_from_thread(self._loaded, name, table, backend, metrics)

    def _failed(self, error: str) -> None:
        self.query_one(LoadingIndicator).display = False
        self.query_one("#status", Static).update(Text(printable(error), style="bold red"))
        self.notify(error, title="cannot list cases", severity="error", markup=False)

    async def _loaded(
        self, name: str, table: pa.Table, backend: ArrowBackend, metrics: list[str]
    ) -> None:
        self.run_name, self.full, self.shown, self.metrics = name, table, table, metrics
        self._title()
        self.query_one(LoadingIndicator).display = False
        await self._show(table, backend)

    async def _show(self, table: pa.Table, backend: ArrowBackend | None = None) -> None:
        """Swap in a fresh table widget (fastdatatable tables are immutable by design)."""
        self.shown = table
        box = self.query_one("#table-box", Vertical)
        await box.remove_children()
        narrow = self.size.width < 120
        shorts = short_metrics(self.metrics)
        # metric names are data: Text labels, so a "[b]" in one is not markup
        labels: list[str | Text] = [
            Text(printable(shorts[c] if narrow and c in shorts else c))
            for c in table.column_names
            if c != RAW_ID
        ]
        grid = CaseGrid(
            backend=backend or measured_backend(table),
            column_labels=labels,
            cursor_type="row",
            render_markup=False,
            null_rep="—",
            max_column_content_width=max(20, min(80, self.size.width // 3)),
            show_row_labels=False,
            id="cases",
        )
        await box.mount(grid)
        box = self.query_one("#filter", Input)
        if not (box.display and box.has_focus):
            grid.focus()
        self._status()

    def _status(self) -> None:
        if self.full is None or self.shown is None:
            return
        out = Text(no_wrap=True, overflow="ellipsis")
        total, shown = self.full.num_rows, self.shown.num_rows
        out.append(f"{shown} of {total} cases" if self.needle else f"{total} cases", style="bold")
        if self.needle:  # before the legend, so a narrow terminal still shows it
            out.append(" · filter: ", style="dim")
            out.append(printable(self.needle), style="bold")
        if self.sort_metric is not None:
            out.append(" · lowest ", style="dim")
            out.append(printable(self.sort_metric), style="bold")
            out.append(" first", style="dim")
        out.append(" · scores in points (0-100), error = the metric failed", style="dim")
        self.query_one("#status", Static).update(out)

    def visible_case_ids(self) -> list[str]:
        """The case ids of the rows shown (after the filter), in order: the Case screen's list."""
        return [] if self.shown is None else self.shown.column(RAW_ID).to_pylist()

    def action_open_case(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#cases", DataTable).focus()
            return
        if self.shown is None or self.shown.num_rows == 0:
            return
        grid = self.query_one("#cases", DataTable)
        ids, index = self.visible_case_ids(), grid.cursor_row
        self.app.open_case(self.run_id, ids, index, metric=self.sort_metric)  # type: ignore[attr-defined]

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display and (box.value or self.focused is box):
            box.value = ""
            box.display = False
            return
        self.app.pop_screen()

    @on(Input.Changed, "#filter")
    async def _filter_changed(self, event: Input.Changed) -> None:
        if self.full is None:
            return
        self.needle = event.value.strip()
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if self.full.num_rows > DEBOUNCE_FROM_ROWS:
            # a big table: wait for a pause in the typing instead of refiltering per key
            self._debounce = self.set_timer(DEBOUNCE_S, self._refilter)
            return
        await self._refilter()

    async def _refilter(self) -> None:
        assert self.full is not None
        if self.full.num_rows > DEBOUNCE_FROM_ROWS:
            self.refilter(self.full, self.needle, self.sort_metric)
            return
        await self._show(sort_table(filter_table(self.full, self.needle), self.sort_metric))

    @work(thread=True, exclusive=True, group="filter")
    def refilter(self, full: pa.Table, needle: str, metric: str | None) -> None:
        """Filter, sort and measure a big table off the UI thread."""
        try:
            table = sort_table(filter_table(full, needle), metric)
            backend = measured_backend(table)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._refiltered, needle, metric, table, backend)

    async def _refiltered(
        self, needle: str, metric: str | None, table: pa.Table, backend: ArrowBackend
    ) -> None:
        if (needle, metric) != (self.needle, self.sort_metric):
            return  # the user typed on meanwhile: a newer result is on its way
        await self._show(table, backend)

    async def action_sort(self) -> None:
        if self.full is None or not self.metrics:
            return
        order = [None, *self.metrics]
        self.sort_metric = order[(order.index(self.sort_metric) + 1) % len(order)]
        await self._refilter()

    def on_case_grid_opened(self) -> None:
        self.action_open_case()
