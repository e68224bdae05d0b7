"""Unicode block sparklines for table cells (a string, so any table can hold one)."""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None], lo: float, hi: float) -> str:
    """One block per value on a shared scale [lo, hi]; a gap (space) for a missing value.

    A shared scale (the metric's range over all runs) keeps bars comparable between rows:
    scaling each line to its own range would blow rerun noise up to full height.
    """
    span = hi - lo
    out = []
    for value in values:
        if value is None:
            out.append(" ")
            continue
        share = 0.5 if span <= 0 else (value - lo) / span
        index = round(min(1.0, max(0.0, share)) * (len(BLOCKS) - 1))
        out.append(BLOCKS[index])
    return "".join(out)
