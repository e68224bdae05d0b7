"""Untrusted text shown literally: never parsed as markup, control characters made visible.

Every string that comes from a run file (questions, answers, chunks, judge replies, names, ids)
goes through `lit()` before it reaches a widget, so `[bold]x[/]` shows as those characters and an
ESC byte shows as `\\x1b` instead of reaching the terminal.
"""

from __future__ import annotations

from rich.style import StyleType
from rich.text import Text
from textual.widgets import Static

from ragtui.format import printable


def lit(text: object, style: StyleType = "") -> Text:
    """A rich Text holding `text` verbatim (with control characters made visible)."""
    return Text(printable(None if text is None else str(text)), style=style)


def join(*parts: Text | str | tuple[object, StyleType]) -> Text:
    """Join trusted labels (str), literal values ((value, style) tuples) and ready Texts."""
    out = Text()
    for part in parts:
        if isinstance(part, Text):
            out.append_text(part)
        elif isinstance(part, tuple):
            out.append_text(lit(part[0], part[1]))
        else:
            out.append(part)  # Text.append of a str adds it as plain text, not markup
    return out


def excerpt(text: object, width: int, ellipsis: str = "…") -> str:
    """`text` on one line, printable, cut to `width` characters with an ellipsis."""
    one = " ".join(printable(None if text is None else str(text)).split())
    return one if len(one) <= width else one[: max(1, width - len(ellipsis))] + ellipsis


class Literal(Static):
    """A Static that shows untrusted text as it is."""

    def __init__(
        self, text: object = "", style: StyleType = "", *, id: str | None = None, classes: str = ""
    ) -> None:
        super().__init__(lit(text, style), markup=False, id=id, classes=classes)

    def set_text(self, text: object, style: StyleType = "") -> None:
        self.update(lit(text, style))
