"""Metric scales: declared, never guessed from one file's values.

A score's scale comes from, in this order:

1. the tool that made the file, for the metrics it defines (RAGAS rubric scores 1-5, MLflow's
   LLM-judged `*/v1/score` 1-5, ...): `known`;
2. the user, once for every file (`ragtui import --scale NAME=LOW:HIGH`, `[metrics.NAME] scale`
   in ragtui.toml): `declared`;
3. otherwise [0, 1], the range every supported tool scores in.

With no scale known (case 3) a value outside [0, 1] proves the values are on some other scale,
so none of that metric's values in the file can be trusted: each becomes an error for that
metric ("scale unknown ..."), its raw value kept in the case's metadata under `raw_score:METRIC`. A value
outside a known or declared scale is an error too. Rescaling is always (v - low) / (high - low).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ragtui.core.model import Case, Score

Scale = tuple[float, float]
UNIT: Scale = (0.0, 1.0)
# Case.metadata[RAW_KEY + metric]: the raw value of a score refused here (a flat key: the
# index keeps flat metadata on its fast path)
RAW_KEY = "raw_score:"
_EPS = 1e-6  # float artefacts such as 1.0000000002 are inside [0, 1]


def parse_scale(text: str) -> Scale:
    """`LOW:HIGH` (e.g. `1:5`, `0:10`) as a scale; ValueError with the reason otherwise."""
    low_text, sep, high_text = text.partition(":")
    if not sep:
        raise ValueError(f"expected LOW:HIGH such as 1:5, found {text!r}")
    try:
        low, high = float(low_text), float(high_text)
    except ValueError:
        raise ValueError(f"expected two numbers LOW:HIGH such as 1:5, found {text!r}") from None
    return check_scale(low, high, text)


def check_scale(low: float, high: float, shown: str) -> Scale:
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise ValueError(f"a scale needs finite LOW < HIGH, found {shown!r}")
    return (float(low), float(high))


def fmt(scale: Scale) -> str:
    return f"{scale[0]:g}..{scale[1]:g}"


def declare_hint(metric: str) -> str:
    option = shlex.quote(f"{metric}=LOW:HIGH")  # a name from the file, in a command to paste
    return f"declare it with --scale {option} or [metrics.{metric}] scale in ragtui.toml"


@dataclass(frozen=True)
class MetricScale:
    """How one metric's values in one file are read: on `scale`, or refused (`unknown_max`)."""

    metric: str
    scale: Scale | None  # None: no scale known and the file's values leave [0, 1]
    origin: str  # "tool", "declared" or "default"
    extreme: float | None = None  # with scale None: the value furthest outside [0, 1]
    unknown: str | None = None  # with scale None: why no scale is known, when not `extreme`

    def score(self, number: float, raw: Any, **fields: Any) -> Score | str:
        """A Score normalised to [0, 1], or the error text when the value cannot be one."""
        if not math.isfinite(number):
            return f"score is {number}"
        if self.scale is None and self.unknown:
            return f"scale unknown for {self.metric} (value {_show(raw)}): {self.unknown}"
        if self.scale is None:
            return (
                f"scale unknown for {self.metric} (value {_show(raw)}; this file has values up "
                f"to {self.extreme:g}, outside [0, 1]): {declare_hint(self.metric)}"
            )
        low, high = self.scale
        span = high - low
        if number < low - _EPS * span or number > high + _EPS * span:
            where = "declared" if self.origin == "declared" else "its"
            return f"value {_show(raw)} is outside {where} scale {fmt(self.scale)} of {self.metric}"
        value = min(1.0, max(0.0, (number - low) / span))
        return Score(value=value, raw=raw, scale=self.scale, **fields)


