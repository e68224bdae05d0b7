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
        width = self.size.width
        line = self.title.copy()
        # the title first: one longer than the line (a metric or run name of hundreds of
        # characters) is cut with an ellipsis (left to rich, it wrapped onto lines nobody sees);
        # the folder gets the room left, its end kept, two cells short of the right edge
        line.truncate(width, overflow="ellipsis")
        shown = printable(self.folder)
        room = width - line.cell_len - 3
        if len(shown) > room:
            shown = "…" + shown[len(shown) - room + 1 :] if room > 1 else ""
        if shown:
            line.append(" " * max(1, width - line.cell_len - len(shown) - 2))
            line.append(shown, style="dim")
        line.no_wrap = True
        return line
