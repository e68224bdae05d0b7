"""Score statistics computed the slow, general way (scipy's optimisers over the constrained
likelihood), as independent references for ragtui.core.score_test."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize


def trinomial_score_stat(fixed: int, broke: int, n: int, delta: float) -> float:
    """The score statistic from a constrained MLE found numerically (no closed form):
    maximise the trinomial likelihood of (fixed, broke, same) under p_f - p_b = delta."""
    same = n - fixed - broke

    def negloglik(pb: float) -> float:
        pf, ps = pb + delta, 1 - 2 * pb - delta
        terms = [(fixed, pf), (broke, pb), (same, ps)]
        return -sum(k * math.log(max(p, 1e-300)) for k, p in terms if k)

    lo, hi = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    pb = optimize.minimize_scalar(
        negloglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}
    ).x
    pf = pb + delta
    return (fixed - broke - n * delta) / math.sqrt(n * (pf + pb - delta * delta))


def tilted_score_stat(totals: np.ndarray, delta0: float, sizes: np.ndarray | None = None) -> float:
    """The tilted score statistic with scipy's root finder: the units and their mirror images,
    weighted ∝ exp(λ·y) (y = S - n·δ0) with λ from brentq so that the weighted mean of y is
    0, their second moment, and mean(y) / √(moment / units). Independent of score_test's
    bracketing and Newton steps."""
    totals = np.asarray(totals, dtype=float)
    sizes = np.ones_like(totals) if sizes is None else np.asarray(sizes, dtype=float)
    y = np.concatenate([totals, -totals]) - np.concatenate([sizes, sizes]) * delta0

    def tilted(lam: float) -> np.ndarray:
        w = np.exp(lam * y - np.max(lam * y))
        return w / w.sum()

    lam = optimize.brentq(lambda t: float(tilted(t) @ y), -1e6, 1e6, xtol=1e-14)
    moment = float(tilted(lam) @ (y * y))
    observed = (totals.sum() - delta0 * sizes.sum()) / totals.size
    return observed / math.sqrt(moment / totals.size)
