"""One promptfoo result's scores: `namedScores`, read beside `gradingResult.componentResults`.

Assertions that share a `metric` are one metric (promptfoo's own named score), never one metric
per assertion. promptfoo now writes each named score as the weighted mean of its assertions'
scores, with `namedScoreWeights`; older versions (results version 2) wrote their sum, without
weights: that sum is divided by the number of its assertions, the figure promptfoo's own
per-prompt metrics report. A named score that is neither the sum nor the mean of its
assertions' scores (weights unwritten) is an error for that metric, never a guess. A metric
whose grader gave no grade is an error (promptfoo scores it 0).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ragtui.core.model import Score
from ragtui.importers._common import as_number, clamp01, fail
from ragtui.importers._promptfoo_rows import grader_failed


def pass_label(passed: Any) -> str | None:
    return None if not isinstance(passed, bool) else ("PASS" if passed else "FAIL")


def scores_of(
    path: Path, i: int, r: dict[str, Any], grading: dict[str, Any] | None
) -> tuple[dict[str, Score], dict[str, str]]:
    """Scores, and the metrics that failed (a grader with no grade, a sum that does not add up)."""
    scores: dict[str, Score] = {}
    failed: dict[str, str] = {}
    named = r.get("namedScores") or (grading or {}).get("namedScores") or {}
    if not isinstance(named, dict):
        raise fail(
            path, f"result {i + 1}: namedScores: expected an object, found {type(named).__name__}"
        )
    weighted = isinstance((grading or {}).get("namedScoreWeights"), dict) or isinstance(
        r.get("namedScoreWeights"), dict
    )
    parts = _components(path, i, grading)
    for metric, items in parts.items():
        failures = [reason for reason, passed, _, _ in items if grader_failed(reason, passed)]
        if failures:
            failed[metric] = f"the grader gave no grade: {failures[0]}"
            continue
        if metric in named:
            continue  # read below, from promptfoo's own figure
        values = [score for _, _, _, score in items]
        if any(v is None for v in values):
            bad = next(c for c in items if c[3] is None)
            raise fail(
                path,
                f"result {i + 1}: componentResults score for {metric!r}: expected a number, "
                f"found {bad[2]!r}",
            )
        scores[metric] = _score(items, sum(values) / len(values), _raw(items))
    for metric, raw in named.items():
        metric = str(metric)
        if metric in failed:
            continue
        value = as_number(raw)
        if value is None or isinstance(raw, bool):
            raise fail(
                path, f"result {i + 1}: namedScores.{metric}: expected a number, found {raw!r}"
            )
        items = parts.get(metric, [])
        if len(items) > 1 and not weighted:
            mean = _of_sum(value, items)
            if mean is None:
                failed[metric] = (
                    f"namedScores.{metric} is {raw!r}, neither the sum nor the mean of its "
                    f"{len(items)} assertions' scores, and the file records no weights"
                )
                continue
            value = mean
        scores[metric] = _score(items, value, value if value != as_number(raw) else raw)
    if not scores and not failed:
        value = as_number(r.get("score"))
        if value is not None:
            scores["score"] = Score(
                value=clamp01(value), raw=r.get("score"), label=pass_label(r.get("success"))
            )
    return scores, failed


Part = tuple[str | None, Any, Any, float | None]  # reason, pass, raw score, score


def _components(path: Path, i: int, grading: dict[str, Any] | None) -> dict[str, list[Part]]:
    """componentResults by metric: assertions sharing a `metric` together; unnamed assertions
    of one type each their own (`type`, `type#2`, ...)."""
    out: dict[str, list[Part]] = {}
    unnamed: dict[str, int] = {}
    components = (grading or {}).get("componentResults") or []
    for c in components if isinstance(components, list) else []:
        if not isinstance(c, dict):
            continue
        assertion = c.get("assertion") if isinstance(c.get("assertion"), dict) else {}
        metric = assertion.get("metric")
        if not metric:
            base = str(assertion.get("type") or "assertion")
            unnamed[base] = unnamed.get(base, 0) + 1
            metric = base if unnamed[base] == 1 else f"{base}#{unnamed[base]}"
        raw = c.get("score")
        score = as_number(raw) if not isinstance(raw, bool) else None
        reason = c.get("reason") if isinstance(c.get("reason"), str) else None
        threshold = as_number(assertion.get("threshold"))
        out.setdefault(str(metric), []).append((reason, c.get("pass"), (raw, threshold), score))
    return out


def _of_sum(value: float, items: list[Part]) -> float | None:
    """The mean of the assertions' scores, when `value` is their sum (or already the mean)."""
    scores = [s for _, _, _, s in items]
    if any(s is None for s in scores):
        return None
    total = sum(s for s in scores if s is not None)
    if math.isclose(value, total, rel_tol=1e-9, abs_tol=1e-9):
        return total / len(scores)
    if math.isclose(value, total / len(scores), rel_tol=1e-9, abs_tol=1e-9):
        return value
    return None


def _raw(items: list[Part]) -> Any:
    return (
        items[0][2][0]
        if len(items) == 1
        else sum(s for *_, s in items if s is not None) / len(items)
    )


def _score(items: list[Part], value: float, raw: Any) -> Score:
    passes = [passed for _, passed, _, _ in items]
    reasons = [reason for reason, *_ in items if reason]
    thresholds = {t for _, _, (_, t), _ in items}
    return Score(
        value=clamp01(value),
        raw=raw,
        label=pass_label(all(passes))
        if passes and all(isinstance(p, bool) for p in passes)
        else None,
        reason="; ".join(reasons) if reasons else None,
        threshold=thresholds.pop() if len(thresholds) == 1 else None,
    )
