"""A run's case list: one row per case with its metric scores (points), Arrow-backed.

The table is built by the store in DuckDB (scores pivoted into one column per metric, joined
to the cases) and handed to textual-fastdatatable as Arrow, which renders only the rows on
screen. It is paged: the first cases show at once, the whole run follows from a worker, and
filtering and sorting happen in workers too; the UI thread only swaps in a finished table.

When the run's file changes on disk (a harness still writing it, the live watch), a line says so
and `u` lists the cases again, as on Compare and Case: the list does not reorder under the
cursor while it is being read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, LoadingIndicator, Static
from textual_fastdatatable import ArrowBackend

from ragtui.core.store import Store
from ragtui.format import printable, short_metrics
from ragtui.tui.messages import RunsChanged
from ragtui.tui.sharing import export
from ragtui.tui.widgets.case_grid import (
    RAW_ID,
    CaseGrid,
    case_row_markdown,
    case_table,
    export_cases,
    filter_table,
    measured_backend,
    sort_table,
)
from ragtui.tui.widgets.column_focus import ColumnFocused
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.stale_line import REFRESH_KEY, FollowsTheFolder, StaleLine
from ragtui.tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp

FIRST_PAGE = 200  # cases shown before the whole run is loaded (several screenfuls)
DEBOUNCE_FROM_ROWS = 20_000  # filtering more rows than this waits for a pause in the typing
DEBOUNCE_S = 0.15


class CaseListScreen(FollowsTheFolder, Screen[None]):
    # as on Runs: Textual's auto-focus could land on the hidden filter box while the screen
    # loads (seen under load); the table takes the focus once it is filled
    AUTO_FOCUS = ""
    HELP = (
        "One run's cases with their scores in points; **s** sorts by a metric (worst first), "
        "**/** filters, **enter** opens a case; **u** lists them again after the run changed "
        "on disk."
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
        Binding("e", "export", "export", tooltip="Export the cases shown to CSV, JSON or Parquet"),
        Binding(
            "y", "copy", "copy", tooltip="Copy the highlighted case's row as Markdown (OSC 52)"
        ),
        Binding("escape", "back", "back", tooltip="Clear the filter, else back to the runs"),
        Binding(
            REFRESH_KEY,
            "refresh_runs",
            "update",
            tooltip="List the cases again after the run changed on disk",
        ),
    ]
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]

    loaded: var[bool] = var(False)  # the first page is on screen
    complete: var[bool] = var(False)  # every case is loaded (filter and sort need them)
    needle: var[str] = var("")
    sort_metric: var[str | None] = var(None)
    stale: reactive[tuple[str, ...]] = reactive((), init=False, bindings=True)

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.run_name = run_id
        self.total = 0  # cases in the run
        self.full: pa.Table | None = None  # every case (None until the worker has them)
        self.shown: pa.Table | None = None  # what the grid shows now
        self.metrics: list[str] = []
        self._debounce: Timer | None = None
        self._column_timer: Timer | None = None

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield StaleLine(id="cases-stale", markup=False)
        yield Input(placeholder="filter cases by id, question or answer…", id="filter")
        yield LoadingIndicator(id="loading")
        yield Vertical(id="table-box")
        yield Static(id="status")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self._title()
        self.query_one("#status", Static).update(Text("loading cases…", style="dim"))
        store = self.ragtui.store
        if store is not None:
            self.load_first(store)

    def _title(self) -> None:
        title = Text("ragtui", style="bold")
        title.append(" · Cases  ")
        title.append(printable(self.run_name), style="bold")
        if self.run_name != self.run_id:
            title.append(f"  {printable(self.run_id)}", style="dim")
        self.query_one(TitleBar).set_title(title, str(self.ragtui.folder))

    # ------------------------------------------------------------ loading, paged

    @work(thread=True, exclusive=True, group="cases", description="list the first cases")
    def load_first(self, store: Store) -> None:
        """The first cases, at once (any run size), then the rest in another worker."""
        try:
            name = store.run(self.run_id).name
            total = store.case_count(self.run_id)
            table, metrics = case_table(store, self.run_id, FIRST_PAGE)
            backend = measured_backend(table, self._cell_width())
        except Exception as err:  # e.g. the run file deleted meanwhile; never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._first, name, total, table, backend, metrics, store)

    async def _first(
        self,
        name: str,
        total: int,
        table: pa.Table,
        backend: ArrowBackend,
        metrics: list[str],
        store: Store,
    ) -> None:
        self.run_name, self.total, self.metrics = name, total, metrics
        self._title()
        await self._show(table, backend)
        self.loaded = True
        if total > table.num_rows:  # the rest once the first page is on screen
            self.call_after_refresh(self.load_rest, store)
        else:
            self._complete(table)

    @work(thread=True, exclusive=True, group="cases-rest", description="list every case")
    def load_rest(self, store: Store) -> None:
        try:
            table, _ = case_table(store, self.run_id)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._complete, table)

    def _complete(self, table: pa.Table) -> None:
        already = self.shown is not None and self.shown.num_rows == table.num_rows
        self.full, self.total = table, table.num_rows
        self.complete = True
        if already and not self.needle and self.sort_metric is None:
            self._status()  # the first page was the whole run
            return
        self.refilter()  # every case, with whatever the user asked for meanwhile

    @work(thread=True, exclusive=True, group="cases", description="list the cases again")
    def reload(self, store: Store) -> None:
        """Every case again (`u` after the run changed on disk), then filtered and sorted as
        the user has it."""
        try:
            name = store.run(self.run_id).name
            table, metrics = case_table(store, self.run_id)
        except Exception as err:  # e.g. the run file deleted; never ends the app
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._reloaded, name, table, metrics)

    def _reloaded(self, name: str, table: pa.Table, metrics: list[str]) -> None:
        self.run_name, self.metrics = name, metrics
        self._title()
        self.full, self.total, self.complete = table, table.num_rows, True
        if self.sort_metric not in (None, *metrics):
            self.sort_metric = None  # its metric is gone from the run
        self.refilter()  # the cursor stays on its case (_show)

    def watch_loaded(self, loaded: bool) -> None:
        self.set_class(loaded, "-loaded")

    def _failed(self, error: str) -> None:
        self.query_one(LoadingIndicator).display = False
        self.query_one("#status", Static).update(Text(printable(error), style="bold red"))
        self.notify(error, title="cannot list cases", severity="error", markup=False)

    # ------------------------------------------------------------ showing a table

    def _cell_width(self) -> int:
        """The widest a column of the grid is shown (a case id longer is cut in its middle)."""
        return max(20, min(80, self.size.width // 3))

    async def _show(self, table: pa.Table, backend: ArrowBackend) -> None:
        """Swap in a fresh table widget (fastdatatable tables are immutable by design); the
        cursor stays on the same case when it is still shown."""
        box = self.query_one("#table-box", Vertical)
        old = self.query("#cases")
        keep = None
        if old and self.shown is not None and 0 <= old.first().cursor_row < self.shown.num_rows:
            keep = self.shown.column(RAW_ID)[old.first().cursor_row].as_py()
        self.shown = table
        narrow = self.has_class("-narrow")
        shorts = short_metrics(self.metrics)
        keys = [c for c in table.column_names if c != RAW_ID]
        # metric names are data: Text labels, so a "[b]" in one is not markup
        labels = [Text(printable(shorts[c] if narrow and c in shorts else c)) for c in keys]
        grid = CaseGrid(
            labels=labels,
            keys=keys,
            metrics=self.metrics,
            backend=backend,
            cursor_type="row",
            render_markup=False,
            null_rep="—",
            max_column_content_width=self._cell_width(),
            show_row_labels=False,
            id="cases",
        )
        box_ = self.query_one("#filter", Input)
        focus = not (box_.display and box_.has_focus)  # typing in the filter goes on
        await box.remove_children()
        await box.mount(grid)
        if keep is not None:
            index = pc.index(table.column(RAW_ID), keep).as_py()
            if index >= 0:
                grid.move_cursor(row=index)
        if focus:
            grid.focus()
        self._status()

    def _status(self) -> None:
        if self.shown is None:
            return
        out = Text(no_wrap=True, overflow="ellipsis")
        shown = self.shown.num_rows
        if not self.complete:
            out.append(f"first {shown:,} of {self.total:,} cases", style="bold")
            out.append(" · loading the rest…", style="dim")
        elif self.needle:
            out.append(f"{shown:,} of {self.total:,} cases", style="bold")
        else:
            out.append(f"{self.total:,} cases", style="bold")
        if self.needle:  # before the legend, so a narrow terminal still shows it
            out.append(" · filter: ", style="dim")
            out.append(printable(self.needle), style="bold")
        if self.sort_metric is not None:
            out.append(" · lowest ", style="dim")
            out.append(printable(self.sort_metric), style="bold")
            out.append(" first", style="dim")
        out.append(" · scores in points (0-100), error = the metric failed · ←→ column help", "dim")
        self.query_one("#status", Static).update(out)

    @on(ColumnFocused)
    def _column_focused(self, event: ColumnFocused) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{printable(event.key)}: ", style="bold")
        line.append(
            event.description.split(": ", 1)[-1] if event.key in self.metrics else event.description
        )
        self.query_one("#status", Static).update(line)
        if self._column_timer is not None:
            self._column_timer.stop()
        self._column_timer = self.set_timer(6.0, self._status)

    # ------------------------------------------------------------ the run changed on disk

    def on_runs_changed(self, message: RunsChanged) -> None:
        if self.run_id in message.changed or self.run_id in message.removed:
            self.stale = ("the run",)
            self.notify(
                f"the run changed on disk: {REFRESH_KEY} lists its cases again", severity="warning"
            )

    def action_refresh_runs(self) -> None:
        store = self.ragtui.store
        if store is None:
            return
        self.stale = ()
        self.reload(store)

    # ------------------------------------------------------------ filter and sort

    def watch_needle(self) -> None:
        self._changed()

    def watch_sort_metric(self) -> None:
        self._changed()

    def _changed(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if self.full is None:  # the rest is still loading: applied when it arrives
            self._status()
            return
        if self.full.num_rows > DEBOUNCE_FROM_ROWS:
            # a big table: wait for a pause in the typing instead of refiltering per key
            self._debounce = self.set_timer(DEBOUNCE_S, self.refilter)
            return
        self.refilter()

    @work(thread=True, exclusive=True, group="filter", description="filter and sort the cases")
    def refilter(self) -> None:
        """Filter, sort and measure off the UI thread (any size)."""
        full, needle, metric = self.full, self.needle, self.sort_metric
        if full is None:
            return
        try:
            table = sort_table(filter_table(full, needle), metric)
            backend = measured_backend(table, self._cell_width())
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

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()

    def action_sort(self) -> None:
        if not self.metrics:
            return
        order = [None, *self.metrics]
        self.sort_metric = order[(order.index(self.sort_metric) + 1) % len(order)]

    # ------------------------------------------------------------ actions

    def visible_case_ids(self) -> list[str]:
        """The case ids of the rows shown (after the filter), in order: the Case screen's list."""
        return [] if self.shown is None else self.shown.column(RAW_ID).to_pylist()

    def _grid(self) -> CaseGrid | None:
        found = self.query("#cases")
        return found.first() if found else None  # type: ignore[return-value]

    def action_open_case(self) -> None:
        grid = self._grid()
        if isinstance(self.focused, Input):
            if grid is not None:
                grid.focus()
            return
        if grid is None or self.shown is None or self.shown.num_rows == 0:
            return
        ids, index = self.visible_case_ids(), grid.cursor_row
        self.ragtui.open_case(self.run_id, ids, index, metric=self.sort_metric)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_back(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display and (box.value or self.focused is box):
            box.value = ""
            box.display = False
            grid = self._grid()
            if grid is not None:
                grid.focus()
            return
        self.app.pop_screen()

    def action_copy(self) -> None:
        grid = self._grid()
        if grid is None or self.shown is None or not 0 <= grid.cursor_row < self.shown.num_rows:
            self.notify("no case highlighted", severity="warning")
            return
        row = self.shown.slice(grid.cursor_row, 1).to_pylist()[0]
        text = case_row_markdown(row, self.metrics, self.run_name)
        self.app.copy_to_clipboard(text)
        self.notify(f"copied case {printable(row[RAW_ID])} as Markdown", markup=False)

    def action_export(self) -> None:
        if self.shown is None:
            self.notify("still loading the cases", severity="warning")
            return
        if not self.complete:
            self.notify("still loading the cases: export when every case is in", severity="warning")
            return
        ids, store = self.shown.column(RAW_ID), self.ragtui.store
        # the rows shown, in their order, as data: scores as fractions, errors as text
        export(
            self, "the cases shown", "ragtui-cases", lambda: export_cases(store, self.run_id, ids)
        )

    def on_case_grid_opened(self) -> None:
        self.action_open_case()
