"""The keys line at the bottom of each screen (widgets/key_bar.py): it shows the screen's own
keys, follows the screen and its focus, and a click on a key does what pressing it does."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from ragtui.tui.screens.runs import RunsScreen
from ragtui.tui.screens.trends import TrendsScreen
from ragtui.tui.widgets.key_bar import KeyBar
from tests.tui.conftest import wait_ready, widget_text


async def test_a_click_on_a_key_presses_it_and_the_line_follows_the_screen(
    history, make_app
) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        bar = app.screen.query_one(KeyBar)
        text = widget_text(bar)
        assert text.startswith(" ⏎ cases  a mark A  b mark B  c compare  t trends ")
        assert text.rstrip().endswith("▏ ^p palette")  # the palette key keeps the right edge
        assert len(text) == 120  # one line, the screen's width, nothing wrapped
        await pilot.hover(bar, offset=(text.index("t trends") + 4, 0))
        assert bar.tooltip == "Per-metric means over time, by config"  # that key's own
        await pilot.hover(bar, offset=(text.index("b mark B") + 1, 0))
        assert "candidate" in str(bar.tooltip)
        await pilot.click(bar, offset=(text.index("t trends") + 3, 0))
        await wait_ready(app, pilot)
        assert isinstance(app.screen, TrendsScreen)
        text = widget_text(app.screen.query_one(KeyBar))
        assert "m next metric" in text and "mark A" not in text
        await pilot.click(app.screen.query_one(KeyBar), offset=(text.index("esc back") + 1, 0))
        await wait_ready(app, pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_keys_that_do_not_fit_are_left_out_whole_but_help_stays(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(60, 24)) as pilot:
        await wait_ready(app, pilot)
        text = widget_text(app.screen.query_one(KeyBar))
        assert len(text) == 60
        shown = text.removesuffix("▏^ppalette").rstrip()
        # compact, whole keys only; / filter and q quit left out, but never ? help
        assert shown == "⏎cases  amark A  bmark B  ccompare  ttrends  ?help"
        assert text.endswith("▏^ppalette")


class _KeysThatChange(App[None]):
    """A bare app whose one extra key comes and goes (as `u update` does on Compare)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "extra", "extra key"),
        Binding("q", "quit", "quit"),
    ]
    offered = False

    def compose(self) -> ComposeResult:
        yield KeyBar()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.offered if action == "extra" else True

    def action_extra(self) -> None:
        self.exit("extra")


async def test_the_line_follows_keys_that_come_and_go_without_anything_else_changing() -> None:
    app = _KeysThatChange()
    async with app.run_test(size=(60, 5)) as pilot:
        bar = app.query_one(KeyBar)
        assert "extra key" not in widget_text(bar) and " q quit " in widget_text(bar)
        app.offered = True
        app.refresh_bindings()
        await pilot.pause()
        text = widget_text(bar)
        assert text.startswith(" x extra key  q quit ")
        await pilot.click(bar, offset=(text.index("extra") + 1, 0))
        await pilot.pause()
    assert app.return_value == "extra"
