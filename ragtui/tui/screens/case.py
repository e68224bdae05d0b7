"""Case: one case of a run (and of the run it is compared with), its evidence, its diffs against
A, its stage and class, and its history.

Reading runs is DuckDB and file work, and diagnosis is statistics: both run in thread workers
that post their results back as messages; a failure is a line on screen and a notification.
With A and B, the figures are the comparison's (A's reruns' mean per case, each rerun beside
it), so the Case screen shows the same A as Compare.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.widgets import Static

from ragtui.core.case_history import CaseClass, case_classes
from ragtui.core.compare import Comparison
from ragtui.core.diagnosis import CaseDiagnosis, diagnose_case, output_unchanged
from ragtui.core.diagnosis_input import PairedScores, paired_scores
from ragtui.core.model import Case, Run
from ragtui.format import (
    printable,
)
from ragtui.services import comparing
from ragtui.tui.case_data import (
    CaseData,
    case_document,
    case_figures,
    load_case,
    metrics_of,
)
from ragtui.tui.messages import RunsChanged
from ragtui.tui.sharing import copy_markdown, page
from ragtui.tui.widgets.case_diff import answer_texts, chunk_markings
from ragtui.tui.widgets.case_panels import (
    diagnosis_group,
    history_text,
    judge_text,
    scores_table,
    title_parts,
)
from ragtui.tui.widgets.chunks_view import ChunksView
from ragtui.tui.widgets.claims_view import ClaimsView
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.literal import join, lit
from ragtui.tui.widgets.stale_line import REFRESH_KEY, FollowsTheFolder, StaleLine, changed_sides
from ragtui.tui.widgets.title_bar import FittedLine


class CaseScreen(FollowsTheFolder, Screen[None]):
    """`]`/`[` step through `case_ids`; with `other_run_id`, A (other) and B (run) side by side."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back", tooltip="Back to the list"),
        Binding(
            "right_square_bracket",
            "step(1)",
            "next",
            key_display="]",
            tooltip="Next case in the list",
        ),
        Binding(
            "left_square_bracket",
            "step(-1)",
            "prev",
            key_display="[",
            tooltip="Previous case in the list",
        ),
        Binding(
            "tab",
            "switch_side",
            "A/B",
            priority=True,
            tooltip="Show the claims and chunks of A or B",
        ),
        Binding("m", "next_metric", "metric", tooltip="Next metric: title, claims and judge reply"),
        Binding("R", "rejudge", "re-judge", tooltip="Re-judge this case with a configured judge"),
        Binding("y", "copy", "copy", tooltip="Copy the case as Markdown (OSC 52: works over SSH)"),
        Binding("o", "pager", "pager", tooltip="Open the case's full text in $PAGER"),
        Binding(
            REFRESH_KEY,
            "refresh_runs",
            "update",
            tooltip="Read the runs again after they changed on disk",
        ),
        # The page keys move over the whole case, wherever the focus is: the judge reply, the
        # class and the history lie below the claims list, which holds the focus (j / k and
        # the arrows walk the claims, then go on down or up the page past either end).
        *(
            Binding(
                keys,
                f"page('{move}')",
                description,
                key_display=shown,
                show=False,
                priority=True,  # before the claims list's own pgdn / pgup / home / end
                tooltip=tip,
            )
            for keys, move, description, shown, tip in (
                (
                    "ctrl+d,pagedown,space",
                    "page_down",
                    "page down",
                    "ctrl+d pgdn space",
                    "Page down the whole case (j / k walk the claims, then the page)",
                ),
                ("ctrl+u,pageup", "page_up", "page up", "ctrl+u pgup", "Page up the whole case"),
                ("g,home", "top", "top", "g home", "To the top of the case"),
                (
                    "G,end",
                    "bottom",
                    "bottom",
                    "G end",
                    "To the bottom of the case: judge reply, class, history",
                ),
            )
        ),
    ]

    # Which side's claims and chunks are shown ("A" or "B"; "" with one run)
    side: reactive[str] = reactive("", init=False)
    metric: reactive[str | None] = reactive(None, init=False)
    # the sides whose runs changed on disk since the figures were read ("A", "B")
    stale: reactive[tuple[str, ...]] = reactive((), init=False, bindings=True)
    data: var[CaseData | None] = var(None, always_update=True)
    diagnosis: var[CaseDiagnosis | None] = var(None, always_update=True)

    class Loaded(Message):
        """A case was read (and its figures taken from the comparison)."""

        def __init__(self, data: CaseData) -> None:
            super().__init__()
            self.data = data

    class Diagnosed(Message):
        """The case's diffs against A, its stage and its class were worked out."""

        def __init__(
            self, case_id: str, diagnosis: CaseDiagnosis | None, classes: tuple[CaseClass, ...]
        ) -> None:
            super().__init__()
            self.case_id, self.diagnosis, self.classes = case_id, diagnosis, classes

    class Failed(Message):
        """A worker failed; `what` says which part ("case", "diagnosis")."""

        def __init__(self, what: str, case_id: str, error: str) -> None:
            super().__init__()
            self.what, self.case_id, self.error = what, case_id, error

    class SidesChecked(Message):
        """The runs that changed on disk were matched against this screen's sides."""

        def __init__(self, sides: list[str]) -> None:
            super().__init__()
            self.sides = sides

    def __init__(
        self,
        run_id: str,
        case_ids: list[str],
        index: int,
        other_run_id: str | None = None,
        metric: str | None = None,
        comparison: Comparison | None = None,
    ) -> None:
        super().__init__()
        self.run_id, self.other_run_id = run_id, other_run_id
        self.case_ids = list(case_ids)
        self.index = max(0, min(index, len(self.case_ids) - 1))
        self.set_reactive(CaseScreen.metric, metric)
        self.set_reactive(CaseScreen.side, "B" if other_run_id else "")
        self.classes_of_case: tuple[CaseClass, ...] = ()
        # A vs B, computed once per screen (or given by Compare); guarded: workers share them
        self._comparison = comparison
        self._paired: PairedScores | None = None
        self._same_output = False  # A and B gave the same answers and chunks (with _paired)
        self._prepare = threading.Lock()
        self._focused_once = False

    def compose(self) -> ComposeResult:
        yield FittedLine(id="case-title", classes="screen-title")
        yield StaleLine(id="case-stale", markup=False)
        with VerticalScroll(id="case-body"):
            yield Static(id="case-question", markup=False)
            yield Static(id="case-reference", markup=False)
            with Horizontal(id="case-answers"):
                if self.other_run_id:
                    yield Static(id="answer-a", classes="answer", markup=False)
                yield Static(id="answer-b", classes="answer", markup=False)
            yield Static(id="case-scores", markup=False)
            with Horizontal(id="case-evidence"):
                yield ClaimsView(id="claims")
                with Vertical(id="chunks-box"):
                    yield ChunksView(id="chunks")
            yield Static(id="case-diagnosis", markup=False)
            yield Static(id="case-judge", markup=False)
            yield Static(id="case-history", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        if not self.case_ids:  # an empty list (a filter that matched nothing): nothing to show
            self.query_one("#case-title", FittedLine).update("ragtui · Case  (no case in the list)")
            return
        self.load()

    @property
    def case_id(self) -> str:
        return self.case_ids[self.index]

    @property
    def comparison(self) -> Comparison | None:
        return self._comparison

    # ------------------------------------------------------------ workers

    def load(self) -> None:
        body = self.query_one("#case-body")
        if self.focused is None or body in self.focused.ancestors:
            # `loading` takes the focus from the claims list inside the body: give it back when
            # the case is drawn, or after ] / [ / u the keys j and k had nothing to walk
            self._focused_once = False
        body.loading = True
        self.data, self.diagnosis, self.classes_of_case = None, None, ()
        self.fetch(self.case_id)

    def _compared(self) -> Comparison:
        """A vs B, computed on first use (in a worker thread) unless Compare gave it."""
        assert self.other_run_id is not None
        with self._prepare:
            if self._comparison is None:
                self._comparison = comparing.compare(
                    self.app.workspace,  # type: ignore[attr-defined]
                    self.other_run_id,
                    self.run_id,
                )
            return self._comparison

    def _paired_scores(self, c: Comparison) -> tuple[PairedScores, bool]:
        """The per-case values the diagnosis reads and whether A and B gave the same output
        (the regraded rule), computed once per screen."""
        with self._prepare:
            if self._paired is None:
                store = self.app.store  # type: ignore[attr-defined]
                self._paired = paired_scores(
                    store, c.a, c.b, margin=c.margin, seed=c.seed, comparison=c
                )
                self._same_output = output_unchanged(store, self._paired)
            return self._paired, self._same_output

    @work(thread=True, exclusive=True, group="case", exit_on_error=False)
    def fetch(self, case_id: str) -> None:
        """The case first (it shows at once), then its figures and diagnosis."""
        store = self.app.store  # type: ignore[attr-defined]
        try:
            data = load_case(store, self.run_id, case_id, self.other_run_id, self._comparison)
        except Exception as err:  # a worker reports its failure; it never ends the app
            self.post_message(self.Failed("case", case_id, str(err)))
            return
        self.post_message(self.Loaded(data))
        try:
            if self.other_run_id is None:
                history = case_classes(store, self.run_id, case_ids={case_id})
                self.post_message(self.Diagnosed(case_id, None, history.cases))
                return
            comparison = self._compared()
            if not data.figures:
                figures = case_figures(comparison, case_id)
                self.post_message(self.Loaded(replace(data, figures=figures)))
            if data.case is None or data.other is None:  # unpaired: nothing to diff, no error
                self.post_message(self.Diagnosed(case_id, None, ()))
                return
            paired, same_output = self._paired_scores(comparison)
            d = diagnose_case(
                store,
                comparison.a,
                comparison.b,
                case_id,
                margin=comparison.margin,
                paired=paired,
                same_output=same_output,
            )
        except Exception as err:
            self.post_message(self.Failed("diagnosis", case_id, str(err)))
            return
        self.post_message(self.Diagnosed(case_id, d, d.classes))

    @work(thread=True, group="case-stale", exit_on_error=False)
    def check_sides(self, changed: list[str], removed: list[str]) -> None:
        sides = {"B" if self.other_run_id else "this run": self.run_id}
        if self.other_run_id:
            sides = {"A": self.other_run_id, **sides}
        c = self._comparison
        shown = {} if c is None else c.made_from()
        try:
            hit = changed_sides(self.app.store, sides, changed, removed, shown=shown)  # type: ignore[attr-defined]
        except Exception as err:
            self.post_message(self.Failed("update check", self.case_id, str(err)))
            return
        self.post_message(self.SidesChecked(hit))

    # ------------------------------------------------------------ results (UI thread)

    @on(Loaded)
    async def _loaded(self, message: Loaded) -> None:
        data = message.data
        if not self.case_ids or data.case_id != self.case_id:
            return
        self.data = data
        self.query_one("#claims", ClaimsView).display = True  # (hidden while a case failed)
        self.query_one("#chunks-box").display = True
        metrics = metrics_of(data)
        if self.metric is None or self.metric not in metrics:
            self.set_reactive(CaseScreen.metric, metrics[0] if metrics else None)
        self.query_one("#case-body").loading = False
        main = data.case or data.other
        self.query_one("#case-question", Static).update(
            join(("Question   ", "bold"), (main.question if main else "(case not found)", ""))
        )
        ref = main.reference if main else None
        self.query_one("#case-reference", Static).update(
            join(("Reference  ", "bold"), (ref, "") if ref else Text("(none)", style="dim"))
        )
        self._show_answers()
        if not await self._show_evidence():
            return
        self._show_scores()
        self._show_diagnosis()
        self._refresh_title()
        if not self._focused_once:  # arrows walk the claims from the start
            self._focused_once = True
            self.query_one(ClaimsView).focus(scroll_visible=False)  # the question stays in view

    @on(Diagnosed)
    async def _diagnosed(self, message: Diagnosed) -> None:
        if not self.case_ids or message.case_id != self.case_id:
            return
        self.diagnosis, self.classes_of_case = message.diagnosis, message.classes
        if self.data is None:  # an earlier worker's diagnosis of this case, before its Loaded
            return  # (`]` then `[`): _loaded draws it with the case
        self._show_answers()
        if not await self._show_evidence():
            return
        self._show_scores()
        self._show_diagnosis()

    @on(Failed)
    def _failed(self, message: Failed) -> None:
        if not self.case_ids or message.case_id != self.case_id:
            return
        text = f"{message.what}: {message.error}"
        if message.what == "case":  # no case to show: say why where it would be, not below it
            self.query_one("#case-body").loading = False
            self.data, self.diagnosis, self.classes_of_case = None, None, ()
            self._refresh_title()  # the id as every title shows it (escaped, cut in the middle)
            for panel in self.query("#case-body Static"):
                panel.update("")
            self.query_one("#case-question", Static).update(lit(text, "bold red"))
            self.query_one("#claims", ClaimsView).display = False
            self.query_one("#chunks-box").display = False
            self._focused_once = False  # (the hidden claims lost the focus: give it back later)
        else:
            self.query_one("#case-diagnosis", Static).update(lit(text, "bold red"))
        self.notify(printable(text), severity="error", markup=False)

    def on_runs_changed(self, message: RunsChanged) -> None:
        if self.case_ids:
            self.check_sides(list(message.changed), list(message.removed))

    @on(SidesChecked)
    def _sides_checked(self, message: SidesChecked) -> None:
        if not message.sides:
            return
        self.stale = tuple(dict.fromkeys([*self.stale, *message.sides]))
        who = " and ".join(self.stale)
        self.notify(f"{who} changed on disk: {REFRESH_KEY} updates the case", severity="warning")

    # ------------------------------------------------------------ drawing

    def _sides(self) -> list[tuple[str, Run, Case | None, str]]:
        d = self.data
        assert d is not None
        if d.other_run is None:
            return [("#answer-b", d.run, d.case, "")]
        return [("#answer-a", d.other_run, d.other, "A"), ("#answer-b", d.run, d.case, "B")]

    def _show_answers(self) -> None:
        diff = self.diagnosis.answer if self.diagnosis is not None else None
        marked = answer_texts(diff) if diff is not None and not diff.identical else None
        for wid, run, case, side in self._sides():
            box = self.query_one(wid, Static)
            box.border_title = join(f"Answer {side} · ", (run.name, "")) if side else Text("Answer")
            box.border_subtitle = None
            if case is None:
                box.update(Text(f"not in run {printable(run.name)}", style="yellow"))
                continue
            if diff is not None:
                box.border_subtitle = (
                    "same answer"
                    if diff.identical
                    else f"−{diff.words_removed} words"
                    if side == "A"
                    else f"+{diff.words_added} words"
                )
            box.update(marked[0 if side == "A" else 1] if marked else lit(case.answer))

    def _side_case(self) -> tuple[Run, Case | None]:
        d = self.data
        assert d is not None
        if self.side == "A" and d.other_run is not None:
            return d.other_run, d.other
        return d.run, d.case

    async def _show_evidence(self) -> bool:
        """The claims and chunks of the shown side. False when another case began loading
        while the chunks were mounted (`]` typed meanwhile): the caller stops drawing, the
        next case's Loaded draws it all."""
        d = self.data
        if d is None:
            return False
        run, case = self._side_case()
        side = f" of {self.side}" if self.side else ""
        claims = [] if case is None else [c for c in case.claims if c.metric == self.metric]
        about = self.metric or ""
        if case is not None and not claims and case.claims:
            claims = list(case.claims)  # this metric has none: show the case's claims anyway
            about = " ".join(dict.fromkeys(c.metric for c in claims))
        view = self.query_one(ClaimsView)
        view.border_title = join(f"Claims{side} · ", (about, ""))
        box = self.query_one("#chunks-box")
        box.border_title = join(f"Chunks{side} · ", (run.name, ""))
        chunks = self.query_one(ChunksView)
        diag = self.diagnosis
        if diag is not None and d.case is not None and d.other is not None and self.side:
            mine, markings, ghosts = chunk_markings(
                diag.retrieval, d.other.contexts, d.case.contexts, self.side
            )
            box.border_subtitle = "marks against A" if self.side == "B" else "marks: B against A"
            await chunks.show(mine, markings, ghosts)
        else:
            box.border_subtitle = None
            await chunks.show(() if case is None else case.contexts)
        view.show(claims)
        return self.data is d

    def _show_scores(self) -> None:
        d = self.data
        assert d is not None
        box = self.query_one("#case-scores", Static)
        width = box.content_size.width or self.size.width - 4
        table = scores_table(d, self.metric, self.classes_of_case, self.diagnosis, width)
        box.update(table)
        self._show_judge()
        self.query_one("#case-history", Static).update(history_text(d.history, self.metric))

    def _show_diagnosis(self) -> None:
        group = diagnosis_group(self.data, self.metric, self.classes_of_case, self.diagnosis)
        self.query_one("#case-diagnosis", Static).update(group)

    def _show_judge(self) -> None:
        run, case = self._side_case()
        self.query_one("#case-judge", Static).update(judge_text(run, case, self.metric or ""))

    def _refresh_title(self) -> None:
        title = title_parts(self.case_id, self.data, self.metric, self.index, len(self.case_ids))
        self.query_one("#case-title", FittedLine).update(*title)

    def on_resize(self) -> None:
        # the scores table is fitted to the width (names cut, never figures): fit it again
        if self.data is not None:
            self._show_scores()

    # ------------------------------------------------------------ events and actions

    @on(ClaimsView.Cited)
    def _cited(self, event: ClaimsView.Cited) -> None:
        self.query_one(ChunksView).highlight(event.chunks, follow=event.follow)

    async def watch_side(self) -> None:
        if not await self._show_evidence():
            return
        self._show_judge()
        self._refresh_title()

    async def watch_metric(self) -> None:
        if not await self._show_evidence():
            return
        self._show_scores()
        self._show_diagnosis()
        self._refresh_title()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch_side":
            return bool(self.other_run_id)  # one run: no B to switch to (tab moves the focus)
        return super().check_action(action, parameters)

    def action_page(self, move: str) -> None:
        body = self.query_one("#case-body", VerticalScroll)
        if move == "top":
            body.scroll_home(animate=False)
        elif move == "bottom":
            body.scroll_end(animate=False)
        elif move == "page_down":
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def action_step(self, delta: int) -> None:
        target = self.index + delta
        if not self.case_ids:
            return
        if not 0 <= target < len(self.case_ids):
            self.notify("first case in the list" if target < 0 else "last case in the list")
            return
        self.index = target
        self.load()

    def action_switch_side(self) -> None:
        if self.other_run_id and self.data is not None:
            self.side = "A" if self.side == "B" else "B"

    def action_next_metric(self) -> None:
        metrics = [] if self.data is None else metrics_of(self.data)
        if metrics:
            i = metrics.index(self.metric) if self.metric in metrics else -1
            self.metric = metrics[(i + 1) % len(metrics)]

    def action_refresh_runs(self) -> None:
        """Read the runs again: the comparison, the paired scores and this case."""
        self.stale = ()
        with self._prepare:
            self._comparison, self._paired = None, None
        if self.case_ids:
            self.load()

    def _document(self) -> str | None:
        if self.data is None:
            self.notify("the case is still loading", severity="warning")
            return None
        return case_document(self.data, self.diagnosis)

    def action_copy(self) -> None:
        text = self._document()
        if text is not None:
            copy_markdown(self.app, text, f"case {printable(self.case_id)}")

    def action_pager(self) -> None:
        if self.data is None:
            self.notify("the case is still loading", severity="warning")
            return
        error = page(self.app, case_document(self.data, self.diagnosis, markdown=False))
        if error is not None:
            self.notify(error, severity="error")

    def action_rejudge(self) -> None:
        """Re-judge this case of the run on the shown side; the history then includes it."""
        if self.data is None:
            return  # still loading, or an empty list
        run_id = self.other_run_id if self.side == "A" and self.other_run_id else self.run_id

        def judged(result: str | None) -> None:
            if result is not None:
                self.load()

        self.app.open_rejudge_case(run_id, self.case_id, judged)  # type: ignore[attr-defined]

    def action_back(self) -> None:
        self.app.pop_screen()
