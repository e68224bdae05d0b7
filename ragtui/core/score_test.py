"""The score test for the mean of paired deltas: Tango's test for paired proportions, carried
over from the three values a binary delta takes (-1, 0, 1) to any finite set of values.

Why: when many cases did not move at all (Δ exactly 0: a cached grade, a change this metric
does not see) and a few moved, the deltas are a lump at 0 plus a thin tail. The t-interval
then treats one broken case in 30 as a precise estimate, and sign-flips reject every shift
across 0 (all the zeros take one sign), so intervals hug 0 and a drop the size of the margin
was called "no meaningful change" in 15% of simulated runs (5% is the promise). A score test
asks instead how likely these counts are if the mean were δ0, with the variance of the
distribution that fits the counts best under that mean: it knows that one broken case in 30
is also what a 10% breakage rate often gives.

The model: Δ takes values on a finite support S, with unknown probabilities. S holds 0, every
observed delta, and each one's negation (a case could have moved the other way by as much, the
same symmetry the sign-flip test assumes). Under H0: E[Δ] = δ0, the probabilities of highest
likelihood are p_s = n_s / (n + β(s - δ0)) on the observed values (empirical likelihood), and
when δ0 lies beyond what the observed values can average to, the rest of the mass sits on the
unobserved extreme of S, as in Tango's constrained MLE. The statistic is
z(δ0) = (Δ̄ - δ0) / √(Var_H0 / n), and the interval is every δ0 with |z| under the normal
quantile. On binary deltas this is exactly Tango's interval and McNemar's test.
"""

from __future__ import annotations

import math

import numpy as np

from ragtui.core.distributions import normal_cdf, normal_quantile

Pair = tuple[float, float]

_VALUE_DIGITS = 9  # deltas equal to 9 decimals are one value (0.75 - 0.5 and 0.25 alike)
_NEWTON_STEPS = 60
_BISECTIONS = 56  # of an interval's bounds: to 2^-56 of the range [-1, 1]


class ScoreTest:
    """p(δ0) and intervals of the score test on the deltas `d` (B - A per case, fractions)."""

    def __init__(self, d: np.ndarray, possible: tuple[float, ...] = ()) -> None:
        """`possible`: values Δ can take beyond the observed ones and their negations (binary
        scores: -1 and 1, which makes this Tango's test)."""
        d = np.round(np.asarray(d, dtype=float), _VALUE_DIGITS)
        self.n = int(d.size)
        self.mean = float(d.mean()) if self.n else 0.0
        values, counts = np.unique(d, return_counts=True)
        self.values, self.counts = values, counts.astype(float)
        support = np.unique(np.concatenate([[0.0], values, -values, possible]))
        self.lowest, self.highest = float(support[0]), float(support[-1])

    def _variance(self, delta0: float) -> float | None:
        """Var(Δ) under the best-fitting distribution on S with mean δ0; None when no
        distribution on S has that mean."""
        n = float(self.n)
        x = self.values - delta0
        x_lo, x_hi = self.lowest - delta0, self.highest - delta0
        if not x_lo < 0.0 < x_hi:
            return None
        # β keeps every probability positive: n + β·x > 0 on all of S
        b_lo, b_hi = -n / x_hi, -n / x_lo
        c = self.counts

        def g(beta: float) -> float:  # Σ p_s·x_s: decreasing in β, 0 at the solution
            return float(np.sum(c * x / (n + beta * x)))

        seen_hi = bool(np.any(np.isclose(x, x_hi, rtol=0.0, atol=1e-12)))
        seen_lo = bool(np.any(np.isclose(x, x_lo, rtol=0.0, atol=1e-12)))
        extra = 0.0  # mass on an unobserved extreme, and where it sits
        if not seen_hi and g(b_lo) <= 0.0:
            beta, extra = b_lo, x_hi
        elif not seen_lo and g(b_hi) >= 0.0:
            beta, extra = b_hi, x_lo
        else:
            beta = _solve(g, lambda b: -float(np.sum(c * x * x / (n + b * x) ** 2)), b_lo, b_hi)
        p = c / (n + beta * x)
        variance = float(np.sum(p * x * x))
        if extra:
            variance += max(0.0, 1.0 - float(p.sum())) * extra * extra
        return variance

    def z(self, delta0: float) -> float:
        diff = self.mean - delta0
        variance = self._variance(delta0)
        if variance is None or variance <= 0.0:
            return 0.0 if abs(diff) < 1e-12 else math.copysign(math.inf, diff)
        return diff / math.sqrt(variance / self.n)

    def p(self, delta0: float = 0.0) -> float:
        """Two-sided p of H0: E[Δ] = δ0."""
        return float(2 * normal_cdf(-abs(self.z(delta0))))

    def interval(self, level: float) -> Pair:
        """Every δ0 the two-sided test at 1 - level does not reject: the bound on each side is
        where |z| reaches the normal quantile (z falls as δ0 rises)."""
        crit = normal_quantile(0.5 + level / 2)
        low = _boundary(lambda t: self.z(t) - crit, self.mean, self.lowest)
        high = _boundary(lambda t: -crit - self.z(t), self.mean, self.highest)
        return low, high


