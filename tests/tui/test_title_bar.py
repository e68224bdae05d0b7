"""The title line of every screen: a title longer than the line (a metric or run name of
hundreds of characters, as a hostile folder has) stays one line, cut with an ellipsis, and the
folder gives way to it."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from ragtui.tui.widgets.title_bar import TitleBar
from tests.tui.conftest import widget_text


class _Titled(App[None]):
    CSS = "TitleBar { height: 1; padding: 0 1; }"  # as in app.tcss

    def compose(self) -> ComposeResult:
        yield TitleBar()


async def test_a_title_longer_than_the_line_is_cut_and_the_folder_gives_way() -> None:
    app = _Titled()
    async with app.run_test(size=(80, 3)) as pilot:
        bar = app.query_one(TitleBar)
        bar.set_title(Text("ragtui · Trends  " + "m" * 300 + " (1/3)"), "runs")
        await pilot.pause()
        drawn = bar.render()
        assert drawn.cell_len <= bar.size.width  # one line, within the screen
        assert drawn.plain.startswith("ragtui · Trends  mmmm") and drawn.plain.endswith("m…")
        bar.set_title(Text("ragtui · Runs"), "runs")  # a short one: the folder at the right
        await pilot.pause()
        line = widget_text(bar)
        assert line.startswith(" ragtui · Runs   ") and line.rstrip().endswith(" runs")
        assert "…" not in line and len(line) <= 80
