"""The one-line title every screen shows: its name on the left, the runs folder on the right."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ragtui.format import printable


class TitleBar(Static):
    """One line: screen title on the left, the runs folder on the right."""

    def set_title(self, title: Text, folder: str) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append_text(title)
        shown = printable(folder)
        pad = max(1, self.size.width - line.cell_len - len(shown) - 2)
        line.append(" " * pad)
        line.append(shown, style="dim")
        self.update(line)
