"""Headless paint figures of big tables (App.run_test), each beside a stock Textual DataTable
and textual-fastdatatable showing the same rows:

- the Runs screen with many runs, from start to the rows on screen;
- a run's case list with a million cases, from `enter` to its first screenful;
- filter and sort on that list: the time to the result and the longest the UI thread was
  blocked meanwhile (a ticker on the event loop measures it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtui.bench.figures import Figure, speedup
from ragtui.bench.synthetic import write_synthetic_history
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Case, JudgeInfo, Run, Score
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.core.store import Store

if TYPE_CHECKING:
    from ragtui.bench.run import Sizes

STOCK_CAP = 100_000  # rows a stock DataTable is given (a million would take minutes)
SIZE = (160, 48)


async def _until(pilot: Any, check: Callable[[], bool], timeout: float = 600.0) -> None:
    """Until `check()` holds, looking every 2 ms (a plain sleep: Pilot.pause would also wait
    for the app to be idle, and the workers being timed keep it busy)."""
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise RagtuiError("bench: the screen never showed its rows")
        await asyncio.sleep(0.002)


KEY_CHARS = {"enter": "\r", "slash": "/", "escape": "\x1b"}


async def press_now(app: Any, *keys: str) -> None:
    """Keys sent as a terminal would send them, without waiting for the app to settle (as
    Pilot.press does): the clock starts at the key, not after the work it starts."""
    from textual import events

    for key in keys:
        app.post_message(events.Key(key, KEY_CHARS.get(key, key if len(key) == 1 else None)))
        await asyncio.sleep(0)


async def reached(app: Any, node: Any, attribute: str, check: Callable[[Any], bool]) -> None:
    """Until a reactive attribute passes `check` (a watch, not polling: polling would take
    the interpreter from the very workers being timed)."""
    done = asyncio.Event()

    def seen(value: Any) -> None:
        if check(value):
            done.set()

    node.watch(node, attribute, seen, init=True)  # (RagtuiApp.watch is a flag)
    await done.wait()


async def painted(app: Any) -> None:
    """Until the next frame is on screen (the rows just added are in it)."""
    done = asyncio.Event()
    app.call_after_refresh(done.set)
    await done.wait()


def best(repeats: int, run: Callable[[], Any]) -> Any:
    """The fastest of several runs (the machine is shared: the minimum is the figure)."""
    results = [asyncio.run(run()) for _ in range(repeats)]
    return min(results, key=lambda r: r[0] if isinstance(r, tuple) else r)


class Stall:
    """The longest gap between ticks of a 5 ms ticker on the event loop: how long the UI
    thread was kept from its work."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.005)
            last = now

    def __enter__(self) -> Stall:
        self._task = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


# ---------------------------------------------------------------- the Runs screen


async def ragtui_runs(folder: Path) -> tuple[float, int]:
    from ragtui.tui.app import RagtuiApp

    started = time.perf_counter()
    app = RagtuiApp(folder, watch=False)
    async with app.run_test(size=SIZE):
        screen = app.runs_screen
        await reached(app, screen, "loaded", bool)
        await painted(app)
        return time.perf_counter() - started, len(screen.table.shown_runs())


def runs_rows(folder: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    """What a plain Runs table would show: name, date, config, judge, N and the means."""
    with Store.open(folder) as store:
        rows = store.run_rows()
        metrics = store.metrics()
    columns = ["run", "date", "config", "judge", "cases", *metrics]
    body = [
        (
            r.name,
            r.created_at[:10],
            r.config_key,
            r.judge,
            r.n_cases,
            *(f"{100 * (r.means.get(m) or 0):.1f}" for m in metrics),
        )
        for r in rows
    ]
    return columns, body


async def stock_table(load: Callable[[], tuple[list[str], list[tuple[Any, ...]]]]) -> float:
    """Textual's own DataTable in a minimal App: from loading the rows to their first paint."""
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
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.query_one(DataTable).row_count > 0)
        await painted(app)
        return time.perf_counter() - started


