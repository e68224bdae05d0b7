"""The one-line title every screen shows: its name on the left, the runs folder on the right."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ragtui.format import printable


class TitleBar(Widget):
    """One line: `title` on the left, `folder` (dim) on the right, at any width."""

    title: reactive[Text] = reactive(Text, layout=False)
    folder: reactive[str] = reactive("")

    def set_title(self, title: Text, folder: str) -> None:
        self.title, self.folder = title, folder

    def render(self) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append_text(self.title)
        shown = printable(self.folder)
        pad = max(1, self.size.width - line.cell_len - len(shown) - 2)
        line.append(" " * pad)
        line.append(shown, style="dim")
        return line
