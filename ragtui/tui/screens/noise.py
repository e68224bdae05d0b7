"""Noise: re-judge a run's answers K times (cache bypassed), watch progress, then see the
noise floor and, with `against`, the updated verdict of the pending comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, ProgressBar, Static

from ragtui.core.compare import Comparison, compare_runs
from ragtui.core.errors import RagtuiError
from ragtui.judge.noise import noise_lines, rerun_noise
from ragtui.judge.runner import judge_run, noise_reruns
from ragtui.tui.widgets.batch import BatchMixin, Failed, Prepared, Progressed, counts
from ragtui.tui.widgets.judge_form import BatchHandle, JudgeChoice, JudgeForm
from ragtui.tui.widgets.literal import join, lit
from ragtui.tui.widgets.metric_table import MetricTable, notes, verdict_text

DEFAULT_TIMES = 3


@dataclass(frozen=True)
class NoiseResult:
    summaries: list[str]
    lines: list[str]
    comparison: Comparison | None
    note: str | None  # how B was made comparable, when it had to be re-judged
    before: Comparison | None = None  # the pending comparison as it stood before the reruns


def verdict_changes(before: Comparison | None, after: Comparison) -> list[Text]:
    """Per metric: the pending comparison's verdict before the reruns → with them."""
    if before is None:
        return []
    out = [
        Text("\nverdict of the pending comparison, before → with the measured noise", style="bold")
    ]
    for r in after.metrics:
        old = before.metric(r.metric)
        was = verdict_text(old) if old is not None else Text("not compared", style="dim")
        floor = "" if r.noise_floor is None else f"  (noise floor ±{r.noise_floor * 100:.1f})"
        out.append(join("  ", (r.metric, "bold"), "  ", was, " → ", verdict_text(r), floor))
    return out


