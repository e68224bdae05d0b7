"""Minimum detectable effect, power and sample-size advice for each goal (fractions throughout).

- MDE at this N: (t(1 - α/2, df) + t(power, df))·SE, with the t quantiles of this N's degrees of
  freedom (3.26·SE at N = 8, 2.80·SE for large N).
- Power of the test the verdict uses: the noncentral t for the t-test, Connor's (1987) formula
  for McNemar's test on binary metrics, the normal approximation for cluster tests.
- Cases needed, per goal: to detect a change of the margin (α split over the metrics compared,
  as Holm's first step does); to show no meaningful change (TOST, two one-sided 5% tests, with
  80% power when the true change is 0); for the gate's non-inferiority (one-sided 2.5%).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from ragtui.core.distributions import (
    noncentral_t_cdf,
    normal_cdf,
    normal_pdf,
    normal_quantile,
    t_quantile,
)

ALPHA = 0.05
POWER = 0.80
MAX_ADVICE = 10_000_000  # past this, "more cases" is not advice anymore


def mde(
    se: float | None, df: int | None, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    if se is None or df is None or df < 1:
        return None
    return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * se


def power_t(effect: float, se: float | None, df: int | None, alpha: float = ALPHA) -> float | None:
    """Power of the two-sided t-test to detect a true shift `effect` (noncentral t)."""
    if se is None or df is None or df < 1:
        return None
    if se == 0.0:
        return 1.0
    crit = t_quantile(1 - alpha / 2, df)
    nc = effect / se
    return 1.0 - noncentral_t_cdf(crit, df, nc) + noncentral_t_cdf(-crit, df, nc)


def power_normal(effect: float, se: float | None, alpha: float = ALPHA) -> float | None:
    if se is None:
        return None
    if se == 0.0:
        return 1.0
    z = normal_quantile(1 - alpha / 2)
    r = effect / se
    return float(normal_cdf(r - z) + normal_cdf(-r - z))


EXACT_MCNEMAR_MAX_N = 3000


def power_mcnemar(effect: float, n: int, discordance: float, alpha: float = ALPHA) -> float:
    """Power of McNemar's (score) test for a change `effect` = p(fixed) - p(broke), with
    `discordance` = p(fixed) + p(broke) (at least |effect|: no change flips fewer cases).

    Exact up to EXACT_MCNEMAR_MAX_N cases: sum over the number of flips m ~ Bin(n, ψ) of the
    chance that the fixed ones, Bin(m, p_fixed/ψ), land in the rejection region. Above, the
    normal approximation of Connor (1987)."""
    psi = min(1.0, max(discordance, abs(effect)))
    if n <= 0 or psi <= 0:
        return 0.0
    z = float(special.ndtri(1 - alpha / 2))
    if n > EXACT_MCNEMAR_MAX_N:
        spread = psi - effect * effect
        if spread <= 0:
            return 1.0
        return float(
            normal_cdf((abs(effect) * math.sqrt(n) - z * math.sqrt(psi)) / math.sqrt(spread))
        )
    # the flips m ~ Bin(n, ψ): only m within 9 SD of n·ψ carry any probability
    sd = math.sqrt(n * psi * (1 - psi))
    m = np.arange(max(1, int(n * psi - 9 * sd)), min(n, int(n * psi + 9 * sd) + 1) + 1)
    share = (psi + effect) / (2 * psi)  # P(fixed | flipped)
    root = z * np.sqrt(m)
    high = np.floor((m + root) / 2) + 1  # |2f - m| > z·√m
    low = np.ceil((m - root) / 2) - 1
    # scipy.special directly: the distribution objects' argument checks cost 10x the maths
    upper = np.where(high - 1 < 0, 1.0, special.bdtrc(np.maximum(high - 1, 0), m, share))
    lower = np.where(low < 0, 0.0, special.bdtr(np.maximum(low, 0), m, share))
    log_pmf = (
        special.gammaln(n + 1)
        - special.gammaln(m + 1)
        - special.gammaln(n - m + 1)
        + m * math.log(psi)
        + (n - m) * (math.log1p(-psi) if psi < 1 else 0.0)
    )
    if psi >= 1:
        log_pmf = np.where(m == n, 0.0, -np.inf)
    return float(np.clip((np.exp(log_pmf) * (upper + lower)).sum(), 0.0, 1.0))


def mde_mcnemar(n: int, discordance: float, alpha: float = ALPHA) -> float | None:
    """The smallest change p(fixed) - p(broke) that McNemar's test on n cases detects 4 times
    in 5 (power_mcnemar, exact up to EXACT_MCNEMAR_MAX_N), at the flip rate seen: the MDE of
    a yes/no metric. None when not even a change of the whole scale would be (n too small).
    The t formula on the SE said 1,408 points at n = 2 and 20.6 where this is 17.6 (n = 40)."""
    if n <= 0 or power_mcnemar(1.0, n, discordance, alpha) < POWER:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > 1e-4:  # a hundredth of a point: finer than anything shown
        mid = (lo + hi) / 2
        if power_mcnemar(mid, n, discordance, alpha) >= POWER:
            hi = mid
        else:
            lo = mid
    return hi


def _smallest_n(ok, guess: int) -> int | None:
    """The smallest n >= 2 with ok(n) (ok is monotone), searched around a close `guess`:
    bracket it within ±10%, widen if needed, then bisect."""
    lo, hi = max(1, int(guess * 0.9)), max(2, int(guess * 1.1) + 1)
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > MAX_ADVICE:
            return None
    while lo > 1 and ok(lo):
        hi, lo = lo, max(1, lo // 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _t_sum(n: int, upper: float, power: float) -> float:
    if n < 2:
        return math.inf
    return float(special.stdtrit(n - 1, upper)) + float(special.stdtrit(n - 1, power))


def n_to_detect(sd: float | None, margin: float, tests: int = 1) -> int | None:
    """Cases for 80% power to detect a change of `margin` at α/tests (two-sided)."""
    if sd is None or sd <= 0 or margin <= 0:
        return None
    upper = 1 - ALPHA / (2 * max(1, tests))
    guess = math.ceil((2.8 * sd / margin) ** 2)
    return _smallest_n(lambda n: _t_sum(n, upper, POWER) * sd / math.sqrt(n) <= margin, guess)


def n_to_show_no_change(sd: float | None, margin: float, delta: float | None = 0.0) -> int | None:
    """Cases for 80% power of TOST (90% CI inside ±margin) when the true change is the one
    measured, `delta`: the power is P(lower test rejects) + P(upper test rejects) - 1, each
    from the t distribution (at Δ = 0 each one-sided test needs power 1 - 0.2/2). Advice made
    for Δ = 0 told a run that measured 4 points of a 5-point margin that ~160 cases would show
    no change. None when |Δ| reaches the margin (no number of cases shows no change then)."""
    shift = abs(delta or 0.0)
    if sd is None or sd <= 0 or margin <= 0 or shift >= margin:
        return None

    def ok(n: int) -> bool:
        se, crit = sd / math.sqrt(n), float(special.stdtrit(n - 1, 1 - ALPHA))
        near = float(special.stdtr(n - 1, (margin - shift) / se - crit))
        far = float(special.stdtr(n - 1, (margin + shift) / se - crit))
        return near + far - 1 >= POWER

    guess = math.ceil((2.93 * sd / (margin - shift)) ** 2)
    return _smallest_n(ok, guess)


def n_noninferior(sd: float | None, margin: float, delta: float | None = 0.0) -> int | None:
    """Cases for 80% power that the 95% CI's lower bound clears -margin when the true change
    is `delta` where it is a drop (the one measured), else 0: advice made for B = A told a run
    that measured -2.8 points over 48 cases that 23 would do. None when the drop reaches the
    margin (no number of cases shows non-inferiority then)."""
    room = margin + min(delta or 0.0, 0.0)
    if sd is None or sd <= 0 or room <= 0:
        return None
    guess = math.ceil((2.8 * sd / room) ** 2)
    return _smallest_n(lambda n: _t_sum(n, 1 - ALPHA / 2, POWER) * sd / math.sqrt(n) <= room, guess)


def n_mcnemar(discordance: float, margin: float, tests: int = 1) -> int | None:
    """Connor's sample size for McNemar's test to detect `margin` at α/tests."""
    if margin <= 0:
        return None
    psi = min(1.0, max(discordance, margin))
    alpha = ALPHA / max(1, tests)
    z_a, z_b = float(special.ndtri(1 - alpha / 2)), float(special.ndtri(POWER))
    spread = max(psi - margin * margin, 1e-12)
    guess = math.ceil((z_a * math.sqrt(psi) + z_b * math.sqrt(spread)) ** 2 / margin**2)  # Connor
    return _smallest_n(lambda n: power_mcnemar(margin, n, psi, alpha) >= POWER, guess)


def rerun_range_quantile(runs: int, level: float = 0.95) -> float:
    """The `level` quantile of the range of `runs` independent standard normals: a pure rerun's
    max - min of means is that many standard errors of one run's mean (2.77 for 2 runs)."""
    if runs < 2:
        return 0.0
    return float(_range_quantile(runs, level))


@lru_cache(maxsize=64)
def _range_quantile(k: int, level: float) -> float:
    # P(range <= w) = k ∫ φ(x) [Φ(x + w) - Φ(x)]^(k-1) dx, solved for w on a fixed grid
    x = np.linspace(-8, 8, 4001)
    dx = x[1] - x[0]
    phi, cdf = normal_pdf(x), normal_cdf(x)

    def prob(w: float) -> float:
        return float(k * np.sum(phi * (normal_cdf(x + w) - cdf) ** (k - 1)) * dx)

    lo, hi = 0.0, 12.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if prob(mid) < level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
