"""One metric of a comparison, from its paired per-case values to a verdict. Pure.

Verdict rules (DESIGN.md §3, issue 11), on the Holm-adjusted p of the estimate's own family:
1. no paired case: NO_DATA;
2. the deltas carry no variance (every case moved by the same amount, e.g. all 0), or no test
   with this many cases (or clusters) could decide anything, or only 1-5 units moved and
   their exact bounds do not fit the margin (Method.FEW_MOVED): TOO_FEW;
3. adjusted p < .05: IMPROVED / REGRESSED (flagged when the change is smaller than the margin);
4. the 90% CI inside ±margin, i.e. both one-sided tests of TOST reject at 5%: NO_CHANGE;
5. otherwise INCONCLUSIVE, with the cases needed to detect the margin and to show no change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ragtui.core import power, stats
from ragtui.core.intervals import ALPHA, estimate, is_binary
from ragtui.core.verdict import FewMoved, Method, ScaleInfo, Verdict


@dataclass(frozen=True)
class MetricResult:
    metric: str
    n: int  # paired cases
    mean_a: float | None = None  # over the paired cases (reruns averaged per case)
    mean_b: float | None = None
    delta: float | None = None
    se: float | None = None
    ci_low: float | None = None  # 95%
    ci_high: float | None = None
    ci90_low: float | None = None  # what TOST reads
    ci90_high: float | None = None
    p: float | None = None
    p_adj: float | None = None  # Holm over the metrics compared
    method: Method = Method.NONE
    units: int = 0  # independent units: cases, or clusters
    exact: bool = False
    spread: bool = False  # the deltas are not all equal
    can_detect: bool = False
    tightest: float | None = None  # narrowest 90% bound reachable at this N (None: none)
    mde: float | None = None
    power: float | None = None  # to detect a change of the margin
    sd: float | None = None  # of the per-case deltas, clusters' design effect included
    n_detect: int | None = None  # cases to detect the margin (80% power, Holm's α)
    n_no_change: int | None = None  # cases to show no meaningful change (TOST, 80% power)
    verdict: Verdict = Verdict.NO_DATA
    below_margin: bool = False  # significant, but smaller than the margin
    holm_lost: bool = False  # p < .05 alone, not after Holm
    fixed: int | None = None  # binary metrics: cases B fixed (A 0 -> B 1)
    moved: int | None = None  # the score test on other scores: cases whose Δ is not 0
    few_moved: FewMoved | None = None  # Method.FEW_MOVED: the units that moved each way
    broke: int | None = None
    margin_p: float | None = None  # random sign-flips: the test's p at -margin (intervals)
    only_a: int = 0
    only_b: int = 0
    errors: int = 0  # cases errored in A or B
    errors_a: int = 0
    errors_b: int = 0
    parse_failures_a: int = 0  # grades whose judge reply could not be read: errors, or scored
    parse_failures_b: int = 0
    parse_scored_a: int = 0  # of those, the ones scored anyway (a 0 with a parse-failure reason)
    parse_scored_b: int = 0
    runs_a: int = 1  # runs averaged per case on each side
    runs_b: int = 1
    noise_floor: float | None = None
    rerun_delta: float | None = None
    icc: float | None = None
    noise_runs: int = 0  # reruns behind the noise floor (0: none)
    bottom_a: float | None = None  # mean of the worst 10% of A's cases
    bottom_b: float | None = None
    scale_a: tuple[ScaleInfo, ...] = ()
    scale_b: tuple[ScaleInfo, ...] = ()

    def bad_grades(self) -> tuple[int, int]:
        """(A, B) grades that errored or were scored from an unreadable reply, each counted
        once (a parse failure recorded as an error is one bad grade, not two)."""
        return self.errors_a + self.parse_scored_a, self.errors_b + self.parse_scored_b


def _f(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def analyse_metric(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    rng: np.random.Generator,
    margin: float = 0.05,
    clusters: np.ndarray | None = None,
    tests: int = 1,
) -> MetricResult:
    """Paired statistics of one metric over its paired cases (a, b: per-case values, each the
    mean of that side's reruns). `tests`: the metrics compared, for Holm-aware advice.
    The verdict here uses the raw p; `compare_runs` re-decides it with the adjusted p."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    est = estimate(a, b, rng=rng, clusters=clusters, margin=margin)
    # the design effect of clusters is in the SE: sd_eff = SE·√N keeps N-advice honest
    sd = None if est.se is None else est.se * math.sqrt(est.n)
    binary = est.method is Method.SCORE and is_binary(a, b)
    fixed = int(np.count_nonzero((a == 0) & (b == 1))) if binary else None
    broke = int(np.count_nonzero((a == 1) & (b == 0))) if binary else None
    if binary:
        discordance = (fixed + broke) / est.n if est.n else 0.0  # type: ignore[operator]
        pw = power.power_mcnemar(margin, est.n, discordance)
        mde = power.mde_mcnemar(est.n, discordance)
        n_detect = power.n_mcnemar(discordance, margin, tests)
    else:
        # noncentral t on the estimate's own degrees of freedom, as the MDE beside it: the
        # normal reference overstated power at small N (.88 where the sign-flip test had .80)
        pw = (
            power.power_t(margin, est.se, est.df)
            if est.df is not None
            else power.power_normal(margin, est.se)
        )
        mde = power.mde(est.se, est.df)
        n_detect = power.n_to_detect(sd, margin, tests)
    if mde is not None and mde > 1.0:
        mde = None  # no change the scale allows would be detected 4 times in 5 at this N
    # with no spread, "no meaningful change" is out of reach at any N (rule 2)
    n_no_change = power.n_to_show_no_change(sd, margin, est.delta) if est.spread else None
    ci95, ci90 = est.ci95 or (None, None), est.ci90 or (None, None)
    result = MetricResult(
        metric=metric,
        n=est.n,
        mean_a=_f(float(a.mean())) if a.size else None,
        mean_b=_f(float(b.mean())) if b.size else None,
        delta=_f(est.delta),
        se=_f(est.se),
        ci_low=_f(ci95[0]),
        ci_high=_f(ci95[1]),
        ci90_low=_f(ci90[0]),
        ci90_high=_f(ci90[1]),
        p=_f(est.p),
        p_adj=_f(est.p),
        method=est.method,
        units=est.units,
        exact=est.exact,
        spread=est.spread,
        can_detect=est.can_detect,
        tightest=_f(est.tightest),
        mde=_f(mde),
        power=_f(pw),
        sd=_f(sd),
        n_detect=n_detect,
        n_no_change=n_no_change,
        fixed=fixed,
        broke=broke,
        moved=est.moved,
        few_moved=est.few_moved,
        margin_p=_f(est.margin_p),
    )
    return decide(result, margin)


def decide(r: MetricResult, margin: float) -> MetricResult:
    """The verdict rules above, on `r.p_adj`. NOT_COMPARABLE is set by the caller and kept."""
    if r.verdict is Verdict.NOT_COMPARABLE:
        return r
    below = holm_lost = False
    inside = (
        r.ci90_low is not None
        and r.ci90_high is not None
        and -margin < r.ci90_low
        and r.ci90_high < margin
    )
    undecidable = not r.can_detect and (r.tightest is None or r.tightest >= margin)
    if r.n == 0:
        verdict = Verdict.NO_DATA
    elif r.delta is None or (not r.spread and (r.delta == 0 or r.p is None)) or undecidable:
        verdict = Verdict.TOO_FEW
    elif r.p_adj is not None and r.p_adj < ALPHA and r.delta != 0:
        verdict = Verdict.IMPROVED if r.delta > 0 else Verdict.REGRESSED
        below = stats.shown_below(abs(r.delta), margin)
    elif inside:
        verdict = Verdict.NO_CHANGE
    else:
        verdict = Verdict.INCONCLUSIVE
        holm_lost = r.p is not None and r.p < ALPHA and r.delta != 0
    return replace(r, verdict=verdict, below_margin=below, holm_lost=holm_lost)
