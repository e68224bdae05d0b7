"""Agreement figures against hand-worked tables and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ragtui.core import agreement as ag
from ragtui.format.verdicts import agreement_text


def test_cohen_kappa_hand_worked() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 0.7; p_e = 0.5·0.6 + 0.5·0.4 = 0.5 -> κ = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert ag.cohen_kappa(a, b) == pytest.approx(0.4)
    assert ag.cohen_kappa(a, a) == pytest.approx(1.0)
    assert ag.cohen_kappa(["x"] * 3, ["x"] * 3) is None


def test_quadratic_weighted_kappa_hand_worked() -> None:
    """Ratings 1-3 on 6 cases. Observed squared disagreements: (1-2)² + (3-2)² = 2 over 6
    cases. Marginals A (1:2, 2:2, 3:2), B (1:1, 2:4, 3:1); expected Σ n_i·n_j·(i-j)²/N =
    (2·4·1 + 2·1·4 + 2·1·1 + 2·1·1 + 2·1·4 + 2·4·1)/6 = 36/6. κ_w = 1 - 2/6 = 2/3."""
    a = [1, 1, 2, 2, 3, 3]
    b = [1, 2, 2, 2, 2, 3]
    assert ag.weighted_kappa(a, b) == pytest.approx(2 / 3)
    # unweighted κ on the same: p_o = 4/6, p_e = (2·1 + 2·4 + 2·1)/36 = 1/3 -> κ = 0.5
    assert ag.cohen_kappa(a, b) == pytest.approx(0.5)


def test_weighted_kappa_credits_near_misses_on_a_1_5_scale() -> None:
    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, 200)
    other = np.clip(truth + rng.choice([-1, 0, 1], 200, p=[0.3, 0.4, 0.3]), 1, 5)
    plain, weighted = ag.cohen_kappa(list(truth), list(other)), ag.weighted_kappa(truth, other)
    assert plain < 0.6 < weighted  # a good judge one step off: only the weighted κ says so


def test_ac1_holds_up_where_kappa_collapses() -> None:
    """99 of 100 cases both 'yes', one yes/no: p_o = .99, κ = 0 (prevalence paradox).
    AC1: π_yes = (1 + .99)/2 = .995, p_e = 2·.995·.005 = .00995 -> (.99 - .00995)/.99005."""
    a = ["yes"] * 100
    b = ["yes"] * 99 + ["no"]
    assert ag.cohen_kappa(a, b) == pytest.approx(0.0, abs=1e-12)
    assert ag.gwet_ac1(a, b) == pytest.approx((0.99 - 0.00995) / (1 - 0.00995))


def test_labels_are_normalised_before_they_are_compared() -> None:
    ids = np.array([f"c{i}" for i in range(12)])
    x = np.ones(12)
    g = ag.agreement(
        "f",
        "A judge vs B judge",
        ids,
        x,
        x,
        np.array(["YES"] * 12, dtype=object),
        np.array([" yes", "Yes ", "YES"] * 4, dtype=object),
    )
    assert g.flipped == [] and g.raw == 1.0


def test_no_flag_below_the_minimum_of_cases() -> None:
    ids = np.array(["a", "b", "c"])
    x, y = np.array([1.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
    g = ag.agreement("f", "A judge vs human", ids, x, y)
    assert g.n == 3 and not g.flagged and len(g.flipped) == 3
    many = ag.agreement("f", "A judge vs human", np.arange(12), np.tile(x, 4), np.tile(y, 4))
    assert many.flagged


def test_spearman_matches_scipy_with_ties() -> None:
    x = np.array([0.0, 0.5, 0.5, 1.0, 1.0, 0.25, 0.75, 0.0])
    y = np.array([0.25, 0.5, 0.75, 1.0, 0.75, 0.0, 1.0, 0.5])
    assert ag.spearman(x, y) == pytest.approx(sps.spearmanr(x, y).statistic)
    assert ag.spearman(x, np.ones_like(x)) is None


def test_a_judge_that_gives_every_case_one_score_is_flagged() -> None:
    """A broken re-judge answering 0.73 to all 40 cases: no ranking at all (scipy's ρ is
    undefined), and nothing was flagged because only ρ < 0.7 could flag scores."""
    x = np.round(np.random.default_rng(2).uniform(0, 1, 40), 3)
    y = np.full(40, 0.73)
    with pytest.warns(sps.ConstantInputWarning):
        assert np.isnan(sps.spearmanr(x, y).statistic)
    g = ag.agreement("m", "A judge vs B judge", np.arange(40), x, y)
    assert g.rho is None and g.kappa is None and g.flagged and g.constant
    # the agreement figure of continuous scores is pass/fail at 50, and says so
    same = int(np.sum((x >= 0.5) == (y >= 0.5)))
    text = agreement_text(g)
    assert f"same side of 50 in {same}" in text and "same grade in" not in text
    assert "one side gives every case the same grade" in text and text.endswith("— LOW")
    # two judges that both give every case the same grade agree: nothing to flag
    both = ag.agreement("m", "A judge vs B judge", np.arange(40), y, y.copy())
    assert not both.flagged and not both.constant


def test_a_human_who_labels_every_case_alike_is_judged_by_ac1_not_flagged_for_it() -> None:
    """Humans said YES to all 30 cases; the judge agrees on 28: κ is 0 (the prevalence
    paradox), AC1 is high, and the pair is not flagged."""
    human = np.array(["YES"] * 30, dtype=object)
    judge = human.copy()
    judge[:2] = "NO"
    values = lambda labels: np.array([1.0 if v == "YES" else 0.0 for v in labels])  # noqa: E731
    g = ag.agreement(
        "f", "A judge vs human", np.arange(30), values(judge), values(human), judge, human
    )
    assert g.constant and g.ac1 is not None and g.ac1 > 0.9
    assert not g.flagged
