"""Structured results of a comparison: the verdict enum, the method names and the notes.

Everything here is data. Sentences are made in one place, `ragtui.format`, which the CLI, the
Markdown report and the TUI share; nothing may parse a verdict or a warning back out of text.
Every note is a small frozen dataclass with a stable `code`; `to_json()` keeps the code and
the data (figures are fractions, as everywhere in the core).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, ClassVar


class Verdict(StrEnum):
    IMPROVED = "improved"
    REGRESSED = "regressed"
    NO_CHANGE = "no meaningful change"  # TOST: the 90% CI lies inside ±margin
    TOO_FEW = "too few cases"  # no spread in the deltas, or no test at this N could decide
    INCONCLUSIVE = "inconclusive"
    NO_DATA = "no data"  # no case scored in both runs
    NOT_COMPARABLE = "not comparable"  # A and B scored the metric on different scales

    @property
    def decided(self) -> bool:
        return self in (Verdict.IMPROVED, Verdict.REGRESSED, Verdict.NO_CHANGE)


class Method(StrEnum):
    """How the CI and the p-value were made: always one family, so they cannot contradict."""

    T = "t"  # paired t-interval and paired t-test
    SIGN_FLIP = "sign_flip"  # few cases: sign-flips of the deltas (mid-p), CI by inversion
    SCORE = "score"  # binary: Tango/McNemar; some cases unmoved: the tilted score test
    CLUSTER_SIGN_FLIP = "cluster_sign_flip"  # sign-flips of cluster totals; CI by inversion
    CLUSTER_T = "cluster_t"  # many clusters: cluster-robust SE with t(G - 1)
    CLUSTER_SCORE = "cluster_score"  # some clusters unmoved: the score test on cluster totals
    NO_SPREAD = "no_spread"  # every delta equal: an exact bound on how many cases could differ
    FEW_MOVED = "few_moved"  # 1-5 units moved: exact worst-case bounds, the sign test's p
    NONE = "none"


@dataclass(frozen=True)
class ScaleInfo:
    """How one run scored one metric: labels or numbers, on [lo, hi] (native scores: 0-1)."""

    kind: str  # "label" or "number"
    lo: float = 0.0
    hi: float = 1.0


@dataclass(frozen=True)
class FewMoved:
    """Only a few independent units moved (1 to 5: cases, or clusters whose total is not 0):
    how many moved each way, of how many units (Method.FEW_MOVED)."""

    up: int
    down: int
    units: int
    clustered: bool

    @property
    def moved(self) -> int:
        return self.up + self.down


# ---------------------------------------------------------------- notes


@dataclass(frozen=True)
class Note:
    code: ClassVar[str] = "note"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, **asdict(self)}


@dataclass(frozen=True)
class RunsDiffer(Note):
    """Judge model, judge prompt or dataset differ between A and B."""

    code: ClassVar[str] = "runs_differ"
    what: str  # "judge model", "judge prompt", "dataset version", "dataset"
    a: str | None
    b: str | None
    # one run re-judges the other's answers (or both re-judge one run's): a judge that differs
    # is then all that differs, and Δ is the judges' difference, not the system's
    same_answers: bool = False


@dataclass(frozen=True)
class SelfJudged(Note):
    code: ClassVar[str] = "self_judged"
    side: str
    generator: str


@dataclass(frozen=True)
class NotScored(Note):
    """A metric that one run scored and the other did not: no verdict for it."""

    code: ClassVar[str] = "not_scored"
    metric: str
    side: str  # the run that lacks it


@dataclass(frozen=True)
class ScalesDiffer(Note):
    code: ClassVar[str] = "scales_differ"
    metric: str
    a: tuple[ScaleInfo, ...]
    b: tuple[ScaleInfo, ...]


@dataclass(frozen=True)
class IdenticalRuns(Note):
    """B equals A on every score: most likely a cached copy, not a new run."""

    code: ClassVar[str] = "identical_runs"


@dataclass(frozen=True)
class SameConfig(Note):
    """A and B are reruns of one config: each side is its own run alone, so that A vs B
    mirrors B vs A (the config's other reruns belong to neither side more than the other)."""

    code: ClassVar[str] = "same_config"
    others: int  # the config's other reruns, on neither side


@dataclass(frozen=True)
class IdenticalMetric(Note):
    code: ClassVar[str] = "identical_metric"
    metric: str
    n: int


@dataclass(frozen=True)
class RerunIdentical(Note):
    """A rerun equal to a sibling (on every score, or on one metric): a cache hit."""

    code: ClassVar[str] = "rerun_identical"
    side: str
    run: str
    twin: str
    metrics: tuple[str, ...] = ()  # the metrics it is identical on; () on every score


@dataclass(frozen=True)
class RerunDrift(Note):
    code: ClassVar[str] = "rerun_drift"
    metric: str
    side: str
    run: str
    reference: str
    shift: float
    p: float


@dataclass(frozen=True)
class RerunErrors(Note):
    """Grades that failed in a side's reruns (not in its own run) on the compared cases: those
    cases stay, their mean is over the reruns that scored them."""

    code: ClassVar[str] = "rerun_errors"
    metric: str
    side: str
    errors: int
    runs: tuple[str, ...]


@dataclass(frozen=True)
class RerunMissing(Note):
    """Compared cases a side's reruns do not hold at all (a rerun of part of the dataset):
    those cases' mean is over the reruns that hold them."""

    code: ClassVar[str] = "rerun_missing"
    metric: str
    side: str
    missing: int  # compared cases absent from one rerun or more
    runs: tuple[str, ...]


@dataclass(frozen=True)
class ErrorCounts(Note):
    """Errored grades and parse failures (scored 0 by label-mode judges) on each side."""

    code: ClassVar[str] = "errors"
    metric: str
    errors_a: int
    errors_b: int
    parse_failures_a: int
    parse_failures_b: int

    @property
    def differ(self) -> bool:
        return (self.errors_a, self.parse_failures_a) != (self.errors_b, self.parse_failures_b)


@dataclass(frozen=True)
class Unpaired(Note):
    code: ClassVar[str] = "unpaired"
    metric: str
    only_a: int
    only_b: int
    n: int


@dataclass(frozen=True)
class LowAgreement(Note):
    code: ClassVar[str] = "low_agreement"
    metric: str
    between: str
    n: int
    kappa: float | None
    rho: float | None
    flipped: int
    constant: bool = False  # one side gave every case the same grade, the other did not


@dataclass(frozen=True)
class JudgesDisagree(Note):
    """A vs B decided differently under another judge's grades."""

    code: ClassVar[str] = "judges_disagree"
    metric: str
    verdicts: tuple[tuple[str, Verdict], ...]  # (judge, verdict), the runs' own judge first


# ---------------------------------------------------------------- noise lines


@dataclass(frozen=True)
class RerunRule(Note):
    """The classic rule ("reruns differ by < 5 points") beside what it means at this N."""

    code: ClassVar[str] = "rerun_rule"
    metric: str
    side: str
    runs: int
    n: int
    rerun_delta: float  # max - min of the reruns' means
    margin: float
    holds: bool  # decided by `stats.rule_holds`, the one place that decides it
    noise_floor: float  # 95% range of the difference between two reruns' means
    chance_range: float  # 95% range of max - min of `runs` pure reruns at this N
    icc: float | None
    source: str  # "judge-only", "full" or "mixed" reruns


@dataclass(frozen=True)
class UnevenReruns(Note):
    """One side is the mean of its reruns, the other a single run: the per-case changes are
    skewed even under no change (a mean of k against one value), so the false alarms of the
    symmetric tests split unevenly between the two directions (simulated, yes/no metric at
    90%, 30 cases, 3 reruns against 1: 4.7% improved, 0.8% regressed)."""

    code: ClassVar[str] = "uneven_reruns"
    side: str  # the averaged side
    runs: int
    single: str  # the side of one run


@dataclass(frozen=True)
class RerunMean(Note):
    """This side's per-case values are the mean of its reruns."""

    code: ClassVar[str] = "rerun_mean"
    side: str
    runs: int


@dataclass(frozen=True)
class NoReruns(Note):
    code: ClassVar[str] = "no_reruns"
    identical: int = 0  # reruns left out as identical to an earlier run (cached copies)


@dataclass(frozen=True)
class NoRerunsLeft(Note):
    """A or B has reruns, but none measured this metric's noise: those identical to an earlier
    run on it were left out (`identical`), or no case was scored in every rerun."""

    code: ClassVar[str] = "no_reruns_left"
    metric: str
    identical: int


@dataclass(frozen=True)
class JudgeOnlyFloor(Note):
    """The floor comes from re-judging the same answers: generation noise is left out."""

    code: ClassVar[str] = "judge_only_floor"
    side: str


@dataclass(frozen=True)
class SeedNote(Note):
    code: ClassVar[str] = "seed"
    seed: int
    resamples: int  # random sign patterns where an exact enumeration is too big
    drawn: bool = True  # some metric's test drew them (else the seed changes nothing here)


@dataclass(frozen=True)
class Clustered(Note):
    """Cases were tested by cluster, each cluster's total one unit (several cases share a
    source)."""

    code: ClassVar[str] = "clustered"
    clusters: int  # distinct clusters over the compared cases
    cases: int
    named: int  # cases whose own `cluster` field named it
    field: str | None  # the case metadata field named by [compare] cluster in ragtui.toml
    from_field: int  # cases whose cluster came from that metadata field


@dataclass(frozen=True)
class ClusterFieldUnused(Note):
    """[compare] cluster names a metadata field that no case of A or B has."""

    code: ClassVar[str] = "cluster_field_unused"
    field: str
    own_clusters: bool  # the cases name their own clusters (so they are clustered anyway)
