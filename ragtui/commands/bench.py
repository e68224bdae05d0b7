"""`ragtui bench`: figures measured in this process on a synthetic history, beside baselines.

The TUI figures (first paint, headless) live here rather than in ragtui.core.bench because
core must not import Textual.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ragtui.core import bench
from ragtui.core.bench import Figure
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store

LABELS = (
    "cold index",
    "cold index, cases",
    "cold index, one thread",
    "warm open (nothing changed)",
    "Inspect .eval import",
    "Runs screen first paint",
    "case list first paint",
    "compare 2 x",
    "peak RSS (this process)",
)
# The peak RSS row appears twice: after indexing and comparing, and after everything.


# ---------------------------------------------------------------- headless first paint


async def _until(pilot: Any, check: Callable[[], bool], timeout: float = 300.0) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise RagtuiError("bench: the screen never showed its rows")
        await pilot.pause(0.005)


async def _ragtui_runs(folder: Path) -> tuple[float, int]:
    from ragtui.tui.app import RagtuiApp

    started = time.perf_counter()
    app = RagtuiApp(folder)
    async with app.run_test(size=(160, 48)) as pilot:
        table = lambda: app.screen.query("#runs")  # noqa: E731
        await _until(pilot, lambda: getattr(app.screen, "loaded", False) and bool(table()))
        await _until(pilot, lambda: table().first().row_count > 0)
        await pilot.pause()  # one more frame: the rows are on screen
        return time.perf_counter() - started, table().first().row_count


async def _ragtui_case_list(folder: Path, n: int) -> float:
    from ragtui.tui.app import RagtuiApp

    app = RagtuiApp(folder)
    async with app.run_test(size=(160, 48)) as pilot:
        await _until(pilot, lambda: getattr(app.screen, "loaded", False))
        started = time.perf_counter()
        await pilot.press("enter")

        def shown() -> bool:
            grid = app.screen.query("#cases")
            return bool(grid) and grid.first().row_count == n

        await _until(pilot, shown)
        await pilot.pause()
        return time.perf_counter() - started


async def _stock_table(load: Callable[[], tuple[list[str], list[tuple[Any, ...]]]]) -> float:
    """The stock Textual DataTable in a minimal App: from loading the rows to their first paint."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class Stock(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable(id="t")

        def on_mount(self) -> None:
            columns, rows = load()
            table = self.query_one(DataTable)
            table.add_columns(*columns)
            table.add_rows(rows)

    started = time.perf_counter()
    app = Stock()
    async with app.run_test(size=(160, 48)) as pilot:
        await _until(pilot, lambda: app.query_one(DataTable).row_count > 0)
        await pilot.pause()
        return time.perf_counter() - started


