"""The paired estimate of one metric: Δ, its 95% and 90% intervals and a p-value, each from ONE
method family, so a CI that holds 0 never meets a p below .05 (and the reverse).

- binary scores on both sides (one run each): Tango's score interval for a difference of paired
  proportions and the McNemar test, which is the same score statistic at Δ = 0 (Tango 1998;
  Fagerland, Lydersen & Laake 2014 recommend both). It stays sensible with few flips.
- clustered cases (several cases from one source document): sign-flips of the cluster totals,
  exact up to `EXACT_UNITS` clusters, seeded Monte Carlo above; the interval is the set of
  shifts the same test does not reject. Past `SIGN_FLIP_MAX_CLUSTERS` clusters: cluster-robust
  SE with t(G - 1).
- some cases (or, clustered, some clusters' totals) exactly 0 and others not: a score test
  whose variance under each hypothesised Δ comes from the changes seen and their mirror images
  (`score_test.TiltedTest`). A lump at 0 and a thin tail is what a change that touches a few
  cases gives; there the t-interval and sign-flips hugged 0 and called a drop of the margin "no
  meaningful change" in 11-15% of simulated runs.
- only 1 to FEW_MOVED units (cases, or clusters' totals) moved (binary scores without clusters
  keep Tango's, whose flips each move the whole scale): too few to test or to show how far
  cases move; exact bounds (the Clopper-Pearson share of units that
  could have moved each way, times the whole scale) and the exact sign test of the moves
  (`few_moved_estimate`). The score test read 4 moves one way as p = .046 and one tiny move
  among 39 unmoved cases as a CI of ±0.0.
- everything else (labels, 1-5 scales, reruns' means, continuous scores): under 30 cases,
  sign-flips of the deltas (mid-p; exact up to 16 cases) with the CI by inversion — the t-test
  called 6.2% of A/A label pairs at N = 8 a change; from 30 cases, the paired t-interval and
  t-test, whose coverage and false alarms are on target there.

The 90% interval is what the equivalence test (TOST at 5% per side) reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ragtui.core.distributions import (
    binomial_upper,
    normal_quantile,
    t_quantile,
    t_two_sided_p,
)
from ragtui.core.score_test import TangoTest, TiltedTest, last_true
from ragtui.core.verdict import FewMoved, Method

ALPHA = 0.05
EXACT_UNITS = 16  # up to 2^16 sign patterns enumerated
SIGN_FLIP_MAX_CASES = 29  # from 30 cases on, the paired t-interval covers well (simulated)
SIGN_FLIP_MAX_CLUSTERS = 2000  # past this the cluster totals' mean is normal enough (unless
# some totals are 0: the score test, at any number of clusters)
SIGN_FLIPS = 10_000
SPREAD_TOLERANCE = 1e-12  # float dust (0.75 - 0.5 vs 0.25) is not spread
# up to this many moved units, their spread is not taken for that of every move (FewMoved):
# below 6 no exact test of their signs reaches p < .05 (5 alike: 2/2^5 = .0625)
FEW_MOVED = 5

Pair = tuple[float, float]


@dataclass(frozen=True)
class Estimate:
    method: Method
    n: int  # paired cases
    units: int  # independent units: cases, or clusters
    delta: float | None
    se: float | None
    df: int | None  # degrees of freedom of the t quantiles (units - 1)
    ci95: Pair | None
    ci90: Pair | None
    p: float | None
    spread: bool  # the deltas are not all equal
    can_detect: bool  # could any data with this many units reach p < .05?
    tightest: float  # the narrowest |bound| of a 90% CI any data with this many units can give
    exact: bool = False  # sign patterns enumerated rather than sampled
    # sampled sign-flips: the test's p at Δ = -margin. The 95% CI's lower bound is above
    # -margin exactly when this is under .05, and with random patterns this p is itself an
    # estimate (± MARGIN_P_ERROR): a bound that close to the margin is not known to be above it
    margin_p: float | None = None
    moved: int | None = None  # the tilted score test and few moved: cases whose Δ is not 0
    few_moved: FewMoved | None = None  # Method.FEW_MOVED: the units that moved each way


# three standard errors of a p near .05 estimated from SIGN_FLIPS random patterns
MARGIN_P_ERROR = 3 * math.sqrt(ALPHA * (1 - ALPHA) / SIGN_FLIPS)


def _none(method: Method, n: int, units: int, delta: float | None, spread: bool) -> Estimate:
    return Estimate(method, n, units, delta, None, None, None, None, None, spread, False, math.inf)


def no_spread_interval(
    value: float, n: int, level: float = 0.95, sizes: np.ndarray | None = None
) -> Pair:
    """Every one of n deltas equals `value`: no variance to build a t-interval from, but an
    exact bound all the same. At most a share u of the independent units can differ from
    `value` (u the Clopper-Pearson upper bound for 0 of them), and a delta lies in [-1, 1], so
    the mean lies in [value - (1 + value)·u, value + (1 - value)·u]. With clusters (`sizes`,
    cases per cluster) the units are the clusters, and the share of cases is that of the
    largest clusters making up a share u of them: 100 cases in 5 clusters bound nothing like
    100 independent cases do."""
    units = n if sizes is None else int(sizes.size)
    u = _case_share(binomial_upper(0, units, 1.0 - (1.0 - level) / 2), sizes)
    return max(-1.0, value - (1 + value) * u), min(1.0, value + (1 - value) * u)


def _case_share(u: float, sizes: np.ndarray | None) -> float:
    """The share of cases in a share u of the units: u itself for cases; for clusters, that of
    the largest clusters making up a share u of them."""
    if sizes is None:
        return u
    largest = np.sort(np.asarray(sizes, dtype=float))[::-1]
    units = largest.size
    whole, part = int(u * units), u * units - int(u * units)
    covered = largest[:whole].sum() + (part * largest[whole] if whole < units else 0.0)
    return min(1.0, float(covered) / float(largest.sum()))


def few_moved_estimate(
    d: np.ndarray, totals: np.ndarray, sizes: np.ndarray | None
) -> Estimate | None:
    """Where 1 to FEW_MOVED units moved (`totals`: each unit's sum of deltas; `sizes`: cases per
    cluster, None for cases): exact bounds and the sign test, None otherwise.

    A few moves say nothing of how far a case can move: one tiny change among 39 unmoved
    cases gave the score test a CI of ±0.0 ("no meaningful change") where 40 unmoved cases
    gave ±9 points, and 4 moves one way gave p = .046 ("improved"), where the exact sign test
    of 4 says .125. So, as for no moves at all: at most a share u_down of the units moved down
    (Clopper-Pearson, one-sided, from the downs seen), each by at most the whole scale, so
    Δ >= -u_down (in cases, the largest clusters first); likewise upwards. The bounds always
    hold 0, as the exact sign test of the moves' signs (p >= .0625 for 5 or fewer) agrees: a
    verdict of no meaningful change where the bounds fit the margin, else too few cases."""
    up = int(np.count_nonzero(totals > SPREAD_TOLERANCE))
    down = int(np.count_nonzero(totals < -SPREAD_TOLERANCE))
    if not 1 <= up + down <= FEW_MOVED:
        return None
    units = int(totals.size)

    def bounds(level: float) -> Pair:
        side = 1.0 - (1.0 - level) / 2
        low = _case_share(binomial_upper(down, units, side), sizes)
        high = _case_share(binomial_upper(up, units, side), sizes)
        return -low, high

    ci90 = bounds(0.90)
    return Estimate(
        method=Method.FEW_MOVED,
        n=int(d.size),
        units=units,
        delta=float(d.mean()),
        se=None,  # the spread of a few moves plans nothing: no MDE, power or cases needed
        df=None,
        ci95=bounds(0.95),
        ci90=ci90,
        p=_sign_test_p(up, down),
        spread=True,
        can_detect=False,
        tightest=max(-ci90[0], ci90[1]),  # "no meaningful change" exactly where these fit
        moved=int(np.count_nonzero(np.abs(d) > SPREAD_TOLERANCE)),
        few_moved=FewMoved(up, down, units, sizes is not None),
    )


def _sign_test_p(up: int, down: int) -> float:
    """The exact two-sided sign test of `up` moves against `down`."""
    k, most = up + down, max(up, down)
    tail = sum(math.comb(k, i) for i in range(most, k + 1)) / 2.0**k
    return min(1.0, 2.0 * tail)


def _no_spread(d: np.ndarray, units: int, sizes: np.ndarray | None = None) -> Estimate:
    """The estimate of deltas that are all equal: bounds, no test (the verdict is too few)."""
    n = int(d.size)
    value = float(d.mean())
    return Estimate(
        method=Method.NO_SPREAD,
        n=n,
        units=units,
        delta=value,
        se=None,  # no spread measured: no MDE of 0.0, no power of 1
        df=None,
        ci95=no_spread_interval(value, n, 0.95, sizes),
        ci90=no_spread_interval(value, n, 0.90, sizes),
        p=None,
        spread=False,
        can_detect=False,
        tightest=math.inf,
    )


# ---------------------------------------------------------------- paired t


def t_interval(d: np.ndarray, level: float = 0.95) -> Pair | None:
    d = np.asarray(d, dtype=float)
    if d.size < 2:
        return None
    mean, se = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(d.size)
    half = t_quantile(0.5 + level / 2, d.size - 1) * se
    return mean - half, mean + half


def t_estimate(d: np.ndarray) -> Estimate:
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    spread = n >= 2 and bool(np.ptp(d) > SPREAD_TOLERANCE)
    delta = float(d.mean()) if n else None
    if n == 0:
        return _none(Method.T, 0, 0, None, False)
    if not spread:
        return _no_spread(d, n)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    t = delta / se
    return Estimate(
        method=Method.T,
        n=n,
        units=n,
        delta=delta,
        se=se,
        df=n - 1,
        ci95=t_interval(d, 0.95),
        ci90=t_interval(d, 0.90),
        p=t_two_sided_p(t, n - 1),
        spread=True,
        can_detect=True,
        tightest=0.0,
    )


# ---------------------------------------------------------------- score test (score_test.py)


def score_estimate(a: np.ndarray, b: np.ndarray) -> Estimate:
    """Binary scores (Tango's interval, McNemar's test), or deltas of which some are exactly 0
    (the tilted score test): see `ragtui.core.score_test`."""
    n = int(a.size)
    if n == 0:
        return _none(Method.SCORE, 0, 0, None, False)
    d = b - a
    binary = is_binary(a, b)
    spread = n >= 2 and bool(np.ptp(d) > SPREAD_TOLERANCE)
    if not binary and not spread:
        return _no_spread(d, n)
    test = TangoTest(d) if binary else TiltedTest(d)
    se = float(d.std(ddof=1)) / math.sqrt(n) if n > 1 else None
    # every unit moved one way gives z = √n (any values): p < .05 from 4 units
    detect = math.sqrt(n) > normal_quantile(0.975)
    estimate = _from_score(test, Method.SCORE, d, n, se, detect, moved=not binary)
    # with binary scores and no flip at all, the 90% bound is z²/(n + z²), which must beat
    # the margin for "no meaningful change"
    z90 = normal_quantile(0.95)
    return replace(estimate, spread=spread, tightest=z90**2 / (n + z90**2))


def _from_score(
    test: TangoTest | TiltedTest,
    method: Method,
    d: np.ndarray,
    units: int,
    se: float | None,
    can_detect: bool,
    bounded: bool = True,
    moved: bool = True,
) -> Estimate:
    """A score test's estimate over the deltas `d`; `bounded`: its intervals are worth showing
    even where no verdict can be reached (a few cases: yes; a few clusters: no, as by
    sign-flips); `moved`: count the cases that moved (the tilted test: shown beside it)."""
    return Estimate(
        method=method,
        n=int(d.size),
        units=units,
        delta=float(d.mean()),
        se=se,
        df=units - 1 if units > 1 else None,
        ci95=test.interval(0.95) if bounded else None,
        ci90=test.interval(0.90) if bounded else None,
        p=test.p(0.0),
        spread=True,
        can_detect=can_detect,
        tightest=0.0 if can_detect else math.inf,
        moved=int(np.count_nonzero(np.abs(d) > SPREAD_TOLERANCE)) if moved else None,
    )


# ---------------------------------------------------------------- clusters


def _cluster_totals(d: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, which = np.unique(clusters, return_inverse=True)
    totals = np.bincount(which, weights=d)
    sizes = np.bincount(which).astype(float)
    return totals, sizes


def _sign_patterns(g: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Every sign pattern (exact) or the identity plus SIGN_FLIPS random ones."""
    if g <= EXACT_UNITS:
        codes = np.arange(2**g, dtype=np.int64)[:, None] >> np.arange(g)[None, :]
        return 1.0 - 2.0 * (codes & 1), True
    random = rng.choice((-1.0, 1.0), size=(SIGN_FLIPS, g))
    return np.vstack([np.ones((1, g)), random]), False


