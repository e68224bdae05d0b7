"""Score tests for the mean of paired deltas, where some cases did not move at all.

Why: when many cases did not move (Δ exactly 0: a cached grade, a change this metric does not
see) and a few moved, the deltas are a lump at 0 plus a thin tail. The t-interval then treats
one broken case in 30 as a precise estimate, and sign-flips reject every shift across 0 (all
the zeros take one sign), so intervals hug 0 and a drop the size of the margin was called "no
meaningful change" in 15% of simulated runs (5% is the promise). A score test asks how likely
the data are if the mean were δ0, with the variance of a distribution that has that mean: it
knows that one broken case in 30 is also what a 10% breakage rate often gives. Both tests
here give z(δ0) = (mean of S - n·δ0 over the units) / √(Var_H0 / units), units being cases or
clusters (S a unit's total, n its cases), and the interval is every δ0 with |z| under the
normal quantile. At δ0 = 0 both are McNemar's z = ΣS / √ΣS², the normal form of the sign test.

- `TangoTest`, for binary scores: Tango's. Under H0 the probabilities of highest likelihood
  of fixed, broke and unchanged cases, in closed form.
- `TiltedTest`, for other scores: the units as observed and as if each had moved the other way
  (the symmetry the sign-flip test assumes), exponentially tilted to mean δ0. Tango's
  constrained likelihood carried over to many values puts the missing mass on the single
  largest value, which made the test far too cautious when the changes differ in size (a real
  11.5-point gain over 48 cases was p = .019 against .003 for the sign test's normal form);
  tilting spreads it like the changes seen.
"""

from __future__ import annotations

import math

import numpy as np

from ragtui.core.distributions import normal_cdf, normal_quantile

Pair = tuple[float, float]

_NEWTON_STEPS = 60
_BISECTIONS = 56  # of an interval's bounds: to 2^-56 of the range [-1, 1]
_EXPANSIONS = 200  # doublings of a tilt's bracket (|λ| up to 2^200)


class _ZTest:
    """z(δ0), p and intervals from a unit-level variance under H0 (`_variance`). `totals`:
    each unit's sum of deltas (a case's delta, or a cluster's total); `sizes`: the cases in
    each unit (1 without clusters)."""

    lowest: float  # the δ0 range a distribution on the support can reach
    highest: float

    def __init__(self, totals: np.ndarray, sizes: np.ndarray | None) -> None:
        totals = np.asarray(totals, dtype=float)
        sizes = np.ones_like(totals) if sizes is None else np.asarray(sizes, dtype=float)
        self.units = int(totals.size)
        self.total, self.cases = float(totals.sum()), float(sizes.sum())
        self.mean = self.total / self.cases if self.units else 0.0
        # the data's own size: tolerances are relative to it (deltas of 1e-9 are data too)
        self.scale = float(np.max(np.abs(totals))) if self.units else 0.0
        self.scale = self.scale or 1.0

    def _variance(self, delta0: float) -> float | None:
        raise NotImplementedError

    def z(self, delta0: float) -> float:
        diff = (self.total - delta0 * self.cases) / self.units  # a unit's mean S - n·δ0
        variance = self._variance(delta0)
        if variance is None or variance <= 0.0:
            return 0.0 if abs(diff) <= 1e-12 * self.scale else math.copysign(math.inf, diff)
        return diff / math.sqrt(variance / self.units)

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


class TiltedTest(_ZTest):
    """The units and their mirror images (each as if it had moved the other way), weighted
    ∝ exp(λ·(S - n·δ0)) with λ such that the mean of S - n·δ0 is 0."""

    def __init__(self, totals: np.ndarray, sizes: np.ndarray | None = None) -> None:
        super().__init__(totals, sizes)
        totals = np.asarray(totals, dtype=float)
        sizes = np.ones_like(totals) if sizes is None else np.asarray(sizes, dtype=float)
        self.support_totals = np.concatenate([totals, -totals])
        self.support_sizes = np.concatenate([sizes, sizes])
        per_case = self.support_totals / self.support_sizes
        self.lowest, self.highest = float(per_case.min()), float(per_case.max())
        self._lam = 0.0

    def _variance(self, delta0: float) -> float | None:
        y = self.support_totals - self.support_sizes * delta0
        if not float(y.min()) < 0.0 < float(y.max()):
            return None
        # an interval's search asks for nearby δ0 one after another, whose λ are close: start
        # from the last one (a few Newton steps instead of a bracket found from scratch)
        self._lam = _tilt(y, self._lam, 1e-13 * self.scale)
        lam_y = self._lam * y
        w = np.exp(lam_y - lam_y.max())
        return float(w @ (y * y)) / float(w.sum())


class TangoTest(_ZTest):
    """Tango's score test, for binary scores (Δ in -1, 0, 1 per case): under H0 the variance
    2q + δ0 - δ0² per case, q the constrained MLE of P(broke), in closed form (Tango 1998)."""

    def __init__(self, d: np.ndarray) -> None:
        super().__init__(d, None)
        d = np.asarray(d, dtype=float)
        self.fixed = float(np.count_nonzero(d > 0))
        self.broke = float(np.count_nonzero(d < 0))
        self.lowest, self.highest = -1.0, 1.0

    def _variance(self, delta0: float) -> float | None:
        n, x, y = float(self.units), self.fixed, self.broke
        a = 2.0 * n
        b = -x - y + (2.0 * n - x + y) * delta0
        c = -y * delta0 * (1.0 - delta0)
        q = (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
        return 2 * q + delta0 - delta0 * delta0


def _tilt(y: np.ndarray, lam: float, tolerance: float) -> float:
    """λ where the weights ∝ exp(λ·y) give y mean 0 (to |mean| <= tolerance), for y with
    values on both sides of 0. The mean rises with λ and its slope is the tilted variance, so
    each evaluation gives a Newton step; steps that would leave the bracket known so far are
    bisections, or (no bracket yet on that side) doublings of the distance from `lam`."""
    lo, hi = -math.inf, math.inf
    for _ in range(_NEWTON_STEPS + _EXPANSIONS):
        lam_y = lam * y
        w = np.exp(lam_y - lam_y.max())
        w /= w.sum()
        mean = float(w @ y)
        if abs(mean) <= tolerance:
            break
        if mean > 0.0:
            hi = lam
        else:
            lo = lam
        slope = float(w @ (y * y)) - mean * mean
        step = lam - mean / slope if slope > 0.0 else math.nan
        if lo < step < hi:
            lam = step
        elif math.isinf(lo):
            lam = hi - max(1.0, 2.0 * abs(hi))
        elif math.isinf(hi):
            lam = lo + max(1.0, 2.0 * abs(lo))
        else:
            lam = (lo + hi) / 2
        if hi - lo < 1e-13 * max(1.0, abs(lam)):
            break
    return lam


def _boundary(f, inside: float, outside: float) -> float:  # type: ignore[no-untyped-def]
    """The last point from `inside` (f <= 0) towards `outside` where f <= 0, for f continuous
    and rising across one boundary (z is smooth in δ0): regula falsi with the Illinois step,
    halving where f is infinite (δ0 at the support's edge). ~10 evaluations, not 56."""
    f_in, f_out = f(inside), f(outside)
    if f_out <= 0.0:
        return outside
    keep = 0  # which end the last two steps kept: halve its value (Illinois)
    for _ in range(_BISECTIONS):
        if abs(outside - inside) <= 1e-13 * max(abs(inside), abs(outside)):
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
