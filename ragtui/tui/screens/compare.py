"""Compare A vs B: per-metric verdicts, what each column means, the diagnosis (stages,
retrieval, claims, case classes), a histogram of deltas, and the cases worst first.

Screen state is reactive (metric, filters, staleness); statistics and DuckDB run in thread
workers that post past-tense messages back; a failed worker is a line and a notification.
"""

from __future__ import annotations

import threading
from typing import ClassVar

import numpy as np
import pyarrow as pa
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import DescendantBlur, DescendantFocus
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import Input, Static
from textual_fastdatatable import DataTable as FastTable

from ragtui import format as fmt
from ragtui.core.case_history import CLASSES
from ragtui.core.compare import Comparison
from ragtui.core.compare_build import judged_by_others
from ragtui.core.diagnosis import Diagnosis, diagnose, diagnose_case
from ragtui.core.diagnosis_input import PairedScores, paired_scores
from ragtui.format import printable
from ragtui.services import comparing
from ragtui.tui.case_data import case_document, load_case
from ragtui.tui.messages import RunsChanged
from ragtui.tui.sharing import copy_markdown, export, page
from ragtui.tui.widgets.case_table import (
    CaseFilter,
    CaseList,
    class_table,
    export_rows,
    filter_cases,
    with_classes,
)
from ragtui.tui.widgets.delta_histogram import DeltaHistogram
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.literal import lit
from ragtui.tui.widgets.metric_table import MetricTable, diagnosis_lines, metrics_table, notes
from ragtui.tui.widgets.stale_line import REFRESH_KEY, FollowsTheFolder, StaleLine, changed_sides
from ragtui.tui.widgets.title_bar import FittedLine, Name