async def fast_table(load: Callable[[], Any]) -> float:
    """textual-fastdatatable on an Arrow table in a minimal App, the same way."""
    from textual.app import App, ComposeResult
    from textual_fastdatatable import ArrowBackend, DataTable

    class Fast(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable(backend=ArrowBackend(load()), id="t")

    started = time.perf_counter()
    app = Fast()
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: app.query_one(DataTable).row_count > 0)
        await painted(app)
        return time.perf_counter() - started


def _arrow_rows(load: Callable[[], tuple[list[str], list[tuple[Any, ...]]]]) -> Any:
    import pyarrow as pa

    columns, rows = load()
    return pa.table({c: [str(r[i]) for r in rows] for i, c in enumerate(columns)})


def runs_figures(folder: Path, n: int) -> list[Figure]:
    ours, shown = best(3, lambda: ragtui_runs(folder))
    if shown != n:
        raise RagtuiError(f"bench: the Runs screen listed {shown} of {n} runs")
    stock = best(3, lambda: stock_table(lambda: runs_rows(folder)))
    fast = best(3, lambda: fast_table(lambda: _arrow_rows(lambda: runs_rows(folder))))
    label = f"Runs screen paint, {n:,} runs"
    note = "headless, start to rows on screen, best of 3; all three open the (warm) index"
    return [
        Figure(
            label, f"{ours:.2f} s", f"stock DataTable {stock:.2f} s", speedup(ours, stock), note
        ),
        Figure(label, f"{ours:.2f} s", f"fastdatatable {fast:.2f} s", speedup(ours, fast)),
    ]


# ---------------------------------------------------------------- a big case list

QUESTION = "Qui approuve le remboursement nº {i} après 30 jours, même si c'est « urgent » ?"


def big_cases(n: int) -> Iterator[Case]:
    """Lean cases with non-ASCII questions (the slow case for width measuring)."""
    for i in range(n):
        yield Case(
            case_id=f"case-{i:07d}",
            question=QUESTION.format(i=i),
            answer=f"Un responsable approuve la demande {i}.",
            scores={
                "faithfulness": Score(value=((i + 1) * 7919 % 3) / 2),
                "answer_relevance": Score(value=((i + 1) * 104729 % 101) / 100),
            },
            latency_ms=float(300 + i % 2000),
        )


def write_big_run(folder: Path, n: int) -> str:
    run = Run(
        id="big-list",
        name="big-list",
        created_at="2026-11-30T00:00:00Z",
        config_key="cfg-big",
        judge=JudgeInfo("qwen2.5:7b", "ollama", "p-bench"),
    )
    write_run_file(folder / f"big-list{SUFFIX}", run, big_cases(n))
    with Store.open(folder) as store:
        if store.problems:
            raise RagtuiError(f"bench: {store.problems[0]}")
    return run.id