def _runs_rows(folder: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    with Store.open(folder) as store:
        runs = store.runs().to_pylist()
        means: dict[tuple[str, str], float] = {
            (m["run_id"], m["metric"]): m["mean"] for m in store.run_means().to_pylist()
        }
        metrics = store.metrics()
    columns = ["run", "date", "config", "judge", "cases", *metrics]
    rows = [
        (
            r["name"],
            str(r["created_at"])[:10],
            r["config_key"],
            r["judge_model"],
            r["n_cases"],
            *(f"{100 * means.get((r['run_id'], m), 0):.1f}" for m in metrics),
        )
        for r in runs
    ]
    return columns, rows


def _case_rows(folder: Path, run_id: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    from ragtui.tui.screens.cases import case_table

    with Store.open(folder) as store:
        table, _ = case_table(store, run_id)
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def tui_figures(history: Path, big: Path, big_run: str, n_big: int) -> list[Figure]:
    try:
        import textual  # noqa: F401

        from ragtui.tui.app import RagtuiApp  # noqa: F401
    except ImportError as exc:
        note = f"the TUI is not importable here ({exc})"
        return [
            Figure("Runs screen first paint", "skipped", note=note),
            Figure(f"case list first paint, {n_big:,} cases", "skipped", note=note),
        ]
    ours, n_runs = asyncio.run(_ragtui_runs(history))
    stock = asyncio.run(_stock_table(lambda: _runs_rows(history)))
    list_ours = asyncio.run(_ragtui_case_list(big, n_big))
    list_stock = asyncio.run(_stock_table(lambda: _case_rows(big, big_run)))
    return [
        Figure(
            "Runs screen first paint",
            f"{ours:.2f} s",
            f"stock DataTable {stock:.2f} s",
            bench.speedup(ours, stock),
            f"{n_runs} runs, headless; both include opening the (warm) index",
        ),
        Figure(
            f"case list first paint, {n_big:,} cases",
            f"{list_ours:.2f} s",
            f"stock DataTable {list_stock:.2f} s",
            bench.speedup(list_ours, list_stock),
            "headless; from enter on the run to the rows on screen",
        ),
    ]


# ---------------------------------------------------------------- the command


def render(figures: list[Figure]) -> str:
    header = ("figure", "ragtui", "baseline", "ratio", "note")
    rows = [header] + [(f.label, f.value, f.baseline, f.ratio, f.note) for f in figures]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for i, row in enumerate(rows):
        cells = [row[c].ljust(widths[c]) for c in range(4)]
        lines.append("  ".join(cells) + "  " + row[4])
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 4)
    return "\n".join(line.rstrip() for line in lines)


@click.command("bench")
@click.option("--runs", default=40, show_default=True, help="Runs in the synthetic history.")
@click.option("--cases", default=1000, show_default=True, help="Cases per run.")
@click.option("--metrics", default=4, show_default=True, type=click.IntRange(1, 8))
@click.option(
    "--big",
    default=100_000,
    show_default=True,
    help="Cases per run for the case-list paint and the A vs B comparison.",
)
@click.option("--inspect-samples", default=10_000, show_default=True)
@click.option("--no-tui", is_flag=True, help="Skip the headless first-paint figures.")
def bench_command(
    runs: int, cases: int, metrics: int, big: int, inspect_samples: int, no_tui: bool
) -> None:
    """Measure indexing, import, open, paint and compare speed on synthetic data.

    The history (--runs x --cases, native files, 3-5 chunks of ~400 characters per case) is
    written to a temp folder; warm open of 200 runs x 1,000 cases is `--runs 200`.
    """
    try:
        figures = _measure(runs, cases, metrics, big, inspect_samples, no_tui)
    except RagtuiError as err:
        raise click.ClickException(str(err)) from None
    click.echo(render(figures))


def _measure(
    runs: int, cases: int, metrics: int, big: int, inspect_samples: int, no_tui: bool
) -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="ragtui-bench-") as tmp:
        root = Path(tmp)
        history, big_folder = root / "history", root / "big"
        history.mkdir()
        big_folder.mkdir()
        click.echo(f"writing {runs} runs x {cases:,} cases in {history} ...", err=True)
        bench.make_history(history, runs, cases, metrics)
        figures += bench.cold_index(history, runs * cases)
        figures.append(bench.warm_open(history, f"{runs} runs x {cases:,} cases"))
        click.echo(f"writing 3 runs x {big:,} cases for compare and the case list ...", err=True)
        a, b = bench.write_compare_runs(big_folder, big, metrics)
        with Store.open(big_folder) as store:
            if store.problems:
                raise RagtuiError(f"bench: {store.problems[0]}")
            compare_figure = bench.compare(store, a, b, big, root)
        score_rows = 3 * big * metrics
        indexed_peak = bench.peak_rss(f"after indexing {score_rows:,} score rows and comparing")
        click.echo(f"Inspect AI import ({inspect_samples:,} samples) ...", err=True)
        figures.append(bench.inspect_import(bench.cache_dir(), inspect_samples))
        if no_tui:
            figures.append(Figure("Runs screen first paint", "skipped", note="--no-tui"))
            figures.append(Figure("case list first paint", "skipped", note="--no-tui"))
        else:
            click.echo("headless first paint ...", err=True)
            figures += tui_figures(history, big_folder, a, big)
        figures += [compare_figure, indexed_peak, bench.peak_rss("everything above")]
    return figures