class NoiseScreen(BatchMixin, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back / stop")]

    def __init__(self, run_id: str, against: str | None = None) -> None:
        super().__init__()
        self.run_id, self.against = run_id, against
        self.handle = BatchHandle()
        self.running = False
        self.times = DEFAULT_TIMES

    def compose(self) -> ComposeResult:
        yield Static(self._title(self.run_id), id="noise-title", classes="screen-title")
        with VerticalScroll(id="batch-body"):
            yield Vertical(id="batch-form")
            yield Static(id="batch-label")
            yield ProgressBar(id="batch-bar", show_eta=False)
            yield Static(id="batch-counts")
            with Vertical(id="noise-result"):
                yield Static(id="noise-lines")
                yield MetricTable(id="noise-table")
                yield Static(id="noise-notes")
        yield Footer()

    def _title(self, name: str) -> Text:
        out = join(("ragtui · Noise  ", "bold"), (name, "bold"))
        if self.against:
            out.append_text(join("  (pending comparison vs ", (self.against, ""), ")"))
        return out

    def on_mount(self) -> None:
        for wid in ("#batch-bar", "#noise-result"):
            self.query_one(wid).display = False
        self.query_one("#batch-form").loading = True
        self.prepare()

    async def on_prepared(self, message: Prepared) -> None:
        holder = self.query_one("#batch-form")
        holder.loading = False
        self.query_one("#noise-title", Static).update(self._title(message.run.name))
        form = JudgeForm(message.judges, message.chosen, problem=message.problem, times=self.times)
        await holder.mount(form)

    @on(JudgeForm.Submitted)
    def _submitted(self, event: JudgeForm.Submitted) -> None:
        self.query_one("#batch-form").display = False
        self.query_one("#batch-bar").display = True
        self.query_one("#noise-result").display = False
        self.running = True
        self.measure(event.choice)

    @on(JudgeForm.Cancelled)
    def _cancelled(self) -> None:
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="noise")
    def measure(self, choice: JudgeChoice) -> None:
        store = self.app.store  # type: ignore[attr-defined]
        margin = float(getattr(self.app, "margin", 0.05))
        k = choice.times

        def progress(i: int, p: object) -> None:
            self.progress_callback(f"rerun {i} of {k}, cache bypassed")(p)

        try:
            before = None
            if self.against:  # the verdict as it stands, to show what the reruns changed
                before = compare_runs(store, self.run_id, self.against, margin=margin)
            results = self.handle.run(
                noise_reruns(
                    store,
                    self.run_id,
                    choice.judge,
                    times=k,
                    metrics=choice.metrics,
                    progress=progress,
                )
            )
            group = [r.run_id for r in results]
            names = [m for m in choice.metrics if m in set(store.metrics(group))]
            lines = noise_lines(rerun_noise(store, group, names), margin)
            comparison, note = None, None
            if self.against:
                # A: the parent when the reruns replicate it (same judge), else the first rerun
                a_ref = self.run_id if self.run_id in store.reruns(group[0]) else group[0]
                b_ref, note = self._like_for_like(store, choice, names, group[0])
                have_b = set(store.metrics([b_ref]))
                comparison = compare_runs(
                    store,
                    a_ref,
                    b_ref,
                    metrics=[m for m in names if m in have_b] or None,
                    margin=margin,
                )
        except RagtuiError as err:
            self.post_message(Failed(str(err)))
            return
        result = NoiseResult([r.summary() for r in results], lines, comparison, note, before)
        self.app.call_from_thread(self._finished, result)

    def _like_for_like(
        self, store: object, choice: JudgeChoice, names: list[str], rerun_id: str
    ) -> tuple[str, str | None]:
        """B as graded by the noise judge, so the verdict does not mix two judges' scales:
        B itself when the same judge and prompts graded it, else a (cached) re-judge of B."""
        assert self.against is not None
        b_id = store.resolve_run(self.against)  # type: ignore[attr-defined]
        b, rerun = store.run(b_id), store.run(rerun_id)  # type: ignore[attr-defined]
        if (b.judge.model, b.judge.prompt_hash) == (rerun.judge.model, rerun.judge.prompt_hash):
            return b_id, None
        result = self.handle.run(
            judge_run(
                store,  # type: ignore[arg-type]
                b_id,
                choice.judge,
                metrics=names,
                progress=self.progress_callback(
                    f"re-judging B ({b.name}) with {choice.judge.name}"
                ),
            )
        )
        return (
            result.run_id,
            f"B re-judged by {choice.judge.name} for a like-for-like verdict: {result.summary()}",
        )

    def on_progressed(self, message: Progressed) -> None:
        p = message.progress
        self.query_one("#batch-label", Static).update(lit(message.label, "bold"))
        self.query_one("#batch-bar", ProgressBar).update(total=max(1, p.total), progress=p.done)
        self.query_one("#batch-counts", Static).update(counts(p))

    def on_failed(self, message: Failed) -> None:
        self.running = False
        self.query_one("#batch-label", Static).update(lit(message.error, "bold red"))
        self.query_one("#batch-form").display = True

    def _finished(self, result: NoiseResult) -> None:
        self.running = False
        if not self.is_attached or self.handle.cancelled:
            return
        self.query_one("#batch-label", Static).update(
            Text("done · esc goes back", style="bold green")
        )
        lines = [lit(s, "dim") for s in result.summaries]
        lines += [Text("noise floor (judge-only: same answers, fresh judge calls)", style="bold")]
        lines += [lit(line) for line in result.lines]
        if result.note:
            lines.append(lit(result.note, "dim"))
        box = self.query_one("#noise-result")
        box.display = True
        self.query_one("#noise-lines", Static).update(Text("\n").join(lines))
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
            changes = verdict_changes(result.before, c)
            self.query_one("#noise-lines", Static).update(
                Text("\n").join([*lines, *changes, heading])
            )
            self.query_one("#noise-notes", Static).update(notes(c, table.headline(c)))

    def action_close(self) -> None:
        if self.running:  # stop: finished cases stay in their files; running it again resumes
            self.handle.cancel()
            self.notify("noise reruns stopped; run again to resume", markup=False)
        self.dismiss(None)
