"""The README's pictures of the demo are what the program draws: Runs at 100×40 with A and B
marked (its table and its last two lines) and Compare at 100×24. They were pasted by hand and
drifted (a status-line phrase, a reruns line) without any test noticing."""

from __future__ import annotations

from tests.tui.conftest import REPO, wait_ready
from tests.tui.history_b import screen_lines

A, B = "baseline-2026-11-02", "strict-v2-2026-11-16"


def _readme_picture() -> tuple[list[str], list[str]]:
    """The README's Runs lines (without the title row, which names the folder) and its Compare
    lines, right-trimmed."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(" ragtui · Runs ")
    block = text[start : text.index("$ ragtui diagnose", start)].rstrip("\n").splitlines()
    gap = block.index("")
    return [x.rstrip() for x in block[1:gap]], [x.rstrip() for x in block[gap + 1 :]]


async def test_the_readme_pictures_are_the_screens_drawn(sample_copy, make_app) -> None:
    from ragtui.tui.widgets.run_table import RunTable

    runs_picture, compare_picture = _readme_picture()
    app = make_app(sample_copy)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(RunTable)
        for run_id, key in ((A, "a"), (B, "b")):
            table.move_cursor(row=table.row_of(run_id))
            await pilot.pause()
            await pilot.press(key)
        await pilot.pause()
        drawn = [x.rstrip() for x in screen_lines(app)]
        rows = len(runs_picture) - 2
        assert drawn[1 : 1 + rows] + drawn[-2:] == runs_picture
        await pilot.resize_terminal(100, 24)
        await pilot.press("c")
        await wait_ready(app, pilot)
        assert [x.rstrip() for x in screen_lines(app)] == compare_picture
