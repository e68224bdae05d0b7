"""Pick a judge (from ragtui.toml) and metrics, optionally a rerun count; and run a judge batch
in a worker thread with its own event loop, so esc can cancel it and the UI never waits on it.

Why a thread and not an async worker on the UI loop: `ragtui.judge.runner` reads the parent
run file and indexes the result synchronously inside its coroutines; on the UI loop a big run
would freeze the screen for that long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Select, SelectionList, Static
from textual.widgets.selection_list import Selection

from ragtui.config import JudgeConfig, load_config
from ragtui.core.errors import RagtuiError
from ragtui.judge.metrics import METRICS
from ragtui.trust import user_config_path
from ragtui.tui.widgets.literal import lit

T = TypeVar("T")


def configured_judges(folder: Path) -> tuple[list[JudgeConfig], str | None]:
    """The judges of ragtui.toml, or none and the one-line reason."""
    try:
        config = load_config(folder)
    except RagtuiError as err:
        return [], str(err)
    if not config.judges:
        where = str(user_config_path())  # a runs folder's own ragtui.toml may not name judges
        return [], (
            f"no judges configured: add a [judges.NAME] table with provider, url and model to "
            f"{where}"
        )
    return list(config.judges.values()), None


@dataclass(frozen=True)
class JudgeChoice:
    judge: JudgeConfig
    metrics: list[str]
    times: int = 1


class JudgeForm(Vertical):
    """Judge, metrics (those ragtui can judge; `chosen` ticked) and, with `times`, a rerun count."""

    DEFAULT_CSS = """
    JudgeForm { height: auto; }
    JudgeForm > .form-label { margin-top: 1; }
    JudgeForm SelectionList { height: auto; max-height: 8; }
    JudgeForm #judge-times { width: 16; }
    JudgeForm > Horizontal { height: auto; margin-top: 1; }
    JudgeForm Button { margin-right: 2; }
    """

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


class BatchHandle:
    """Runs one coroutine on a private event loop in the calling (worker) thread; `cancel`
    may be called from the UI thread and cancels it there (finished cases stay in the file)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self.cancelled = False

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = asyncio.new_event_loop()
        try:
            self._loop = loop
            self._task = loop.create_task(coro)
            if self.cancelled:
                self._task.cancel()
            return loop.run_until_complete(self._task)
        finally:
            self._loop = None
            loop.close()

    def cancel(self) -> None:
        self.cancelled = True
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed meanwhile: nothing left to cancel
                return
