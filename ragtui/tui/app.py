"""The ragtui Textual app: opens the runs folder's index in a worker and shows the Runs screen."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel

from ragtui.config import load_config
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.format import one_line
from ragtui.tui.messages import StoreFailed, StoreOpened
from ragtui.tui.palette import ActionsProvider
from ragtui.tui.screens.runs import RunsScreen
from ragtui.workspace import open_folder

DEFAULT_MARGIN = 0.05


class RagtuiApp(App[None]):
    """`store` is None until the index is open; screens wait for StoreOpened."""

    CSS_PATH = "app.tcss"
    TITLE = "ragtui"
    COMMANDS: ClassVar = App.COMMANDS | {ActionsProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit", tooltip="Quit ragtui"),
        Binding(
            "question_mark", "help", "help", key_display="?", tooltip="Every key of every screen"
        ),
    ]

    def __init__(self, folder: Path, notice: str | None = None) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.notice = notice
        self.store: Store | None = None
        self.store_error: str | None = None  # why the folder could not be opened
        self.margin = DEFAULT_MARGIN
        self.runs_screen = RunsScreen(self.folder)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast (screens and widgets notify through here) is shown literally: no
        markup, and control, bidi and invisible characters made visible (ragtui.format)."""
        super().notify(
            one_line(message),
            title=one_line(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def on_mount(self) -> None:
        self.push_screen(self.runs_screen)
        if self.notice:
            self.notify(one_line(self.notice), title="ragtui", timeout=8, markup=False)
        self._load_margin()
        self.open_store()

    def _load_margin(self) -> None:
        try:
            config = load_config(self.folder)
        except RagtuiError as err:
            self.notify(
                one_line(f"{err}; using margin {100 * DEFAULT_MARGIN:.0f} points"),
                severity="warning",
                markup=False,
            )
            return
        self.margin = config.margin
        for line in config.notices:  # a folder's judges or command, ignored
            self.notify(
                one_line(line), title="notice", severity="warning", timeout=15, markup=False
            )

    @work(thread=True, exclusive=True, group="store")
    def open_store(self) -> None:
        """Open and refresh the index off the UI thread (a big folder takes a while)."""
        try:
            store = open_folder(self.folder)  # foreign result files are imported first
        except RagtuiError as err:
            self.post_message(StoreFailed(str(err)))
            return
        self.post_message(StoreOpened(store))

    def on_store_opened(self, message: StoreOpened) -> None:
        self.store = message.store
        for line in message.store.notices:
            self.notify(
                one_line(line), title="notice", severity="warning", timeout=10, markup=False
            )
        for problem in message.store.problems:
            self.notify(
                one_line(problem), title="skipped file", severity="error", timeout=15, markup=False
            )
        self.runs_screen.store_ready(message.store)

    def on_store_failed(self, message: StoreFailed) -> None:
        self.store_error = message.error
        self.notify(
            one_line(message.error), title="cannot open", severity="error", timeout=30, markup=False
        )
        self.runs_screen.store_failed(message.error)

    def action_help(self) -> None:
        from ragtui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def on_unmount(self) -> None:
        if self.store is not None:
            self.store.close()


def run_app(folder: Path, notice: str | None = None) -> None:
    """Entry point of `ragtui [PATH]` / `ragtui open`."""
    RagtuiApp(folder, notice=notice).run()
