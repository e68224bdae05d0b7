"""Plot of one metric's per-run means over time, one line per config (plotext)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from textual_plotext import PlotextPlot

from ragtui.core.trends import CostPoint, TrendSeries
from ragtui.format import cost_figure, printable

# RGB, so plotext (the lines) and rich (the table's legend dots) show the same colour;
# ten that stay apart on dark and light themes
COLORS: tuple[tuple[int, int, int], ...] = (
    (0, 190, 220),
    (230, 60, 150),
    (120, 200, 40),
    (250, 160, 30),
    (140, 110, 250),
    (240, 80, 60),
    (40, 200, 150),
    (220, 200, 60),
    (90, 150, 250),
    (200, 120, 200),
)


def rich_color(i: int) -> str:
    r, g, b = COLORS[i % len(COLORS)]
    return f"rgb({r},{g},{b})"


MAX_TICKS = 7


class TrendPlot(PlotextPlot):
    """x: days since the first run (ticks labelled with dates); y: points (0-100)."""

    def draw(self, metric: str, series: Sequence[TrendSeries]) -> None:
        plt = self.plt
        plt.clear_figure()
        plt.title(f"{metric} (points): mean per run with 95% CI · dots: mean of the worst 10%")
        stamps = sorted({p.created_at for s in series for p in s.points})
        if not stamps:
            plt.title(f"{metric}: no run scored this metric")
            self.refresh()
            return
        origin = stamps[0]
        lows, highs = [], []
        for i, one in enumerate(series):
            color = COLORS[i % len(COLORS)]
            pts = [p for p in one.points if p.mean is not None]
            if not pts:
                continue
            x = [_days(p.created_at, origin) for p in pts]
            y = [100 * p.mean for p in pts]  # type: ignore[operator]
            span = [  # full CI width: plotext draws yerr/2 either side
                0.0 if p.ci_high is None else 100 * (p.ci_high - p.ci_low)  # type: ignore[operator]
                for p in pts
            ]
            # summary-only runs have a stated mean but no cases: no CI, no worst 10%
            worst = [
                (x_, 100 * p.bottom) for x_, p in zip(x, pts, strict=True) if p.bottom is not None
            ]
            # no plotext legend: it hides the top-left points; the table below is the legend
            plt.plot(x, y, color=color, marker="braille")
            plt.error(x, y, yerr=span, color=color)
            if worst:
                plt.plot([w[0] for w in worst], [w[1] for w in worst], color=color, marker="dot")
            lows += [v - h / 2 for v, h in zip(y, span, strict=True)] + [w[1] for w in worst]
            highs += [v + h / 2 for v, h in zip(y, span, strict=True)]
        if lows:  # else every run of this metric errored: nothing to scale to
            plt.ylim(max(0.0, min(lows) - 3), min(100.0, max(highs) + 3))
        plt.xlim(-0.3, _days(stamps[-1], origin) + 0.3)  # keep end points off the frame
        ticks = _ticks(stamps)
        # runs within a day or two of each other: the hour tells them apart
        form = "%m-%d %H:%M" if _days(stamps[-1], origin) < 2 else "%m-%d"
        plt.xticks([_days(t, origin) for t in ticks], [t.strftime(form) for t in ticks])
        self.refresh()


def _days(moment: datetime, origin: datetime) -> float:
    return (moment - origin).total_seconds() / 86400


def _ticks(stamps: list[datetime]) -> list[datetime]:
    if len(stamps) <= MAX_TICKS:
        return stamps
    step = (len(stamps) - 1) / (MAX_TICKS - 1)
    return [stamps[round(i * step)] for i in range(MAX_TICKS)]


COST_LABELS = {
    "latency_ms": "mean latency per case (ms)",
    "total_tokens": "mean tokens per case",
    "cost": "mean cost per case",
}


# plotext's frame around the plotting area, in cells: the y tick labels and the frame on
# the left, the frame on the right; title and frame above, frame, tick labels and x label below
_LEFT, _RIGHT, _TOP, _BOTTOM = 7, 1, 2, 3


def labels_that_fit(
    points: Sequence[tuple[float, float, str]],
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    size: tuple[int, int],
) -> list[bool]:
    """Which (x, y, label) get their label drawn, in a plot of `size` cells: a label starts
    just right of its dot and is drawn only where it overlaps no dot and no label drawn
    before it, with a cell to spare (two names run together read as a third: "tostrict pr").
    The table under the plot is the legend for the dots left unlabelled."""
    width, height = size
    cols, rows = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM
    if cols < 2 or rows < 2:
        return [False] * len(points)
    (x0, x1), (y0, y1) = xlim, ylim

    def cell(x: float, y: float) -> tuple[int, int]:
        col = round((x - x0) / ((x1 - x0) or 1) * (cols - 1))
        return round((y1 - y) / ((y1 - y0) or 1) * (rows - 1)), col

    dots = [cell(x, y) for x, y, _ in points]
    taken = set(dots)
    drawn = []
    for (row, col), (_, _, label) in zip(dots, points, strict=True):
        first, last = col + 1, col + len(label)  # the label's cells, right of its dot
        around = {(row, c) for c in range(first, last + 2)}  # and one to spare after it
        fits = last < cols and not around & taken
        if fits:
            taken |= {(row, c) for c in range(first - 1, last + 1)}
        drawn.append(fits)
    return drawn


class CostPlot(PlotextPlot):
    """One dot per config: x its mean cost (or latency, tokens) per case, y its mean quality."""

    last_drawn: tuple[str, str, Sequence[CostPoint]] | None = None  # (metric, field, points)

    def on_resize(self) -> None:
        # which labels fit depends on the size: draw again
        if self.last_drawn is not None:
            self.draw(*self.last_drawn)

    def draw(self, metric: str, field: str, points: Sequence[CostPoint]) -> None:
        self.last_drawn = (metric, field, points)
        plt = self.plt
        plt.clear_figure()
        what = COST_LABELS.get(field, field)
        plt.title(f"{metric} (points) against {what}: one dot per config")
        # colours by place in `points`, as in the table below (the legend)
        placed = [(i, p) for i, p in enumerate(points) if field in p.costs]
        if not placed:
            plt.title(f"{metric}: no config has both {metric} and {what}")
            self.refresh()
            return
        xs = [p.costs[field] for _, p in placed]
        ys = [100 * p.quality for _, p in placed]
        pad = (max(xs) - min(xs)) * 0.15 or max(abs(xs[0]) * 0.1, 1e-9)
        xlim = (min(xs) - pad, max(xs) + pad * 2)  # room for the labels on the right
        ylim = (max(0.0, min(ys) - 3), min(100.0, max(ys) + 3))
        names = [printable(p.label) for _, p in placed]  # from the folder: shown literally
        fit = labels_that_fit(list(zip(xs, ys, names, strict=True)), xlim, ylim, self.size)
        # a cell's width in x: a label starts one cell right of its dot (any less and plotext
        # may round it onto the dot, which the label then hides)
        step = (xlim[1] - xlim[0]) / max(self.size.width - _LEFT - _RIGHT - 1, 1)
        for (i, _), x, y, name, labelled in zip(placed, xs, ys, names, fit, strict=True):
            color = COLORS[i % len(COLORS)]
            plt.scatter([x], [y], color=color, marker="●")
            if labelled:
                plt.text(name, x + step, y, color=color, background="default", alignment="left")
        plt.xlim(*xlim)
        plt.ylim(*ylim)
        ticks = sorted({min(xs), (min(xs) + max(xs)) / 2, max(xs)})
        plt.xticks(ticks, [cost_figure(field, t) for t in ticks])
        plt.xlabel(what)
        self.refresh()