class SignFlip:
    """p(δ0) of the sign-flip test on unit totals (cases, or cluster totals) shifted by δ0.

    With S_u the unit totals and n_u their sizes, the statistic under the pattern s is
    |Σ s_u (S_u - n_u δ0)| against the observed |S - N δ0|. As δ0 moves away from the estimate
    the observed side grows at rate N and each flipped one at most at rate |Σ s_u n_u| <= N, so
    both "above" and "tied" counts never increase: p(δ0) is monotone on each side and the
    accepted shifts form an interval, found by bisection with the same patterns as the p-value.

    `mid_p`: ties count half. Few-valued scores (labels, 1-5 scales) tie often, and an exact
    test counting them in full stays far below 5% (0.5% false alarms on labels at N = 8 in
    simulation); mid-p brings it back near, but in simulation not above, 5%. Its known price,
    with deltas that never tie (continuous scores): the observed pattern and its mirror count
    half too, so at N = 6 the test rejects at exact p 4/64 and its size is 6.25% (CI coverage
    93.75%); from N = 7 on at most ~5.1% (N = 9: 26/512). Said in the README.
    """

    def __init__(
        self, totals: np.ndarray, sizes: np.ndarray, rng: np.random.Generator, mid_p: bool
    ) -> None:
        signs, self.exact = _sign_patterns(totals.size, rng)
        self.flipped_totals = signs @ totals
        self.flipped_sizes = signs @ sizes
        self.total, self.n = float(totals.sum()), float(sizes.sum())
        self.tolerance = 1e-9 * max(1.0, float(np.abs(totals).sum()))
        self.tie_weight = 0.5 if mid_p else 1.0

    def p(self, delta0: float) -> float:
        observed = abs(self.total - self.n * delta0)
        flipped = np.abs(self.flipped_totals - delta0 * self.flipped_sizes)
        above = np.count_nonzero(flipped > observed + self.tolerance)
        tied = np.count_nonzero(np.abs(flipped - observed) <= self.tolerance)
        return float(above + self.tie_weight * tied) / flipped.size

    def least_p(self) -> float:
        """The smallest p any data with this many units can reach (identity and all-flipped)."""
        g = self.flipped_totals.size
        return self.tie_weight * 2.0 / g if self.exact else 0.0

    def interval(self, alpha: float) -> Pair:
        est = self.total / self.n
        low = last_true(lambda d: self.p(d) >= alpha, est, -1.0)
        high = last_true(lambda d: self.p(d) >= alpha, est, 1.0)
        return low, high


