"""App-level messages (widget messages live nested in their widgets)."""

from __future__ import annotations

from textual.message import Message

from ragtui.services.workspace import Workspace


class StoreOpened(Message):
    """The runs folder is open: its configuration read, its index up to date."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace


class StoreFailed(Message):
    """The runs folder could not be opened; `error` is the one-line reason."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class RunsChanged(Message):
    """Run files in the open folder changed on disk and are indexed again (the live watch or
    `r`): `changed` run ids were (re)indexed, `removed` ones are gone. Sent to every screen."""

    def __init__(self, changed: list[str], removed: list[str]) -> None:
        super().__init__()
        self.changed, self.removed = changed, removed
