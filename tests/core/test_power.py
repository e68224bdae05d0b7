"""MDE, power and the cases-needed advice, checked against t quantiles and vectorised
simulation of the very tests the verdict uses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import intervals, power


def test_mde_uses_the_t_quantiles_of_this_n() -> None:
    # (t.975 + t.80) with 7 degrees of freedom is 3.26, not the large-N 2.80
    assert power.mde(0.1, 7) == pytest.approx(0.326, abs=0.001)
    assert power.mde(0.1, 10_000) == pytest.approx(0.280, abs=0.001)
    assert power.mde(None, 7) is None and power.mde(0.1, 0) is None


def _t_rejections(n: int, sd: float, effect: float, reps: int, seed: int) -> np.ndarray:
    d = np.random.default_rng(seed).normal(effect, sd, size=(reps, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    return np.abs(t) > sps.t.ppf(0.975, n - 1)


def test_t_power_matches_simulation() -> None:
    n, sd, effect = 20, 0.3, 0.15
    simulated = _t_rejections(n, sd, effect, 20_000, 1).mean()
    assert power.power_t(effect, sd / math.sqrt(n), n - 1) == pytest.approx(simulated, abs=0.012)


def test_cases_to_detect_give_80_percent_power() -> None:
    sd, margin = 0.25, 0.05
    n = power.n_to_detect(sd, margin)
    assert n is not None
    assert power.mde(sd / math.sqrt(n), n - 1) <= margin < power.mde(sd / math.sqrt(n - 1), n - 2)
    simulated = _t_rejections(n, sd, margin, 8000, 2).mean()
    assert simulated == pytest.approx(0.80, abs=0.02)


@pytest.mark.parametrize("delta", [0.0, 0.02, -0.035])
def test_cases_to_show_no_change_assume_the_change_measured(delta: float) -> None:
    """A run measured Δ: the advice is for TOST to succeed 80% of the time when Δ is the
    truth (simulated here with scipy's t quantiles), which takes far more cases as Δ nears
    the margin; at or past the margin no number of cases will do."""
    sd, margin = 0.2, 0.05
    n = power.n_to_show_no_change(sd, margin, delta)
    assert n is not None
    d = np.random.default_rng(6).normal(delta, sd, size=(6000, n))
    mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
    half = sps.t.ppf(0.95, n - 1) * se
    inside = (mean - half > -margin) & (mean + half < margin)
    assert inside.mean() == pytest.approx(0.80, abs=0.02)
    if delta:
        assert n > 1.5 * power.n_to_show_no_change(sd, margin)
    assert power.n_to_show_no_change(sd, margin, 0.05) is None
    assert power.n_to_show_no_change(sd, margin, -0.06) is None


def test_holm_over_four_metrics_asks_about_1_42_times_the_cases() -> None:
    one, four = power.n_to_detect(0.3, 0.05), power.n_to_detect(0.3, 0.05, tests=4)
    assert four / one == pytest.approx(1.42, abs=0.03)


def test_cases_to_show_no_change_give_80_percent_tost_power() -> None:
    sd, margin = 0.25, 0.05
    n = power.n_to_show_no_change(sd, margin)
    assert n is not None
    d = np.random.default_rng(3).normal(0, sd, size=(8000, n))
    mean, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
    half = sps.t.ppf(0.95, n - 1) * se
    inside = (mean - half > -margin) & (mean + half < margin)
    assert inside.mean() == pytest.approx(0.80, abs=0.02)


def test_noninferiority_cases_give_80_percent_power() -> None:
    sd, margin = 0.2, 0.05
    n = power.n_noninferior(sd, margin)
    assert n is not None
    d = np.random.default_rng(4).normal(0, sd, size=(8000, n))
    low = d.mean(axis=1) - sps.t.ppf(0.975, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
    assert (low > -margin).mean() == pytest.approx(0.80, abs=0.02)


def test_mcnemar_power_matches_simulation_of_the_score_test() -> None:
    n, fixed_rate, broke_rate = 100, 0.15, 0.05
    counts = np.random.default_rng(5).multinomial(
        n, [fixed_rate, broke_rate, 1 - fixed_rate - broke_rate], size=20_000
    )
    f, b = counts[:, 0], counts[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(f + b > 0, (f - b) / np.sqrt(f + b), 0.0)
    simulated = (np.abs(z) > 1.959964).mean()
    predicted = power.power_mcnemar(0.10, n, 0.20)
    assert predicted == pytest.approx(simulated, abs=0.02)
    # and the closed form agrees with the verdict's own p at one draw
    a = np.array([0.0] * 15 + [1.0] * 5 + [1.0] * 80)
    b = np.array([1.0] * 15 + [0.0] * 5 + [1.0] * 80)
    verdict_p = intervals.estimate(a, b, rng=np.random.default_rng(0)).p
    assert verdict_p == pytest.approx(2 * sps.norm.sf(10 / math.sqrt(20)))


def test_noninferiority_cases_assume_the_drop_measured() -> None:
    """A candidate measured 2.8 points down: the advice is for that drop (the smallest n whose
    (t.975 + t.80)·sd/√n fits in the 2.2 points left to the margin, by brute force here), not
    for B = A; a rise is advised as B = A; a drop beyond the margin has no number of cases."""
    sd, margin, drop = 0.0856, 0.05, -0.028
    room = margin + drop
    brute = next(
        n
        for n in range(2, 10_000)
        if (sps.t.ppf(0.975, n - 1) + sps.t.ppf(0.8, n - 1)) * sd / math.sqrt(n) <= room
    )
    assert power.n_noninferior(sd, margin, drop) == brute
    assert brute > 100 > power.n_noninferior(sd, margin) == power.n_noninferior(sd, margin, 0.03)
    assert power.n_noninferior(sd, margin, -0.06) is None


def _mcnemar_power_by_hand(effect: float, n: int, discordance: float) -> float:
    """Exact power of McNemar's score test (reject when |fixed - broke| > z·√flips), summed
    over the flips m ~ Bin(n, ψ) and the fixed ones f ~ Bin(m, (ψ + effect) / 2ψ)."""
    psi = max(discordance, effect)
    z = sps.norm.ppf(0.975)
    total = 0.0
    for m in range(1, n + 1):
        f = np.arange(m + 1)
        reject = np.abs(2 * f - m) > z * math.sqrt(m)
        share = sps.binom.pmf(f, m, (psi + effect) / (2 * psi))
        total += sps.binom.pmf(m, n, psi) * share[reject].sum()
    return total


def _yes_no(n: int, fixed: int, broke: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.zeros(n), np.zeros(n)
    a[: n // 2] = b[: n // 2] = 1
    b[n // 2 : n // 2 + fixed] = 1  # fixed: 0 -> 1
    b[:broke] = 0  # broke: 1 -> 0
    return a, b


@pytest.mark.parametrize(("n", "fixed", "broke"), [(40, 4, 4), (20, 2, 2), (40, 8, 2)])
def test_a_yes_no_mde_is_the_change_mcnemar_detects_four_times_in_five(n, fixed, broke) -> None:
    """The MDE of a yes/no metric comes from the test its verdict uses (the t formula on the
    SE said 20.6 points at n = 40, where McNemar detects 17.6 four times in five)."""
    from ragtui.core.analysis import analyse_metric
    from ragtui.core.stats import rng_for

    a, b = _yes_no(n, fixed, broke)
    r = analyse_metric("m", a, b, rng=rng_for(1, "m"))
    discordance = (fixed + broke) / n
    assert r.mde is not None
    assert _mcnemar_power_by_hand(r.mde, n, discordance) >= 0.8
    assert _mcnemar_power_by_hand(r.mde - 0.002, n, discordance) < 0.8


def test_no_mde_beyond_the_scale() -> None:
    """At n = 2 the t formula gave an MDE of 1,408 points: no change of a 0-100 scale is
    detected 4 times in 5 there, so there is none."""
    from ragtui.core.analysis import analyse_metric
    from ragtui.core.stats import rng_for

    a, b = _yes_no(2, 1, 1)
    assert analyse_metric("m", a, b, rng=rng_for(1, "m")).mde is None
    assert _mcnemar_power_by_hand(1.0, 2, 1.0) < 0.8  # even a flip of every case


def test_power_at_small_n_is_the_noncentral_t_of_the_mde_beside_it() -> None:
    """N = 10 continuous scores (the sign-flip test): power from the noncentral t on N - 1
    degrees of freedom, as the MDE (the normal reference said .88 where the test has .80)."""
    from ragtui.core.analysis import analyse_metric
    from ragtui.core.stats import rng_for
    from ragtui.core.verdict import Method

    gen = np.random.default_rng(3)
    a = gen.uniform(0.3, 0.7, 10)
    b = a + gen.normal(0.01, 0.05, 10)
    r = analyse_metric("m", a, b, rng=rng_for(1, "m"), margin=0.05)
    assert r.method is Method.SIGN_FLIP and r.se is not None
    crit, nc = sps.t.ppf(0.975, 9), 0.05 / r.se
    expected = 1 - sps.nct.cdf(crit, 9, nc) + sps.nct.cdf(-crit, 9, nc)
    assert r.power == pytest.approx(expected, abs=1e-6)
