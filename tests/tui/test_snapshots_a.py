"""Snapshots of the Runs, case list, Trends and Help screens (each reviewed by eye as PNG).

The app opens the fixed `history` fixture as the relative folder `runs`, so nothing that
varies between machines (temp paths, clocks) reaches the screen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.tui.app import RagtuiApp
from tests.tui.conftest import wait_ready, write_history


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RagtuiApp:
    write_history(tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    return RagtuiApp(Path("runs"), watch=False)


def ready(*keys: str):  # type: ignore[no-untyped-def]
    """run_before for snap_compare: wait for the data, press keys, wait again."""

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(pilot.app, pilot)
        for key in keys:
            await pilot.press(key)
            await wait_ready(pilot.app, pilot)

    return run_before


def test_runs_120x40(app, snap_compare) -> None:
    # A (the baseline group's first run) and B (strict-1124) marked: the marks column, the
    # status line and the detail panel all show it
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready("a", *["down"] * 5, "b"))


def test_runs_80x24(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(80, 24), run_before=ready())


def test_runs_200x60(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(200, 60), run_before=ready("down"))


def test_case_list_120x40(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready("enter"))


def test_trends_120x40(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready("t"))


def test_trends_cost_120x40(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready("t", "c"))


def test_runs_with_costs_and_parse_failures_160x40(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare
) -> None:
    from tests.tui.history_extras import write_extras

    write_extras(tmp_path / "extras")
    monkeypatch.chdir(tmp_path)
    app = RagtuiApp(Path("extras"), watch=False)
    # the unparsed run highlighted: "!3" beside its mean and in the detail panel
    assert snap_compare(app, terminal_size=(160, 40), run_before=ready(*["down"] * 4))


def test_help_120x40(app, snap_compare) -> None:
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready("question_mark"))
