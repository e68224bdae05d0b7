"""One row of the bench table, timing helpers, and the table itself."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Figure:
    """One row of the bench table: what was measured, its value, and the baseline beside it."""

    label: str
    value: str
    baseline: str = ""
    ratio: str = ""
    note: str = ""


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def speedup(ours: float, theirs: float) -> str:
    """'3.2x faster' / '1.5x slower', from two durations of the same work."""
    if ours <= 0 or theirs <= 0:
        return ""
    return f"{theirs / ours:.1f}x faster" if theirs >= ours else f"{ours / theirs:.1f}x slower"


def min_median(seconds: Sequence[float]) -> str:
    """ "0.21 s (median 0.24)" over several timings of the same thing."""
    return f"{min(seconds):.2f} s (median {statistics.median(seconds):.2f})"


def goal(seconds: float, limit: float) -> str:
    """Whether a best time meets its goal, said plainly."""
    verdict = "meets" if seconds <= limit else "misses"
    return f"{verdict} the goal < {limit:g} s"


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
