"""The one-line title every screen shows: its name on the left, the runs folder on the right."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ragtui.format import middle_cut, printable
from ragtui.tui.widgets.literal import join


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


@dataclass(frozen=True)
class Name:
    """A part of a FittedLine that may be cut in its middle to fit (a run name, a case id, a
    metric): the figures and labels around it stay whole."""

    value: object
    style: str = "bold"


NAME_MIN = 8  # a name is not cut below this many characters


def fit_line(parts: Sequence[Text | str | tuple[object, str] | Name], width: int) -> Text:
    """`parts` (as literal.join takes them, and Names) on one line of `width` cells: when too
    long, the longest names are cut in the middle first (down to NAME_MIN), so "A … vs B …"
    keeps both names' ends and every figure; only then is the end cut."""
    names = [i for i, p in enumerate(parts) if isinstance(p, Name)]
    shown = {i: printable(parts[i].value, multiline=False) for i in names}  # type: ignore[union-attr]

    def line() -> Text:
        return join(
            *(
                (shown[i], p.style) if isinstance(p, Name) else p  # type: ignore[misc]
                for i, p in enumerate(parts)
            )
        )

    over = line().cell_len - width
    while over > 0:
        longest = max(names, key=lambda i: len(shown[i]), default=None)
        if longest is None or len(shown[longest]) <= NAME_MIN:
            break
        others = [len(shown[i]) for i in names if i != longest]
        # down to the next longest name (or by what is over), one name at a time
        target = max(NAME_MIN, len(shown[longest]) - over, max(others, default=0))
        if target >= len(shown[longest]):
            target = len(shown[longest]) - 1
        full = printable(parts[longest].value, multiline=False)  # type: ignore[union-attr]
        shown[longest] = middle_cut(full, target)
        over = line().cell_len - width
    out = line()
    out.truncate(max(width, 1), overflow="ellipsis")
    out.no_wrap = True
    return out


class FittedLine(Widget):
    """A one-line title fitted to its width at each render (fit_line): a resize fits it
    again, and the names give way before any figure."""

    def __init__(self, *parts: Text | str | tuple[object, str] | Name, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kw)
        self._parts = parts

    def update(self, *parts: Text | str | tuple[object, str] | Name) -> None:
        self._parts = parts
        self.refresh()

    def render(self) -> Text:
        return fit_line(self._parts, max(self.content_size.width, 1))
