"""Help (`?`): every screen's keys, and a glossary of every figure and verdict."""

from __future__ import annotations

from rich.console import Console

from ragtui.format import GLOSSARY
from ragtui.tui.screens.help import HelpScreen
from tests.tui.conftest import wait_ready

# issue 14 point 6: the figures and verdicts a user meets, as the screens name them
TERMS = (
    "A",
    "B",
    "Δ pts",
    "95% CI",
    "paired t",
    "sign-flip",
    "score",
    "by cluster",
    "no spread",
    "p adj",
    "Holm",
    "noise ±",
    "MDE",
    "ICC",
    "κ",
    "weighted κ",
    "AC1",
    "ρ",
    "power",
    "TOST",
    "too few cases",
    "inconclusive",
    "no meaningful change",
    "not comparable",
    "parse failures",
    "summary-only run",
)


def section_texts(screen: HelpScreen) -> dict[str, str]:
    """Each section as the user reads it: title, then key and text per line."""
    out = {}
    for static in screen.query(".help-section"):
        console = Console(record=True, width=200, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(static.content)
        text = console.export_text()
        out[text.splitlines()[0].strip()] = text
    return out


async def test_help_explains_every_figure_and_verdict(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        glossary = section_texts(screen)["Glossary: figures and verdicts"]
        lines = [" ".join(line.split()) for line in glossary.splitlines()]
        for term in TERMS:
            first = " ".join(GLOSSARY[term].split())[:30]
            assert any(line.startswith(f"{term} {first}") for line in lines), term
        assert screen.has_class("-wide")  # two columns of sections at 120 columns
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_lists_the_new_runs_keys(history, make_app) -> None:
    app = make_app(history)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        screen = app.screen
        assert screen.has_class("-narrow")  # one column below 110
        runs = " ".join(section_texts(screen)["Runs (home)"].split())
        for key, words in (("e", "Export the runs table"), ("y", "Copy the highlighted run")):
            assert f"{key} {words}" in runs
        reading = " ".join(section_texts(screen)["Reading the Runs table"].split())
        assert "!n n judge replies of this metric could not be parsed" in reading


async def test_help_scrolls_with_the_keys_it_lists(history, make_app) -> None:
    """Help lists j/k/g/G/ctrl+d/ctrl+u for every text pane; in Help itself (a modal screen,
    which Textual keeps the app's keys from) they did nothing."""
    app = make_app(history)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help-box")
        assert box.max_scroll_y > 0
        await pilot.press("j", "j")
        await pilot.pause()
        assert box.scroll_y == 2
        await pilot.press("k")
        await pilot.pause()
        assert box.scroll_y == 1
        await pilot.press("G")
        await pilot.pause()
        assert box.scroll_y == box.max_scroll_y
        await pilot.press("g")
        await pilot.pause()
        assert box.scroll_y == 0
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert box.scroll_y > 2


async def test_help_says_every_compare_key_whole(history, make_app) -> None:
    """`f`'s line ended in "stable…" (the words themselves were cut), and `tab`, which
    switches Compare's tables, was not listed."""
    app = make_app(history)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        compare = " ".join(section_texts(app.screen)["Compare A vs B"].split())
        assert "stable…" not in compare
        assert "stable pass, stable fail, varies by config" in compare
        assert "then every case" in compare
        assert "tab Switch between the metric table and the case list" in compare
