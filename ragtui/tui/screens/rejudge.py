"""Re-judge from the TUI: one case (`R` on Case, a dialog) or a whole run (`J`, a screen that
first says what it will do, then shows a progress bar and ends in Compare parent vs re-judged).

The batches run in async workers on the UI loop: the runner never blocks its event loop (its
file and index work happens in threads), so the screen stays live and esc cancels at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import ModalScreen, Screen
from textual.widgets import ProgressBar, Static

from ragtui.core.errors import RagtuiError
from ragtui.core.model import Case, Run
from ragtui.format import short_pts
from ragtui.judge.runner import BatchResult, Progress, rejudge_case
from ragtui.services.judging import plan_batch, rejudge
from ragtui.tui.widgets.batch import BatchConfirm, JudgeBatch, plan_text
from ragtui.tui.widgets.claims_view import claim_text
from ragtui.tui.widgets.judge_form import JudgeChoice, JudgeForm
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.literal import join, lit


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


class RejudgeCaseScreen(JudgeBatch, ModalScreen[str | None]):
    """Choose a judge and metrics, judge this one case, show old and new verdicts side by side.
    Dismisses with the re-judge run's id (None when nothing was judged)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, run_id: str, case_id: str) -> None:
        super().__init__()
        self.run_id, self.case_id = run_id, case_id
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

    def load_extra(self, store: object) -> None:
        self.old = store.case(self.run_id, self.case_id)  # type: ignore[attr-defined]

    async def on_judge_batch_prepared(self, message: JudgeBatch.Prepared) -> None:
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

    @work(exclusive=True, group="rejudge", description="re-judge")
    async def judge(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        try:
            result, new = await rejudge_case(
                store, self.run_id, self.case_id, choice.judge, metrics=choice.metrics
            )
        except RagtuiError as err:
            self.on_judge_batch_failed(JudgeBatch.Failed(str(err)))
            return
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.on_judge_batch_failed(JudgeBatch.Failed(f"re-judge failed: {exc!r}"))
            return
        self._judged(choice, result, new)

    def on_judge_batch_failed(self, message: JudgeBatch.Failed) -> None:
        if not self.is_attached:
            return
        status = self.query_one("#rejudge-status", Static)
        status.loading = False
        status.update(lit(message.error, "bold red"))
        self.notify(message.error, title="re-judge", severity="error", markup=False)
        for form in self.query(JudgeForm):
            form.disabled = False

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
        self.workers.cancel_group(self, "rejudge")
        self.dismiss(self.result_id)


class RejudgeRunScreen(JudgeBatch, Screen[None]):
    """Re-judge a whole run: pick a judge, see what it will cost in calls, start, watch the
    progress; then Compare parent vs re-judged opens."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "back / stop", tooltip="Back; stops a running re-judge")
    ]

    running: var[bool] = var(False)

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.choice: JudgeChoice | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            join(("ragtui · Re-judge run ", "bold"), (self.run_id, "bold")),
            id="batch-title",
            classes="screen-title",
        )
        with VerticalScroll(id="batch-body"):
            yield Vertical(id="batch-form")
            yield Vertical(id="batch-confirm")
            yield Static(id="batch-label")
            yield ProgressBar(id="batch-bar", show_eta=False)
            yield Static(id="batch-counts")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#batch-bar").display = False
        self.query_one("#batch-form").loading = True
        self.prepare()

    async def on_judge_batch_prepared(self, message: JudgeBatch.Prepared) -> None:
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
        self.choice = event.choice
        self.plan(event.choice)

    @on(JudgeForm.Cancelled)
    def _cancelled(self) -> None:
        self.app.pop_screen()

    @work(exclusive=True, group="rejudge-plan", description="plan the re-judge")
    async def plan(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        try:
            plan = await asyncio.to_thread(
                plan_batch, store, self.run_id, choice.judge, choice.metrics
            )
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.on_judge_batch_failed(JudgeBatch.Failed(str(exc)))
            return
        await self.show_plan(plan_text(plan, "Re-judge"))

    @on(BatchConfirm.Confirmed)
    def _confirmed(self) -> None:
        assert self.choice is not None
        self.query_one("#batch-confirm").display = False
        self.query_one("#batch-bar").display = True
        self.query_one("#batch-label", Static).update(
            join("re-judging with ", (self.choice.judge.label, ""), " …")
        )
        self.running = True
        self.rejudge(self.choice)

    @work(exclusive=True, group="rejudge", description="re-judge")
    async def rejudge(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        try:
            result = await rejudge(
                store, self.run_id, choice.judge, metrics=choice.metrics, progress=self._progress
            )
        except asyncio.CancelledError:
            # stopped (esc): the batch closed its file and indexed it on the way out; the Runs
            # screen listed the runs before that, with this one still running
            self.app.refresh_folder(relist=True)  # type: ignore[attr-defined]
            raise
        except RagtuiError as err:
            self.on_judge_batch_failed(JudgeBatch.Failed(str(err)))
            return
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.on_judge_batch_failed(JudgeBatch.Failed(f"re-judge failed: {exc!r}"))
            return
        self._finished(result)

    def _progress(self, p: Progress) -> None:
        """Called on the UI loop after every finished case."""
        if self.is_attached:
            self.show_progress(p)

    def on_judge_batch_failed(self, message: JudgeBatch.Failed) -> None:
        self.show_failure(message.error, "re-judge")

    def _finished(self, result: BatchResult) -> None:
        self.running = False
        if not self.is_attached:
            return
        self.notify(result.summary(), title="re-judged", markup=False)
        self.app.open_compare(self.run_id, result.run_id, replace=True)  # type: ignore[attr-defined]

    def action_close(self) -> None:
        if self.running:  # stop: the cases judged so far stay in the file; J again resumes
            self.workers.cancel_group(self, "rejudge")
            self.notify("re-judge stopped; run it again to resume", markup=False)
        self.app.pop_screen()