def _solve(g, dg, lo: float, hi: float) -> float:  # type: ignore[no-untyped-def]
    """The root of a decreasing g inside (lo, hi): Newton's steps, kept inside the bracket by
    bisection when a step would leave it."""
    beta = 0.0 if lo < 0.0 < hi else (lo + hi) / 2
    for _ in range(_NEWTON_STEPS):
        value = g(beta)
        if abs(value) < 1e-13:
            break
        if value > 0.0:
            lo = beta
        else:
            hi = beta
        slope = dg(beta)
        step = beta - value / slope if slope < 0.0 else math.nan
        beta = step if lo < step < hi else (lo + hi) / 2
        if hi - lo < 1e-13 * max(1.0, abs(beta)):
            break
    return beta


def _boundary(f, inside: float, outside: float) -> float:  # type: ignore[no-untyped-def]
    """The last point from `inside` (f <= 0) towards `outside` where f <= 0, for f continuous
    and rising across one boundary (z is smooth in δ0): regula falsi with the Illinois step,
    halving where f is infinite (δ0 at the support's edge). ~10 evaluations, not 56."""
    f_in, f_out = f(inside), f(outside)
    if f_out <= 0.0:
        return outside
    keep = 0  # which end the last two steps kept: halve its value (Illinois)
    for _ in range(_BISECTIONS):
        if abs(outside - inside) <= 1e-13:
            break
        if math.isfinite(f_out) and math.isfinite(f_in) and f_out != f_in:
            mid = inside + (outside - inside) * (-f_in) / (f_out - f_in)
            if not min(inside, outside) < mid < max(inside, outside):
                mid = (inside + outside) / 2
        else:
            mid = (inside + outside) / 2
        f_mid = f(mid)
        if abs(f_mid) < 1e-12:  # on the boundary, to far below any figure shown
            return mid
        if f_mid <= 0.0:
            inside, f_in = mid, f_mid
            f_out = f_out / 2 if keep == 1 and math.isfinite(f_out) else f_out
            keep = 1
        else:
            outside, f_out = mid, f_mid
            f_in = f_in / 2 if keep == -1 else f_in
            keep = -1
    return inside


def last_true(holds, start: float, edge: float) -> float:  # type: ignore[no-untyped-def]
    """Bisection from `start` (where `holds`) towards `edge`: the last point where it holds,
    for a condition that holds on one side of a single boundary (a test's acceptance set)."""
    if holds(edge):
        return edge
    inside, outside = start, edge
    for _ in range(_BISECTIONS):
        mid = (inside + outside) / 2
        if holds(mid):
            inside = mid
        else:
            outside = mid
    return inside
