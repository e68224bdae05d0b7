"""Snapshots of Compare and Case on the fixed history (reviewed by eye as PNG before accepting)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.tui.screens.case import CaseScreen
from ragtui.tui.screens.compare import CompareScreen
from tests.tui.conftest import wait_ready
from tests.tui.history_b import WORST, write_history


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ids = write_history(tmp_path / "runs")
    return tmp_path / "runs", ids


def compare_app(make_app, runs):  # type: ignore[no-untyped-def]
    path, ids = runs
    app = make_app(path)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(app, pilot)
        await app.push_screen(CompareScreen(ids["baseline"], ids["small-generator"]))
        await wait_ready(app, pilot)

    return app, run_before


def case_app(make_app, runs, claim_steps: int = 2):  # type: ignore[no-untyped-def]
    path, ids = runs
    app = make_app(path)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(app, pilot)
        screen = CaseScreen(
            ids["small-generator"],
            [WORST, "refund-08", "billing-01"],
            0,
            other_run_id=ids["baseline"],
            metric="faithfulness",
        )
        await app.push_screen(screen)
        await wait_ready(app, pilot)
        for _ in range(claim_steps):  # highlight "paid back by card": its chunk C1 lights up
            await pilot.press("down")
        await pilot.pause()

    return app, run_before


def test_compare_120x40(snap_compare, make_app, runs) -> None:
    app, run_before = compare_app(make_app, runs)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_compare_80x24(snap_compare, make_app, runs) -> None:
    app, run_before = compare_app(make_app, runs)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_case_120x40(snap_compare, make_app, runs) -> None:
    app, run_before = case_app(make_app, runs)
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_case_80x24(snap_compare, make_app, runs) -> None:
    app, run_before = case_app(make_app, runs)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


# ---------------------------------------------------------------- the diagnosis (history_diag)


@pytest.fixture
def diag(tmp_path: Path) -> Path:
    from tests.tui.history_diag import write_history as write_diag

    return write_diag(tmp_path / "diag")


def test_compare_diagnosis_120x40(snap_compare, make_app, diag) -> None:
    from ragtui.tui.widgets.metric_table import MetricTable
    from tests.tui.history_diag import A, B

    app = make_app(diag)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(app, pilot)
        app.open_compare(A, B)
        await wait_ready(app, pilot)
        app.screen.query_one(MetricTable).select_metric("faithfulness")
        await wait_ready(app, pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_case_diagnosis_120x40(snap_compare, make_app, diag) -> None:
    from tests.tui.history_diag import A, B

    app = make_app(diag)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(app, pilot)
        app.open_case(B, ["ret-01", "gen-03"], 0, other_run_id=A, metric="faithfulness")
        await wait_ready(app, pilot)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_compare_many_100x30(snap_compare, make_app, diag) -> None:
    from tests.tui.history_diag import A

    app = make_app(diag)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await wait_ready(app, pilot)
        app.open_compare_many(A, ["cand-1", "alt-1", "alt-2"])
        await wait_ready(app, pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
