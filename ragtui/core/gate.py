"""The CI gate's decision, from a comparison: pure, and it never fails open.

Per metric, first failure wins:
- scored by the base and not at all by the candidate (a metric the candidate dropped), not
  comparable (scales differ), no usable candidate score, fewer shared cases than the minimum,
  more errors or parse failures in the candidate than in the base: FAIL;
- a significant regression (Holm-adjusted): FAIL;
- the 95% CI's lower bound above -margin (B shown non-inferior, one-sided 2.5%): PASS (where
  only 1-5 units moved, that bound is the exact one of intervals.few_moved_estimate);
- otherwise UNDECIDED, with the cases that non-inferiority would need.
Floors (`--min METRIC=VALUE`) fail when the candidate's mean is below them or it has none;
the mean is the comparison's B (over the shared cases, reruns averaged per case: the figure
shown beside the verdict), exact to float rounding (a mean of exactly 80 holds a floor of 80).
New failures (`--no-new-failures`): a case that passed in every baseline rerun and fails in
the candidate fails the gate, whatever the means say.
Overall: any FAIL fails; else any UNDECIDED is undecided (its own exit code; a flag may let
it pass); else PASS. A comparison with no metric at all fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from ragtui.core import power
from ragtui.core.compare import Comparison
from ragtui.core.intervals import ALPHA, MARGIN_P_ERROR
from ragtui.core.verdict import FewMoved, NotScored, Verdict

MIN_SHARED_CASES = 10
# A mean summed in floating point misses an exact figure by a few ulps (320 / 400 grades of
# 0-10 come to 0.7999999999999999): a floor is held within this, far below anything shown.
FLOAT_SLACK = 1e-9
EXIT_PASSED, EXIT_FAILED, EXIT_UNDECIDED = 0, 1, 3


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class GateCheck:
    metric: str
    outcome: Outcome
    code: str  # see CODES
    value: float | None = None  # the figure checked (CI lower bound, mean, count)
    threshold: float | None = None  # what it was checked against
    n_needed: int | None = None  # UNDECIDED: cases for 80% power of non-inferiority
    few_moved: FewMoved | None = None  # "few_moved": the units that moved, the worst case


CODES = (
    "non_inferior",
    "too_close",
    "few_moved",
    "regressed",
    "not_in_candidate",
    "not_comparable",
    "no_scores",
    "too_few_shared",
    "more_errors",
    "undecided",
    "undecided_no_change",
    "floor_held",
    "below_floor",
    "no_floor_scores",
    "nothing_compared",
    "new_failures",
    "no_new_failures",
)


@dataclass(frozen=True)
class GateResult:
    outcome: Outcome
    checks: list[GateCheck]

    def exit_code(self, undecided_passes: bool = False) -> int:
        if self.outcome is Outcome.FAILED:
            return EXIT_FAILED
        if self.outcome is Outcome.UNDECIDED and not undecided_passes:
            return EXIT_UNDECIDED
        return EXIT_PASSED


def decide_gate(
    c: Comparison,
    floors: dict[str, float] | None = None,
    candidate_means: dict[str, float | None] | None = None,
    *,
    min_cases: int = MIN_SHARED_CASES,
    new_failures: Mapping[str, int] | None = None,
) -> GateResult:
    """`candidate_means`: the candidate's mean per metric (floors on a metric the comparison
    has read its B instead). `new_failures`: per metric, the cases newly broken in the
    candidate (None: not checked)."""
    # a metric the base scored and the candidate did not is a failure, never a silent pass
    dropped = [w.metric for w in c.warnings if isinstance(w, NotScored) and w.side == "B"]
    checks = [
        GateCheck(m.metric, Outcome.FAILED, "not_in_candidate")
        if m.metric in dropped
        else _metric_check(m, c.margin, min_cases)
        for m in c.metrics
    ]
    compared = {m.metric for m in c.metrics}
    checks += [
        GateCheck(m, Outcome.FAILED, "not_in_candidate") for m in dropped if m not in compared
    ]
    if not checks:
        checks.append(GateCheck("—", Outcome.FAILED, "nothing_compared"))
    means = dict(candidate_means or {})
    means.update({m.metric: m.mean_b for m in c.metrics})
    for metric, floor in (floors or {}).items():
        mean = means.get(metric)
        if mean is None:
            checks.append(GateCheck(metric, Outcome.FAILED, "no_floor_scores", None, floor))
        elif mean < floor - FLOAT_SLACK:
            checks.append(GateCheck(metric, Outcome.FAILED, "below_floor", mean, floor))
        else:
            checks.append(GateCheck(metric, Outcome.PASSED, "floor_held", mean, floor))
    if new_failures is not None:
        broken = {m: n for m, n in new_failures.items() if n}
        for metric, count in broken.items():
            checks.append(GateCheck(metric, Outcome.FAILED, "new_failures", float(count), 0.0))
        if not broken:
            checks.append(GateCheck("every metric", Outcome.PASSED, "no_new_failures", 0.0, 0.0))
    outcomes = {ch.outcome for ch in checks}
    if Outcome.FAILED in outcomes:
        overall = Outcome.FAILED
    elif Outcome.UNDECIDED in outcomes:
        overall = Outcome.UNDECIDED
    else:
        overall = Outcome.PASSED
    return GateResult(overall, checks)


def _metric_check(m, margin: float, min_cases: int) -> GateCheck:  # m: MetricResult
    failed = Outcome.FAILED
    if m.verdict is Verdict.NOT_COMPARABLE:
        return GateCheck(m.metric, failed, "not_comparable")
    usable_b = m.n + m.only_b - m.parse_scored_b  # scored grades that are not parse failures
    if usable_b <= 0:
        return GateCheck(m.metric, failed, "no_scores", float(max(usable_b, 0)), 1.0)
    if m.n < min_cases:
        return GateCheck(m.metric, failed, "too_few_shared", float(m.n), float(min_cases))
    bad_a, bad_b = m.bad_grades()
    if bad_b > bad_a:
        return GateCheck(m.metric, failed, "more_errors", float(bad_b), float(bad_a))
    if m.verdict is Verdict.REGRESSED:
        return GateCheck(m.metric, failed, "regressed", m.delta, -margin)
    if m.ci_low is not None and m.ci_low > -margin:
        if m.margin_p is not None and m.margin_p > ALPHA - MARGIN_P_ERROR:
            # random sign patterns put the bound above the margin, but the test's p there is
            # within its own Monte Carlo error of .05: another seed could put it below
            return GateCheck(m.metric, Outcome.UNDECIDED, "too_close", m.margin_p, ALPHA)
        return GateCheck(m.metric, Outcome.PASSED, "non_inferior", m.ci_low, -margin)
    if m.few_moved is not None:  # 1-5 moves: their exact bound, which more cases would narrow
        return GateCheck(
            m.metric, Outcome.UNDECIDED, "few_moved", m.ci_low, -margin, None, m.few_moved
        )
    # compare may call it "no meaningful change" (TOST: the 90% CI, 5% a side) where the gate,
    # asking 97.5% on the downside, cannot pass it: say so, or the two read as a contradiction
    code = "undecided_no_change" if m.verdict is Verdict.NO_CHANGE else "undecided"
    return GateCheck(
        m.metric,
        Outcome.UNDECIDED,
        code,
        m.ci_low,
        -margin,
        power.n_noninferior(m.sd, margin, m.delta),
    )
