"""App-level messages (widget messages live nested in their widgets)."""

from __future__ import annotations

from textual.message import Message

from ragtui.core.store import Store


class StoreOpened(Message):
    """The index of the runs folder is open and up to date."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store


class StoreFailed(Message):
    """The runs folder could not be opened; `error` is the one-line reason."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
