"""The data model: a run is a header plus cases; every case carries its chunks, scores and claims.

Values are normalised to [0, 1]; `raw` keeps what the source said. A metric that failed is an
entry in `Case.errors`, never a Score.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

RUN_KINDS: tuple[str, ...] = ("eval", "rejudge", "rerun")

Verdict = Literal["SUPPORTED", "PARTIAL", "UNSUPPORTED"]
VERDICTS: tuple[str, ...] = ("SUPPORTED", "PARTIAL", "UNSUPPORTED")

# Config keys that differ between reruns of one config and so must not split its config key.
VOLATILE_CONFIG_KEYS = frozenset(
    {
        "id",
        "run_id",
        "eval_id",
        "timestamp",
        "created_at",
        "date",
        "time",
        "started_at",
        "finished_at",
        "seed",
        "random_seed",
        "rerun",
        "rerun_index",
        "repeat",
        "epoch",
        "attempt",
    }
)


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    source: str | None = None
    rank: int | None = None
    score: float | None = None


@dataclass(frozen=True)
class Score:
    """One metric's grade of one case. `value` is in [0, 1]."""

    value: float
    raw: Any = None
    label: str | None = None
    scale: tuple[float, float] | None = None
    reason: str | None = None
    reply: str | None = None  # the judge's full reply, shown as-is on the Case screen
    prompt_hash: str | None = None
    threshold: float | None = None


@dataclass(frozen=True)
class Claim:
    """One claim of an answer and its verdict. Faithfulness claims use VERDICTS; claims of
    other metrics keep the source's own word (DeepEval's relevancy "yes"/"no"/"idk" is about
    relevance, not support)."""

    metric: str
    text: str
    verdict: str  # one of VERDICTS for faithfulness metrics, else the source's word
    chunks: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class Case:
    case_id: str
    question: str
    answer: str
    reference: str | None = None
    contexts: tuple[Chunk, ...] = ()
    scores: Mapping[str, Score] = field(default_factory=dict)
    claims: tuple[Claim, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)
    human: Mapping[str, float] = field(default_factory=dict)
    latency_ms: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    cluster: str | None = None  # e.g. the source document; resampling is by cluster when set


@dataclass(frozen=True)
class JudgeInfo:
    model: str | None = None
    provider: str | None = None
    prompt_hash: str | None = None


@dataclass(frozen=True)
class DatasetInfo:
    name: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class SourceInfo:
    format: str
    path: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class StatedFigure:
    """A run-level figure as the source tool stated it (e.g. Inspect's ratio-of-sums accuracy,
    or the only thing an aggregate-only file holds). Shown beside the per-case means, never
    recomputed. `value` is normalised to [0, 1] when the scale is known, else None."""

    metric: str
    value: float | None
    raw: Any = None
    statistic: str | None = None  # "mean", "accuracy", "ratio of sums", ...
    scale: tuple[float, float] | None = None
    n: int | None = None  # cases behind the figure, when stated

    @property
    def spread(self) -> bool:
        """A dispersion (a standard error, deviation, variance), not a level of the metric."""
        base = (self.statistic or "").rsplit("/", 1)[-1].lower()
        return base in SPREAD_STATISTICS


# statistics that measure a metric's spread, not its level: never listed as its mean
SPREAD_STATISTICS = frozenset({"stderr", "std", "stddev", "var", "sem", "bootstrap_stderr"})


def stated_means(figures: Sequence[StatedFigure]) -> dict[str, float | None]:
    """Each metric's stated level (the first figure of it that is no spread, in the file's
    order): what a summary-only run is listed and plotted with. A file that states accuracy
    and then its stderr is listed at its accuracy, never at the stderr."""
    out: dict[str, float | None] = {}
    for f in figures:
        if not f.spread and f.metric not in out:
            out[f.metric] = f.value
    return out


@dataclass(frozen=True)
class Run:
    """A run header. Cases travel separately (see `RunFile`) so big runs can be streamed."""

    id: str
    name: str
    created_at: str  # ISO 8601
    config: Mapping[str, Any] = field(default_factory=dict)
    config_key: str = ""
    judge: JudgeInfo = field(default_factory=JudgeInfo)
    dataset: DatasetInfo = field(default_factory=DatasetInfo)
    parent: str | None = None
    kind: str = "eval"  # one of RUN_KINDS
    source: SourceInfo | None = None
    stated: tuple[StatedFigure, ...] = ()  # run-level figures as the tool stated them


@dataclass(frozen=True)
class RunFile:
    """A whole run in memory: the header and its cases."""

    run: Run
    cases: tuple[Case, ...] = ()


def is_faithfulness(metric: str) -> bool:
    """Claims of these metrics are verdicts of support (SUPPORTED / PARTIAL / UNSUPPORTED)."""
    return metric.casefold().startswith(("faithfulness", "groundedness"))


def derive_config_key(
    config: Mapping[str, Any], judge: JudgeInfo | None = None, generator: str | None = None
) -> str:
    """Hash of the canonical config (plus generator and judge) without volatile keys.

    Reruns of one config get the same key; a different judge model or judge prompt does not.
    """
    stable = _strip_volatile(config)
    material = {
        "config": stable,
        "generator": generator if generator is not None else stable.get("generator"),
        "judge": None if judge is None else [judge.model, judge.prompt_hash],
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return "cfg-" + hashlib.sha256(canonical.encode()).hexdigest()[:10]


def _strip_volatile(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            str(k): _strip_volatile(v)
            for k, v in value.items()
            if str(k).lower() not in VOLATILE_CONFIG_KEYS
        }
    if isinstance(value, list | tuple):
        return [_strip_volatile(v) for v in value]
    return value


def stable_case_id(question: str, prefix: str = "q") -> str:
    """Id for a case whose source has none: a hash of the whitespace-normalised question."""
    normalised = " ".join(question.split()).casefold()
    return f"{prefix}-" + hashlib.sha256(normalised.encode()).hexdigest()[:12]
