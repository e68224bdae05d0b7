"""Re-judge from the TUI: one case (`j` on Case, a dialog) or a whole run (`J`, a screen with a
progress bar that ends in Compare parent vs re-judged)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, ProgressBar, Static

from ragtui.core.errors import RagtuiError
from ragtui.core.model import Case, Run
from ragtui.format import short_pts
from ragtui.judge.runner import BatchResult, Progress, default_metrics, judge_run, rejudge_case
from ragtui.tui.widgets.claims_view import claim_text
from ragtui.tui.widgets.judge_form import BatchHandle, JudgeChoice, JudgeForm, configured_judges
from ragtui.tui.widgets.literal import join, lit


class Prepared(Message):
    """The form's data is ready (read in a worker): judges, ticked metrics, a config problem."""

    def __init__(self, judges: list[Any], chosen: list[str], problem: str | None, run: Run) -> None:
        super().__init__()
        self.judges, self.chosen, self.problem, self.run = judges, chosen, problem, run


class Progressed(Message):
    def __init__(self, progress: Progress, label: str = "") -> None:
        super().__init__()
        self.progress, self.label = progress, label


class Failed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


def counts(p: Progress) -> Text:
    out = Text(f"{p.done} / {p.total} cases · ")
    out.append(f"{p.scored} scored", style="green")
    out.append(" · ")
    out.append(f"{p.parse_failures} parse failures", style="yellow" if p.parse_failures else "")
    out.append(" · ")
    out.append(f"{p.errors} errors", style="red" if p.errors else "")
    if p.cached:
        out.append(f" · {p.cached} from cache", style="dim")
    if p.resumed:
        out.append(f" · {p.resumed} already done (resumed)", style="dim")
    return out


def verdicts(title: Text, case: Case | None, metrics: Sequence[str]) -> Text:
    """One side of the before/after view: each metric's grade, then every claim."""
    out = title.copy()
    out.stylize("bold")
    if case is None:
        return out + Text("\n(case not in this run)", style="dim")
    for m in metrics:
        out.append("\n")
        if m in case.errors:
            out.append_text(join((m, "bold"), "  ", ("error ", "red"), (case.errors[m], "red")))
            continue
        score = case.scores.get(m)
        if score is None:
            out.append_text(join((m, "bold"), Text("  not graded", style="dim")))
            continue
        label = f" ({score.label})" if score.label else ""
        out.append_text(join((m, "bold"), f"  {short_pts(score.value)}", (label, "")))
        if score.reason:
            out.append_text(join("\n    ", (score.reason, "dim italic")))
    if case.claims:
        out.append("\n\nclaims", style="bold")
        for claim in case.claims:
            out.append("\n")
            out.append_text(claim_text(claim))
    return out


class BatchMixin:
    """Progress/failure plumbing shared by the batch screens (thread worker → messages)."""

    handle: BatchHandle
    run_id: str

    @work(thread=True, group="batch-prepare")
    def prepare(self) -> None:
        """Load the judges, the default metrics and the run off the UI thread → Prepared."""
        store = self.app.store  # type: ignore[attr-defined]
        judges, problem = configured_judges(store.folder)
        self.load_extra(store)
        run = store.run(self.run_id)
        chosen = default_metrics(store, self.run_id)
        self.post_message(Prepared(judges, chosen, problem, run))  # type: ignore[attr-defined]

    def load_extra(self, store: Any) -> None:
        """What a screen also needs from the store before its form shows (worker thread)."""

    def progress_callback(self, label: str = "") -> Any:
        post = self.post_message  # type: ignore[attr-defined]
        # a copy: the runner keeps mutating its Progress while the message waits in the queue
        return lambda p: post(Progressed(replace(p), label))


