"""A compact histogram of per-case deltas (B − A) on [-1, +1] (labelled ±100 points), drawn with
block characters.

Unicode blocks rather than plotext: it reads at 80x24, needs no canvas, and its text can be tested.
Every non-empty bin shows at least a sliver, so a single broken case is never invisible.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ragtui.tui.widgets.literal import join

BLOCKS = " ▁▂▃▄▅▆▇█"
N_BINS = 21  # 0.1 wide, centred on -1.0, -0.9, ..., +1.0: a label step (0.5) lands on a bin


def bin_counts(deltas: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Counts per bin; bin i is centred on -1 + i * 2 / (n_bins - 1). Values are clipped to ±1."""
    step = 2 / (n_bins - 1)
    idx = np.rint((np.clip(deltas, -1, 1) + 1) / step).astype(int)
    return np.bincount(idx, minlength=n_bins)[:n_bins]


class DeltaHistogram(Widget):
    """Δ per case for one metric: red bars lost points, green gained, grey unchanged."""

    metric: reactive[str] = reactive("", layout=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._deltas = np.zeros(0)

    def set_deltas(self, metric: str, deltas: np.ndarray) -> None:
        self._deltas = np.asarray(deltas, dtype=float)
        self.metric = metric
        # a Text, not a str: a str border title would be parsed as markup
        self.border_title = join("Δ ", (metric, ""), " per case")
        self.refresh()

    def render(self) -> Text:
        width, height = self.content_size.width, self.content_size.height
        d = self._deltas
        if d.size == 0:
            return Text("no paired cases", style="dim")
        bars_h = max(1, height - 3)  # rows: bars, axis, labels, counts
        # fewer, wider bins where 21 columns do not fit (an odd count keeps 0 in the middle)
        n_bins = N_BINS if width >= N_BINS else max(3, width - 1 + width % 2)
        counts = bin_counts(d, n_bins)
        col = max(1, width // n_bins)
        top = counts.max()
        # eighths of the bar height per bin; any non-empty bin gets at least one eighth
        levels = np.where(counts > 0, np.maximum(1, np.rint(counts / top * bars_h * 8)), 0)
        out = Text()
        for row in range(bars_h, 0, -1):
            for i, level in enumerate(levels):
                fill = int(min(8, max(0, level - (row - 1) * 8)))
                centre = i - n_bins // 2
                style = "red" if centre < 0 else "green" if centre > 0 else "bright_black"
                out.append(BLOCKS[fill] * col, style=style)
            out.append("\n")
        span = col * n_bins
        out.append("─" * span + "\n", style="dim")
        labels = [" "] * span
        # in points, as every figure on screen (the deltas are fractions: ±1 is ±100 points)
        for pos, label in ((0, "-100"), (span // 2, "0"), (span, "+100")):
            start = min(max(0, pos - (len(label) // 2 if label == "0" else 0)), span - len(label))
            labels[start : start + len(label)] = label
        out.append("".join(labels) + "\n", style="dim")
        worse, same, better = int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum())
        if len(f"{worse} worse · {same} same · {better} better") <= width:
            out.append(f"{worse} worse", style="red")
            out.append(f" · {same} same · ")
            out.append(f"{better} better", style="green")
        else:  # narrow: the same counts in 12 or so cells
            out.append(f"▼{worse}", style="red")
            out.append(f" ={same} ")
            out.append(f"▲{better}", style="green")
        return out
