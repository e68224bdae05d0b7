"""The paired estimate's families against independent computations: scipy's t-test, a
numeric constrained maximum likelihood for the score test (Tango's on binary scores, and
over the deltas' values where some cases did not move), the χ² form of McNemar,
brute-force enumeration of cluster sign-flips, scipy's Wilson interval."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import intervals
from ragtui.core.analysis import analyse_metric
from ragtui.core.score_test import TangoTest, TiltedTest
from ragtui.core.verdict import FewMoved, Method, Verdict
from ragtui.format.verdicts import verdict_reason
from tests.core.score_reference import tilted_score_stat, trinomial_score_stat

# ---------------------------------------------------------------- paired t


def test_t_family_from_30_cases_matches_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(size=30)
    b = a + rng.normal(0.1, 0.2, size=30)
    est = intervals.estimate(a, b, rng=rng)
    ref = sps.ttest_rel(b, a)
    assert est.method is Method.T
    assert est.p == pytest.approx(ref.pvalue)
    assert est.ci95 == pytest.approx(tuple(ref.confidence_interval(0.95)))
    assert est.ci90 == pytest.approx(tuple(ref.confidence_interval(0.90)))
    assert est.se == pytest.approx(sps.sem(b - a)) and est.df == 29


def _brute_mid_p(d: list[float], delta0: float) -> float:
    """Mid-p of the sign-flip test of the mean, by enumerating all 2^N sign patterns."""
    x = [v - delta0 for v in d]
    observed = abs(sum(x))
    above = tied = 0
    patterns = list(itertools.product((1, -1), repeat=len(x)))
    for signs in patterns:
        t = abs(sum(s * v for s, v in zip(signs, x, strict=True)))
        above += t > observed + 1e-12
        tied += abs(t - observed) <= 1e-12
    return (above + tied / 2) / len(patterns)


def test_few_cases_take_mid_p_sign_flips_checked_by_enumeration() -> None:
    d = [0.5, 0.5, 0.125, 0.25, 0.5, -0.25, 0.75, 0.25, 0.5, -0.125]  # every case moved
    a = np.full(10, 0.25)
    est = intervals.estimate(a, a + np.array(d), rng=np.random.default_rng(0))
    assert est.method is Method.SIGN_FLIP and est.exact
    assert est.p == pytest.approx(_brute_mid_p(d, 0.0))
    low, high = est.ci95
    for bound, outward in ((low, -1), (high, 1)):
        assert _brute_mid_p(d, bound - outward * 1e-7) >= 0.05
        assert _brute_mid_p(d, bound + outward * 1e-4) < 0.05
    assert (est.p < 0.05) == (not low <= 0 <= high)


def test_hand_worked_mid_p() -> None:
    """d = (1, 1, 0.5): |sum| 2.5 is reached by +++ and --- only (ties, none above): the
    mid-p is (0 + 2/2)/8 = 1/8, the least 3 cases can give, so nothing can be detected."""
    est = intervals.sign_flip_estimate(np.array([1.0, 1.0, 0.5]), np.random.default_rng(0))
    assert est.p == pytest.approx(1 / 8)
    assert not est.can_detect


def test_no_spread_gets_an_exact_bound_and_no_test() -> None:
    """80 deltas all 0: at most a Clopper-Pearson share of cases can differ, by at most 1."""
    a = np.linspace(0, 1, 80) ** 2
    est = intervals.estimate(a, a + 0.0, rng=np.random.default_rng(0))
    assert est.method is Method.NO_SPREAD and not est.spread
    assert est.p is None and est.se is None and est.delta == 0.0
    share = sps.binomtest(0, 80).proportion_ci(0.95, method="exact").high
    assert est.ci95 == pytest.approx((-share, share))
    # all +0.25: the mean lies within [0.25 - 1.25·u, 0.25 + 0.75·u]
    up = intervals.estimate(a * 0.5, a * 0.5 + 0.25, rng=np.random.default_rng(0))
    assert up.ci95 == pytest.approx((0.25 - 1.25 * share, 0.25 + 0.75 * share))


# ---------------------------------------------------------------- score test: Tango / McNemar


def _binary_deltas(fixed: int, broke: int, n: int) -> np.ndarray:
    return np.array([1.0] * fixed + [-1.0] * broke + [0.0] * (n - fixed - broke))


def _tango(fixed: int, broke: int, n: int, level: float = 0.95) -> tuple[float, float]:
    return TangoTest(_binary_deltas(fixed, broke, n)).interval(level)


@pytest.mark.parametrize(
    ("fixed", "broke", "n"), [(7, 1, 21), (5, 2, 40), (3, 0, 10), (12, 9, 200)]
)
def test_tango_interval_bounds_are_where_the_score_test_stops_rejecting(fixed, broke, n) -> None:
    low, high = _tango(fixed, broke, n, 0.95)
    z = sps.norm.ppf(0.975)
    assert trinomial_score_stat(fixed, broke, n, low) == pytest.approx(z, abs=1e-4)
    assert trinomial_score_stat(fixed, broke, n, high) == pytest.approx(-z, abs=1e-4)
    assert low < (fixed - broke) / n < high


def test_tango_with_no_flip_is_not_zero_width() -> None:
    """No discordant pair in 8 cases: the bound is z²/(n + z²), hand-derived from the score
    statistic n·δ/(1 - δ) at the constrained MLE (all mass on the flips needed)."""
    low, high = _tango(0, 0, 8, 0.95)
    z2 = sps.norm.ppf(0.975) ** 2
    assert high == pytest.approx(z2 / (8 + z2), abs=1e-9)
    assert low == pytest.approx(-high, abs=1e-9)


def test_mcnemar_p_is_the_chi_square_form_and_agrees_with_the_interval() -> None:
    for fixed, broke in [(9, 2), (6, 1), (4, 0), (10, 10), (0, 0)]:
        test = TangoTest(_binary_deltas(fixed, broke, 30))
        p = test.p(0.0)
        if fixed + broke:
            chi2 = (fixed - broke) ** 2 / (fixed + broke)
            assert p == pytest.approx(sps.chi2.sf(chi2, 1))
        low, high = test.interval(0.95)
        assert (p < 0.05) == (not low <= 0 <= high), (fixed, broke)


def test_binary_pairs_take_the_score_family() -> None:
    a = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 1], dtype=float)
    b = np.array([1, 0, 1, 1, 1, 1, 1, 1, 1, 1], dtype=float)
    est = intervals.estimate(a, b, rng=np.random.default_rng(0))
    assert est.method is Method.SCORE
    assert est.delta == pytest.approx((4 - 1) / 10)
    assert est.p == pytest.approx(sps.chi2.sf((4 - 1) ** 2 / (4 + 1), 1))  # McNemar's χ²
    assert est.ci95 == pytest.approx(_tango(4, 1, 10))


# ------------------------------------------- score test: cases that did not move (Δ = 0)


@pytest.mark.parametrize(
    "d",
    [
        [-0.5] * 5 + [0.5] + [0.0] * 24,  # 5 cases of 30 broke by half a label, one gained
        [-0.25, -0.25, 0.25, -0.5, -0.25, 0.5] + [0.0] * 14,  # 1-5 scale steps
        [0.3, -0.1, 0.05, 0.2, 0.15, -0.05] + [0.0] * 6,  # continuous scores, 6 cached
    ],
)
def test_score_test_bounds_match_scipy(d: list[float]) -> None:
    deltas = np.array(d)
    a = np.full(deltas.size, 0.5)
    est = intervals.estimate(a, a + deltas, rng=np.random.default_rng(0))
    assert est.method is Method.SCORE
    for level, (low, high) in ((0.95, est.ci95), (0.90, est.ci90)):
        z = sps.norm.ppf(0.5 + level / 2)
        assert tilted_score_stat(deltas, low) == pytest.approx(z, abs=1e-6)
        assert tilted_score_stat(deltas, high) == pytest.approx(-z, abs=1e-6)
    # at 0 it is McNemar's form, the normal sign test: ΣΔ / √ΣΔ²
    z0 = deltas.sum() / math.sqrt((deltas**2).sum())
    assert est.p == pytest.approx(2 * sps.norm.sf(abs(z0)))


def test_clusters_with_unmoved_ones_take_the_score_test_on_totals() -> None:
    """12 documents of 3 questions; 6 documents unmoved: the score test on cluster totals,
    its bounds where scipy's statistic on the totals reaches ±z."""
    d = np.zeros(36)
    d[[0, 1, 4, 9, 10, 11, 14, 15, 16, 20]] = [
        -0.5,
        -0.5,
        -1,
        0.5,
        -0.5,
        -0.5,
        0.25,
        -0.25,
        -0.5,
        0.5,
    ]
    clusters = np.repeat(np.arange(12), 3)
    est = intervals.estimate(
        np.full(36, 0.5), 0.5 + d, rng=np.random.default_rng(0), clusters=clusters
    )
    assert est.method is Method.CLUSTER_SCORE and est.units == 12
    totals = np.bincount(clusters, weights=d)
    sizes = np.full(12, 3.0)
    low, high = est.ci95
    z = sps.norm.ppf(0.975)
    assert tilted_score_stat(totals, low, sizes) == pytest.approx(z, abs=1e-6)
    assert tilted_score_stat(totals, high, sizes) == pytest.approx(-z, abs=1e-6)
    assert est.p == pytest.approx(2 * sps.norm.sf(abs(totals.sum()) / math.sqrt((totals**2).sum())))