def cluster_estimate(
    d: np.ndarray,
    clusters: np.ndarray,
    rng: np.random.Generator,
    margin: float | None = None,
) -> Estimate:
    d = np.asarray(d, dtype=float)
    totals, sizes = _cluster_totals(d, clusters)
    n, g = int(d.size), int(totals.size)
    delta = float(d.mean()) if n else None
    spread = n >= 2 and bool(np.ptp(d) > SPREAD_TOLERANCE)
    # the identity and the all-flipped pattern always tie the observed statistic: p >= 2 / 2^G
    least_p = 2.0 / 2.0**g if g < 64 else 0.0
    if g <= SIGN_FLIP_MAX_CLUSTERS:
        method = Method.CLUSTER_SIGN_FLIP
        can_detect, can_bound = least_p < ALPHA, least_p < 2 * ALPHA
    else:
        method, can_detect, can_bound = Method.CLUSTER_T, True, True
    if n >= 1 and not spread:
        return _no_spread(d, g, sizes)
    few = few_moved_estimate(d, totals, sizes)  # 1-5 clusters' totals moved: exact bounds
    if few is not None:
        return few
    if bool(np.all(np.abs(totals) <= SPREAD_TOLERANCE)):
        # cases moved, but within every cluster they cancel out: no spread between the units
        # to test (sign-flips put every shift but 0 at p = 2/2^G, a zero-width "interval");
        # the exact bound on how many clusters could differ, and no test
        return replace(_no_spread(d, g, sizes), spread=True)
    if g < 2 or delta is None:
        return _none(method, n, g, delta, spread)
    if _some_did_not_move(totals):  # any number of clusters
        method = Method.CLUSTER_SCORE
    # cluster-robust (CR1) SE: for the MDE and the sample-size advice, and CLUSTER_T
    resid = totals - sizes * delta
    se = math.sqrt(g / (g - 1) * float((resid**2).sum())) / n
    if method is Method.CLUSTER_SCORE:
        # as a test by sign-flips, no verdict from fewer than 6 clusters (z is no guide there)
        return _from_score(TiltedTest(totals, sizes), method, d, g, se, g >= 6, g >= 6)
    if method is Method.CLUSTER_T:
        half = {lv: t_quantile(0.5 + lv / 2, g - 1) * se for lv in (0.95, 0.90)}
        return Estimate(
            method=method,
            n=n,
            units=g,
            delta=delta,
            se=se,
            df=g - 1,
            ci95=(delta - half[0.95], delta + half[0.95]),
            ci90=(delta - half[0.90], delta + half[0.90]),
            p=t_two_sided_p(delta / se, g - 1) if se > 0 else 0.0,
            spread=True,
            can_detect=True,
            tightest=0.0,
        )
    test = SignFlip(totals, sizes, rng, mid_p=False)
    return _from_sign_flip(test, method, n, g, delta, se, can_detect, can_bound, margin)


