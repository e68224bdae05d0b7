"""Cost and latency of runs: per-run totals and means, and their deltas between two runs.

Latency is the case's `latency_ms`. Tokens and cost come from the case metadata, under the
names the tools use (first found wins):

- prompt tokens      prompt_tokens, input_tokens, tokenUsage.prompt (promptfoo),
                     usage.prompt_tokens / usage.input_tokens, model_usage.*.input_tokens (Inspect,
                     summed over models)
- completion tokens  completion_tokens, output_tokens, tokenUsage.completion,
                     usage.completion_tokens / usage.output_tokens, model_usage.*.output_tokens
- total tokens       total_tokens, tokens, tokenUsage.total, usage.total_tokens,
                     model_usage.*.total_tokens; else prompt + completion when both are known
- cost               cost, cost_usd, total_cost (the system's cost, as the tool reported it)
- judge cost         judge_cost, evaluation_cost, evaluationCost (DeepEval: the grading's cost)

A value that is not a number in [0, 1e15) is counted as unreadable, never read as 0 (the cap
keeps sums finite: a run file is untrusted).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtui.core import case_texts
from ragtui.core.store import Store

FIELDS = ("latency_ms", "prompt_tokens", "completion_tokens", "total_tokens", "cost", "judge_cost")
_FLAT = {
    "prompt_tokens": ("prompt_tokens", "input_tokens"),
    "completion_tokens": ("completion_tokens", "output_tokens"),
    "total_tokens": ("total_tokens", "tokens"),
    "cost": ("cost", "cost_usd", "total_cost"),
    "judge_cost": ("judge_cost", "evaluation_cost", "evaluationCost"),
}
_TOKEN_USAGE = {
    "prompt_tokens": "prompt",
    "completion_tokens": "completion",
    "total_tokens": "total",
}
_USAGE = {
    "prompt_tokens": ("prompt_tokens", "input_tokens"),
    "completion_tokens": ("completion_tokens", "output_tokens"),
    "total_tokens": ("total_tokens",),
}
_MODEL_USAGE = {
    "prompt_tokens": "input_tokens",
    "completion_tokens": "output_tokens",
    "total_tokens": "total_tokens",
}
_BAD = object()  # present but not a usable number
_LIMIT = 1e15


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _BAD
    return float(value) if math.isfinite(value) and 0 <= value < _LIMIT else _BAD


def _lookup(meta: Mapping[str, Any], field: str) -> Any:
    """The field's number, None when absent, _BAD when present but unusable."""
    for key in _FLAT.get(field, ()):
        if key in meta:
            return _number(meta[key])
    usage = meta.get("tokenUsage")
    if isinstance(usage, Mapping) and _TOKEN_USAGE.get(field) in usage:
        return _number(usage[_TOKEN_USAGE[field]])
    usage = meta.get("usage")
    if isinstance(usage, Mapping):
        for key in _USAGE.get(field, ()):
            if key in usage:
                return _number(usage[key])
    per_model = meta.get("model_usage")
    if isinstance(per_model, Mapping) and field in _MODEL_USAGE:
        found = [
            _number(u[_MODEL_USAGE[field]])
            for u in per_model.values()
            if isinstance(u, Mapping) and _MODEL_USAGE[field] in u
        ]
        if found:
            return _BAD if _BAD in found else sum(found)
    return None


