"""The movement keys of vim, less, lazygit and k9s (j/k/g/G/ctrl+d/ctrl+u), in every table and
text pane: bound on the app, and again on modal screens, which Textual keeps app bindings from.
Each calls the app's `move` action (RagtuiApp.action_move)."""

from __future__ import annotations

from textual.binding import Binding

_MOVES = (
    ("j", "down", "down", "Down in a table or text pane"),
    ("k", "up", "up", "Up in a table or text pane"),
    ("g", "top", "top", "To the top of a table or pane"),
    ("G", "bottom", "bottom", "To the bottom"),
    ("ctrl+d", "page_down", "page down", "Page down"),
    ("ctrl+u", "page_up", "page up", "Page up"),
)


def move_bindings(prefix: str = "") -> list[Binding]:
    """The bindings; `prefix` "app." for a screen's own BINDINGS."""
    return [
        Binding(key, f"{prefix}move('{move}')", description, show=False, tooltip=tip)
        for key, move, description, tip in _MOVES
    ]
