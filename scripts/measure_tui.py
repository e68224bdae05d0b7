"""Time to first paint of the TUI, headless (App.run_test), for the issue note.

    .venv/bin/python scripts/measure_tui.py [--cases 100000]

1. Runs screen on a temp copy of sample_runs/: cold (no index yet) and warm (index present).
2. The case list of one synthetic run of N cases (written with write_run_file): the time to
   index it on first open, then from `enter` on the run to the case table showing its rows.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ragtui.core.model import Run  # noqa: E402
from ragtui.core.runfile import SUFFIX, write_run_file  # noqa: E402
from ragtui.core.store import Store  # noqa: E402
from ragtui.tui.app import RagtuiApp  # noqa: E402
from tests.tui.conftest import JUDGE, history_cases  # noqa: E402


async def until(pilot, check, timeout: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never showed its data")
        await pilot.pause(0.005)


async def runs_first_paint(folder: Path) -> float:
    started = time.perf_counter()
    app = RagtuiApp(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.screen.loaded and app.screen.query_one("#runs").row_count)
        await pilot.pause()  # one more frame: the rows are on screen
        return time.perf_counter() - started


async def case_list_first_paint(folder: Path, n: int) -> tuple[float, float]:
    app = RagtuiApp(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.screen.loaded)
        started = time.perf_counter()
        await pilot.press("enter")

        def shown() -> bool:
            grid = app.screen.query("#cases")
            return bool(grid) and grid.first().row_count == n

        await until(pilot, shown)
        await pilot.pause()
        opened = time.perf_counter() - started
        # one filter keystroke over all rows: Arrow filter + a fresh table widget
        await pilot.press("slash")
        started = time.perf_counter()
        await pilot.press("7")  # "7" in the id or question: a tenth-ish of the rows remain

        def filtered() -> bool:
            grid, shown = app.screen.query("#cases"), app.screen.shown
            return bool(grid) and shown.num_rows < n and grid.first().row_count == shown.num_rows

        await until(pilot, filtered)
        await pilot.pause()
        return opened, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "sample_runs"
        shutil.copytree(REPO / "sample_runs", samples, ignore=shutil.ignore_patterns(".ragtui*"))
        cold = asyncio.run(runs_first_paint(samples))
        warm = asyncio.run(runs_first_paint(samples))
        print(f"Runs screen, sample_runs ({len(list(samples.glob('*' + SUFFIX)))} runs):")
        print(f"  first paint, cold (builds the index): {cold:.2f} s")
        print(f"  first paint, warm (index present):    {warm:.2f} s")

        big = Path(tmp) / "big"
        started = time.perf_counter()
        run = Run(
            id="big",
            name="big",
            created_at="2026-11-30T00:00:00Z",
            config_key="cfg-big",
            judge=JUDGE,
        )
        write_run_file(big / f"big{SUFFIX}", run, history_cases(args.cases, 0.8, seed=7))
        written = time.perf_counter() - started
        started = time.perf_counter()
        Store.open(big).close()
        indexed = time.perf_counter() - started
        paint, keystroke = asyncio.run(case_list_first_paint(big, args.cases))
        print(f"Case list of a {args.cases:,}-case run:")
        print(f"  writing the run file (setup):          {written:.2f} s")
        print(f"  indexing it once (Store.open, cold):   {indexed:.2f} s")
        print(f"  enter on the run -> rows on screen:    {paint:.2f} s")
        print(f"  one filter keystroke -> rows shown:    {keystroke:.2f} s")


if __name__ == "__main__":
    main()