def case_figures(latency_ms: float | None, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """One case's figures: a number, None (absent) or _BAD (unreadable) per field."""
    out: dict[str, Any] = {"latency_ms": None if latency_ms is None else _number(latency_ms)}
    for field in FIELDS[1:]:
        out[field] = _lookup(metadata, field)
    if out["total_tokens"] is None:
        p, c = out["prompt_tokens"], out["completion_tokens"]
        if isinstance(p, float) and isinstance(c, float):
            out["total_tokens"] = p + c
    return out


@dataclass(frozen=True)
class Figure:
    """One field over one run's cases."""

    field: str
    n: int  # cases that carry it
    total: float | None
    mean: float | None
    unreadable: int = 0


@dataclass(frozen=True)
class RunCosts:
    run: str
    n_cases: int
    figures: tuple[Figure, ...]  # only the fields some case carries (or tried to)

    def figure(self, field: str) -> Figure | None:
        return next((f for f in self.figures if f.field == field), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "n_cases": self.n_cases,
            "figures": {
                f.field: {k: v for k, v in f.__dict__.items() if k != "field"} for f in self.figures
            },
        }


def _metadata(text: str | None) -> Mapping[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, Mapping) else {}


def run_costs(
    store: Store, run_ids: Sequence[str], case_ids: Collection[str] | None = None
) -> list[RunCosts]:
    """Totals and means of latency, tokens and cost, per run, in the order given; over the
    cases `case_ids` only when given (A vs B: the paired cases, as quality is)."""
    per_run: dict[str, list[dict[str, Any]]] = {r: [] for r in run_ids}
    wanted = None if case_ids is None else set(case_ids)
    table = case_texts.case_extras(store, list(run_ids))
    for run_id, case_id, latency, meta in zip(
        table["run_id"].to_pylist(),
        table["case_id"].to_pylist(),
        table["latency_ms"].to_pylist(),
        table["metadata"].to_pylist(),
        strict=True,
    ):
        if wanted is None or case_id in wanted:
            per_run[run_id].append(case_figures(latency, _metadata(meta)))
    out = []
    for run_id, rows in per_run.items():
        figures = []
        for field in FIELDS:
            got = [r[field] for r in rows if isinstance(r[field], float)]
            bad = sum(r[field] is _BAD for r in rows)
            if got or bad:
                total = math.fsum(got) if got else None
                figures.append(
                    Figure(field, len(got), total, total / len(got) if got else None, bad)
                )
        out.append(RunCosts(run_id, len(rows), tuple(figures)))
    return out


@dataclass(frozen=True)
class CostDelta:
    field: str
    mean_a: float | None
    mean_b: float | None
    delta: float | None  # mean B - mean A
    ratio: float | None  # mean B / mean A
    n_a: int = 0  # A's cases that carry the figure (its mean is over them)
    n_b: int = 0


def cost_deltas(a: RunCosts, b: RunCosts) -> list[CostDelta]:
    out = []
    for field in FIELDS:
        fa, fb = a.figure(field), b.figure(field)
        if fa is None and fb is None:
            continue
        ma = fa.mean if fa else None
        mb = fb.mean if fb else None
        delta = None if ma is None or mb is None else mb - ma
        ratio = None if ma is None or mb is None or ma == 0 else mb / ma
        if ratio is not None and not math.isfinite(ratio):
            ratio = None  # a tiny A over a big B: no ratio worth printing (and JSON has no inf)
        out.append(CostDelta(field, ma, mb, delta, ratio, fa.n if fa else 0, fb.n if fb else 0))
    return out


def latency_costs(store: Store, run_ids: Sequence[str]) -> list[RunCosts]:
    """Latency only, from the index (no run file is read): for runs too big to read whole
    for their tokens and cost. In the order given."""
    found = store.run_latency(list(run_ids))
    out = []
    for run_id in run_ids:
        n_cases, n, total = found.get(run_id, (0, 0, 0.0))
        figures = (Figure("latency_ms", n, total, total / n),) if n else ()
        out.append(RunCosts(run_id, n_cases, figures))
    return out


READ_BUDGET = 64 * 1024 * 1024  # bytes of run files read for tokens and cost, all runs together
READ_LIMIT = 16 * 1024 * 1024  # a bigger run file is not read for them


def bounded_costs(
    store: Store, runs: Sequence[Any], budget: int | None = None, limit: int | None = None
) -> tuple[dict[str, RunCosts], list[str]]:
    """Cost figures for `runs` (RunRows) without reading more than `budget` bytes of run
    files: the smallest files are read for latency, tokens and cost; the others (and any
    file over `limit`) give latency only, from the index. Returns (run id -> figures, the
    ids that were not read)."""
    budget = READ_BUDGET if budget is None else budget
    limit = READ_LIMIT if limit is None else limit
    sized = []
    for run in runs:
        try:
            size = os.stat(run.file).st_size
        except OSError:
            size = limit + 1
        sized.append((size, run.id))
    read, skipped, spent = [], [], 0
    for size, run_id in sorted(sized):
        if size <= limit and spent + size <= budget:
            read.append(run_id)
            spent += size
        else:
            skipped.append(run_id)
    out = {c.run: c for c in run_costs(store, read)} if read else {}
    out.update({c.run: c for c in latency_costs(store, skipped)} if skipped else {})
    return out, skipped