def test_clusters_whose_changes_all_cancel_out_are_too_few_not_no_change() -> None:
    """8 documents of 3 questions; in 4 of them one question was fixed and another broken, so
    every document's total is 0. Sign-flips of those totals reject every shift but 0: the CI
    was [-0.0, +0.0] and the verdict "no meaningful change" (found in an audit). No spread
    between clusters: the exact bound on how many clusters could differ, and too few cases."""
    clusters = np.repeat(np.arange(8), 3)
    a = np.array([1.0, 0.0, 1.0] * 8)
    b = a.copy()
    for c in range(4):
        b[3 * c], b[3 * c + 1] = 0.0, 1.0
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0), clusters=clusters)
    assert m.verdict is Verdict.TOO_FEW and m.p is None
    share = sps.binomtest(0, 8).proportion_ci(0.95, method="exact").high  # of 8 clusters
    assert (m.ci_low, m.ci_high) == pytest.approx((-share, share))
    assert verdict_reason(m, 0.05).startswith(
        "cases moved, but within each of the 8 clusters they cancel out"
    )


def test_the_score_test_does_not_depend_on_the_units_of_the_deltas() -> None:
    """The same deltas at scale 1 and 1e-11 (tolerances were absolute: the bounds moved by 1%
    and p and the CI disagreed near .05, found in an audit): the same p and the same bounds
    once scaled back."""
    d = np.array([-2, 4, 5, 3, 0, 2, -1, 4, 2, -1, 0, 0, 4, -2, 5, 2, 0, -2, 5, -2, 0, -1, 0, 0.0])
    at_one = TiltedTest(d)
    for scale in (1e-6, 1e-11):
        scaled = TiltedTest(d * scale)
        assert scaled.p(0.0) == pytest.approx(at_one.p(0.0), rel=1e-9)
        low, high = scaled.interval(0.95)
        assert (low / scale, high / scale) == pytest.approx(at_one.interval(0.95), rel=1e-6)


