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


def multinomial_score_stat(d: np.ndarray, delta0: float) -> float:
    """The score statistic by a general-purpose optimiser: the probabilities on the support
    {0, ±each observed Δ} of highest likelihood with mean δ0 (SLSQP), their variance, and
    (Δ̄ - δ0) / √(Var / n). Independent of score_test's closed-form weights and Newton steps."""
    values, counts = np.unique(d, return_counts=True)
    support = np.unique(np.concatenate([[0.0], values, -values]))
    observed = np.array([counts[values == s].sum() if s in values else 0 for s in support])
    n = d.size

    def negloglik(p: np.ndarray) -> float:
        return -float(np.sum(observed * np.log(np.maximum(p, 1e-300))))

    start = np.full(support.size, 1 / support.size)
    fit = optimize.minimize(
        negloglik,
        start,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * support.size,
        constraints=[
            {"type": "eq", "fun": lambda p: p.sum() - 1},
            {"type": "eq", "fun": lambda p: p @ support - delta0},
        ],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    variance = float(fit.x @ (support - delta0) ** 2)
    return (d.mean() - delta0) / math.sqrt(variance / n)
