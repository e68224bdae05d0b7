"""The whole `ragtui bench`, in order, on synthetic data in a scratch folder."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragtui.bench import data
from ragtui.bench.figures import Figure
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store


@dataclass(frozen=True)
class Sizes:
    runs: int = 40  # runs in the synthetic history (indexing, warm open)
    cases: int = 1000  # cases per run of that history
    metrics: int = 4
    big: int = 100_000  # cases per run of the A vs B comparison
    inspect_samples: int = 10_000
    tui_runs: int = 2_000  # runs on the Runs screen paint figure
    case_list: int = 1_000_000  # cases in the run whose case list is opened
    tui: bool = True  # the headless paint figures
    startup: bool = True  # the fresh-process start-up figures


def measure(sizes: Sizes, say: Callable[[str], None]) -> list[Figure]:
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="ragtui-bench-") as tmp:
        root = Path(tmp)
        history, big_folder = root / "history", root / "big"
        history.mkdir()
        big_folder.mkdir()
        say(f"writing {sizes.runs} runs x {sizes.cases:,} cases in {history} ...")
        data.make_history(history, sizes.runs, sizes.cases, sizes.metrics)
        figures += data.cold_index(history, sizes.runs * sizes.cases)
        figures.append(data.warm_open(history, f"{sizes.runs} runs x {sizes.cases:,} cases"))
        say(f"writing 3 runs x {sizes.big:,} cases for compare ...")
        a, b = data.write_compare_runs(big_folder, sizes.big, sizes.metrics)
        with Store.open(big_folder) as store:
            if store.problems:
                raise RagtuiError(f"bench: {store.problems[0]}")
            compare_figure = data.compare(store, a, b, sizes.big, root)
        score_rows = 3 * sizes.big * sizes.metrics
        indexed_peak = data.peak_rss(f"after indexing {score_rows:,} score rows and comparing")
        figures.append(compare_figure)
        if sizes.inspect_samples:
            say(f"Inspect AI import ({sizes.inspect_samples:,} samples) ...")
            figures.append(data.inspect_import(data.cache_dir(), sizes.inspect_samples))
        if sizes.startup:
            from ragtui.bench.startup import startup_figures

            say("start-up: fresh processes ...")
            figures += startup_figures(root)
        if sizes.tui:
            from ragtui.bench.tui import tui_figures

            say("headless paint of big tables ...")
            figures += tui_figures(root, sizes, say)
        figures += [indexed_peak, data.peak_rss("everything above")]
    return figures