def test_one_broken_case_in_30_leaves_room_on_both_sides() -> None:
    """29 cases unchanged and one down by half a label: the mean fell 1.7 points, and a 10%
    breakage rate (-5 points) gives one broken case in 30 often (P = 14%), as does no change at
    all. The interval holds both; the t-interval said [-4.5, +1.2] at 90%, inside ±5 points,
    which read as "no meaningful change"; sign-flips said the change could not be positive.
    (One move is too few to test: exact bounds, and the sign test of one move, p = 1.)"""
    a = np.full(30, 0.5)
    b = a.copy()
    b[0] = 0.0
    est = intervals.estimate(a, b, rng=np.random.default_rng(0))
    assert est.ci90[0] < -0.05 and est.ci90[1] > 0.0
    assert est.ci95[0] < -0.05 and est.ci95[1] > 0.0
    assert est.p == pytest.approx(1.0)


# ---------------------------------------------------------------- few units moved


def _cp_upper(k: int, n: int, level: float) -> float:
    """Clopper-Pearson's one-sided upper bound on k of n (scipy's exact binomial interval:
    its two-sided interval at 1 - 2·(1 - level) has this upper end)."""
    return sps.binomtest(k, n).proportion_ci(2 * level - 1, method="exact").high


def test_one_tiny_change_among_39_unmoved_is_too_few_not_no_change() -> None:
    """39 cases unmoved and one by a millionth: the score test's CI was ±0.0, inside any
    margin ("no meaningful change"), where 40 unmoved cases read "too few cases". A single
    move says nothing of how far cases move: up to 11% of cases (one seen) could move up by the
    whole scale, and 7.2% (none seen) down."""
    a = np.full(40, 0.5)
    b = a.copy()
    b[3] += 1e-6
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0))
    assert m.method is Method.FEW_MOVED and m.verdict is Verdict.TOO_FEW
    assert m.few_moved == FewMoved(up=1, down=0, units=40, clustered=False)
    assert (m.ci90_low, m.ci90_high) == pytest.approx(
        (-_cp_upper(0, 40, 0.95), _cp_upper(1, 40, 0.95))
    )
    assert (m.ci_low, m.ci_high) == pytest.approx(
        (-_cp_upper(0, 40, 0.975), _cp_upper(1, 40, 0.975))
    )
    assert m.p == pytest.approx(sps.binomtest(1, 1).pvalue)
    assert m.mde is None and m.n_detect is None  # a single move plans nothing
    assert verdict_reason(m, 0.05).startswith("only 1 of 40 cases moved, too few to test: ")


