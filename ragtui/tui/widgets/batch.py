"""What the judge-batch screens share: the form's data loaded off the UI thread, progress
counts, and the confirmation that says what a batch will do before it starts."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, ProgressBar, Static

from ragtui.config import Config, JudgeConfig
from ragtui.core.model import Run
from ragtui.judge.runner import Progress, default_metrics
from ragtui.services.judging import BatchPlan
from ragtui.trust import user_config_path
from ragtui.tui.widgets.literal import join, lit


def configured_judges(config: Config, folder: object) -> tuple[list[JudgeConfig], str | None]:
    """The configured judges, or none and the one-line reason (with how to add one)."""
    if not config.judges:
        return [], (
            "no judges configured: add a [judges.NAME] table with provider, url and model to "
            f"{user_config_path()} (a runs folder's own ragtui.toml may not define judges "
            "unless you `ragtui trust` it)"
        )
    return list(config.judges.values()), None


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


def plan_text(plan: BatchPlan, verb: str, extra: str | None = None) -> Text:
    """ "Re-judge 48 cases × 3 metrics = 144 judge calls with qwen (ollama qwen2.5:7b at …)";
    `extra` is one more line (e.g. calls a like-for-like verdict may add)."""
    reruns = f" × {plan.times} reruns" if plan.times > 1 else ""
    return join(
        (f"{verb} ", "bold"),
        (plan.run_name, "bold"),
        f": {plan.cases:,} cases × {len(plan.metrics)} metrics{reruns} = ",
        (f"{plan.calls:,} judge calls", "bold"),
        (
            f", {plan.made:,} of them made by an earlier run of this batch: "
            # (the grades a case there lacks because the judge failed them are not in the
            # index: the words say they are asked again, not a count that would leave them out)
            f"{plan.calls - plan.made:,} left to send, and any grade the judge failed there "
            "again"
            if plan.made
            else "",
            "",
        ),
        "\nwith ",
        (plan.judge.label, ""),
        "\nmetrics: ",
        (", ".join(plan.metrics), ""),
        ("" if extra is None else f"\n{extra}", ""),
        Text("\nfinished cases are kept if you stop; running it again resumes", style="dim"),
    )


class BatchConfirm(Vertical):
    """The plan of a batch and Start / Back: nothing is sent to a judge before Start."""

    class Confirmed(Message):
        pass

    class Declined(Message):
        pass

    def __init__(self, text: Text, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(self.text, classes="batch-plan")
        with Horizontal():
            yield Button("Start", variant="primary", id="batch-start")
            yield Button("Back", id="batch-back")

    def on_mount(self) -> None:
        self.query_one("#batch-start").focus()

    @on(Button.Pressed, "#batch-start")
    def _start(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Confirmed())

    @on(Button.Pressed, "#batch-back")
    def _back(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Declined())


class JudgeBatch:
    """What the judge-batch screens share: the form's data loaded off the UI thread (then
    `JudgeBatch.Prepared`, or `JudgeBatch.Failed` with the one-line reason)."""

    run_id: str

    class Prepared(Message):
        """The form's data is ready: judges, ticked metrics, a config problem, the run."""

        def __init__(
            self, judges: list[Any], chosen: list[str], problem: str | None, run: Run
        ) -> None:
            super().__init__()
            self.judges, self.chosen, self.problem, self.run = judges, chosen, problem, run

    class Failed(Message):
        """Something the screen asked for failed; `error` is the one-line reason."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    @work(thread=True, group="batch-prepare", description="load the judge form")
    def prepare(self) -> None:
        app: Any = self.app  # type: ignore[attr-defined]
        post = self.post_message  # type: ignore[attr-defined]
        try:
            store = app.store
            judges, problem = configured_judges(app.workspace.config, store.folder)
            if app.workspace.config_error:
                problem = app.workspace.config_error
            self.load_extra(store)
            run = store.run(self.run_id)
            chosen = default_metrics(store, self.run_id)
        except Exception as exc:  # a worker reports its failure; it never ends the app
            post(JudgeBatch.Failed(str(exc)))
            return
        post(JudgeBatch.Prepared(judges, chosen, problem, run))

    def load_extra(self, store: Any) -> None:
        """What a screen also needs from the store before its form shows (worker thread)."""

    async def show_plan(self, text: Text) -> None:
        """The plan in #batch-confirm in place of the form: nothing is sent before Start."""
        screen: Any = self
        if not screen.is_attached:
            return
        screen.query_one("#batch-form").display = False
        confirm = screen.query_one("#batch-confirm")
        await confirm.remove_children()
        await confirm.mount(BatchConfirm(text))
        confirm.display = True

    def show_progress(self, p: Progress) -> None:
        """The bar and the counts after every finished case (on the UI loop)."""
        screen: Any = self
        screen.query_one("#batch-bar", ProgressBar).update(total=max(1, p.total), progress=p.done)
        screen.query_one("#batch-counts", Static).update(counts(p))

    def show_failure(self, error: str, title: str) -> None:
        """A failed step: its one line in red where the progress was, a notification, and
        the form again (to change the judge and try again); nothing more once closed."""
        screen: Any = self
        screen.running = False
        if not screen.is_attached:
            return
        screen.query_one("#batch-form").loading = False
        screen.query_one("#batch-label", Static).update(lit(error, "bold red"))
        screen.notify(error, title=title, severity="error", markup=False)
        screen.query_one("#batch-confirm").display = False
        screen.query_one("#batch-form").display = True

    def on_batch_confirm_declined(self) -> None:
        """Back: the form again, to change the judge, the metrics or the reruns."""
        screen: Any = self
        screen.query_one("#batch-confirm").display = False
        screen.query_one("#batch-form").display = True
