"""Figures as every output shows them: points, signed deltas, p-values, intervals, metric
abbreviations unique within a table."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ragtui.format.text import plural

if TYPE_CHECKING:
    from ragtui.core.model import StatedFigure

# ---------------------------------------------------------------- numbers


def fixed(x: float, digits: int) -> str:
    """`x` with `digits` decimals, never "-0.00": a value that rounds to zero has no sign."""
    text = f"{x:.{digits}f}"
    return text.removeprefix("-") if text.startswith("-") and float(text) == 0 else text


def significant(value: float, digits: int) -> str:
    """At most `digits` significant digits, written out (0.0000356, not 3.56e-05: a price
    reads better without an exponent), with thousands separators; at most 12 decimals."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = f"{value:,.{min(max(decimals, 0), 12)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def pts(value: float | None) -> str:
    """A fraction in points with one decimal: 0.781 -> "78.1"; None -> "—"."""
    return "—" if value is None else fixed(value * 100, 1)


def stated_figure(f: StatedFigure) -> str:
    """A run-level figure as its tool stated it: "match accuracy 66.7 (3 cases)"; in points
    when its scale is known, else as the file wrote it. Plain text: callers neutralise it."""
    shown = pts(f.value) if f.value is not None else ("—" if f.raw is None else str(f.raw))
    cases = "" if f.n is None else f" ({plural(f.n, 'case')})"
    return f"{f.metric} {f.statistic or 'figure'} {shown}{cases}"


def signed_pts(value: float | None) -> str:
    """A delta in signed points: +8.1, -0.7; "0.0" rather than "-0.0" from float dust."""
    if value is None:
        return "—"
    x = round(value * 100, 1)
    return "0.0" if x == 0 else f"{x:+.1f}"


def short_pts(value: float | None) -> str:
    """A per-case value in points without a trailing ".0": 100, 83.3, 50."""
    return "—" if value is None else fixed(value * 100, 1).removesuffix(".0")


def pts_apart(value: float | None, threshold: float) -> str:
    """`value` in points (as short_pts) with as many more decimals as it takes, up to four, not
    to read as the threshold it falls short of: 0.7999 against 0.8 is "79.99", not "80". A
    value on or above it reads as rounded (80.0000000003 is "80")."""
    shown = short_pts(value)
    if value is None or value >= threshold - 1e-9 or shown != short_pts(threshold):
        return shown
    for digits in (2, 3, 4):
        shown = fixed(value * 100, digits)
        if shown != fixed(threshold * 100, digits):
            break
    return shown


def p_value(p: float | None) -> str:
    """A p-value the way papers print it: .004, <.001, 1."""
    if p is None:
        return "—"
    if p < 0.001:
        return "<.001"
    return f"{p:.3f}".removeprefix("0") if p < 1 else "1"


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval in signed points: [+3.2, +13.0]."""
    if low is None or high is None:
        return "—"
    return f"[{signed_pts(low)}, {signed_pts(high)}]"


# ---------------------------------------------------------------- metric names

_ABBREVIATIONS = {
    "answer": "ans",
    "context": "ctx",
    "faithfulness": "faith",
    "relevance": "rel",
    "relevancy": "rel",
    "precision": "prec",
    "recall": "rec",
    "correctness": "corr",
    "similarity": "sim",
}


def _abbreviate(name: str, keep: int) -> str:
    words = [w for w in re.split(r"[\s_\-/.]+", name) if w]
    # a word one letter longer than the cut stays whole: "choic" saves a cell and reads wrong
    return (
        " ".join(
            _ABBREVIATIONS.get(w.lower(), w if len(w) <= keep + 1 else w[:keep]) for w in words
        )
        or name
    )


SHORT_METRIC_WIDTH = 16  # a metric's column header is at most this wide (then 20, 24: unique)


def cells(text: str) -> int:
    """The terminal cells `text` takes: two for a wide (CJK) character, none for a combining
    mark, one for any other (the text is printable: see `printable`)."""
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def _fit(chars: Iterable[str], room: int) -> str:
    out, used = [], 0
    for ch in chars:
        used += cells(ch)
        if used > room:
            break
        out.append(ch)
    return "".join(out)


def middle_cut(text: str, width: int) -> str:
    """`text` in at most `width` terminal cells, cut in the middle with "…": both ends stay,
    so names that share a long prefix (case ids, metric names) still read apart by their ends.
    Counted in cells: a wide (CJK) name takes no more room than a Latin one."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail_room = width // 2  # the end (a number, a suffix) tells names apart most often
    tail = _fit(reversed(text), tail_room)[::-1]
    while tail and unicodedata.combining(tail[0]):  # a mark without its letter would sit on "…"
        tail = tail[1:]
    head = _fit(text, width - 1 - cells(tail))
    return f"{head.rstrip()}…{tail.lstrip()}"


def middle_cut_all(names: Iterable[str], width: int) -> dict[str, str]:
    """Each name cut in the middle to `width` (middle_cut), wider (by 8 at a time, up to
    twice `width`) where two would read the same, else whole: names stay apart."""
    names = list(dict.fromkeys(names))
    for room in range(width, 2 * width + 1, 8):
        cut = {n: middle_cut(n, room) for n in names}
        if len(set(cut.values())) == len(cut):
            return cut
    return {n: n for n in names}


def short_metrics(names: Iterable[str]) -> dict[str, str]:
    """Column headers for metrics, unique within the table: faithfulness -> faith,
    context_precision -> ctx prec. Names that would collide keep more of each word, and
    at worst their full name, so two columns never read the same. A header is bounded in
    width (SHORT_METRIC_WIDTH, cut in the middle, wider only to stay unique)."""
    names = list(dict.fromkeys(names))
    out: dict[str, str] = {}
    for keep in (5, 8, 12):
        out = {n: _abbreviate(n, keep) for n in names}
        if len(set(out.values())) == len(out):
            break
    else:
        counts: dict[str, int] = {}
        for short in out.values():
            counts[short] = counts.get(short, 0) + 1
        out = {n: (n if counts[s] > 1 else s) for n, s in out.items()}
        if len(set(out.values())) != len(out):
            out = {n: n for n in names}
    for width in (SHORT_METRIC_WIDTH, SHORT_METRIC_WIDTH + 4, SHORT_METRIC_WIDTH + 8):
        cut = {n: middle_cut(short, width) for n, short in out.items()}
        if len(set(cut.values())) == len(cut):
            return cut
    return out


def short_metric(name: str) -> str:
    """One metric's header on its own (tables use `short_metrics` so headers stay unique)."""
    return short_metrics([name])[name]