def test_a_few_moves_among_many_cases_are_still_no_meaningful_change() -> None:
    """2 of 200 cases down by half a label: even if up to 3.1% of cases could drop by the whole
    scale (Clopper-Pearson on 2 of 200), the mean moves less than 5 points."""
    a = np.full(200, 0.5)
    b = a.copy()
    b[[7, 90]] = 0.0
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0))
    assert m.method is Method.FEW_MOVED
    assert (m.ci90_low, m.ci90_high) == pytest.approx(
        (-_cp_upper(2, 200, 0.95), _cp_upper(0, 200, 0.95))
    )
    assert m.verdict is Verdict.NO_CHANGE


def test_four_moves_one_way_are_not_a_change() -> None:
    """4 of 30 cases up by a point: the score test said z = √4, p = .046, "improved"; the exact
    sign test of 4 moves says .125, and no 5 or fewer moves reach .05."""
    a = np.full(30, 0.5)
    b = a.copy()
    b[:4] += 0.01
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0))
    assert m.method is Method.FEW_MOVED and m.p == pytest.approx(sps.binomtest(4, 4).pvalue)
    assert m.verdict is Verdict.TOO_FEW
    assert m.ci_low < 0.0 < m.ci_high  # type: ignore[operator]


def test_six_moved_cases_are_the_tests_own_and_binary_flips_are_tangos() -> None:
    """From 6 moved units an exact test of their signs can reach p < .05: the score test.
    Binary flips each move the whole scale, which Tango's interval already counts."""
    a = np.full(40, 0.5)
    b = a.copy()
    b[:6] += 0.01
    assert intervals.estimate(a, b, rng=np.random.default_rng(0)).method is Method.SCORE
    b[5] = 0.5
    assert intervals.estimate(a, b, rng=np.random.default_rng(0)).method is Method.FEW_MOVED
    flips = np.zeros(40)
    one_flip = intervals.estimate(flips, np.r_[1.0, flips[1:]], rng=np.random.default_rng(0))
    assert one_flip.method is Method.SCORE


def test_five_cases_that_all_moved_a_little_are_too_few() -> None:
    """5 cases, each moved by a tenth of a point or less: the sign-flip CI (mid-p) fitted
    inside ±5 points, but five moves cannot show how far cases move."""
    a = np.full(5, 0.5)
    b = a + np.array([0.001, -0.001, 0.0005, 0.001, -0.0005])
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0))
    assert m.method is Method.FEW_MOVED
    assert m.few_moved == FewMoved(up=3, down=2, units=5, clustered=False)
    assert (m.ci90_low, m.ci90_high) == pytest.approx(
        (-_cp_upper(2, 5, 0.95), _cp_upper(3, 5, 0.95))
    )
    assert m.verdict is Verdict.TOO_FEW
    assert verdict_reason(m, 0.05).startswith("5 of 5 cases moved, too few to test: ")


def test_few_moved_clusters_bound_by_the_largest_clusters() -> None:
    """10 documents (one of 11 questions, nine of 1); one small document moved by 0.2. At
    worst, the share of documents that could move (Clopper-Pearson on 10 units) is made of the
    largest ones: the 11-question document first, then single questions."""
    clusters = np.repeat(np.arange(10), [11] + [1] * 9)
    a = np.full(20, 0.5)
    b = a.copy()
    b[12] += 0.2  # document 2
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0), clusters=clusters)
    assert m.few_moved == FewMoved(up=1, down=0, units=10, clustered=True)

    def share(u: float) -> float:  # of the 20 questions, in the largest u·10 documents
        docs = u * 10
        return (11 + max(0.0, docs - 1)) / 20 if docs >= 1 else 11 * docs / 20

    up, down = _cp_upper(1, 10, 0.975), _cp_upper(0, 10, 0.975)
    assert (m.ci_low, m.ci_high) == pytest.approx((-share(down), share(up)))
    assert m.verdict is Verdict.TOO_FEW
    assert verdict_reason(m, 0.05).startswith("only 1 of 10 cluster totals moved, too few to test")


# ---------------------------------------------------------------- clusters