def resolve(
    metric: str,
    values: Iterable[float],
    declared: Mapping[str, Scale],
    known: Scale | None = None,
) -> MetricScale:
    """The scale of `metric` in this file, given all its numeric values in the file."""
    if known is not None:
        return MetricScale(metric, known, "tool")
    if metric in declared:
        return MetricScale(metric, declared[metric], "declared")
    outside = [v for v in values if math.isfinite(v) and not -_EPS <= v <= 1 + _EPS]
    if outside:
        return MetricScale(metric, None, "default", max(outside, key=lambda v: abs(v - 0.5)))
    return MetricScale(metric, UNIT, "default")


def conflict_notice(
    path: Any, metric: str, tool: str, known: Scale, declared: Mapping
) -> str | None:
    """A user's --scale for a metric the tool defines: the tool's own scale is used."""
    mine = declared.get(metric)
    if mine is None or tuple(mine) == tuple(known):
        return None
    return (
        f"{path}: {tool} defines {metric} on {fmt(known)}; the declared scale {fmt(mine)} "
        "is not used for it"
    )


def scale_notices(
    path: Any, scales: Iterable[MetricScale], refused: Mapping[str, int]
) -> list[str]:
    """One line per rescaled metric and per metric refused for want of a scale."""
    out = []
    for ms in scales:
        if ms.scale is not None and ms.scale != UNIT:
            who = "declared" if ms.origin == "declared" else "the tool's"
            out.append(
                f"{path}: {ms.metric} read on {who} scale {fmt(ms.scale)}, normalised "
                "(v - low) / (high - low); raw values kept"
            )
        elif ms.scale is None and ms.unknown:
            out.append(
                f"{path}: {ms.metric}: {refused.get(ms.metric, 0)} value(s) not scored, scale "
                f"unknown: {ms.unknown}"
            )
        elif ms.scale is None:
            out.append(
                f"{path}: {ms.metric}: {refused.get(ms.metric, 0)} value(s) not scored, scale "
                f"unknown (values up to {ms.extreme:g}, outside [0, 1]); {declare_hint(ms.metric)}"
            )
    return out


def keep_raw(metadata: Mapping[str, Any], metric: str, raw: Any) -> dict[str, Any]:
    """The case metadata with a refused score's raw value kept under RAW_KEY + metric."""
    out = dict(metadata)
    out[RAW_KEY + metric] = raw
    return out


def _show(raw: Any) -> str:
    text = f"{raw:g}" if isinstance(raw, float) else str(raw)
    return text if len(text) <= 40 else text[:39] + "…"


def _raw_number(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw.strip())
        except ValueError:
            return None
    return None


def rescale_cases(
    path: Any,
    cases: Iterable[Case],
    declared: Mapping[str, Scale],
    notices: list[str],
    known: Mapping[str, Scale] | None = None,
) -> list[Case]:
    """Scores read from numbers, put on their metric's scale for the whole file (for importers
    that first read a score as its raw number): a value that cannot be placed becomes an error
    for that metric, its raw value kept. Scores from words or booleans are on [0, 1]."""
    cases = list(cases)
    known = known or {}
    numbers: dict[str, list[float]] = {}
    for case in cases:
        for metric, score in case.scores.items():
            number = _raw_number(score.raw)
            if number is not None:
                numbers.setdefault(metric, []).append(number)
    scales = {m: resolve(m, v, declared, known.get(m)) for m, v in numbers.items()}
    out = []
    refused: dict[str, int] = {}
    for case in cases:
        scores: dict[str, Score] = {}
        errors = dict(case.errors)
        metadata = case.metadata
        for metric, score in case.scores.items():
            number = _raw_number(score.raw)
            if number is None:
                scores[metric] = score if score.scale else replace(score, scale=UNIT)
                continue
            graded = scales[metric].score(number, score.raw)
            if isinstance(graded, Score):
                scores[metric] = replace(score, value=graded.value, scale=graded.scale)
            else:
                errors[metric] = graded
                metadata = keep_raw(metadata, metric, score.raw)
                refused[metric] = refused.get(metric, 0) + 1
        out.append(replace(case, scores=scores, errors=errors, metadata=metadata))
    notices += scale_notices(path, scales.values(), refused)
    return out