class RejudgeCaseScreen(BatchMixin, ModalScreen[str | None]):
    """Choose a judge and metrics, judge this one case, show old and new verdicts side by side.
    Dismisses with the re-judge run's id (None when nothing was judged)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, run_id: str, case_id: str) -> None:
        super().__init__()
        self.run_id, self.case_id = run_id, case_id
        self.handle = BatchHandle()
        self.old: Case | None = None
        self.run: Run | None = None
        self.result_id: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rejudge-box"):
            yield Static(
                join(("Re-judge case ", "bold"), (self.case_id, "bold")), id="rejudge-title"
            )
            yield Vertical(id="rejudge-form")
            yield Static(id="rejudge-status")
            with VerticalScroll(id="rejudge-result"), Horizontal():
                yield Static(id="rejudge-old", classes="verdicts")
                yield Static(id="rejudge-new", classes="verdicts")

    def on_mount(self) -> None:
        self.query_one("#rejudge-result").display = False
        self.query_one("#rejudge-form").loading = True
        self.prepare()

    def load_extra(self, store: Any) -> None:
        self.old = store.case(self.run_id, self.case_id)

    async def on_prepared(self, message: Prepared) -> None:
        self.run = message.run
        holder = self.query_one("#rejudge-form")
        holder.loading = False
        title = join(
            ("Re-judge case ", "bold"), (self.case_id, "bold"), " of ", (message.run.name, "")
        )
        self.query_one("#rejudge-title", Static).update(title)
        await holder.mount(JudgeForm(message.judges, message.chosen, problem=message.problem))

    @on(JudgeForm.Submitted)
    def _submitted(self, event: JudgeForm.Submitted) -> None:
        self.query_one(JudgeForm).disabled = True
        status = self.query_one("#rejudge-status", Static)
        status.update(join("judging with ", (event.choice.judge.label, ""), " …"))
        status.loading = True
        self.judge(event.choice)

    @on(JudgeForm.Cancelled)
    def _cancelled(self) -> None:
        self.action_close()

    @work(thread=True, exclusive=True, group="rejudge")
    def judge(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        coro = rejudge_case(store, self.run_id, self.case_id, choice.judge, metrics=choice.metrics)
        try:
            result, new = self.handle.run(coro)
        except RagtuiError as err:
            self.post_message(Failed(str(err)))
            return
        self.app.call_from_thread(self._judged, choice, result, new)

    def on_failed(self, message: Failed) -> None:
        status = self.query_one("#rejudge-status", Static)
        status.loading = False
        status.update(lit(message.error, "bold red"))
        self.query_one(JudgeForm).disabled = False

    def _judged(self, choice: JudgeChoice, result: BatchResult, new: Case) -> None:
        if not self.is_attached:
            return
        self.result_id = result.run_id
        status = self.query_one("#rejudge-status", Static)
        status.loading = False
        status.update(
            join(
                ("done: ", "bold green"), (result.summary(), ""), Text("  esc closes", style="dim")
            )
        )
        self.query_one("#rejudge-form").display = False
        self.query_one("#rejudge-result").display = True
        run = self.run
        before = join(
            "Before · ", (run.judge.model if run else "?", ""), " · ", (run.name if run else "", "")
        )
        after = join("After · ", (choice.judge.name, ""), " · ", (choice.judge.model, ""))
        self.query_one("#rejudge-old", Static).update(verdicts(before, self.old, choice.metrics))
        self.query_one("#rejudge-new", Static).update(verdicts(after, new, choice.metrics))

    def action_close(self) -> None:
        self.handle.cancel()
        self.dismiss(self.result_id)


class RejudgeRunScreen(BatchMixin, Screen[None]):
    """Re-judge a whole run with a progress bar, then open Compare parent vs re-judged."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back / stop")]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.handle = BatchHandle()
        self.running = False

    def compose(self) -> ComposeResult:
        yield Static(
            join(("ragtui · Re-judge run ", "bold"), (self.run_id, "bold")),
            id="batch-title",
            classes="screen-title",
        )
        with VerticalScroll(id="batch-body"):
            yield Vertical(id="batch-form")
            yield Static(id="batch-label")
            yield ProgressBar(id="batch-bar", show_eta=False)
            yield Static(id="batch-counts")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#batch-bar").display = False
        self.query_one("#batch-form").loading = True
        self.prepare()

    async def on_prepared(self, message: Prepared) -> None:
        holder = self.query_one("#batch-form")
        holder.loading = False
        title = join(
            ("ragtui · Re-judge run ", "bold"),
            (message.run.name, "bold"),
            "  ",
            (self.run_id, "dim"),
        )
        self.query_one("#batch-title", Static).update(title)
        await holder.mount(JudgeForm(message.judges, message.chosen, problem=message.problem))

    @on(JudgeForm.Submitted)
    def _submitted(self, event: JudgeForm.Submitted) -> None:
        self.query_one("#batch-form").display = False
        self.query_one("#batch-bar").display = True
        self.query_one("#batch-label", Static).update(
            join("re-judging with ", (event.choice.judge.label, ""), " …")
        )
        self.running = True
        self.rejudge(event.choice)

    @on(JudgeForm.Cancelled)
    def _cancelled(self) -> None:
        self.app.pop_screen()

    @work(thread=True, exclusive=True, group="rejudge")
    def rejudge(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        coro = judge_run(
            store,
            self.run_id,
            choice.judge,
            metrics=choice.metrics,
            progress=self.progress_callback(),
        )
        try:
            result = self.handle.run(coro)
        except RagtuiError as err:
            self.post_message(Failed(str(err)))
            return
        self.app.call_from_thread(self._finished, result)

    def on_progressed(self, message: Progressed) -> None:
        p = message.progress
        self.query_one("#batch-bar", ProgressBar).update(total=max(1, p.total), progress=p.done)
        self.query_one("#batch-counts", Static).update(counts(p))

    def on_failed(self, message: Failed) -> None:
        self.running = False
        self.query_one("#batch-label", Static).update(lit(message.error, "bold red"))
        self.query_one("#batch-form").display = True

    def _finished(self, result: BatchResult) -> None:
        self.running = False
        if not self.is_attached or self.handle.cancelled:
            return
        self.notify(result.summary(), title="re-judged", markup=False)
        self.app.open_compare(self.run_id, result.run_id, replace=True)  # type: ignore[attr-defined]

    def action_close(self) -> None:
        if self.running:  # stop: the cases judged so far stay in the file; J again resumes
            self.handle.cancel()
            self.notify("re-judge stopped; run it again to resume", markup=False)
        self.app.pop_screen()
