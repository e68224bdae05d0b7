"""The noise budget's variance split and the prediction-powered estimate, against data
simulated with known parts and a hand-worked example."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import power
from ragtui.core.budget import SideNoise, noise_budget, side_noise
from ragtui.core.ppi import ppi_mean

N = 4000
VAR_CASE, VAR_GEN, VAR_JUDGE = 0.01, 0.0225, 0.01


def _side(gen: np.random.Generator, mu: np.ndarray, k_gen: int, k_judge: int):
    """k_gen answers per case, each graded k_judge times: runs × cases, and each run's
    answer-set label (the same label = the same answers re-graded)."""
    rows, labels = [], []
    for g in range(k_gen):
        answer = mu + gen.normal(0, math.sqrt(VAR_GEN), mu.size)
        for _ in range(k_judge):
            rows.append(answer + gen.normal(0, math.sqrt(VAR_JUDGE), mu.size))
            labels.append(f"gen-{g}")
    return np.vstack(rows), labels


def test_variance_split_recovers_the_simulated_parts() -> None:
    gen = np.random.default_rng(11)
    mu_a = gen.uniform(0.3, 0.7, N)
    mu_b = mu_a + gen.normal(0.02, math.sqrt(VAR_CASE), N)
    xa, la = _side(gen, mu_a, 2, 2)  # A: 2 generations, each graded twice
    xb, lb = _side(gen, mu_b, 1, 1)
    sa, sb = side_noise(xa, la), side_noise(xb, lb)
    assert (sa.k_gen, sa.k_judge) == (2, 2.0)
    assert sa.var_judge == pytest.approx(VAR_JUDGE, rel=0.05)
    assert sa.var_total == pytest.approx(VAR_GEN + VAR_JUDGE, rel=0.08)
    d = xb.mean(axis=0) - xa.mean(axis=0)
    b = noise_budget("m", d, [sa, sb], margin=0.05)
    assert b is not None
    assert b.var_gen == pytest.approx(VAR_GEN, rel=0.1)
    assert b.var_judge == pytest.approx(VAR_JUDGE, rel=0.05)
    assert b.var_case == pytest.approx(VAR_CASE, rel=0.2)
    # the parts as the runs stand: A averages 2 gens × 2 gradings, B one run
    assert b.gen_part == pytest.approx(VAR_GEN / 2 + VAR_GEN, rel=0.1)
    assert b.judge_part == pytest.approx(VAR_JUDGE / 4 + VAR_JUDGE, rel=0.05)


def test_levers_reach_the_target_mde() -> None:
    gen = np.random.default_rng(12)
    n = 400
    mu_a = gen.uniform(0.3, 0.7, n)
    mu_b = mu_a + gen.normal(0.0, math.sqrt(VAR_CASE), n)
    xa, la = _side(gen, mu_a, 2, 2)
    xb, lb = _side(gen, mu_b, 1, 1)
    d = xb.mean(axis=0) - xa.mean(axis=0)
    b = noise_budget("m", d, [side_noise(xa, la), side_noise(xb, lb)], margin=0.02)
    assert b is not None and b.target_mde == 0.02 and b.mde > 0.02
    # more cases: the MDE at N + add_cases (same per-case variance) reaches the target
    total = n + b.add_cases
    assert power.mde(math.sqrt(b.var_delta / total), total - 1) <= 0.02
    # regenerating k times on both sides: noise parts shrink by k (hand formula)
    k = b.regen_times
    assert k is not None
    shrunk = b.var_case + (b.gen_part + b.judge_part) / k
    factor = b.mde / math.sqrt(b.var_delta / n)
    assert (
        factor * math.sqrt(shrunk / n)
        <= 0.02
        < factor * math.sqrt(b.var_case + (b.gen_part + b.judge_part) / (k - 1))
        or k == 2
    )


def test_judge_only_reruns_leave_generation_unknown() -> None:
    gen = np.random.default_rng(13)
    mu = gen.uniform(0.3, 0.7, 300)
    xa, la = _side(gen, mu, 1, 3)  # one answer set graded 3 times: judge-only
    sa = side_noise(xa, la)
    assert sa.var_total is None and sa.var_judge == pytest.approx(VAR_JUDGE, rel=0.2)
    d = mu + gen.normal(0, 0.1, 300) - xa.mean(axis=0)
    b = noise_budget("m", d, [sa, SideNoise(1, 1.0, None, None)], margin=0.05)
    assert b is not None and b.var_gen is None and b.regen_times is None


# ---------------------------------------------------------------- PPI


def test_ppi_hand_worked() -> None:
    judge_unlab = np.array([1.0, 0.0] * 20)
    judge_lab = np.array([1.0] * 30)
    human = np.array([1.0] * 20 + [0.0] * 10)  # human - judge: 20 zeros, 10 minus ones
    est = ppi_mean("f", "A", judge_unlab, judge_lab, human)
    assert est is not None
    # by hand: all 70 judge grades have 50 ones, mean 5/7, variance (ddof 1)
    # 50·(2/7)² + 20·(5/7)² over 69; the rectifier: mean -1/3, variance
    # (10·(2/3)² + 20·(1/3)²)/29; its covariance with the judge's 30 grades (all 1) is 0
    judge_var = (50 * (2 / 7) ** 2 + 20 * (5 / 7) ** 2) / 69
    rect_var = (10 * (2 / 3) ** 2 + 20 * (1 / 3) ** 2) / 29
    var = judge_var / 70 + rect_var / 30
    estimate = 5 / 7 - 1 / 3
    assert est.estimate == pytest.approx(estimate)
    half = 2.045230 * math.sqrt(var)  # t quantile, 29 degrees of freedom (30 labels)
    assert (est.ci_low, est.ci_high) == pytest.approx((estimate - half, estimate + half))
    assert est.judge == pytest.approx(50 / 70) and est.n == 70 and est.labelled == 30
    assert ppi_mean("f", "A", judge_unlab, judge_lab[:29], human[:29]) is None  # < 30 labels


def test_ppi_where_the_humans_agree_with_the_judge_is_the_judge_mean() -> None:
    """Seen on the sample history: 32 of 48 cases labelled, all 32 as the judge graded them;
    the corrected mean must be the judge's own, with the judge's own interval (t quantile at
    the 31 degrees of freedom of the 32 labels)."""
    gen = np.random.default_rng(3)
    judge = gen.choice([0.0, 0.5, 1.0], size=48, p=[0.1, 0.2, 0.7])
    est = ppi_mean("f", "A", judge[32:], judge[:32], judge[:32].copy())
    assert est is not None
    assert est.estimate == pytest.approx(judge.mean())
    half = 2.039513 * judge.std(ddof=1) / math.sqrt(48)
    assert (est.ci_low, est.ci_high) == pytest.approx((judge.mean() - half, judge.mean() + half))


def test_ppi_covers_with_most_cases_labelled_and_beats_the_labels_alone() -> None:
    gen = np.random.default_rng(21)
    reps, n, m = 3000, 48, 32
    truth = 0.6
    human = (gen.uniform(size=(reps, n)) < truth).astype(float)
    noisy = gen.uniform(size=(reps, n)) < 0.1  # the judge grades 10% of cases the other way
    judge = np.where(noisy, 1 - human, human)
    covered, widths, label_widths = 0, [], []
    for r in range(reps):
        est = ppi_mean("f", "A", judge[r, m:], judge[r, :m], human[r, :m])
        covered += est.ci_low <= truth <= est.ci_high
        widths.append(est.ci_high - est.ci_low)
        alone = sps.ttest_1samp(human[r, :m], 0).confidence_interval()  # the labels alone
        label_widths.append(alone.high - alone.low)
    # 3000 reps: the binomial 99% band around 95% is about ±1.0 point
    assert covered / reps == pytest.approx(0.95, abs=0.015)
    assert np.mean(widths) < 0.95 * np.mean(label_widths)


def test_ppi_covers_the_human_mean_where_the_biased_judge_does_not() -> None:
    gen = np.random.default_rng(14)
    reps, n, m = 2000, 300, 40
    human = (gen.uniform(size=(reps, n)) < 0.6).astype(float)
    judge = np.clip(0.5 * human + 0.45 + gen.normal(0, 0.1, (reps, n)), 0, 1)  # lenient
    covered = judge_covered = 0
    truth = 0.6
    for r in range(reps):
        est = ppi_mean("f", "A", judge[r, m:], judge[r, :m], human[r, :m])
        covered += est.ci_low <= truth <= est.ci_high
        ci = sps.ttest_1samp(judge[r], 0).confidence_interval()
        judge_covered += ci.low <= truth <= ci.high
    assert covered / reps == pytest.approx(0.95, abs=0.015)
    assert judge_covered / reps < 0.2


def test_the_budget_s_mde_is_the_verdict_s_for_clustered_cases(tmp_path) -> None:
    """On the demo history (cases in clusters: the verdict's SE is the cluster one), the
    budget line's "now" MDE is the table's MDE, and its case count is the one the verdict's
    own arithmetic gives: the design effect carried to the target."""
    import shutil

    from ragtui.core.compare import compare_runs
    from ragtui.core.store import Store
    from tests.tui.conftest import SAMPLE_RUNS

    folder = tmp_path / "runs"
    shutil.copytree(SAMPLE_RUNS, folder, ignore=shutil.ignore_patterns(".ragtui.duckdb*"))
    with Store.open(folder) as store:
        c = compare_runs(store, "baseline-2026-11-02", "strict-v2-2026-11-16", margin=0.05)
    assert c.budget
    for b in c.budget:
        r = c.metric(b.metric)
        assert r.units is not None and r.units < r.n  # resampled by cluster
        assert b.mde == pytest.approx(r.mde, rel=1e-12)
        sd = r.se * math.sqrt(r.n)  # the effective per-case sd the verdict plans with
        assert b.add_cases == power.n_to_detect(sd, b.target_mde) - r.n
