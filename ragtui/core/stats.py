"""Statistics for paired comparisons of eval runs (DESIGN.md §3). Pure functions on arrays.

Resampling is done over the *distinct values* of the data rather than over case indices:
drawing N cases with replacement is the same as drawing multinomial counts over the distinct
values, and flipping signs of N deltas is the same as drawing, per distinct |d|, a
Binomial(count, 1/2) number of plus signs. Eval metrics take few distinct values (labels, 1-5
scales), so this is exact and costs O(B·K) instead of O(B·N). Only when values are many and N
is large do we bin them (see `_atoms`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

DEFAULT_SEED = 20261201
BOOTSTRAP_RESAMPLES = 10_000
EXACT_SIGN_FLIP_MAX_N = 20
T_INTERVAL_MAX_N = 29  # N < 30: t-interval; N >= 30: bootstrap
MDE_FACTOR = 2.80  # z(0.975) + z(0.80): 80 % power at a two-sided 5 % level

# Distinct-value resampling stays exact up to this many atoms; above it, index resampling
# while N·B is small, else binning with a within-bin normal term (variance preserved).
_MAX_ATOMS = 64
_MAX_INDEX_WORK = 20_000_000
_BINS = 48
_CHUNK = 1000


Array = np.ndarray


def _as_array(x: Sequence[float] | Array) -> Array:
    return np.asarray(x, dtype=float)


# ---------------------------------------------------------------- paired delta


@dataclass(frozen=True)
class PairedDelta:
    n: int
    delta: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    method: str  # "t" or "bootstrap" or "none"


def mean_se(d: Sequence[float] | Array) -> tuple[float | None, float | None]:
    d = _as_array(d)
    if d.size == 0:
        return None, None
    if d.size < 2:
        return float(d.mean()), None
    return float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))


def t_interval(d: Sequence[float] | Array, level: float = 0.95) -> tuple[float, float] | None:
    d = _as_array(d)
    mean, se = mean_se(d)
    if mean is None or se is None:
        return None
    half = float(sps.t.ppf(0.5 + level / 2, d.size - 1)) * se
    return mean - half, mean + half


def _atoms(x: Array) -> tuple[Array, Array, Array | None]:
    """(values, counts, within-variance or None): the data as weighted atoms.

    Exact distinct values when there are few; otherwise equal-width bins carrying their mean,
    count and within-bin variance, so a resample keeps the full variance of the data.
    """
    values, counts = np.unique(x, return_counts=True)
    if values.size <= _MAX_ATOMS:
        return values, counts, None
    edges = np.linspace(values[0], values[-1], _BINS + 1)
    which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, _BINS - 1)
    n = np.bincount(which, minlength=_BINS).astype(float)
    s = np.bincount(which, weights=x, minlength=_BINS)
    ss = np.bincount(which, weights=x * x, minlength=_BINS)
    keep = n > 0
    n, s, ss = n[keep], s[keep], ss[keep]
    mu = s / n
    var = np.maximum(ss / n - mu * mu, 0.0)
    return mu, n.astype(np.int64), var


def bootstrap_means(x: Sequence[float] | Array, rng: np.random.Generator, b: int) -> Array:
    """B means of N cases drawn with replacement from x (a paired bootstrap when x = b - a)."""
    x = _as_array(x)
    n = x.size
    values, counts, within = _atoms(x)
    if within is None:
        draws = rng.multinomial(n, counts / n, size=b)
        return draws @ values / n
    if n * b <= _MAX_INDEX_WORK:
        out = np.empty(b)
        for start in range(0, b, _CHUNK):
            stop = min(b, start + _CHUNK)
            out[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        return out
    draws = rng.multinomial(n, counts / n, size=b)
    # Sum of m draws from a bin ~ m·mean + sqrt(m)·sd·Z (CLT within a narrow bin).
    noise = rng.standard_normal(draws.shape) * np.sqrt(draws * within)
    return (draws @ values + noise.sum(axis=1)) / n


def bootstrap_interval(
    x: Sequence[float] | Array,
    rng: np.random.Generator,
    b: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float] | None:
    x = _as_array(x)
    if x.size < 2:
        return None
    means = bootstrap_means(x, rng, b)
    lo, hi = np.quantile(means, [0.5 - level / 2, 0.5 + level / 2])
    return float(lo), float(hi)


def paired_delta(
    d: Sequence[float] | Array, rng: np.random.Generator, b: int = BOOTSTRAP_RESAMPLES
) -> PairedDelta:
    """Δ, SE and 95 % CI: t-interval for N < 30, paired bootstrap (B resamples) for N >= 30."""
    d = _as_array(d)
    mean, se = mean_se(d)
    if mean is None or se is None:
        return PairedDelta(d.size, mean, se, None, None, "none")
    if d.size <= T_INTERVAL_MAX_N:
        ci = t_interval(d)
        method = "t"
    else:
        ci = bootstrap_interval(d, rng, b)
        method = "bootstrap"
    assert ci is not None
    return PairedDelta(d.size, mean, se, ci[0], ci[1], method)


# ---------------------------------------------------------------- sign-flip test


def _tolerance(d: Array) -> float:
    return 1e-9 * max(1.0, float(np.abs(d).sum()))


def sign_flip_exact(d: Sequence[float] | Array) -> float | None:
    """Two-sided p of the mean under random sign flips, by enumerating all 2^N sign patterns."""
    d = _as_array(d)
    if d.size == 0:
        return None
    if d.size > 24:
        raise ValueError("exact enumeration is limited to N <= 24")
    sums = np.zeros(1)
    for v in d:  # all 2^N signed sums, built by doubling
        sums = np.concatenate((sums + v, sums - v))
    observed = abs(float(d.sum()))
    return float(np.mean(np.abs(sums) >= observed - _tolerance(d)))


def sign_flip_monte_carlo(
    d: Sequence[float] | Array, rng: np.random.Generator, b: int = BOOTSTRAP_RESAMPLES
) -> float | None:
    """Seeded Monte Carlo sign-flip p, (1 + hits) / (1 + B), grouped over distinct |d|."""
    d = _as_array(d)
    if d.size == 0:
        return None
    mags, counts, within = _atoms(np.abs(d))
    plus = rng.binomial(np.broadcast_to(counts, (b, counts.size)), 0.5)
    sums = (2 * plus - counts) @ mags
    if within is not None:
        # Within a bin Σ s_i (v_i - mean) has variance Σ (v_i - mean)² under random signs.
        sums = sums + rng.standard_normal(b) * math.sqrt(float((counts * within).sum()))
    observed = abs(float(d.sum()))
    hits = int(np.count_nonzero(np.abs(sums) >= observed - _tolerance(d)))
    return (1 + hits) / (1 + b)


def sign_flip_p(
    d: Sequence[float] | Array, rng: np.random.Generator, b: int = BOOTSTRAP_RESAMPLES
) -> float | None:
    d = _as_array(d)
    if d.size <= EXACT_SIGN_FLIP_MAX_N:
        return sign_flip_exact(d)
    return sign_flip_monte_carlo(d, rng, b)


# ---------------------------------------------------------------- binary metrics


def is_binary(*arrays: Array) -> bool:
    return all(a.size > 0 and bool(np.all((a == 0.0) | (a == 1.0))) for a in arrays)


@dataclass(frozen=True)
class McNemar:
    fixed: int  # A failed (0), B passed (1)
    broke: int  # A passed, B failed
    p: float


def mcnemar(a: Sequence[float] | Array, b: Sequence[float] | Array) -> McNemar:
    """Exact McNemar: the discordant pairs under H0 split Binomial(fixed + broke, 1/2)."""
    a, b = _as_array(a), _as_array(b)
    fixed = int(np.count_nonzero((a == 0) & (b == 1)))
    broke = int(np.count_nonzero((a == 1) & (b == 0)))
    n = fixed + broke
    if n == 0:
        return McNemar(0, 0, 1.0)
    p = min(1.0, 2.0 * float(sps.binom.cdf(min(fixed, broke), n, 0.5)))
    return McNemar(fixed, broke, p)


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
    noise_floor: float  # 95 % band of the mean difference between two reruns
    rerun_delta: float  # largest difference between two reruns' means
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
    return float(2 * sps.t.sf(abs(t), e.size - 1))


# ---------------------------------------------------------------- power


def mde(se: float | None) -> float | None:
    return None if se is None else MDE_FACTOR * se


def power(margin: float, se: float | None, alpha: float = 0.05) -> float | None:
    """Power of a two-sided level-alpha test to detect a true shift of `margin`."""
    if se is None:
        return None
    if se == 0.0:
        return 1.0
    z = float(sps.norm.ppf(1 - alpha / 2))
    r = margin / se
    return float(sps.norm.cdf(r - z) + sps.norm.cdf(-r - z))


def cases_needed(sd: float, margin: float) -> int | None:
    """N for which the MDE (2.80·sd/√N) equals the margin."""
    if margin <= 0:
        return None
    return max(2, math.ceil((MDE_FACTOR * sd / margin) ** 2))


# ---------------------------------------------------------------- agreement


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float | None:
    """Cohen's κ of two label sequences: (p_o - p_e) / (1 - p_e)."""
    if len(a) != len(b) or len(a) == 0:
        return None
    labels = sorted({*a, *b}, key=str)
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    n = table.sum()
    p_o = np.trace(table) / n
    p_e = float((table.sum(axis=1) @ table.sum(axis=0)) / (n * n))
    if p_e >= 1.0:
        return None  # both raters used one single label: κ undefined
    return float((p_o - p_e) / (1 - p_e))


def spearman(a: Sequence[float] | Array, b: Sequence[float] | Array) -> float | None:
    """Spearman ρ: Pearson correlation of mid-ranks. None when either side is constant."""
    a, b = _as_array(a), _as_array(b)
    if a.size < 2 or a.size != b.size:
        return None
    ra, rb = sps.rankdata(a), sps.rankdata(b)
    if np.ptp(ra) == 0 or np.ptp(rb) == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


# ---------------------------------------------------------------- bottom quantile


def bottom_indices(values: Sequence[float] | Array, share: float = 0.10) -> Array:
    """Indices of the worst `share` of cases (at least one), lowest first, ties stable."""
    v = _as_array(values)
    if v.size == 0:
        return np.zeros(0, dtype=np.int64)
    k = max(1, math.ceil(share * v.size))
    return np.argsort(v, kind="stable")[:k]


def rng_for(seed: int, name: str) -> np.random.Generator:
    """One generator per (seed, metric), so a metric's figures do not depend on the others."""
    tag = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng([seed, tag])
