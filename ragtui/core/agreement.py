"""Agreement between two judges, or a judge and human labels, on the same cases.

- labels (YES/PARTIAL/NO, pass/fail): Cohen's κ on normalised labels (trimmed, case-folded);
- ordinal scores with few values (a 1-5 scale): quadratic-weighted κ, which credits near
  misses (4 vs 5) that unweighted κ counts as full disagreements;
- beside κ, Gwet's AC1 and the raw agreement: with a dominant label, κ can be near 0 at 99%
  agreement (the prevalence paradox), AC1 is not;
- scores: Spearman's ρ.
A pair is flagged when ρ < 0.7, or κ < 0.6 while AC1 agrees that it is low, or (scores with no
κ) one side gives every case the same score and the other does not: no ranking at all, where ρ
is undefined and nothing flagged it. Labels keep the κ/AC1 rule (a human who says YES to all
30 cases and a judge that agrees on 28 agree: AC1 0.93); never on fewer than MIN_CASES cases
(one or two cases say nothing about a judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RHO_FLAG = 0.7
KAPPA_FLAG = 0.6
MIN_CASES = 10
MAX_CATEGORIES = 10  # a metric with at most this many distinct values is treated as ordinal
BINARY_THRESHOLD = 0.5  # pass/fail cut for listing flips of continuous scores


@dataclass(frozen=True)
class Agreement:
    metric: str
    between: str  # e.g. "A judge vs B judge", "B judge vs human"
    n: int
    kappa: float | None  # Cohen's κ (labels) or quadratic-weighted κ (ordinal scores)
    rho: float | None
    flipped: list[str]
    flagged: bool
    weighted: bool = False  # kappa is quadratic-weighted
    ac1: float | None = None
    raw: float | None = None  # share of cases with the same grade (with `cut`: the same side)
    cut: float | None = None  # continuous scores: raw and flips are pass/fail at this cut
    constant: bool = False  # one side gave every case the same grade, the other did not


def normalise_label(label: object) -> str:
    return " ".join(str(label).split()).casefold()


def _table(a: Sequence[object], b: Sequence[object]) -> tuple[np.ndarray, list[object]]:
    cats = sorted({*a, *b}, key=lambda v: (isinstance(v, str), v))
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    return table, cats


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float | None:
    """Cohen's κ of two label sequences: (p_o - p_e) / (1 - p_e)."""
    if len(a) != len(b) or len(a) == 0:
        return None
    table, _ = _table(a, b)
    n = table.sum()
    p_o = np.trace(table) / n
    p_e = float((table.sum(axis=1) @ table.sum(axis=0)) / (n * n))
    if p_e >= 1.0:
        return None  # both raters used one single label: κ undefined
    return float((p_o - p_e) / (1 - p_e))


def weighted_kappa(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Quadratic-weighted κ on numeric grades: 1 - Σ w·observed / Σ w·expected with
    disagreement weights w = (x - y)²."""
    if len(a) != len(b) or len(a) == 0:
        return None
    table, cats = _table([float(x) for x in a], [float(y) for y in b])
    v = np.asarray(cats, dtype=float)
    w = (v[:, None] - v[None, :]) ** 2
    n = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    denom = float((w * expected).sum())
    if denom <= 0:
        return None
    return float(1 - (w * table).sum() / denom)


def gwet_ac1(a: Sequence[object], b: Sequence[object]) -> float | None:
    """Gwet's AC1: chance agreement Σ π_k(1 - π_k)/(q - 1), π_k the mean share of category k."""
    if len(a) != len(b) or len(a) == 0:
        return None
    table, cats = _table(a, b)
    q = len(cats)
    if q < 2:
        return None
    n = table.sum()
    p_o = np.trace(table) / n
    pi = (table.sum(axis=1) + table.sum(axis=0)) / (2 * n)
    p_e = float((pi * (1 - pi)).sum() / (q - 1))
    return float((p_o - p_e) / (1 - p_e))


def _mid_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span (scipy's rankdata)."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse]


def spearman(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float | None:
    """Spearman ρ: Pearson correlation of mid-ranks. None when either side is constant."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or a.size != b.size:
        return None
    ra, rb = _mid_ranks(a), _mid_ranks(b)
    if np.ptp(ra) == 0 or np.ptp(rb) == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def _finite(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def agreement(
    metric: str,
    between: str,
    ids: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    lx: np.ndarray | None = None,
    ly: np.ndarray | None = None,
) -> Agreement:
    """κ (plain on labels, weighted on few-valued scores), AC1, ρ, and the flipped cases."""
    weighted = False
    if lx is not None and ly is not None and all(v is not None for v in (*lx, *ly)):
        cats_x = [normalise_label(v) for v in lx]
        cats_y = [normalise_label(v) for v in ly]
        flips = np.array([p != q for p, q in zip(cats_x, cats_y, strict=True)], dtype=bool)
        kappa = cohen_kappa(cats_x, cats_y)
    elif np.unique(np.concatenate((x, y))).size <= MAX_CATEGORIES:
        # few distinct values (YES/PARTIAL/NO as numbers, a 1-5 scale): ordinal categories
        cats_x, cats_y = x.tolist(), y.tolist()
        flips = x != y
        kappa, weighted = weighted_kappa(cats_x, cats_y), True
    else:
        cats_x = cats_y = None
        flips = (x >= BINARY_THRESHOLD) != (y >= BINARY_THRESHOLD)
        kappa = None
    ac1 = gwet_ac1(cats_x, cats_y) if cats_x is not None and cats_y is not None else None
    rho = spearman(x, y)
    raw = float(1 - flips.mean()) if flips.size else None
    kappa_low = kappa is not None and kappa < KAPPA_FLAG and (ac1 is None or ac1 < KAPPA_FLAG)
    constant = bool(x.size) and (np.ptp(x) == 0) != (np.ptp(y) == 0)
    unranked = constant and kappa is None and ac1 is None  # scores: nothing else can tell
    flagged = x.size >= MIN_CASES and (
        (rho is not None and rho < RHO_FLAG) or kappa_low or unranked
    )
    order = np.argsort(-np.abs(y - x)[flips], kind="stable")
    return Agreement(
        metric=metric,
        between=between,
        n=int(x.size),
        kappa=_finite(kappa),
        rho=_finite(rho),
        flipped=[str(c) for c in ids[flips][order]],
        flagged=bool(flagged),
        weighted=weighted,
        ac1=_finite(ac1),
        raw=raw,
        cut=BINARY_THRESHOLD if cats_x is None else None,
        constant=bool(constant),
    )
