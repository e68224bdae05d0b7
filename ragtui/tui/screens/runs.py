"""Runs (home): every run grouped by config, means with sparklines, marks, filter, export.

Screen state lives in reactive attributes (`loaded`, `needle`, `baseline`, `candidates`, and
the `model` built in a worker); the table is bound to them and redraws itself. Layout by
size is CSS: the breakpoint classes below, styled in app.tcss.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import Worker, get_current_worker

from ragtui.core.costs import RunCosts, bounded_costs
from ragtui.core.runfile import SUFFIX
from ragtui.core.store import RunRow as IndexedRun
from ragtui.core.store import Store
from ragtui.format import plural, printable
from ragtui.tui.messages import RunsChanged
from ragtui.tui.sharing import export
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.run_detail import line_detail, line_markdown
from ragtui.tui.widgets.run_table import RunTable
from ragtui.tui.widgets.runs_model import PAGE, RunsModel, load_model
from ragtui.tui.widgets.title_bar import TitleBar

if TYPE_CHECKING:
    from ragtui.tui.app import RagtuiApp

COLUMN_HELP_S = 6.0  # how long a column's description stays in the status line
# Run files this small in all are read for latency, tokens and cost before the first paint,
# so the table is drawn once, whole; a bigger history paints first and gains them after.
EAGER_COST_BYTES = 1 << 20


class RunsScreen(Screen[None]):
    # Textual would focus the first focusable widget, the hidden filter box, and keys typed while
    # the screen loads (`q` to quit) would go into it: the table takes the focus once it is filled
    AUTO_FOCUS = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open_run",
            "cases",
            tooltip="Open the highlighted run's case list",
            priority=True,
        ),
        Binding("a", "mark_baseline", "mark A", tooltip="Mark the highlighted run as A (baseline)"),
        Binding(
            "b",
            "mark_candidate",
            "mark B",
            tooltip="Mark the highlighted run as B (a candidate); again unmarks it; several Bs "
            "are compared with A together",
        ),
        Binding(
            "c",
            "compare",
            "compare",
            tooltip="Compare A with B (with several Bs: every candidate against A)",
        ),
        Binding("t", "trends", "trends", tooltip="Per-metric means over time, by config"),
        Binding(
            "slash",
            "filter",
            "filter",
            key_display="/",
            tooltip="Filter runs by name, id, config or judge",
        ),
        # e and y stay out of the footer (it holds ? help at 80 columns); Help and ctrl+p list them
        Binding(
            "e",
            "export",
            "export",
            show=False,
            tooltip="Export the runs table to CSV, JSON or Parquet",
        ),
        Binding(
            "y",
            "copy",
            "copy",
            show=False,
            tooltip="Copy the highlighted run's details as Markdown (OSC 52)",
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
        "Every run in the folder; reruns of one config are grouped under a line with their "
        "mean (┌ ×N). Mark a baseline with **a** and candidates with **b**; **c** compares."
    )
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (30, "-tall")]

    loaded: var[bool] = var(False)
    model: var[RunsModel | None] = var(None, init=False)
    needle: var[str] = var("")
    baseline: var[str | None] = var(None)
    candidates: var[tuple[str, ...]] = var(())
    marks: var[dict[str, str]] = var(dict)

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self._costs: dict[str, tuple[tuple[int, int, int], RunCosts]] = {}  # by file state
        self._unread: set[str] = set()  # runs too big to read for tokens and cost
        self._column_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar(id="title")
        yield Input(placeholder="filter runs by name, id, config, judge…", id="filter")
        yield RunTable(id="runs").data_bind(RunsScreen.model, RunsScreen.needle, RunsScreen.marks)
        yield Static(id="run-detail")
        yield Static(id="status")
        yield KeyBar()

    @property
    def ragtui(self) -> RagtuiApp:
        return self.app  # type: ignore[return-value]

    @property
    def table(self) -> RunTable:
        return self.query_one(RunTable)

    @property
    def layout_name(self) -> str:
        return self.table.layout_name

    def on_mount(self) -> None:
        self.query_one(TitleBar).set_title(
            Text.assemble(("ragtui", "bold"), " · Runs"), str(self.folder)
        )
        self._status("opening and indexing the runs folder…")
        self.watch(self.app, "watch_stopped", lambda _: self._status(), init=False)

    # ------------------------------------------------------------ state

    def compute_marks(self) -> dict[str, str]:
        marks = {run_id: "B" for run_id in self.candidates}
        if self.baseline is not None:
            marks[self.baseline] = "A"
        return marks

    def watch_loaded(self, loaded: bool) -> None:
        self.set_class(loaded, "-loaded")
        if loaded:
            self.table.focus()
            self._status()

    def watch_marks(self) -> None:
        self._status()

    def watch_needle(self) -> None:
        self._status()

    def watch_model(self) -> None:
        self._status()
        self._show_detail()

    # ------------------------------------------------------------ loading

    def store_ready(self, store: Store) -> None:
        self.load_runs(store)

    def store_failed(self, error: str) -> None:
        self._status(Text(printable(error), style="bold red"))

    @work(thread=True, exclusive=True, group="runs", description="list the runs")
    def load_runs(self, store: Store) -> None:
        worker = get_current_worker()
        try:
            model = load_model(store)
            todo = self._uncosted(model)
            if todo and sum(_file_state(r)[0] for r in todo) <= EAGER_COST_BYTES:
                # a failure here must not cost the listing: load_costs tries again and says why
                with contextlib.suppress(Exception):
                    self._read_costs(store, todo)
            known = {r.id: c for r in model.runs if (c := self._cached_cost(r)) is not None}
            if known:
                model = model.with_costs(known, self._unread)
            _first_page(model, self.size.width)  # built here, not on the UI thread
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(self._load_failed, str(err))
            return
        self.app.call_from_thread(self._loaded, model, store, worker)

    def _load_failed(self, error: str) -> None:
        self.store_failed(error)
        self.notify(error, title="cannot list the runs", severity="error", markup=False)

    def _loaded(self, model: RunsModel, store: Store, worker: Worker[None]) -> None:
        if worker.is_cancelled:
            # a newer listing started (the index changed meanwhile): its model is the one to
            # show, and this older one may land after it (a thread cannot be stopped)
            return
        known = set(self.marks)
        ids = {r.id for r in model.runs}
        if known - ids:  # marked runs that are gone lose their marks, and it is said
            lost = [f"A {self.baseline}"] if self.baseline and self.baseline not in ids else []
            lost += [f"B {c}" for c in self.candidates if c not in ids]
            self.baseline = self.baseline if self.baseline in ids else None
            self.candidates = tuple(c for c in self.candidates if c in ids)
            if lost:
                self.notify(
                    f"unmarked {', '.join(lost)}: no longer in the folder (its file was "
                    "removed, renamed or cannot be read); mark it again when it is back",
                    title="mark dropped",
                    severity="warning",
                    timeout=15,
                    markup=False,
                )
        self.model = model
        self.loaded = True
        if self._uncosted(model):
            self.load_costs(store, model)

    def _cached_cost(self, run: IndexedRun) -> RunCosts | None:
        hit = self._costs.get(run.id)
        return hit[1] if hit is not None and hit[0] == _file_state(run) else None

    @work(thread=True, exclusive=True, group="run-costs", description="read cost and latency")
    def load_costs(self, store: Store, model: RunsModel) -> None:
        """Latency, tokens and cost per run (read from the run files: after the first paint,
        and only for files that changed)."""
        try:
            self._read_costs(store, self._uncosted(model))
            costs = {r.id: c for r in model.runs if (c := self._cached_cost(r)) is not None}
            if not any(f.n for c in costs.values() for f in c.figures):
                return  # nothing to add: no run carries latency, tokens or cost
            priced = model.with_costs(costs, self._unread)
            _first_page(priced, self.size.width)
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.app.call_from_thread(
                self.notify, f"cost and latency: {exc}", severity="warning", markup=False
            )
            return
        self.app.call_from_thread(self._priced, model, priced)

    def _uncosted(self, model: RunsModel) -> list[IndexedRun]:
        return [r for r in model.runs if self._cached_cost(r) is None and r.n_cases]

    def _read_costs(self, store: Store, todo: list[IndexedRun]) -> None:
        """Cost figures of `todo` into the cache (in a worker). A bounded read: big run files
        give their latency from the index only."""
        found, skipped = bounded_costs(store, todo) if todo else ({}, [])
        for run in todo:
            self._costs[run.id] = (_file_state(run), found[run.id])
        self._unread = (self._unread - {r.id for r in todo}) | set(skipped)

    def _priced(self, model: RunsModel, priced: RunsModel) -> None:
        if self.model is model:  # not replaced by a newer load meanwhile
            self.model = priced

    # ------------------------------------------------------------ status and detail

    def _status(self, message: str | Text | None = None) -> None:
        if message is None:
            if not self.loaded:
                return
            message = self._summary()
        self.query_one("#status", Static).update(message)

    def _skipped(self, out: Text) -> None:
        """The run files the folder holds but could not read, while they are there (the
        toast that named them fades): how many, and where to read why."""
        store = self.ragtui.store
        n = len(store.problems) if store is not None else 0
        if n:
            out.append(f" · {plural(n, 'file')} skipped", style="bold yellow")
            out.append(" (`ragtui runs` says why)", style="dim")
        if self.ragtui.watch_stopped is not None:
            out.append(" · not watching the folder", style="bold yellow")
            out.append(f" ({printable(self.ragtui.watch_stopped)}; r re-scans)", style="dim")

    def _summary(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        model = self.model
        if model is None or not model.runs:
            out.append(f"no run files (*{SUFFIX}) in this folder", style="bold")
            self._skipped(out)
            out.append(" · `ragtui import FILE` brings results in; r re-scans", style="dim")
            return out
        runs = len(model.runs)
        shown = sum(1 for line in model.lines if not line.is_group and line.matches(self.needle))
        if self.needle and not shown:
            # first, or a narrow screen cuts it: an empty table must say why it is empty
            out.append(f"no run matches {printable(self.needle)!r}", style="bold yellow")
            out.append(f" · esc clears the filter · {runs} runs in all", style="dim")
            return out
        out.append("A ", style="bold green")
        out.append(
            printable(self.baseline) if self.baseline else "—", "" if self.baseline else "dim"
        )
        out.append("   B ", style="bold magenta")
        if self.candidates:
            out.append(printable(self.candidates[0]))
            if len(self.candidates) > 1:
                out.append(f" +{len(self.candidates) - 1} more", style="bold magenta")
        else:
            out.append("—", style="dim")
        out.append("   ")
        groups = len({line.group for line in model.lines})
        count = f"{shown} of {plural(runs, 'run')}" if self.needle else plural(runs, "run")
        out.append(f"{count} in {plural(groups, 'config')}", style="dim")
        self._skipped(out)
        if self.needle:  # before the legend, so a narrow terminal still shows it
            out.append(" · filter: ", style="dim")
            out.append(printable(self.needle), style="bold")
        # the legend, a whole phrase or none of it: cut mid-word it reads as nonsense
        room = self.query_one("#status", Static).content_size.width or None
        for phrase in (" · means in points; !n parse failures", " · ←→ column help"):
            if room is None or out.cell_len + len(phrase) <= room:
                out.append(phrase, style="dim")
        return out

    def on_resize(self) -> None:
        self._status()  # the legend's phrases that fit change with the width

    @on(RunTable.RowHighlighted, "#runs")
    def _highlighted(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        line, model = self.table.highlighted_line, self.model
        detail = "" if line is None or model is None else line_detail(line, model, self.folder)
        self.query_one("#run-detail", Static).update(detail)

    @on(RunTable.ColumnFocused, "#runs")
    def _column_focused(self, event: RunTable.ColumnFocused) -> None:
        """The focused column's description, in the status line for a few seconds."""
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{printable(event.key.removeprefix('m:'))}: ", style="bold")
        line.append(
            event.description.split(": ", 1)[-1]
            if event.key.startswith("m:")
            else event.description
        )
        self._status(line)
        if self._column_timer is not None:
            self._column_timer.stop()
        self._column_timer = self.set_timer(COLUMN_HELP_S, self._status)

    # ------------------------------------------------------------ actions

    def action_mark_baseline(self) -> None:
        run_id = self.table.highlighted_run
        if run_id is None:
            self.notify("no run highlighted", severity="warning")
            return
        self.candidates = tuple(c for c in self.candidates if c != run_id)
        self.baseline = run_id

    def action_mark_candidate(self) -> None:
        run_id = self.table.highlighted_run
        if run_id is None:
            self.notify("no run highlighted", severity="warning")
            return
        if run_id in self.candidates:
            self.candidates = tuple(c for c in self.candidates if c != run_id)
            return
        if self.baseline == run_id:  # B replaces A on the same run
            self.baseline = None
        self.candidates = (*self.candidates, run_id)

    def action_compare(self) -> None:
        a, bs = self.baseline, self.candidates
        if a is None or not bs:
            missing = " and ".join(m for m, ok in (("A", a), ("B", bs)) if not ok)
            self.notify(
                f"mark {missing} first: highlight a run and press a (baseline) / b (candidate)",
                title="compare",
                severity="warning",
            )
            return
        if len(bs) == 1:
            self.ragtui.open_compare(a, bs[0])
        else:
            self.ragtui.open_compare_many(a, list(bs))

    def action_open_run(self) -> None:
        if isinstance(self.focused, Input):
            self.table.focus()  # enter in the filter box ends filtering
            return
        run_id = self._highlighted_or_said()
        if run_id is not None:
            self.ragtui.open_cases(run_id)

    def _highlighted_or_said(self) -> str | None:
        """The highlighted run; None, said, where there is none (an empty folder)."""
        run_id = self.table.highlighted_run
        if run_id is None:
            self.notify("no run highlighted", severity="warning")
        return run_id

    def action_rejudge_run(self) -> None:
        run_id = self._highlighted_or_said()
        if run_id is not None:
            self.ragtui.open_rejudge_run(run_id)

    def action_noise(self) -> None:
        run_id = self._highlighted_or_said()
        if run_id is not None:
            against = self.candidates[0] if self.candidates else None
            self.ragtui.open_noise(run_id, against=against)

    def action_trends(self) -> None:
        if self.model is None:
            self.notify("still loading the runs", severity="warning")
            return
        self.ragtui.open_trends(self.model.metrics)

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
        self.ragtui.refresh_folder(asked=True)
        self.set_timer(2, self._status)  # the summary again, in case nothing changed

    def action_copy(self) -> None:
        line, model = self.table.highlighted_line, self.model
        if line is None or model is None:
            self.notify("no run highlighted", severity="warning")
            return
        text = line_markdown(line, model)
        self.app.copy_to_clipboard(text)
        what = f"group {line.run.name}" if line.is_group else f"run {line.run.id}"
        self.notify(f"copied {what} as Markdown ({len(text.splitlines())} lines)", markup=False)

    def action_export(self) -> None:
        if self.model is None:
            self.notify("still loading the runs", severity="warning")
            return
        lines = list(self.table.shown)
        model = self.model
        if not model.runs:
            self.notify("no run highlighted", severity="warning")
            return

        export(self, "the runs table", "ragtui-runs", lambda: model.export_table(lines))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()

    def on_run_table_opened(self) -> None:
        self.action_open_run()

    def on_screen_resume(self) -> None:
        # back from another screen: a re-judge or noise rerun may have written new run files
        if self.loaded and self.ragtui.store is not None:
            self.load_runs(self.ragtui.store)  # what the batch indexed itself
            self.ragtui.refresh_folder()  # and anything else written meanwhile

    def on_runs_changed(self, message: RunsChanged) -> None:
        """Run files changed on disk (the live watch, `r`, a finished batch): list them anew."""
        if self.ragtui.store is not None:
            self.load_runs(self.ragtui.store)


def _first_page(model: RunsModel, width: int) -> None:
    """The column widths and first rows of the layout the table will pick (in a worker)."""
    model.rows(model.pick(width), range(min(PAGE, len(model.lines))))


def _file_state(run: IndexedRun) -> tuple[int, int, int]:
    """What says a run file changed: its size, its mtime and its case count."""
    try:
        st = os.stat(run.file)
    except OSError:
        return (-1, -1, run.n_cases)
    return (st.st_size, st.st_mtime_ns, run.n_cases)