def sign_flip_estimate(
    d: np.ndarray, rng: np.random.Generator, margin: float | None = None
) -> Estimate:
    """Few cases, scores not binary: sign-flips of the deltas (mid-p), CI by inversion."""
    d = np.asarray(d, dtype=float)
    n = int(d.size)
    spread = n >= 2 and bool(np.ptp(d) > SPREAD_TOLERANCE)
    if n == 0:
        return _none(Method.SIGN_FLIP, 0, 0, None, False)
    if not spread:
        return _no_spread(d, n)
    test = SignFlip(d, np.ones(n), rng, mid_p=True)
    least = test.least_p()
    se = float(d.std(ddof=1)) / math.sqrt(n)
    return _from_sign_flip(
        test, Method.SIGN_FLIP, n, n, float(d.mean()), se, least < ALPHA, least < 2 * ALPHA, margin
    )


def _from_sign_flip(
    test: SignFlip,
    method: Method,
    n: int,
    units: int,
    delta: float,
    se: float,
    can_detect: bool,
    can_bound: bool,
    margin: float | None = None,
) -> Estimate:
    """A sign-flip test's estimate: the CIs by inversion where the test can reach them
    (95% where p < .05 is reachable, the 90% TOST interval where p < .10 is)."""
    return Estimate(
        method=method,
        n=n,
        units=units,
        delta=delta,
        se=se,
        df=units - 1,
        ci95=test.interval(ALPHA) if can_detect else None,
        ci90=test.interval(2 * ALPHA) if can_bound else None,
        p=test.p(0.0),
        spread=True,
        can_detect=can_detect,
        tightest=0.0 if can_bound else math.inf,
        exact=test.exact,
        margin_p=None if margin is None or test.exact else test.p(-margin),
    )


