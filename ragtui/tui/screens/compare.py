"""Compare A vs B: per-metric verdicts, the 5% rule, a histogram of deltas, cases worst first."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static
from textual_fastdatatable import ArrowBackend
from textual_fastdatatable import DataTable as FastTable

from ragtui.core.compare import Comparison, compare_runs
from ragtui.core.errors import RagtuiError
from ragtui.format import printable, short_pts, signed_pts
from ragtui.tui.widgets.delta_histogram import DeltaHistogram
from ragtui.tui.widgets.literal import excerpt, join, lit
from ragtui.tui.widgets.metric_table import MetricTable, notes

QUESTION_WIDTH = 70


@dataclass(frozen=True)
class CaseFilter:
    metric: str
    regressions_only: bool = False
    text: str = ""


def filter_cases(cases: pa.Table, f: CaseFilter) -> pa.Table:
    """The rows of the per-case table (case_id, metric, a, b, delta, question) a filter keeps,
    still worst first (the engine's order)."""
    mask = pc.equal(cases["metric"], f.metric)
    if f.regressions_only:
        mask = pc.and_(mask, pc.less(cases["delta"], 0))
    if f.text:
        hit = pc.or_kleene(
            pc.match_substring(cases["case_id"], f.text, ignore_case=True),
            pc.match_substring(cases["question"], f.text, ignore_case=True),
        )
        mask = pc.and_(mask, pc.fill_null(hit, False))
    return cases.filter(mask)


def display_table(rows: pa.Table, question_width: int = QUESTION_WIDTH) -> pa.Table:
    """What the case table shows: untrusted text made printable, values in points.

    ASCII only where the data allows (no arrow, an ASCII ellipsis): fastdatatable measures an
    all-ASCII column with Arrow alone, but any other column cell by cell in Python.
    """
    ids = rows["case_id"].to_pylist()
    return pa.table(
        {
            "case": [printable(i) for i in ids],
            "A": [short_pts(x) for x in rows["a"].to_pylist()],
            "B": [short_pts(x) for x in rows["b"].to_pylist()],
            "Δ pts": [signed_pts(x) for x in rows["delta"].to_pylist()],
            "question": [
                excerpt(q, question_width, ellipsis="...") for q in rows["question"].to_pylist()
            ],
        }
    )


class CompareScreen(Screen):
    """A vs B. The highlighted row of the metric table drives the histogram and the case list."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Back (in the filter box: drop the filter)"),
        Binding("m", "next_metric", "Metric", tooltip="Next metric: histogram and cases follow"),
        Binding(
            "r", "toggle_regressions", "Regressions only", tooltip="Show only cases B made worse"
        ),
        Binding(
            "slash", "search", "Filter", key_display="/", tooltip="Filter cases by id or question"
        ),
        Binding(
            "n", "noise", "Noise check", tooltip="Rerun A's judge K times, then the verdict again"
        ),
    ]

    def __init__(self, a_run_id: str, b_run_id: str) -> None:
        super().__init__()
        self.a_run_id, self.b_run_id = a_run_id, b_run_id
        self.comparison: Comparison | None = None
        self.all_cases: pa.Table | None = None
        self.visible_ids: list[str] = []
        self.case_filter: CaseFilter | None = None
        self._swap = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="compare-title", classes="screen-title", markup=False)
        with Vertical(id="compare-body"):
            yield MetricTable(id="metric-table")
            yield Static(id="compare-notes", markup=False)
            with Horizontal(id="compare-lower"):
                yield DeltaHistogram(id="delta-hist")
                with Vertical(id="case-pane"):
                    yield Input(placeholder="filter cases by id or question text", id="case-search")
                    yield Static(id="case-caption", markup=False)
                    yield Vertical(id="case-holder")
        yield Footer()

    def _title(self, c: Comparison | None = None) -> Text:
        a_name = self.a_run_id if c is None else c.run_a.name
        b_name = self.b_run_id if c is None else c.run_b.name
        reruns_a = "" if c is None or len(c.reruns_a) < 2 else f" ({len(c.reruns_a)} reruns)"
        reruns_b = "" if c is None or len(c.reruns_b) < 2 else f" ({len(c.reruns_b)} reruns)"
        return join(
            ("ragtui · Compare  ", "bold"),
            "A ",
            (a_name, "bold"),
            reruns_a,
            "  vs  B ",
            (b_name, "bold"),
            reruns_b,
        )

    def _fit(self) -> None:
        """Histogram width by terminal width: 80 columns keep room for the case table."""
        self.set_class(self.size.width < 100, "-narrow")
        self.set_class(self.size.width >= 160, "-wide")

    def on_resize(self, event: object) -> None:
        self._fit()

    def on_mount(self) -> None:
        self._fit()
        self.query_one("#case-search").display = False
        self.query_one("#compare-body").loading = True
        self.run_comparison()

    # ------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, group="compare")
    def run_comparison(self) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        margin = float(getattr(self.app, "margin", 0.05))
        try:
            c = compare_runs(store, self.a_run_id, self.b_run_id, margin=margin)
            questions = store.cases(c.b).select(["case_id", "question"])
            cases = c.case_table().join(questions, "case_id", join_type="left outer")
            # a join does not keep order: restore the engine's worst-first order
            cases = cases.sort_by(
                [("delta", "ascending"), ("metric", "ascending"), ("case_id", "ascending")]
            )
        except RagtuiError as err:
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._show, c, cases)

    @work(thread=True, exclusive=True, group="case-filter")
    def refilter(self, f: CaseFilter, question_width: int) -> None:
        if self.all_cases is None:
            return
        rows = filter_cases(self.all_cases, f)
        backend = ArrowBackend(display_table(rows, question_width))
        backend.render_markup = False  # untrusted text: shown literally
        # measured here, off the UI thread: a non-ASCII column is measured cell by cell,
        # about 1.5 s for 100,000 rows; the table reuses the cached widths
        _ = backend.column_content_widths
        self.app.call_from_thread(self._show_cases, f, rows["case_id"].to_pylist(), backend)

    # ------------------------------------------------------------ updates (UI thread)

    def _failed(self, message: str) -> None:
        if not self.is_attached:
            return
        self.query_one("#compare-body").loading = False
        self.query_one("#compare-notes", Static).update(lit(message, "bold red"))
        self.notify(printable(message), severity="error", markup=False)

    def _show(self, c: Comparison, cases: pa.Table) -> None:
        if not self.is_attached:
            return  # the screen was closed while the comparison ran
        self.comparison, self.all_cases = c, cases
        self.query_one("#compare-title", Static).update(self._title(c))
        self.query_one("#compare-body").loading = False
        table = self.query_one(MetricTable)
        table.show(c)
        table.focus()
        first = table.headline(c)
        if first is not None and first != table.current:
            table.select_metric(first)  # its RowHighlighted updates the rest
        self._metric_changed(table.current)

    def _metric_changed(self, metric: str | None) -> None:
        c = self.comparison
        if c is None:
            return
        self.query_one("#compare-notes", Static).update(notes(c, metric))
        hist = self.query_one(DeltaHistogram)
        if metric is None:
            hist.set_deltas("", np.zeros(0))
            return
        _ids, a, b = c.deltas[metric]
        hist.set_deltas(metric, b - a)
        old = self.case_filter
        self._apply(
            CaseFilter(metric, old.regressions_only if old else False, old.text if old else "")
        )

    def _apply(self, f: CaseFilter) -> None:
        self.case_filter = f
        holder = self.query_one("#case-holder")
        holder.loading = True
        # the question column takes what the id, value and delta columns leave
        hist = 25 if self.has_class("-narrow") else 47 if self.has_class("-wide") else 33
        self.refilter(f, max(QUESTION_WIDTH // 2, self.size.width - hist - 40))

    async def _show_cases(self, f: CaseFilter, ids: list[str], shown: ArrowBackend) -> None:
        async with self._swap:  # one table swap at a time: the new table reuses the id
            if f != self.case_filter or not self.is_attached:
                return  # a newer filter is on its way
            await self._swap_cases(f, ids, shown)

    async def _swap_cases(self, f: CaseFilter, ids: list[str], shown: ArrowBackend) -> None:
        self.visible_ids = ids
        holder = self.query_one("#case-holder")
        holder.loading = False
        had_focus = isinstance(self.focused, FastTable)
        await holder.remove_children()
        table = FastTable(
            backend=shown,
            cursor_type="row",
            render_markup=False,  # untrusted text: shown literally
            show_row_labels=False,
            id="case-table",
        )
        await holder.mount(table)
        if had_focus:
            table.focus()
        total = 0 if self.comparison is None else len(self.comparison.deltas[f.metric][0])
        caption = join(
            ("cases, worst first · ", "bold"),
            (f.metric, "bold"),
            " · regressions only" if f.regressions_only else "",
            (f" · filter “{f.text}”" if f.text else "", ""),
            f" · {len(ids)} of {total}",
            Text("  enter opens a case", style="dim")
            if ids
            else Text("  no case matches", style="yellow"),
        )
        self.query_one("#case-caption", Static).update(caption)

    # ------------------------------------------------------------ events and actions

    @on(DataTable.RowHighlighted, "#metric-table")
    def _metric_row(self, event: DataTable.RowHighlighted) -> None:
        table = self.query_one(MetricTable)
        if self.case_filter is None or table.current != self.case_filter.metric:
            self._metric_changed(table.current)

    @on(FastTable.RowSelected, "#case-table")
    def _open_case(self, event: FastTable.RowSelected) -> None:
        if not self.visible_ids or self.case_filter is None:
            return
        from ragtui.tui.screens.case import CaseScreen

        index = min(event.cursor_row, len(self.visible_ids) - 1)
        self.app.push_screen(
            CaseScreen(
                self.b_run_id,
                list(self.visible_ids),
                index,
                other_run_id=self.a_run_id,
                metric=self.case_filter.metric,
            )
        )

    def action_next_metric(self) -> None:
        table = self.query_one(MetricTable)
        if table.metric_names:
            table.move_cursor(row=(table.cursor_row + 1) % len(table.metric_names))

    def action_toggle_regressions(self) -> None:
        f = self.case_filter
        if f is not None:
            self._apply(CaseFilter(f.metric, not f.regressions_only, f.text))

    def action_search(self) -> None:
        box = self.query_one("#case-search", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#case-search")
    def _search_changed(self, event: Input.Changed) -> None:
        f = self.case_filter
        if f is not None and event.value != f.text:
            self._apply(CaseFilter(f.metric, f.regressions_only, event.value))

    @on(Input.Submitted, "#case-search")
    def _search_done(self, event: Input.Submitted) -> None:
        tables = self.query("#case-table")
        if tables:
            tables.first().focus()

    def action_noise(self) -> None:
        """Rerun A's judge K times to measure its noise, then the verdict of A vs B again."""
        from ragtui.tui.screens.noise import NoiseScreen

        def measured(_: None) -> None:  # new reruns of A may now set the noise floor
            self.query_one("#compare-body").loading = True
            self.run_comparison()

        self.app.push_screen(NoiseScreen(self.a_run_id, against=self.b_run_id), measured)

    def action_back(self) -> None:
        box = self.query_one("#case-search", Input)
        if box.has_focus:  # esc in the filter box: drop the filter, keep the screen
            box.value = ""
            box.display = False
            self.query_one(MetricTable).focus()
            return
        self.app.pop_screen()
