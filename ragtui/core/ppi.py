"""Prediction-powered inference (Angelopoulos et al. 2023, "Prediction-powered inference"):
a judge's mean corrected by human labels on a random subset of the cases.

estimate = judge mean over all N cases + mean(human - judge) over the n labelled ones;
variance = var(judge)/N + var(human - judge)/n + 2·cov(judge, human - judge)/N (the CI takes
t quantiles with n - 1 degrees of freedom), the last term
because the labelled cases are among the N (leaving it out covered 93.5% instead of 95% in
simulation). The paper's split (the judge mean over the unlabelled cases only) needs no
covariance term but throws the labelled cases' judge grades away: with 32 of 48 cases labelled
and judge and humans agreeing on all 32, it gave the mean of the other 16 and a CI of ±22
points, where this gives the judge's own mean and its ±11. It is unbiased for the human-label
mean whatever the judge's bias, and narrower than the labelled cases alone when the judge
tracks the humans. Shown from MIN_LABELLED labels on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ragtui.core.distributions import t_quantile

MIN_LABELLED = 30


@dataclass(frozen=True)
class PPIEstimate:
    metric: str
    side: str  # "A", "B", or "B - A" for the paired change
    n: int  # cases with a judge score
    labelled: int  # of which carry a human label
    judge: float  # the judge-only figure (mean, or mean change)
    estimate: float  # corrected by the human labels
    ci_low: float
    ci_high: float
    run: str = ""  # the run whose judge grades were corrected (a side's first run, not its reruns)


def ppi_mean(
    metric: str,
    side: str,
    judge_unlabelled: np.ndarray,
    judge_labelled: np.ndarray,
    human: np.ndarray,
    level: float = 0.95,
) -> PPIEstimate | None:
    """PPI of a mean: the judge's grades of the unlabelled cases, and the judge's grades and
    the human labels of the labelled ones (same order)."""
    unlabelled = np.asarray(judge_unlabelled, dtype=float)
    judge_lab = np.asarray(judge_labelled, dtype=float)
    human = np.asarray(human, dtype=float)
    rect = human - judge_lab
    n, m = int(unlabelled.size), int(rect.size)
    if m < MIN_LABELLED:
        return None
    judge = np.concatenate((unlabelled, judge_lab))
    total = n + m
    estimate = float(judge.mean() + rect.mean())
    cov = float(np.cov(judge_lab, rect, ddof=1)[0, 1])
    var = float(judge.var(ddof=1)) / total + float(rect.var(ddof=1)) / m + 2 * cov / total
    var = max(var, 0.0)  # plug-in figures can dip a hair below zero where the truth cannot
    # t with the labelled cases' degrees of freedom: the rectifier's variance is the one
    # estimated from few cases (normal quantiles covered 94.0-94.3% in simulation, t 94.7-95.2%)
    half = t_quantile(0.5 + level / 2, m - 1) * math.sqrt(var)
    return PPIEstimate(
        metric,
        side,
        total,
        m,
        float(judge.mean()),
        estimate,
        estimate - half,
        estimate + half,
    )