def _brute_p(d: np.ndarray, clusters: np.ndarray, delta0: float) -> float:
    ids = list(dict.fromkeys(clusters.tolist()))
    totals = [float(sum(d[clusters == c] - delta0)) for c in ids]
    observed = abs(sum(totals))
    hits = 0
    patterns = list(itertools.product((1, -1), repeat=len(ids)))
    for signs in patterns:
        hits += abs(sum(s * t for s, t in zip(signs, totals, strict=True))) >= observed - 1e-12
    return hits / len(patterns)


def _clustered(seed: int, g: int, per: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    doc = rng.normal(0, 0.2, g)
    clusters = np.repeat([f"doc-{i}" for i in range(g)], per)
    a = np.clip(0.5 + rng.normal(0, 0.1, g * per), 0, 1)
    b = np.clip(a + 0.05 + np.repeat(doc, per) + rng.normal(0, 0.1, g * per), 0, 1)
    return a, b, clusters


def test_cluster_sign_flip_p_and_interval_by_brute_force() -> None:
    a, b, clusters = _clustered(3, 9, 3)
    est = intervals.estimate(a, b, rng=np.random.default_rng(0), clusters=clusters)
    d = b - a
    assert est.method is Method.CLUSTER_SIGN_FLIP and est.exact and est.units == 9
    assert est.p == pytest.approx(_brute_p(d, clusters, 0.0))
    low, high = est.ci95
    # just inside each bound the test does not reject at 5%; just outside it does
    for bound, outward in ((low, -1), (high, 1)):
        assert _brute_p(d, clusters, bound - outward * 1e-7) >= 0.05
        assert _brute_p(d, clusters, bound + outward * 1e-4) < 0.05
    assert (est.p < 0.05) == (not low <= 0 <= high)
    # cluster-robust SE: √(G/(G-1)·Σ(S_c - n_c·Δ)²)/N
    totals = np.array([d[clusters == c].sum() for c in dict.fromkeys(clusters.tolist())])
    se = math.sqrt(9 / 8 * ((totals - 3 * d.mean()) ** 2).sum()) / d.size
    assert est.se == pytest.approx(se)


def test_few_clusters_cannot_decide() -> None:
    """5 clusters, all moved: 2/2^5 = .0625, no test by cluster reaches .05; the exact bounds
    of a few moves (the share of 5 clusters that could move each way: most of them)."""
    a, b, clusters = _clustered(4, 5, 4)
    m = analyse_metric("m", a, b, rng=np.random.default_rng(0), clusters=clusters)
    assert m.method is Method.FEW_MOVED and not m.can_detect
    assert m.verdict is Verdict.TOO_FEW and m.p is not None and m.p >= 0.0625
    assert m.ci_low < -0.5 and m.ci_high > 0.5  # type: ignore[operator]


def test_many_clusters_use_random_sign_flips_seeded() -> None:
    a, b, clusters = _clustered(5, 40, 2)
    one = intervals.estimate(a, b, rng=np.random.default_rng(1), clusters=clusters)
    two = intervals.estimate(a, b, rng=np.random.default_rng(1), clusters=clusters)
    assert one.method is Method.CLUSTER_SIGN_FLIP and not one.exact
    assert one.p == two.p and one.ci95 == two.ci95
    # 10,000 random patterns estimate the exact p within Monte Carlo error (t-test as guide)
    t = sps.ttest_1samp([(b - a)[clusters == c].sum() for c in dict.fromkeys(clusters)], 0)
    assert one.p == pytest.approx(t.pvalue, abs=0.02)


def test_singleton_clusters_are_plain_cases() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=40), rng.uniform(size=40)
    est = intervals.estimate(a, b, rng=rng, clusters=np.array([f"c{i}" for i in range(40)]))
    assert est.method is Method.T


# ---------------------------------------------------------------- one run's mean


@pytest.mark.parametrize(("k", "n"), [(9, 10), (10, 10), (0, 7), (31, 48)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ref = sps.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert intervals.wilson_interval(k, n) == pytest.approx((ref.low, ref.high))


def test_mean_interval_stays_inside_0_1() -> None:
    nine_of_ten = np.array([1.0] * 9 + [0.0])
    low, high = intervals.mean_interval(nine_of_ten)
    assert 0 <= low < 0.9 < high <= 1.0  # the t-interval would give [67.4, 112.6] points
    all_pass = np.ones(10)
    low, high = intervals.mean_interval(all_pass)
    assert high == pytest.approx(1.0) and low < 0.8  # never zero-width
    labels = np.array([1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0])
    low, high = intervals.mean_interval(labels)
    assert low >= 0 and high <= 1
