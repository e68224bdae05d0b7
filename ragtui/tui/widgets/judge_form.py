"""Pick a judge (from ragtui.toml) and metrics, optionally a rerun count. The screens run the
batch itself through ragtui.services.judging in an async worker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from ragtui.config import JudgeConfig
from ragtui.judge.metrics import METRICS
from ragtui.tui.widgets.literal import lit


@dataclass(frozen=True)
class JudgeChoice:
    judge: JudgeConfig
    metrics: list[str]
    times: int = 1


class JudgeForm(Vertical):
    """Judge, metrics (those ragtui can judge; `chosen` ticked) and, with `times`, a rerun count."""

    class Submitted(Message):
        def __init__(self, form: JudgeForm, choice: JudgeChoice) -> None:
            super().__init__()
            self.form = form
            self.choice = choice

        @property
        def control(self) -> JudgeForm:
            return self.form

    class Cancelled(Message):
        pass

    def __init__(
        self,
        judges: Sequence[JudgeConfig],
        chosen: Sequence[str],
        *,
        problem: str | None = None,
        times: int | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.judges = {j.name: j for j in judges}
        self.chosen = set(chosen)
        self.problem = problem
        self.times = times

    def compose(self) -> ComposeResult:
        if self.problem:
            yield Static(lit(self.problem, "bold yellow"), id="judge-problem")
        yield Static(Text("judge", style="bold"), classes="form-label")
        options = [(lit(j.label), name) for name, j in self.judges.items()]
        yield Select(
            options,
            allow_blank=not options,
            value=options[0][1] if options else Select.NULL,
            id="judge-select",
        )
        yield Static(Text("metrics", style="bold"), classes="form-label")
        yield SelectionList[str](
            *(Selection(lit(m), m, m in self.chosen) for m in METRICS), id="metric-select"
        )
        if self.times is not None:
            yield Static(Text("reruns (K ≥ 2)", style="bold"), classes="form-label")
            yield Input(str(self.times), type="integer", id="judge-times")
        with Horizontal():
            yield Button("Run", variant="primary", id="judge-run", disabled=not self.judges)
            yield Button("Cancel", id="judge-cancel")

    def on_mount(self) -> None:
        target = "#judge-select" if self.judges else "#judge-cancel"
        self.query_one(target).focus()

    def choice(self) -> JudgeChoice | str:
        """The filled-in choice, or what is missing."""
        name = self.query_one("#judge-select", Select).value
        if name is Select.NULL or name not in self.judges:
            return "choose a judge"
        metrics = list(self.query_one("#metric-select", SelectionList).selected)
        if not metrics:
            return "tick at least one metric"
        times = 1
        if self.times is not None:
            raw = self.query_one("#judge-times", Input).value.strip()
            if not raw.isdigit() or int(raw) < 2:
                return f"reruns: a noise floor needs at least 2, found {raw or 'nothing'}"
            times = int(raw)
        return JudgeChoice(self.judges[str(name)], metrics, times)

    @on(Button.Pressed, "#judge-run")
    def _run(self, event: Button.Pressed) -> None:
        event.stop()
        choice = self.choice()
        if isinstance(choice, str):
            self.notify(choice, severity="warning", markup=False)
            return
        self.post_message(self.Submitted(self, choice))

    @on(Button.Pressed, "#judge-cancel")
    def _cancel(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Cancelled())
