"""The ragtui Textual app: opens the runs folder's index in a worker and shows the Runs screen."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget

from ragtui.config import DEFAULT_MARGIN
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.format import one_line, rescan_text
from ragtui.services.workspace import (
    FolderChanges,
    Workspace,
    open_workspace,
    refresh_workspace,
)
from ragtui.tui.messages import RunsChanged, StoreFailed, StoreOpened
from ragtui.tui.moves import move_bindings
from ragtui.tui.palette import ActionsProvider
from ragtui.tui.screens.runs import RunsScreen

if TYPE_CHECKING:
    from ragtui.core.compare import Comparison
    from ragtui.tui.widgets.export_dialog import ExportRequest


class RagtuiApp(App[None]):
    """`store` is None until the index is open; screens wait for StoreOpened."""

    CSS_PATH = "app.tcss"
    TITLE = "ragtui"
    COMMANDS: ClassVar = App.COMMANDS | {ActionsProvider}
    # why the live watch of the folder stopped (None: it runs, or was never asked for): the
    # Runs status line says it for as long as it holds, not only the toast that fades
    watch_stopped: var[str | None] = var(None)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit", tooltip="Quit ragtui"),
        Binding(
            "question_mark", "help", "help", key_display="?", tooltip="Every key of every screen"
        ),
        *move_bindings(),
    ]
    # Which action each move is called by in DataTable, textual-fastdatatable and scrolling
    # containers, in order of preference (a table moves its cursor, a text pane scrolls).
    MOVES: ClassVar[dict[str, tuple[str, ...]]] = {
        "down": ("cursor_down", "scroll_down"),
        "up": ("cursor_up", "scroll_up"),
        "top": ("scroll_top", "cursor_table_start", "scroll_home"),
        "bottom": ("scroll_bottom", "cursor_table_end", "scroll_end"),
        "page_down": ("page_down",),
        "page_up": ("page_up",),
    }

    def __init__(self, folder: Path, notice: str | None = None, *, watch: bool = True) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.watch = watch  # live folder: off for snapshot tests, which want a still picture
        self.notice = notice
        self.workspace: Workspace | None = None
        self.store_error: str | None = None  # why the folder could not be opened
        self._look_pending = False  # a look again at result files still being written is due
        self.runs_screen = RunsScreen(self.folder)

    @property
    def store(self) -> Store | None:
        """The folder's index; None until the workspace is open (screens wait for StoreOpened)."""
        return None if self.workspace is None else self.workspace.store

    @property
    def margin(self) -> float:
        """The practical margin (a fraction), from ragtui.toml, read once with the workspace."""
        return DEFAULT_MARGIN if self.workspace is None else self.workspace.margin

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's palette commands, less its Quit: `q` quit is one of ragtui's own."""
        for command in super().get_system_commands(screen):
            if command.callback != self.action_quit:
                yield command

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

    async def on_event(self, event: events.Event) -> None:
        # once `q` has asked the app to exit, keys and clicks typed after it must not open
        # screens that the shutdown tears down half-built (`q` then `e` ended in a traceback)
        if self._exit and isinstance(event, events.InputEvent):
            return
        await super().on_event(event)

    def on_mount(self) -> None:
        self.push_screen(self.runs_screen)
        if self.notice:
            self.notify(self.notice, title="ragtui", timeout=8, markup=False)
        self.open_store()

    @work(thread=True, exclusive=True, group="store")
    def open_store(self) -> None:
        """Open the workspace off the UI thread (a big folder takes a while to index)."""
        try:
            workspace = open_workspace(self.folder)  # foreign result files are imported first
        except RagtuiError as err:
            self.post_message(StoreFailed(str(err)))
            return
        except Exception as exc:  # a worker reports, never ends the app
            self.post_message(StoreFailed(f"cannot open {self.folder}: {exc!r}"))
            return
        self.post_message(StoreOpened(workspace))

    def on_store_opened(self, message: StoreOpened) -> None:
        self.workspace = message.workspace
        for line in message.workspace.notices:
            self.notify(line, title="notice", severity="warning", timeout=10, markup=False)
        for problem in message.workspace.store.problems:
            self.notify(
                one_line(problem), title="skipped file", severity="error", timeout=15, markup=False
            )
        self.runs_screen.store_ready(message.workspace.store)
        if self.watch:
            self.watch_folder()

    # ------------------------------------------------------------ the live folder

    @work(exclusive=True, group="watch")
    async def watch_folder(self) -> None:
        """Watch the open folder: a run file that a harness writes (or grows) shows up in Runs
        within a second or two, without a restart."""
        from watchfiles import awatch

        try:
            async for _ in awatch(
                self.folder,
                watch_filter=lambda change, path: _worth_a_look(change, path, self.folder),
                debounce=300,
                step=50,
                recursive=True,
                # a subfolder this user cannot read stopped the watch for good; the scan says
                # which (as it says an unreadable file)
                ignore_permission_denied=True,
            ):
                self.refresh_folder()
        except Exception as exc:  # e.g. the folder was deleted: say so, keep the app
            self.notify(f"stopped watching {self.folder}: {exc}", severity="warning", markup=False)
            self.watch_stopped = one_line(str(exc)) or type(exc).__name__

    @work(thread=True, exclusive=True, group="refresh")
    def refresh_folder(self, *, asked: bool = False, relist: bool = False) -> None:
        """Re-index what changed (the watch and the `r` key), then tell every screen; `asked`
        (the `r` key): also say what the re-scan found, nothing included. `relist` (a stopped
        batch, which indexed its own file on the way out, maybe after Runs listed it as still
        running): every screen lists the runs anew even when the re-scan finds nothing."""
        if self.workspace is None:
            return
        try:
            changes = refresh_workspace(self.workspace)
        except Exception as exc:  # a worker reports its failure; it never ends the app
            self.call_from_thread(self.notify, str(exc), severity="error", markup=False)
            return
        self.call_from_thread(self._folder_refreshed, changes, relist)
        if asked:
            found = rescan_text(
                len(changes.changed),
                len(changes.removed),
                len(changes.failed),
                len(changes.waiting),
            )
            self.call_from_thread(self.notify, found, title="re-scanned")

    def _folder_refreshed(self, changes: FolderChanges, relist: bool = False) -> None:
        for line in changes.notices:
            self.notify(line, title="notice", severity="warning", timeout=10, markup=False)
        for line in changes.failed:
            self.notify(line, title="skipped file", severity="error", timeout=15, markup=False)
        if changes.any or relist:
            for screen in self.screen_stack:
                screen.post_message(RunsChanged(changes.changed, changes.removed))
        # a result file still being written: look again once it may hold still (one look
        # pending at a time: a writer that goes on must not start a chain of them per write)
        if changes.look_again is not None and not self._look_pending:
            self._look_pending = True
            self.set_timer(changes.look_again, self._look_again)

    def _look_again(self) -> None:
        self._look_pending = False
        self.refresh_folder()

    def on_store_failed(self, message: StoreFailed) -> None:
        self.store_error = message.error
        self.notify(
            one_line(message.error), title="cannot open", severity="error", timeout=30, markup=False
        )
        self.runs_screen.store_failed(message.error)

    # ------------------------------------------------------------ navigation
    # Screens move through these methods and never import one another: the app is the one
    # place that knows every screen (imported on first use, so start-up stays fast).

    def open_cases(self, run_id: str) -> None:
        from ragtui.tui.screens.cases import CaseListScreen

        self.push_screen(CaseListScreen(run_id))

    def open_case(
        self,
        run_id: str,
        case_ids: list[str],
        index: int,
        *,
        other_run_id: str | None = None,
        metric: str | None = None,
        comparison: Comparison | None = None,
    ) -> None:
        """`comparison`: A (other_run_id) vs B (run_id) as Compare computed it, so the Case
        screen shows the same A figures (the reruns' mean) without computing it again."""
        from ragtui.tui.screens.case import CaseScreen

        self.push_screen(
            CaseScreen(
                run_id,
                case_ids,
                index,
                other_run_id=other_run_id,
                metric=metric,
                comparison=comparison,
            )
        )

    def open_compare(self, a_run_id: str, b_run_id: str, *, replace: bool = False) -> None:
        from ragtui.tui.screens.compare import CompareScreen

        screen = CompareScreen(a_run_id, b_run_id)
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def open_compare_many(
        self, base: str, candidates: list[str], *, all_configs: bool = False
    ) -> None:
        """Several candidates against one baseline: one table, Holm over every test.
        `all_configs`: the candidates are every other config of the base's dataset (`v`), and
        stay so when configs appear or vanish in the folder (`u` lists them again)."""
        from ragtui.tui.screens.compare_many import CompareManyScreen

        self.push_screen(CompareManyScreen(base, list(candidates), all_configs=all_configs))

    def open_export(
        self, what: str, default_name: str, done: Callable[[ExportRequest | None], object]
    ) -> None:
        """Ask where to export `what` (a path and a format); `done` gets the answer or None."""
        from ragtui.tui.widgets.export_dialog import ExportDialog

        self.push_screen(ExportDialog(what, default_name), done)

    def open_trends(self, metrics: list[str]) -> None:
        from ragtui.tui.screens.trends import TrendsScreen

        self.push_screen(TrendsScreen(metrics))

    def open_rejudge_run(self, run_id: str) -> None:
        from ragtui.tui.screens.rejudge import RejudgeRunScreen

        self.push_screen(RejudgeRunScreen(run_id))

    def open_rejudge_case(
        self, run_id: str, case_id: str, done: Callable[[str | None], object]
    ) -> None:
        """`done` gets the re-judge run's id (None when nothing was judged)."""
        from ragtui.tui.screens.rejudge import RejudgeCaseScreen

        self.push_screen(RejudgeCaseScreen(run_id, case_id), done)

    def open_noise(
        self,
        run_id: str,
        against: str | None = None,
        done: Callable[[str | None], object] | None = None,
    ) -> None:
        from ragtui.tui.screens.noise import NoiseScreen

        self.push_screen(NoiseScreen(run_id, against=against), done)

    async def action_move(self, move: str) -> None:
        """j/k/g/G/ctrl+d/ctrl+u: move in the focused table or text pane (or the nearest one
        around the focused widget). Typing in an input never gets here: inputs take the keys."""
        node = self.focused
        while node is not None:
            for name in self.MOVES[move]:
                table = hasattr(node, "action_cursor_down")  # a table moves its cursor
                if hasattr(node, f"action_{name}") and (table or node.allow_vertical_scroll):
                    await node.run_action(name)
                    return
            node = node.parent if isinstance(node.parent, Widget) else None

    def action_help(self) -> None:
        from ragtui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def on_unmount(self) -> None:
        if self.workspace is not None:
            self.workspace.close()


def run_app(folder: Path, notice: str | None = None) -> int:
    """Entry point of `ragtui [PATH]` / `ragtui open`: the app's exit status, non-zero when
    it ended on an error (Textual prints the traceback), so scripts and shells can tell."""
    app = RagtuiApp(folder, notice=notice)
    app.run()
    return app.return_code or 0


def _worth_a_look(change: object, path: str, folder: Path) -> bool:
    """Changes that can alter the runs: not the index itself, not batch journals, nothing
    reached through a symlinked folder (the scan does not follow one: a link to / made every
    change on the machine a re-scan)."""
    name = Path(path).name
    if name.startswith(".ragtui.duckdb") or name.endswith(".replies"):
        return False
    try:
        parts = Path(path).relative_to(os.path.abspath(folder)).parts[:-1]
    except ValueError:  # (reported under another spelling of the folder: looked at)
        return True
    here = folder
    for part in parts:
        here = here / part
        if here.is_symlink():
            return False
    return True
