"""Statistics shared by the comparison, the noise check and Trends (DESIGN.md §3). Pure functions.

The paired estimate (CI and p of one family) lives in `intervals`, power and sample sizes in
`power`, agreement figures in `agreement`, the noise budget in `budget`, human-label
correction in `ppi`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragtui.core.distributions import t_two_sided_p
from ragtui.core.power import rerun_range_quantile

DEFAULT_SEED = 20261201
BOTTOM_SHARE = 0.10

Array = np.ndarray


def _as_array(x: Sequence[float] | Array) -> Array:
    return np.asarray(x, dtype=float)


# ---------------------------------------------------------------- several metrics


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values; None stays None and does not count as a test."""
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    present.sort()
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# ---------------------------------------------------------------- noise from reruns


@dataclass(frozen=True)
class NoiseFloor:
    n: int
    k: int  # reruns used
    sigma2_within: float  # pooled within-case variance across reruns
    noise_floor: float  # 95% range of the difference between two reruns' means
    rerun_delta: float  # largest difference between two reruns' means
    chance_range: float  # 95% range of max - min of k pure reruns' means at this N
    icc: float | None


def noise_floor(reruns: Sequence[Sequence[float]] | Array) -> NoiseFloor | None:
    """From a k × N matrix of the same cases scored by k reruns of one config.

    For k = 2 with e = a' - a: σ²_w = Σe²/(2N) and noise floor = 1.96·√(Σe²)/N; for k > 2
    σ²_w is the pooled within-case variance and the floor is 1.96·√(2σ²_w/N), the same formula.
    """
    x = np.asarray(reruns, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        return None
    k, n = x.shape
    case_means = x.mean(axis=0)
    sigma2_w = float(((x - case_means) ** 2).sum() / (n * (k - 1)))
    run_means = x.mean(axis=1)
    return NoiseFloor(
        n=n,
        k=k,
        sigma2_within=sigma2_w,
        noise_floor=1.96 * math.sqrt(2 * sigma2_w / n),
        rerun_delta=float(run_means.max() - run_means.min()),
        chance_range=rerun_range_quantile(k) * math.sqrt(sigma2_w / n),
        icc=icc1(x),
    )


def icc1(x: Sequence[Sequence[float]] | Array) -> float | None:
    """ICC(1), one-way random effects, of a k × N matrix (k reruns rating N cases)."""
    x = np.asarray(x, dtype=float)
    k, n = x.shape
    if k < 2 or n < 2:
        return None
    case_means = x.mean(axis=0)
    msb = k * float(((case_means - x.mean()) ** 2).sum()) / (n - 1)
    msw = float(((x - case_means) ** 2).sum()) / (n * (k - 1))
    denom = msb + (k - 1) * msw
    if denom <= 0:
        return None
    return (msb - msw) / denom


def identical(a: Array, b: Array) -> bool:
    """A rerun equal to its sibling on every case is a cache hit, not a replicate."""
    return a.shape == b.shape and bool(np.array_equal(a, b))


def drift_p(a: Array, a2: Array) -> float | None:
    """p of a paired t-test that the mean rerun difference e = a' - a is zero."""
    e = _as_array(a2) - _as_array(a)
    if e.size < 2:
        return None
    sd = float(e.std(ddof=1))
    if sd == 0.0:
        return 1.0 if float(e.mean()) == 0.0 else 0.0
    t = float(e.mean()) / (sd / math.sqrt(e.size))
    return t_two_sided_p(t, e.size - 1)


def rule_holds(rerun_delta: float, margin: float) -> bool:
    """The classic rule "reruns differ by < 5 points", decided on the figure users see: points
    with one decimal. 5.0 points is not < 5; 4.96 shows as 5.0 and fails too. The one place
    that decides it (the comparison and the noise check both call it)."""
    return shown_below(rerun_delta, margin)


def shown_below(size: float, margin: float) -> bool:
    """Whether a size (a rerun spread, |Δ|) is below the margin as the user reads both: in
    points with one decimal, so float dust (0.8 - 0.75 = 0.04999…) never puts "+5.0" below a
    5-point margin."""
    return round(size * 100, 1) < round(margin * 100, 1)


# ---------------------------------------------------------------- bottom quantile


def bottom_count(n: int, share: float = BOTTOM_SHARE) -> int:
    """How many cases are "the worst 10%": ceil(share·n), at least one (integer arithmetic
    in tenths-of-a-percent, so float dust never adds or drops a case)."""
    if n <= 0:
        return 0
    per_mille = round(share * 1000)
    return max(1, -(-n * per_mille // 1000))


def bottom_indices(values: Sequence[float] | Array, share: float = BOTTOM_SHARE) -> Array:
    """Indices of the worst `share` of cases (at least one), lowest first, ties stable."""
    v = _as_array(values)
    if v.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.argsort(v, kind="stable")[: bottom_count(v.size, share)]


def rng_for(seed: int, name: str) -> np.random.Generator:
    """One generator per (seed, metric), so a metric's figures do not depend on the others."""
    tag = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng([seed, tag])