class CompareScreen(FollowsTheFolder, Screen[None]):
    """A vs B. The metric table's cursor row drives the histogram, the diagnosis lines and
    the case list; its cursor column is explained on the line below it."""

    # as on Runs: Textual's auto-focus could land on the hidden filter box while the screen
    # loads (seen under load); the table takes the focus once it is filled
    AUTO_FOCUS = ""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [
        (0, "-narrow"),
        (100, "-normal"),
        (160, "-wide"),
    ]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (32, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back", tooltip="Back (in the filter box: drop the filter)"),
        Binding(
            "enter",
            "open",
            "open",
            priority=True,
            tooltip="Open the highlighted case (on a metric: list its cases)",
        ),
        Binding("m", "next_metric", "metric", tooltip="Next metric: histogram and cases follow"),
        Binding("r", "toggle_regressions", "regressions", tooltip="Show only cases B made worse"),
        Binding(
            "f",
            "next_class",
            "class",
            tooltip=(
                "Cycle the case-class filter through the classes the metric's cases have "
                "(newly broken, newly fixed, flaky, stable pass, stable fail, varies by config, "
                "no history, unscored), then every case"
            ),
        ),
        Binding(
            "tab",
            "app.focus_next",
            "switch table",
            show=False,
            tooltip="Switch between the metric table and the case list (shift+tab: back)",
        ),
        Binding(
            "slash", "search", "filter", key_display="/", tooltip="Filter cases by id or question"
        ),
        Binding(
            "n",
            "noise",
            "noise check",
            show=False,
            tooltip="Rerun A's judge K times, then the verdict again",
        ),
        Binding("y", "copy", "copy", tooltip="Copy the highlighted case, or the comparison"),
        Binding("e", "export", "export", tooltip="Export the table on screen: CSV, JSON, Parquet"),
        Binding(
            "o", "pager", "pager", show=False, tooltip="Open the case (or the comparison) in $PAGER"
        ),
        Binding(
            "v",
            "many",
            "vs all",
            tooltip="Compare many: A against every other config in one table (Holm over all)",
        ),
        Binding(
            REFRESH_KEY,
            "refresh_runs",
            "update",
            tooltip="Compare again after the runs changed on disk",
        ),
    ]

    metric: reactive[str | None] = reactive(None, init=False)
    regressions_only: reactive[bool] = reactive(False, init=False)
    case_class: reactive[str | None] = reactive(None, init=False)
    search: reactive[str] = reactive("", init=False)
    stale: reactive[tuple[str, ...]] = reactive((), init=False, bindings=True)
    comparison: var[Comparison | None] = var(None, always_update=True)
    diagnosis: var[Diagnosis | None] = var(None, always_update=True)

    class Compared(Message):
        """A vs B was compared; `cases` are its per-case rows with their questions."""

        def __init__(self, comparison: Comparison, cases: pa.Table) -> None:
            super().__init__()
            self.comparison, self.cases = comparison, cases

    class Diagnosed(Message):
        """The diagnosis was worked out; `cases` now carry each case's class."""

        def __init__(self, diagnosis: Diagnosis, cases: pa.Table) -> None:
            super().__init__()
            self.diagnosis, self.cases = diagnosis, cases

    class Shared(Message):
        """Text to copy (`how` "copy") or page ("pager") is ready; `what` names it."""

        def __init__(self, how: str, what: str, text: str) -> None:
            super().__init__()
            self.how, self.what, self.text = how, what, text

    class CandidatesFound(Message):
        def __init__(self, candidates: list[str]) -> None:
            super().__init__()
            self.candidates = candidates

    class SidesChecked(Message):
        def __init__(self, sides: list[str]) -> None:
            super().__init__()
            self.sides = sides

    class Failed(Message):
        """A worker failed; `what` names the part ("comparison", "diagnosis", "copy"...)."""

        def __init__(self, what: str, error: str) -> None:
            super().__init__()
            self.what, self.error = what, error

    def __init__(self, a_run_id: str, b_run_id: str) -> None:
        super().__init__()
        self.a_run_id, self.b_run_id = a_run_id, b_run_id
        self.all_cases: pa.Table | None = None
        self.case_filter: CaseFilter | None = None
        self._paired: PairedScores | None = None
        self._paired_lock = threading.Lock()
        self._finding = False  # `v`: the candidates are being looked up

    def compose(self) -> ComposeResult:
        yield FittedLine(*self._title(), id="compare-title", classes="screen-title")
        yield StaleLine(id="compare-stale", markup=False)
        with Vertical(id="compare-body"):
            yield MetricTable(id="metric-table")
            yield Static(id="column-help", markup=False)
            yield Static(id="compare-diagnosis", markup=False)
            yield Static(id="compare-notes", markup=False)
            with Horizontal(id="compare-lower"):
                yield DeltaHistogram(id="delta-hist")
                yield CaseList(id="case-pane")
        yield KeyBar()

    def _title(self, c: Comparison | None = None) -> list[str | tuple[str, str] | Name]:
        """The title's parts: the run names give way (cut in the middle) before the rest."""
        a_name = self.a_run_id if c is None else c.run_a.name
        b_name = self.b_run_id if c is None else c.run_b.name
        reruns_a = "" if c is None or len(c.reruns_a) < 2 else f" ({len(c.reruns_a)} reruns)"
        reruns_b = "" if c is None or len(c.reruns_b) < 2 else f" ({len(c.reruns_b)} reruns)"
        return [
            ("ragtui · Compare  ", "bold"),
            "A ",
            Name(a_name),
            reruns_a,
            "  vs  B ",
            Name(b_name),
            reruns_b,
        ]

    def on_mount(self) -> None:
        self.query_one("#compare-body").loading = True
        self.run_comparison()

    # ------------------------------------------------------------ workers (threads)

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def run_comparison(self) -> None:
        workspace = self.app.workspace  # type: ignore[attr-defined]
        store = workspace.store
        try:  # the folder's margin and cluster field, as the CLI's compare uses them
            c = comparing.compare(workspace, self.a_run_id, self.b_run_id)
            questions = store.cases(c.b).select(["case_id", "question"])
            cases = c.case_table().join(questions, "case_id", join_type="left outer")
            # a join does not keep order: restore the engine's worst-first order
            cases = cases.sort_by(
                [("delta", "ascending"), ("metric", "ascending"), ("case_id", "ascending")]
            )
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.post_message(self.Failed("comparison", str(err)))
            return
        self.post_message(self.Compared(c, cases))

    @work(thread=True, exclusive=True, group="diagnosis", exit_on_error=False)
    def run_diagnosis(self, c: Comparison, cases: pa.Table) -> None:
        """Stages, retrieval and claim diffs and case classes (statistics and file reads)."""
        store = self.app.store  # type: ignore[attr-defined]
        try:
            d = diagnose(store, c.a, c.b, margin=c.margin, seed=c.seed, comparison=c)
            history = d.history.cases if d.history is not None else ()
            cases = with_classes(cases, class_table(history))
        except Exception as err:
            self.post_message(self.Failed("diagnosis", str(err)))
            return
        self.post_message(self.Diagnosed(d, cases))

    def _paired_scores(self, c: Comparison) -> PairedScores:
        with self._paired_lock:
            if self._paired is None:
                store = self.app.store  # type: ignore[attr-defined]
                self._paired = paired_scores(
                    store, c.a, c.b, margin=c.margin, seed=c.seed, comparison=c
                )
            return self._paired

    @work(thread=True, group="share", exit_on_error=False)
    def share(self, how: str, case_id: str | None) -> None:
        """The highlighted case (or, without one, the comparison) as Markdown."""
        from ragtui.services.report import render_report

        store = self.app.store  # type: ignore[attr-defined]
        c = self.comparison
        if c is None:
            return
        try:
            if case_id is None:
                text, what = render_report(c, store, self.diagnosis), "the comparison"
            else:
                data = load_case(store, c.b, case_id, c.a, c)
                diag = None
                if data.case is not None and data.other is not None:
                    # the summary's own regraded condition, when it is computed already
                    same = None if self.diagnosis is None else self.diagnosis.same_output
                    diag = diagnose_case(
                        store,
                        c.a,
                        c.b,
                        case_id,
                        margin=c.margin,
                        paired=self._paired_scores(c),
                        same_output=same,
                    )
                text = case_document(data, diag, markdown=how == "copy")
                what = f"case {printable(case_id)}"
        except Exception as err:
            self.post_message(self.Failed(how, str(err)))
            return
        self.post_message(self.Shared(how, what, text))

    @work(thread=True, group="many", exit_on_error=False)
    def find_candidates(self) -> None:
        try:
            found = comparing.other_configs(self.app.workspace, self.a_run_id)  # type: ignore[attr-defined]
        except Exception as err:
            self.post_message(self.Failed("compare many", str(err)))
            return
        self.post_message(self.CandidatesFound(found))

    @work(thread=True, group="stale", exit_on_error=False)
    def check_sides(self, changed: list[str], removed: list[str]) -> None:
        sides = {"A": self.a_run_id, "B": self.b_run_id}
        c = self.comparison
        shown = {} if c is None else c.made_from()
        try:
            store = self.app.store  # type: ignore[attr-defined]
            # a re-judge of A shows here only beside one of B under the same judge
            paired = None if c is None else judged_by_others(store, c)
            hit = changed_sides(store, sides, changed, removed, shown=shown, children=paired)
        except Exception as err:
            self.post_message(self.Failed("update check", str(err)))
            return
        self.post_message(self.SidesChecked(hit))

    # ------------------------------------------------------------ results (UI thread)

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        text = f"{message.what}: {message.error}"
        if message.what == "compare many":
            self._finding = False
        if message.what == "comparison":
            self.query_one("#compare-body").loading = False
            self.query_one("#compare-notes", Static).update(lit(message.error, "bold red"))
        elif message.what == "diagnosis":
            self.query_one("#compare-diagnosis", Static).update(lit(text, "bold red"))
        self.notify(printable(text), severity="error", markup=False)

    @on(Compared)
    def _compared(self, message: Compared) -> None:
        c = message.comparison
        self.comparison, self.all_cases, self.diagnosis = c, message.cases, None
        with self._paired_lock:
            self._paired = None
        self.query_one("#compare-title", FittedLine).update(*self._title(c))
        self.query_one("#compare-body").loading = False
        table = self.query_one(MetricTable)
        table.show(c)
        table.focus()
        first = table.headline(c)
        if first is not None:
            table.select_metric(first)
        if self.metric == first:
            self._metric_changed()  # the same metric as before a refresh: redraw it all
        else:
            self.metric = first
        self.query_one("#compare-diagnosis", Static).update(
            Text("diagnosing: stages, retrieval, claims, case classes…", style="dim")
        )
        self.run_diagnosis(c, message.cases)

    @on(Diagnosed)
    def _diagnosed(self, message: Diagnosed) -> None:
        self.diagnosis, self.all_cases = message.diagnosis, message.cases
        self._show_diagnosis()
        self._apply()

    @on(Shared)
    def _shared(self, message: Shared) -> None:
        if message.how == "copy":
            copy_markdown(self.app, message.text, message.what)
            return
        error = page(self.app, message.text)
        if error is not None:
            self.notify(error, severity="error")

    @on(CandidatesFound)
    def _candidates_found(self, message: CandidatesFound) -> None:
        self._finding = False
        if not message.candidates:
            self.notify("no other config of A's dataset to compare with", severity="warning")
            return
        self.app.open_compare_many(  # type: ignore[attr-defined]
            self.a_run_id, message.candidates, all_configs=True
        )

    def on_runs_changed(self, message: RunsChanged) -> None:
        self.check_sides(list(message.changed), list(message.removed))

    @on(SidesChecked)
    def _sides_checked(self, message: SidesChecked) -> None:
        if message.sides:
            self.stale = tuple(dict.fromkeys([*self.stale, *message.sides]))
            who = " and ".join(self.stale)
            self.notify(f"{who} changed on disk: {REFRESH_KEY} compares again", severity="warning")

    # ------------------------------------------------------------ drawing

    def watch_metric(self) -> None:
        self._metric_changed()

    def _metric_changed(self) -> None:
        c, metric = self.comparison, self.metric
        if c is None:
            return
        self.query_one("#compare-notes", Static).update(notes(c, metric))
        self._show_diagnosis()
        hist = self.query_one(DeltaHistogram)
        if metric is None:
            hist.set_deltas("", np.zeros(0))
            return
        _ids, a, b = c.deltas[metric]
        hist.set_deltas(metric, b - a)
        self._apply()

    def watch_regressions_only(self) -> None:
        self._apply()

    def watch_case_class(self) -> None:
        self._apply()

    def watch_search(self) -> None:
        self._apply()

    def _show_diagnosis(self) -> None:
        if self.diagnosis is not None and self.metric is not None:
            lines = diagnosis_lines(self.diagnosis, self.metric)
            self.query_one("#compare-diagnosis", Static).update(lines)

    def _filter(self) -> CaseFilter | None:
        if self.metric is None:
            return None
        return CaseFilter(self.metric, self.regressions_only, self.search, self.case_class)

    def _apply(self) -> None:
        f = self._filter()
        if f is None or self.all_cases is None or self.comparison is None:
            return
        self.case_filter = f
        total = len(self.comparison.deltas[f.metric][0])
        self.query_one(CaseList).show(self.all_cases, f, total, self.has_class("-narrow"))

    @property
    def visible_ids(self) -> list[str]:
        return self.query_one(CaseList).visible_ids

    # ------------------------------------------------------------ events and actions

    @on(MetricTable.MetricHighlighted)
    def _metric_row(self, event: MetricTable.MetricHighlighted) -> None:
        self.metric = event.metric

    @on(MetricTable.ColumnHighlighted)
    def _column(self, event: MetricTable.ColumnHighlighted) -> None:
        self.query_one("#column-help", Static).update(Text(event.help, style="italic"))

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        self.set_class(isinstance(event.widget, MetricTable), "-metric-focus")

    def on_descendant_blur(self, event: DescendantBlur) -> None:
        if not isinstance(self.focused, MetricTable):
            self.remove_class("-metric-focus")

    def _highlighted_case(self) -> str | None:
        cases = self.query_one(CaseList)
        row = cases.highlighted
        return None if row is None else cases.visible_ids[row]

    def action_open(self) -> None:
        """enter: from the metric table (or the filter box) to the case list; elsewhere, open
        the highlighted case."""
        table = self.query_one(CaseList).table
        if isinstance(self.focused, MetricTable | Input):
            if table is not None:
                table.focus()
            return
        self._open_case()

    @on(FastTable.RowSelected, "#case-table")
    def _row_selected(self, event: FastTable.RowSelected) -> None:
        self._open_case()  # a click on the highlighted row

    def _open_case(self) -> None:
        index = self.query_one(CaseList).highlighted
        if index is None or self.case_filter is None:
            return
        self.app.open_case(  # type: ignore[attr-defined]
            self.b_run_id,
            list(self.visible_ids),
            index,
            other_run_id=self.a_run_id,
            metric=self.case_filter.metric,
            comparison=self.comparison,
        )

    def action_next_metric(self) -> None:
        table = self.query_one(MetricTable)
        if table.metric_names:
            table.move_cursor(row=(table.cursor_row + 1) % len(table.metric_names))

    def action_toggle_regressions(self) -> None:
        self.regressions_only = not self.regressions_only

    def action_next_class(self) -> None:
        """Cycle the classes present among the metric's cases, then back to every class."""
        d, metric = self.diagnosis, self.metric
        if d is None or metric is None:
            self.notify("the case classes are still being worked out", severity="warning")
            return
        counts = d.classes.get(metric, {})
        present = [k for k in CLASSES if counts.get(k)]
        order: list[str | None] = [None, *present]
        now = order.index(self.case_class) if self.case_class in order else 0
        self.case_class = order[(now + 1) % len(order)]
        shown = fmt.class_filter_caption(self.case_class, counts.get(self.case_class or ""))
        self.notify(f"class: {shown}", timeout=3)

    def action_search(self) -> None:
        box = self.query_one("#case-search", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#case-search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.search = event.value

    def action_copy(self) -> None:
        if self.comparison is None:
            return
        case = self._highlighted_case() if isinstance(self.focused, FastTable) else None
        self.share("copy", case)

    def action_pager(self) -> None:
        if self.comparison is None:
            return
        case = self._highlighted_case() if isinstance(self.focused, FastTable) else None
        self.share("pager", case)

    def action_export(self) -> None:
        """The case list when it has the focus, else the verdict table."""
        c = self.comparison
        if c is None:
            return
        if isinstance(self.focused, FastTable) and self.all_cases is not None and self.case_filter:
            cases, f = self.all_cases, self.case_filter
            export(
                self, "the case list", "ragtui-cases", lambda: export_rows(filter_cases(cases, f))
            )
            return
        export(self, "the verdict table", "ragtui-comparison", lambda: metrics_table(c))

    def action_many(self) -> None:
        if self._finding:  # `v` typed twice: one table, not two stacked
            return
        self._finding = True
        self.find_candidates()

    def action_refresh_runs(self) -> None:
        self.stale = ()
        self.query_one("#compare-body").loading = True
        self.run_comparison()

    def action_noise(self) -> None:
        """Rerun A's judge K times to measure its noise, then the verdict of A vs B again."""

        def measured(_: str | None) -> None:  # new reruns of A may now set the noise floor
            self.query_one("#compare-body").loading = True
            self.run_comparison()

        self.app.open_noise(self.a_run_id, against=self.b_run_id, done=measured)  # type: ignore[attr-defined]

    def action_back(self) -> None:
        box = self.query_one("#case-search", Input)
        if box.has_focus:  # esc in the filter box: drop the filter, keep the screen
            box.value = ""
            box.display = False
            self.query_one(MetricTable).focus()
            return
        self.app.pop_screen()