async def ragtui_case_list(folder: Path, n: int) -> dict[str, float]:
    """enter → first screenful; → every case; a filter keystroke; a sort; the UI stalls."""
    from ragtui.tui.app import RagtuiApp

    out: dict[str, float] = {}
    app = RagtuiApp(folder, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await reached(app, app.runs_screen, "loaded", bool)
        await pilot.pause(0.2)  # the Runs screen settled (its cost and latency read)
        with Stall() as stall:
            started = time.perf_counter()
            await press_now(app, "enter")

            def first() -> bool:
                grid = app.screen.query("#cases")
                return bool(grid) and grid.first().row_count > 0

            await _until(pilot, first)
            await painted(app)
            out["first"] = time.perf_counter() - started
            screen: Any = app.screen
            await _until(pilot, lambda: screen.complete and screen.shown.num_rows == n)
            await painted(app)
            out["all"] = time.perf_counter() - started
            out["stall_open"] = stall.worst
        await pilot.pause(0.2)
        with Stall() as stall:
            await press_now(app, "slash")
            await _until(pilot, lambda: screen.query_one("#filter").has_focus)
            started = time.perf_counter()
            await press_now(app, "7")  # a "7" in the id or question: a part of the rows stays
            await _until(pilot, lambda: screen.needle == "7" and screen.shown.num_rows < n)
            await painted(app)
            out["filter"] = time.perf_counter() - started
            out["stall_filter"] = stall.worst
        await press_now(app, "escape")  # clears the filter, back to the table
        await _until(pilot, lambda: screen.shown.num_rows == n and not screen.needle)
        await pilot.pause(0.2)
        with Stall() as stall:
            started = time.perf_counter()
            await press_now(app, "s")  # lowest first by the first metric
            await _until(
                pilot,
                lambda: (
                    screen.sort_metric is not None
                    and screen.shown.num_rows == n
                    and screen.shown.column("#")[0].as_py() != 1
                ),
            )
            await painted(app)
            out["sort"] = time.perf_counter() - started
            out["stall_sort"] = stall.worst
    return out


def _case_rows(folder: Path, run_id: str, cap: int) -> tuple[list[str], list[tuple[Any, ...]]]:
    from ragtui.tui.widgets.case_grid import RAW_ID, case_table

    with Store.open(folder) as store:
        table, _ = case_table(store, run_id)
    table = table.drop_columns([RAW_ID]).slice(0, cap)
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def _case_arrow(folder: Path, run_id: str) -> Any:
    from ragtui.tui.widgets.case_grid import RAW_ID, case_table

    with Store.open(folder) as store:
        table, _ = case_table(store, run_id)
    return table.drop_columns([RAW_ID])


def case_list_figures(folder: Path, run_id: str, n: int) -> list[Figure]:
    ours = asyncio.run(ragtui_case_list(folder, n))
    stock_n = min(n, STOCK_CAP)
    stock = asyncio.run(stock_table(lambda: _case_rows(folder, run_id, stock_n)))
    fast = asyncio.run(fast_table(lambda: _case_arrow(folder, run_id)))
    label = f"case list first screen, {n:,} cases"
    capped = "" if stock_n == n else f" (given the first {stock_n:,} rows only)"
    ms = lambda s: f"{1000 * s:.0f} ms"  # noqa: E731
    return [
        Figure(
            label,
            f"{ours['first']:.2f} s",
            f"stock DataTable {stock:.2f} s",
            speedup(ours["first"], stock),
            f"goal < 0.3 s; headless, enter to rows on screen; stock{capped}: load to paint",
        ),
        Figure(
            label,
            f"{ours['first']:.2f} s",
            f"fastdatatable {fast:.2f} s",
            speedup(ours["first"], fast),
            "fastdatatable: query, Arrow table and paint of every row",
        ),
        Figure(
            "case list, every case in",
            f"{ours['all']:.2f} s",
            note=f"from enter, in a worker; UI blocked at most {ms(ours['stall_open'])}",
        ),
        Figure(
            "case list filter keystroke",
            f"{ours['filter']:.2f} s",
            note=f"to the filtered rows on screen; UI blocked at most {ms(ours['stall_filter'])}",
        ),
        Figure(
            "case list sort",
            f"{ours['sort']:.2f} s",
            note=f"to the sorted rows on screen; UI blocked at most {ms(ours['stall_sort'])}",
        ),
    ]


def tui_figures(root: Path, sizes: Sizes, say: Callable[[str], None]) -> list[Figure]:
    try:
        import textual  # noqa: F401
        import textual_fastdatatable  # noqa: F401
    except ImportError as exc:
        return [Figure("TUI paint figures", "skipped", note=f"not importable here ({exc})")]
    many = root / "many-runs"
    many.mkdir()
    say(f"writing {sizes.tui_runs:,} runs for the Runs screen ...")
    write_synthetic_history(many, runs=sizes.tui_runs, cases=5, metrics=sizes.metrics, texts=False)
    Store.open(many).close()
    figures = runs_figures(many, sizes.tui_runs)
    big = root / "case-list"
    big.mkdir()
    say(f"writing and indexing a run of {sizes.case_list:,} cases ...")
    run_id = write_big_run(big, sizes.case_list)
    say("opening its case list ...")
    return figures + case_list_figures(big, run_id, sizes.case_list)
