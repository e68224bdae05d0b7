"""ragtui.core.stats against scipy, hand-worked examples and exact enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import stats


def test_mean_se_matches_scipy_sem() -> None:
    d = np.array([0.5, -0.25, 0.0, 1.0, 0.25, -0.5, 0.75])
    mean, se = stats.mean_se(d)
    assert mean == pytest.approx(d.mean())
    assert se == pytest.approx(sps.sem(d))


def test_t_interval_matches_ttest_rel() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(size=12)
    b = a + rng.normal(0.1, 0.2, size=12)
    ci = stats.t_interval(b - a)
    ref = sps.ttest_rel(b, a).confidence_interval(0.95)
    assert ci == pytest.approx((ref.low, ref.high))
    pd = stats.paired_delta(b - a, np.random.default_rng(0))
    assert pd.method == "t"
    assert (pd.ci_low, pd.ci_high) == pytest.approx((ref.low, ref.high))


def test_bootstrap_for_30_cases_or_more_is_seeded_and_close_to_t() -> None:
    d = np.random.default_rng(3).normal(0.05, 0.3, size=400)
    one = stats.paired_delta(d, stats.rng_for(20261201, "faithfulness"))
    two = stats.paired_delta(d, stats.rng_for(20261201, "faithfulness"))
    other = stats.paired_delta(d, stats.rng_for(1, "faithfulness"))
    assert one.method == "bootstrap"
    assert (one.ci_low, one.ci_high) == (two.ci_low, two.ci_high)
    assert (one.ci_low, one.ci_high) != (other.ci_low, other.ci_high)
    ref = sps.ttest_rel(d, np.zeros_like(d)).confidence_interval(0.95)
    assert one.ci_low == pytest.approx(ref.low, abs=0.004)
    assert one.ci_high == pytest.approx(ref.high, abs=0.004)


def test_rng_depends_on_metric_name_not_order() -> None:
    x = stats.rng_for(5, "a").random(3)
    assert np.array_equal(x, stats.rng_for(5, "a").random(3))
    assert not np.array_equal(x, stats.rng_for(5, "b").random(3))


# ---------------------------------------------------------------- sign flip


def _enumerate_p(d: list[float]) -> float:
    observed = abs(sum(d))
    hits = 0
    total = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        total += 1
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-12:
            hits += 1
    return hits / total


def test_sign_flip_exact_equals_brute_force_enumeration() -> None:
    d = [0.5, 1.0, -0.25, 0.75, 0.5, 0.0, 1.0, -0.5, 0.25]
    assert stats.sign_flip_exact(d) == pytest.approx(_enumerate_p(d))
    assert stats.sign_flip_p(d, np.random.default_rng(0)) == pytest.approx(_enumerate_p(d))


def test_sign_flip_exact_hand_worked() -> None:
    # d = (1, 1, 1): only +++ and --- reach |sum| = 3 -> 2/8.
    assert stats.sign_flip_exact([1.0, 1.0, 1.0]) == pytest.approx(0.25)
    assert stats.sign_flip_exact([0.0, 0.0]) == 1.0


def test_sign_flip_exact_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(11)
    a = rng.uniform(size=14)
    b = a + rng.normal(0.15, 0.3, size=14)
    ref = sps.permutation_test(
        (b, a),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert stats.sign_flip_exact(b - a) == pytest.approx(ref.pvalue)


def test_grouped_monte_carlo_agrees_with_exact() -> None:
    d = np.array([0.5, 1.0, 0.5, 0.0, -0.5, 1.0, 0.5, 0.5, -1.0, 0.5] * 2)
    exact = stats.sign_flip_exact(d)
    mc = stats.sign_flip_monte_carlo(d, np.random.default_rng(1), b=40_000)
    assert mc == pytest.approx(exact, abs=0.01)


def test_binned_monte_carlo_agrees_with_naive_sign_flips() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.02, 0.3, size=3000)  # ~3000 distinct values: the binned path
    assert np.unique(np.abs(d)).size > stats._MAX_ATOMS
    signs = rng.choice((-1.0, 1.0), size=(4000, d.size))
    naive = float(np.mean(np.abs(signs @ d) >= abs(d.sum())))
    binned = stats.sign_flip_monte_carlo(d, np.random.default_rng(3), b=20_000)
    assert binned == pytest.approx(naive, abs=0.03)


# ---------------------------------------------------------------- resampling shortcut


def test_multinomial_shortcut_matches_index_resampling_in_distribution() -> None:
    rng = np.random.default_rng(5)
    x = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], p=[0.1, 0.15, 0.4, 0.2, 0.15], size=60)
    shortcut = stats.bootstrap_means(x, np.random.default_rng(6), 20_000)
    naive = x[np.random.default_rng(7).integers(0, x.size, size=(20_000, x.size))].mean(axis=1)
    assert sps.ks_2samp(shortcut, naive).pvalue > 0.001
    qs = [0.025, 0.5, 0.975]
    assert np.quantile(shortcut, qs) == pytest.approx(np.quantile(naive, qs), abs=0.02)
    assert shortcut.std() == pytest.approx(naive.std(), rel=0.03)


def test_binned_bootstrap_matches_index_resampling_in_distribution() -> None:
    rng = np.random.default_rng(8)
    x = rng.beta(2, 5, size=3000) - rng.beta(2, 4, size=3000)  # continuous, skewed
    assert x.size * 10_000 > stats._MAX_INDEX_WORK  # takes the binned path
    binned = stats.bootstrap_means(x, np.random.default_rng(9), 10_000)
    naive = x[np.random.default_rng(10).integers(0, x.size, size=(3000, x.size))].mean(axis=1)
    assert sps.ks_2samp(binned, naive).pvalue > 0.001
    assert binned.std() == pytest.approx(naive.std(), rel=0.05)


def test_index_resampling_path_for_many_values_and_small_n() -> None:
    x = np.random.default_rng(12).normal(size=500)
    means = stats.bootstrap_means(x, np.random.default_rng(13), 2000)
    assert means.std() == pytest.approx(x.std() / math.sqrt(x.size), rel=0.08)


# ---------------------------------------------------------------- McNemar, Holm


def test_mcnemar_counts_and_exact_binomial_p() -> None:
    a = np.array([1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0], dtype=float)
    b = np.array([1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1], dtype=float)
    result = stats.mcnemar(a, b)
    assert (result.fixed, result.broke) == (6, 1)
    assert result.p == pytest.approx(sps.binomtest(1, 7, 0.5).pvalue)
    assert stats.mcnemar(a, a).p == 1.0


def test_is_binary() -> None:
    assert stats.is_binary(np.array([0.0, 1.0]), np.array([1.0]))
    assert not stats.is_binary(np.array([0.0, 0.5]))
    assert not stats.is_binary(np.array([]))


def test_holm_hand_computed() -> None:
    # sorted: .005*4 = .02, .01*3 = .03, .03*2 = .06, .04*1 = .04 -> running max .06
    assert stats.holm([0.01, 0.04, None, 0.03, 0.005]) == pytest.approx(
        [0.03, 0.06, None, 0.06, 0.02]
    )
    assert stats.holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []


# ---------------------------------------------------------------- noise from reruns


def test_noise_floor_and_icc_hand_worked() -> None:
    a = [0.0, 0.5, 1.0, 1.0]
    a2 = [0.0, 1.0, 1.0, 1.0]  # e = (0, .5, 0, 0): Σe² = .25, N = 4
    nf = stats.noise_floor([a, a2])
    assert nf is not None
    assert nf.sigma2_within == pytest.approx(0.25 / 8)
    assert nf.noise_floor == pytest.approx(1.96 * math.sqrt(0.25) / 4)
    assert nf.rerun_delta == pytest.approx(0.125)
    # case means (0, .75, 1, 1): MSB = 2·0.671875/3, MSW = 0.125/4 -> ICC = 20/23
    assert nf.icc == pytest.approx(20 / 23)


def test_noise_floor_with_three_reruns_uses_pooled_within_variance() -> None:
    x = np.random.default_rng(4).uniform(size=(3, 50))
    nf = stats.noise_floor(x)
    assert nf is not None
    pooled = float(np.mean(np.var(x, axis=0, ddof=1)))
    assert nf.sigma2_within == pytest.approx(pooled)
    assert nf.noise_floor == pytest.approx(1.96 * math.sqrt(2 * pooled / 50))
    assert nf.rerun_delta == pytest.approx(np.ptp(x.mean(axis=1)))


def test_noise_figures_are_none_when_they_cannot_be_computed() -> None:
    assert stats.noise_floor([[0.5, 1.0]]) is None  # one run: no rerun
    assert stats.icc1([[1.0, 1.0], [1.0, 1.0]]) is None  # no variance at all
    assert stats.mean_se([]) == (None, None)
    pd = stats.paired_delta([0.5], np.random.default_rng(0))
    assert pd.se is None and pd.ci_low is None
    assert stats.sign_flip_p([], np.random.default_rng(0)) is None
    assert stats.mde(None) is None and stats.power(0.05, None) is None


def test_drift_p_matches_ttest_rel_and_identity() -> None:
    rng = np.random.default_rng(9)
    a = rng.uniform(size=40)
    a2 = a + rng.normal(0.05, 0.1, size=40)
    assert stats.drift_p(a, a2) == pytest.approx(sps.ttest_rel(a2, a).pvalue)
    assert stats.identical(a, a.copy())
    assert not stats.identical(a, a2)


# ---------------------------------------------------------------- MDE, power


def test_mde_and_power() -> None:
    se = 0.02
    assert stats.mde(se) == pytest.approx(0.056)
    assert stats.power(stats.mde(se), se) == pytest.approx(0.80, abs=0.005)
    assert stats.power(0.0, se) == pytest.approx(0.05)
    # N at which the MDE equals the margin: (2.80 * sd / margin)^2
    assert stats.cases_needed(0.5, 0.05) == math.ceil(28.0**2)


# ---------------------------------------------------------------- agreement


def test_cohen_kappa_hand_worked() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5 -> κ = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert stats.cohen_kappa(a, b) == pytest.approx(0.4)
    assert stats.cohen_kappa(a, a) == pytest.approx(1.0)
    assert stats.cohen_kappa(["x"] * 3, ["x"] * 3) is None


def test_spearman_matches_scipy_with_ties() -> None:
    x = np.array([0.0, 0.5, 0.5, 1.0, 1.0, 0.25, 0.75, 0.0])
    y = np.array([0.25, 0.5, 0.75, 1.0, 0.75, 0.0, 1.0, 0.5])
    assert stats.spearman(x, y) == pytest.approx(sps.spearmanr(x, y).statistic)
    assert stats.spearman(x, np.ones_like(x)) is None


def test_bottom_indices_take_the_worst_tenth() -> None:
    v = np.array([0.9, 0.1, 0.5, 0.0, 0.7, 0.8, 0.3, 0.6, 0.95, 1.0, 0.2])
    assert list(stats.bottom_indices(v)) == [3, 1]  # ceil(1.1) = 2 cases
    assert list(stats.bottom_indices(np.array([]))) == []
