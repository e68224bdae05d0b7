"""Noise: re-judge a run's answers K times (cache bypassed), watch progress, then see the
noise floor and, with `against`, the updated verdict of the pending comparison.

The workflow is `ragtui.services.judging.noise_check` (the same as `ragtui noise`), awaited in
an async worker: it never blocks the event loop, so the screen stays live and esc cancels at
once. Nothing is sent to a judge before the user has seen the plan (cases × metrics × reruns
= calls, the judge) and pressed Start.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import ProgressBar, Static

from ragtui.core.compare import Comparison
from ragtui.core.errors import RagtuiError
from ragtui.format import verdict_moves
from ragtui.judge.noise import noise_lines
from ragtui.judge.runner import Progress
from ragtui.services.judging import NoiseCheck, noise_check, plan_batch
from ragtui.tui.widgets.batch import BatchConfirm, JudgeBatch, plan_text
from ragtui.tui.widgets.judge_form import JudgeChoice, JudgeForm
from ragtui.tui.widgets.key_bar import KeyBar
from ragtui.tui.widgets.literal import join, lit
from ragtui.tui.widgets.metric_table import MetricTable, notes, verdict_text

DEFAULT_TIMES = 3


def verdict_changes(before: Comparison | None, after: Comparison) -> list[Text]:
    """Per metric: the pending comparison's verdict before the reruns → with them, in the
    words the CLI prints (fmt.verdict_moves), each verdict in its colour."""
    if before is None:
        return []
    said = verdict_moves(before, after)
    # the heading names the judges, from the run files: through the neutraliser (lit)
    out = [join("\n", lit(said.heading, "bold"))]
    if said.caveat:
        out.append(lit("  " + said.caveat, "dim"))
    for m in said.moves:
        was = verdict_text(m.was) if m.was is not None else Text("not compared", style="dim")
        out.append(join("  ", (m.metric, "bold"), "  ", was, " → ", verdict_text(m.now), m.floor))
    return out


class NoiseScreen(JudgeBatch, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "back / stop", tooltip="Back; stops a running noise check")
    ]
    HELP = (
        "Rerun the judge K times on the same answers (cache bypassed): the noise floor per "
        "metric, and with a pending comparison its verdict before and after."
    )

    running: var[bool] = var(False)

    def __init__(self, run_id: str, against: str | None = None) -> None:
        super().__init__()
        self.run_id, self.against = run_id, against
        self.choice: JudgeChoice | None = None
        self.times = DEFAULT_TIMES

    def compose(self) -> ComposeResult:
        yield Static(self._title(self.run_id), id="noise-title", classes="screen-title")
        with VerticalScroll(id="batch-body"):
            yield Vertical(id="batch-form")
            yield Vertical(id="batch-confirm")
            yield Static(id="batch-label")
            yield ProgressBar(id="batch-bar", show_eta=False)
            yield Static(id="batch-counts")
            with Vertical(id="noise-result"):
                yield Static(id="noise-lines")
                yield MetricTable(id="noise-table")
                yield Static(id="noise-notes")
        yield KeyBar()

    def _title(self, name: str) -> Text:
        out = join(("ragtui · Noise  ", "bold"), (name, "bold"))
        if self.against:
            out.append_text(join("  (pending comparison vs ", (self.against, ""), ")"))
        return out

    def on_mount(self) -> None:
        for wid in ("#batch-bar", "#noise-result", "#batch-confirm"):
            self.query_one(wid).display = False
        self.query_one("#batch-form").loading = True
        self.prepare()

    async def on_judge_batch_prepared(self, message: JudgeBatch.Prepared) -> None:
        holder = self.query_one("#batch-form")
        holder.loading = False
        self.query_one("#noise-title", Static).update(self._title(message.run.name))
        form = JudgeForm(message.judges, message.chosen, problem=message.problem, times=self.times)
        await holder.mount(form)

    # ------------------------------------------------------------ plan, then start

    @on(JudgeForm.Submitted)
    def _submitted(self, event: JudgeForm.Submitted) -> None:
        self.choice = event.choice
        self.times = event.choice.times
        self.plan(event.choice)

    @on(JudgeForm.Cancelled)
    def _cancelled(self) -> None:
        self.dismiss(None)

    @work(exclusive=True, group="noise-plan", description="plan the noise check")
    async def plan(self, choice: JudgeChoice) -> None:
        """What the check will send, shown before anything is sent."""
        store = self.app.store  # type: ignore[attr-defined]
        try:
            plan = await asyncio.to_thread(
                plan_batch, store, self.run_id, choice.judge, choice.metrics, times=choice.times
            )
            extra = None
            if self.against:
                b = await asyncio.to_thread(
                    plan_batch, store, self.against, choice.judge, choice.metrics
                )
                extra = (
                    f"then the pending comparison with B ({b.run_name}): if another judge or "
                    f"prompt graded B, B is re-judged first, up to {b.calls - b.made:,} more calls "
                    "(cached replies are reused)"
                )
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.on_judge_batch_failed(JudgeBatch.Failed(str(exc)))
            return
        await self.show_plan(plan_text(plan, "Noise check of", extra))

    @on(BatchConfirm.Confirmed)
    def _confirmed(self) -> None:
        assert self.choice is not None
        self.query_one("#batch-confirm").display = False
        self.query_one("#batch-bar").display = True
        self.query_one("#noise-result").display = False
        self.query_one("#batch-label", Static).update(
            join("rerunning ", (self.choice.judge.label, ""), " …")
        )
        self.running = True
        self.measure(self.choice)

    # ------------------------------------------------------------ the check

    @work(exclusive=True, group="noise", description="noise check")
    async def measure(self, choice: JudgeChoice) -> None:
        workspace = self.app.workspace  # type: ignore[attr-defined]
        try:
            result = await noise_check(
                workspace,
                self.run_id,
                choice.judge,
                times=choice.times,
                metrics=choice.metrics,
                against=self.against,
                progress=self._progress,
            )
        except asyncio.CancelledError:  # stopped: list the partial reruns as they now are
            self.app.refresh_folder(relist=True)  # type: ignore[attr-defined]
            raise
        except RagtuiError as err:
            self.on_judge_batch_failed(JudgeBatch.Failed(str(err)))
            return
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.on_judge_batch_failed(JudgeBatch.Failed(f"noise check failed: {exc!r}"))
            return
        self._finished(result, workspace.margin)

    def _progress(self, label: str, p: Progress) -> None:
        """Called on the UI loop after every finished case."""
        if not self.is_attached:
            return
        self.query_one("#batch-label", Static).update(lit(label, "bold"))
        self.show_progress(p)

    def on_judge_batch_failed(self, message: JudgeBatch.Failed) -> None:
        self.show_failure(message.error, "noise check")

    def _finished(self, result: NoiseCheck, margin: float) -> None:
        self.running = False
        if not self.is_attached:
            return
        self.query_one("#batch-label", Static).update(
            Text("done · esc goes back", style="bold green")
        )
        lines = [lit(b.summary(), "dim") for b in result.batches]
        lines += [Text("noise floor (judge-only: same answers, fresh judge calls)", style="bold")]
        lines += [lit(line) for line in noise_lines(result.noise, margin)]
        if result.note:
            lines.append(lit(result.note, "dim"))
        self.query_one("#noise-result").display = True
        table = self.query_one(MetricTable)
        table.display = result.comparison is not None
        if result.comparison is not None:
            c = result.comparison
            table.show(c)
            heading = join(
                ("\nverdict with the noise floor: A ", "bold"),
                (c.run_a.name, "bold"),
                (" vs B ", "bold"),
                (c.run_b.name, "bold"),
            )
            lines += [*verdict_changes(result.before, c), heading]
            self.query_one("#noise-notes", Static).update(notes(c, table.headline(c)))
        self.query_one("#noise-lines", Static).update(Text("\n").join(lines))

    def action_close(self) -> None:
        if self.running:  # stop: finished cases stay in their files; running it again resumes
            self.workers.cancel_group(self, "noise")
            self.notify("noise reruns stopped; run again to resume", markup=False)
        self.dismiss(None)
