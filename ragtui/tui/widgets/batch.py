"""What the judge-batch screens share: the form's data loaded off the UI thread, progress
counts, and the confirmation that says what a batch will do before it starts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from ragtui.config import Config, JudgeConfig
from ragtui.core.model import Run
from ragtui.judge.runner import Progress, default_metrics
from ragtui.services.judging import BatchPlan
from ragtui.trust import user_config_path
from ragtui.tui.widgets.literal import join


def configured_judges(config: Config, folder: object) -> tuple[list[JudgeConfig], str | None]:
    """The configured judges, or none and the one-line reason (with how to add one)."""
    if not config.judges:
        return [], (
            "no judges configured: add a [judges.NAME] table with provider, url and model to "
            f"{user_config_path()} (a runs folder's own ragtui.toml may not define judges "
            "unless you `ragtui trust` it)"
        )
    return list(config.judges.values()), None


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


def plan_text(plan: BatchPlan, verb: str) -> Text:
    """ "Re-judge 48 cases × 3 metrics = 144 judge calls with qwen (ollama qwen2.5:7b at …)"."""
    reruns = f" × {plan.times} reruns" if plan.times > 1 else ""
    return join(
        (f"{verb} ", "bold"),
        (plan.run_name, "bold"),
        f": {plan.cases:,} cases × {len(plan.metrics)} metrics{reruns} = ",
        (f"{plan.calls:,} judge calls", "bold"),
        "\nwith ",
        (plan.judge.label, ""),
        "\nmetrics: ",
        (", ".join(plan.metrics), ""),
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


class BatchMixin:
    """Loads a batch screen's form data off the UI thread (→ Prepared) and reports progress."""

    run_id: str

    @work(thread=True, group="batch-prepare")
    def prepare(self) -> None:
        app: Any = self.app  # type: ignore[attr-defined]
        try:
            store = app.store
            judges, problem = configured_judges(app.workspace.config, store.folder)
            if app.workspace.config_error:
                problem = app.workspace.config_error
            self.load_extra(store)
            run = store.run(self.run_id)
            chosen = default_metrics(store, self.run_id)
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.post_message(Failed(str(exc)))  # type: ignore[attr-defined]
            return
        self.post_message(Prepared(judges, chosen, problem, run))  # type: ignore[attr-defined]

    def load_extra(self, store: Any) -> None:
        """What a screen also needs from the store before its form shows (worker thread)."""

    def progress_callback(self, label: str = "") -> Any:
        post = self.post_message  # type: ignore[attr-defined]
        # a copy: the runner keeps mutating its Progress while the message waits in the queue
        return lambda p: post(Progressed(replace(p), label))
