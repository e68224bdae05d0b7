"""Runs (home): every run grouped by config, means with sparklines, A/B marks, filter."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, LoadingIndicator, Static

from ragtui.core.runfile import SUFFIX
from ragtui.core.store import RunRow as IndexedRun
from ragtui.core.store import Store
from ragtui.core.views import run_rows
from ragtui.format import printable
from ragtui.tui.messages import RunsChanged
from ragtui.tui.widgets.run_table import RunRow, RunTable, group_rows
from ragtui.tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp


DETAIL_FROM_HEIGHT = 30  # terminal rows from which the highlighted run's details show


class RunsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open_run",
            "cases",
            tooltip="Open the highlighted run's case list",
            priority=True,
        ),
        Binding("a", "mark('A')", "mark A", tooltip="Mark the highlighted run as A (baseline)"),
        Binding("b", "mark('B')", "mark B", tooltip="Mark the highlighted run as B (candidate)"),
        Binding("c", "compare", "compare", tooltip="Compare run A with run B"),
        Binding("t", "trends", "trends", tooltip="Per-metric means over time, by config"),
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="Filter runs by name, id, config or judge",
        ),
        Binding(
            "J",
            "rejudge_run",
            "re-judge",
            key_display="J",
            show=False,
            tooltip="Re-judge the highlighted run with another judge",
        ),
        Binding(
            "n",
            "noise",
            "noise",
            show=False,
            tooltip="Noise check: rerun the highlighted run's judge K times",
        ),
        Binding("escape", "clear_filter", "clear filter", show=False, tooltip="Clear the filter"),
        Binding(
            "r",
            "reload",
            "reload",
            show=False,
            tooltip="Re-scan the folder for new or changed run files",
        ),
    ]
    HELP = (
        "Every run in the folder; reruns of one config are grouped (┌├└, ×N). "
        "Mark a baseline with **a** and a candidate with **b**, then **c** compares them."
    )

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.rows: list[RunRow] = []
        self.metrics: list[str] = []
        self.marks: dict[str, str] = {}  # run id -> "A" / "B"
        self.needle = ""
        self.layout_name = "medium"
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield Input(placeholder="filter runs by name, id, config, judge…", id="filter")
        yield LoadingIndicator(id="loading")
        yield RunTable(id="runs")
        yield Static(id="run-detail")
        yield Static(id="status")
        yield Footer()

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    @property
    def table(self) -> RunTable:
        return self.query_one(RunTable)

    def on_mount(self) -> None:
        self.query_one("#filter").display = False
        self.table.display = False
        self.query_one("#run-detail").display = False
        self._title()
        self._status("opening and indexing the runs folder…")

    def on_resize(self, event: events.Resize) -> None:
        self._title()
        self.query_one(Footer).compact = event.size.width < 120
        # the detail panel only where the height leaves room for the table above it
        self.query_one("#run-detail").display = (
            self.loaded and event.size.height >= DETAIL_FROM_HEIGHT
        )
        self._render_table()

    # ------------------------------------------------------------ loading

    def store_ready(self, store: Store) -> None:
        self.load_runs(store)

    def store_failed(self, error: str) -> None:
        self.query_one(LoadingIndicator).display = False
        self._status(Text(error, style="bold red"))

    @work(thread=True, exclusive=True, group="runs")
    def load_runs(self, store: Store) -> None:
        try:
            runs, metrics = run_rows(store)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self.store_failed, str(err))
            return
        rows = group_rows(runs, metrics)
        self.app.call_from_thread(self._loaded, rows, metrics)

    def _loaded(self, rows: list[RunRow], metrics: list[str]) -> None:
        self.rows, self.metrics, self.loaded = rows, metrics, True
        known = {r.run.id for r in rows}
        self.marks = {k: v for k, v in self.marks.items() if k in known}
        self.query_one(LoadingIndicator).display = False
        self.table.display = True
        self.query_one("#run-detail").display = self.size.height >= DETAIL_FROM_HEIGHT
        self._render_table()
        self.table.focus()

    def _render_table(self) -> None:
        if not self.loaded:
            return
        self.layout_name = self.table.show(
            self.rows, self.metrics, marks=self.marks, needle=self.needle, width=self.size.width
        )
        self._status()

    # ------------------------------------------------------------ header and status

    def _title(self) -> None:
        title = Text("ragtui", style="bold")
        title.append(" · Runs")
        self.query_one(TitleBar).set_title(title, str(self.folder))

    def _status(self, message: str | Text | None = None) -> None:
        if message is None:
            message = self._summary()
        self.query_one("#status", Static).update(message)

    def _summary(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        if not self.rows:
            out.append(f"no run files (*{SUFFIX}) in this folder", style="bold")
            out.append(" · `ragtui import FILE` brings results in; r re-scans", style="dim")
            return out
        for mark, style in (("A", "bold green"), ("B", "bold magenta")):
            run_id = self.mark_of(mark)
            out.append(f"{mark} ", style=style)
            out.append(printable(run_id) if run_id else "—", style="" if run_id else "dim")
            out.append("   ")
        shown = self.table.row_count
        groups = len({r.run.config_key for r in self.rows})
        count = f"{shown} of {len(self.rows)} runs" if self.needle else f"{len(self.rows)} runs"
        out.append(f"{count} in {groups} configs", style="dim")
        if self.needle:  # before the legend, so a narrow terminal still shows it
            out.append(" · filter: ", style="dim")
            out.append(printable(self.needle), style="bold")
        out.append(" · means in points", style="dim")
        if self.layout_name != "compact":
            out.append(" · sparkline: this config's runs so far", style="dim")
        return out

    def mark_of(self, mark: str) -> str | None:
        return next((k for k, v in self.marks.items() if v == mark), None)

    # ------------------------------------------------------------ actions

    def action_mark(self, mark: str) -> None:
        run_id = self.table.highlighted_run
        if run_id is None:
            self.notify("no run highlighted", severity="warning")
            return
        self.marks = {k: v for k, v in self.marks.items() if v != mark and k != run_id}
        self.marks[run_id] = mark
        self._render_table()

    def action_compare(self) -> None:
        a, b = self.mark_of("A"), self.mark_of("B")
        if a is None or b is None:
            missing = " and ".join(m for m, r in (("A", a), ("B", b)) if r is None)
            self.notify(
                f"mark {missing} first: highlight a run and press a (baseline) / b (candidate)",
                title="compare",
                severity="warning",
            )
            return
        self.ragtui.open_compare(a, b)

    def action_open_run(self) -> None:
        if isinstance(self.focused, Input):
            self.table.focus()  # enter in the filter box ends filtering
            return
        run_id = self.table.highlighted_run
        if run_id is None:
            return
        self.ragtui.open_cases(run_id)

    def action_rejudge_run(self) -> None:
        run_id = self.table.highlighted_run
        if run_id is None:
            return
        self.ragtui.open_rejudge_run(run_id)

    def action_noise(self) -> None:
        run_id = self.table.highlighted_run
        if run_id is None:
            return
        self.ragtui.open_noise(run_id, against=self.mark_of("B"))

    def on_screen_resume(self) -> None:
        # back from another screen: a re-judge or noise rerun may have written new run files
        if self.loaded and self.ragtui.store is not None:
            self.load_runs(self.ragtui.store)  # what the batch indexed itself
            self.ragtui.refresh_folder()  # and anything else written meanwhile

    def on_runs_changed(self, message: RunsChanged) -> None:
        """Run files changed on disk (the live watch, `r`, a finished batch): list them anew."""
        if self.ragtui.store is not None:
            self.load_runs(self.ragtui.store)

    def action_trends(self) -> None:
        if not self.loaded:
            self.notify("still loading the runs", severity="warning")
            return
        self.ragtui.open_trends(self.metrics)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self.table.focus()

    def action_reload(self) -> None:
        if self.ragtui.store is None:
            return
        self._status("re-scanning the runs folder…")
        self.ragtui.refresh_folder()
        self.set_timer(2, self._status)  # the summary again, in case nothing changed

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()
        self._render_table()

    @on(RunTable.RowHighlighted, "#runs")
    def _highlighted(self, event: RunTable.RowHighlighted) -> None:
        run = next((r.run for r in self.rows if r.run.id == event.row_key.value), None)
        group = [r.run for r in self.rows if run and r.run.config_key == run.config_key]
        detail = run_detail(run, self.metrics, self.folder, group) if run else ""
        self.query_one("#run-detail", Static).update(detail)

    def on_run_table_opened(self) -> None:
        self.action_open_run()


def run_detail(run: IndexedRun, metrics: list[str], folder: Path, group: list[IndexedRun]) -> Text:
    """The highlighted run in full: ids, config, judge, dataset, file, per-metric counts,
    and how far the reruns of its config (`group`, itself included) spread apart."""
    out = Text(no_wrap=True, overflow="ellipsis")

    def field(label: str, value: object, end: str = "\n") -> None:
        out.append(f"{label} ", style="dim")
        out.append(printable("—" if value in (None, "") else str(value)))
        out.append(end)

    field("run", run.id, "   ")
    field("name", run.name, "   ")
    field("kind", run.kind + (" (in progress)" if run.in_progress else ""), "   ")
    field("created", run.created_at, "   ")
    field("parent", run.parent)
    field("config", run.config_key, "   ")
    config = ", ".join(f"{k}={v}" for k, v in sorted(run.config.items()))
    field("", config)
    field("judge", run.judge, "   ")
    field("provider", run.judge_provider, "   ")
    field("prompt", run.judge_prompt_hash, "   ")
    field("dataset", " ".join(x for x in (run.dataset, run.dataset_version) if x))
    # relative to the folder: shorter, and the same on every machine
    path, root = run.file.resolve(), folder.resolve()
    field("file", path.relative_to(root) if path.is_relative_to(root) else path)
    for m in metrics:
        mean = run.listed_means.get(m)
        errors = run.errors.get(m, 0)
        out.append(f"{printable(m)} ", style="bold")
        out.append("—" if mean is None else f"{100 * mean:.1f}")
        if errors:
            out.append(f" ({errors} errors)", style="bold red")
        out.append("   ")
    if len(group) > 1:
        out.append(f"\nreruns of this config ({len(group)}) differ by: ", style="dim")
        first = True
        for m in metrics:
            means = [r.means[m] for r in group if r.means.get(m) is not None]
            if len(means) < 2:
                continue
            spread = 100 * (max(means) - min(means))
            out.append("" if first else " · ")
            out.append(f"{printable(m)} ")
            # the classic 5% rule: reruns that far apart make small deltas meaningless
            out.append(f"{spread:.1f}", style="bold yellow" if spread >= 5 else "bold")
            first = False
        out.append(" pts (rule: < 5)", style="dim")
    return out
