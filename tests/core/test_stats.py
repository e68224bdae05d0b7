"""ragtui.core.stats against scipy, hand-worked examples and exact enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import stats


def test_rng_depends_on_metric_name_not_order() -> None:
    x = stats.rng_for(5, "a").random(3)
    assert np.array_equal(x, stats.rng_for(5, "a").random(3))
    assert not np.array_equal(x, stats.rng_for(5, "b").random(3))


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


def test_chance_range_is_the_95th_percentile_of_pure_reruns_spread() -> None:
    """k pure reruns of N cases: the max - min of their means stays under the chance range
    95% of the time (simulated independently with per-case noise)."""
    gen = np.random.default_rng(8)
    n, k, sd = 40, 3, 0.3
    quality = gen.uniform(0.2, 0.8, n)
    runs = quality + gen.normal(0, sd, size=(4000, k, n))
    ranges = np.ptp(runs.mean(axis=2), axis=1)
    nf = stats.noise_floor(runs[0])
    assert nf is not None
    expected = stats.rerun_range_quantile(k) * sd / math.sqrt(n)  # with the true σ
    assert float(np.mean(ranges <= expected)) == pytest.approx(0.95, abs=0.012)
    # two runs: the studentized range quantile is 1.96·√2, the noise floor's own factor
    assert stats.rerun_range_quantile(2) == pytest.approx(1.96 * math.sqrt(2), abs=0.002)
    assert stats.rerun_range_quantile(3) == pytest.approx(3.314, abs=0.002)  # tables: 3.31


def test_noise_figures_are_none_when_they_cannot_be_computed() -> None:
    assert stats.noise_floor([[0.5, 1.0]]) is None  # one run: no rerun
    assert stats.icc1([[1.0, 1.0], [1.0, 1.0]]) is None  # no variance at all


def test_drift_p_matches_ttest_rel_and_identity() -> None:
    rng = np.random.default_rng(9)
    a = rng.uniform(size=40)
    a2 = a + rng.normal(0.05, 0.1, size=40)
    assert stats.drift_p(a, a2) == pytest.approx(sps.ttest_rel(a2, a).pvalue)
    assert stats.identical(a, a.copy())
    assert not stats.identical(a, a2)


def test_five_point_rule_is_decided_on_the_points_shown() -> None:
    """One function decides "< 5": exactly 5.0 points is not within it, nor is 4.96 (shown
    as 5.0); 4.94 is. The noise check and the comparison both call it."""
    assert stats.rule_holds(0.0494, 0.05)
    assert not stats.rule_holds(0.05, 0.05)
    assert not stats.rule_holds(0.05 + 1e-12, 0.05)
    assert not stats.rule_holds(0.05 - 1e-12, 0.05)  # float dust around 5.0
    assert not stats.rule_holds(0.0496, 0.05)
    assert stats.rule_holds(0.029, 0.03) and not stats.rule_holds(0.03, 0.03)


# ---------------------------------------------------------------- worst 10%


@pytest.mark.parametrize(
    ("n", "count"), [(1, 1), (9, 1), (10, 1), (11, 2), (20, 2), (25, 3), (30, 3), (31, 4)]
)
def test_worst_tenth_rounds_up(n: int, count: int) -> None:
    assert stats.bottom_count(n) == count
    assert len(stats.bottom_indices(np.arange(n, dtype=float))) == count


def test_bottom_indices_take_the_worst_tenth() -> None:
    v = np.array([0.9, 0.1, 0.5, 0.0, 0.7, 0.8, 0.3, 0.6, 0.95, 1.0, 0.2])
    assert list(stats.bottom_indices(v)) == [3, 1]  # ceil(1.1) = 2 cases
    assert list(stats.bottom_indices(np.array([]))) == []