# ---------------------------------------------------------------- dispatch


def is_binary(*arrays: np.ndarray) -> bool:
    return all(x.size > 0 and bool(np.all((x == 0.0) | (x == 1.0))) for x in arrays)


def _some_did_not_move(d: np.ndarray) -> bool:
    """Some deltas exactly 0 beside others that are not: a lump at 0 and a tail, which neither
    the t-interval nor sign-flips bound honestly (see score_test)."""
    zero = np.abs(d) <= SPREAD_TOLERANCE
    return bool(zero.any() and not zero.all())


def _moved(d: np.ndarray) -> bool:
    """The deltas have spread: not all equal (all 0 or one shift: the exact no-spread bound)."""
    return d.size >= 2 and bool(np.ptp(d) > SPREAD_TOLERANCE)


def has_clusters(clusters: np.ndarray | None) -> bool:
    """Clusters matter when some cluster holds more than one case."""
    if clusters is None or clusters.size == 0:
        return False
    return bool(np.unique(clusters).size < clusters.size)


def estimate(
    a: np.ndarray,
    b: np.ndarray,
    *,
    rng: np.random.Generator,
    clusters: np.ndarray | None = None,
    margin: float | None = None,
) -> Estimate:
    """The paired estimate of B - A from per-case values (fractions), by the fitting family.
    `margin`: for a test on random sign patterns, also its p at -margin (Estimate.margin_p)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    if has_clusters(clusters):
        assert clusters is not None
        return cluster_estimate(d, clusters, rng, margin)
    if is_binary(a, b):  # every flip moves a whole scale: Tango's test counts unseen ones
        return score_estimate(a, b)
    few = few_moved_estimate(d, d, None) if _moved(d) else None
    if few is not None:
        return few
    if _some_did_not_move(d):
        return score_estimate(a, b)
    if a.size <= SIGN_FLIP_MAX_CASES:
        return sign_flip_estimate(d, rng, margin)
    return t_estimate(d)


# ---------------------------------------------------------------- one mean (Trends)


def wilson_interval(successes: float, n: int, level: float = 0.95) -> Pair | None:
    """Wilson's score interval for a proportion: inside [0, 1], never zero-width."""
    if n <= 0:
        return None
    z = normal_quantile(0.5 + level / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: np.ndarray, level: float = 0.95) -> Pair | None:
    """A 95% interval for one run's mean of [0, 1] scores that stays inside [0, 1].

    Binary scores: Wilson. Others: the t-interval clipped to [0, 1]; with no spread at all
    (every case scored the same), Wilson on the mean, which is conservative for any score in
    [0, 1] since its variance is at most mean·(1 - mean).
    """
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return None
    if is_binary(v) or np.ptp(v) <= SPREAD_TOLERANCE:
        return wilson_interval(float(v.sum()), int(v.size), level)
    ci = t_interval(v, level)
    if ci is None:
        return None
    return max(0.0, ci[0]), min(1.0, ci[1])
