"""Several candidates against one baseline: one table of candidates × metrics.

Each pair is compared as `compare_runs` compares two runs; the p-values of the whole table are
then Holm-adjusted together (every cell is one test) and each verdict is re-decided on its
adjusted p. Kept small on purpose: it will be re-pointed to the new comparison engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragtui.core import stats
from ragtui.core.compare import MetricResult, compare_runs, decide
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store

MAX_CANDIDATES = 50


@dataclass(frozen=True)
class Cell:
    candidate: str
    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_adj: float | None  # Holm over every cell of the table
    verdict: str  # a Verdict's value: "improved", "regressed", "inconclusive", ...
    reason: str  # why, in words (ragtui.format.verdict_reason)
    method: str  # a Method's value, as `compare --json` gives it: "t", "score", "few_moved", ...


@dataclass(frozen=True)
class MultiComparison:
    base: str
    base_name: str
    candidates: tuple[str, ...]
    names: tuple[str, ...]  # the candidates' names, in the same order
    metrics: tuple[str, ...]
    margin: float
    seed: int
    cells: tuple[Cell, ...]  # candidate-major, metrics in order
    notes: tuple[tuple[str, str], ...]  # (candidate id, a note of that pair's, in words)
    # the runs each side's figures were averaged from (a run id -> its reruns, itself first):
    # a rerun deleted later is gone from the index, so an open table matches it against these
    reruns: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def cell(self, candidate: str, metric: str) -> Cell | None:
        return next(
            (c for c in self.cells if c.candidate == candidate and c.metric == metric), None
        )

    def ranked(self, metric: str) -> list[str]:
        """Candidates by their Δ on `metric`, best first; those without a Δ last."""

        def key(candidate: str) -> tuple[bool, float]:
            c = self.cell(candidate, metric)
            d = None if c is None else c.delta
            return (d is None, -(d or 0.0))

        return sorted(self.candidates, key=key)

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "base_name": self.base_name,
            "candidates": [
                {"id": c, "name": n} for c, n in zip(self.candidates, self.names, strict=True)
            ],
            "metrics": list(self.metrics),
            "margin": self.margin,
            "seed": self.seed,
            "adjustment": f"Holm over all {sum(c.p is not None for c in self.cells)} tests",
            "cells": [c.__dict__ for c in self.cells],
            "warnings": [f"{cid}: {text}" for cid, text in self.notes],
        }


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def compare_many(
    store: Store,
    base: str,
    candidates: Sequence[str],
    metrics: Sequence[str] | None = None,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
    *,
    cluster_field: str | None = None,
) -> MultiComparison:
    base_id = store.resolve_run(base)
    ids = [store.resolve_run(c) for c in candidates]
    if not ids:
        raise RagtuiError("give at least one candidate run to compare with the base")
    if len(ids) > MAX_CANDIDATES:
        raise RagtuiError(f"{len(ids)} candidates: compare at most {MAX_CANDIDATES} at a time")
    for given, rid in zip(candidates, ids, strict=True):
        if rid == base_id:
            raise RagtuiError(f"candidate {given!r} is the base run itself ({base_id})")
    if len(set(ids)) < len(ids):
        twice = next(r for r in ids if ids.count(r) > 1)
        raise RagtuiError(f"run {twice} is given twice as a candidate")
    names = list(dict.fromkeys(metrics)) if metrics else store.metrics([base_id])
    if not names:
        raise RagtuiError(f"the base run {base_id} has no scores to compare")
    from ragtui.format import note_text, verdict_reason  # words from the one formatting module

    results: list[tuple[str, MetricResult]] = []
    notes: list[tuple[str, str]] = []
    reruns: dict[str, tuple[str, ...]] = {}
    for cid in ids:
        c = compare_runs(
            store,
            base_id,
            cid,
            metrics=names,
            margin=margin,
            seed=seed,
            cluster_field=cluster_field,
        )
        notes += [(cid, note_text(w)) for w in c.warnings]
        # the base's: every rerun any cell used (with a candidate of its own config, none)
        reruns[base_id] = tuple(dict.fromkeys((*reruns.get(base_id, ()), *c.reruns_a)))
        reruns[cid] = tuple(c.reruns_b)
        results += [(cid, m) for m in c.metrics]
    adjusted = stats.holm([m.p for _, m in results])
    over = f"every test of the table ({sum(m.p is not None for _, m in results)})"
    cells = []
    for (cid, m), p_adj in zip(results, adjusted, strict=True):
        d = decide(replace(m, p_adj=_finite(p_adj)), margin)
        cells.append(
            Cell(
                cid,
                d.metric,
                d.n,
                d.mean_a,
                d.mean_b,
                d.delta,
                d.ci_low,
                d.ci_high,
                d.p,
                d.p_adj,
                str(d.verdict),
                verdict_reason(d, margin, over),
                str(d.method),
            )
        )
    return MultiComparison(
        base=base_id,
        base_name=store.run(base_id).name,
        candidates=tuple(ids),
        names=tuple(store.run(c).name for c in ids),
        metrics=tuple(names),
        margin=margin,
        seed=seed,
        cells=tuple(cells),
        notes=tuple(notes),
        reruns=reruns,
    )


def other_configs(store: Store, base: str, limit: int = MAX_CANDIDATES) -> list[str]:
    """Candidates for "the base against every other config": the first run of each other
    config of the base's dataset (compare_runs averages a config's reruns itself), oldest
    first, re-judges left out (same answers, another judge: not another config), and so are
    summary-only runs (no cases to compare: a config's first run with cases stands for it)."""
    base_id = store.resolve_run(base)
    rows = store.runs().to_pylist()  # oldest first
    me = next(r for r in rows if r["run_id"] == base_id)
    seen = {me["config_key"]}
    out = []
    for r in rows:
        same_data = (r["dataset_name"], r["dataset_version"]) == (
            me["dataset_name"],
            me["dataset_version"],
        )
        usable = r["kind"] != "rejudge" and r["n_cases"]
        if same_data and usable and r["config_key"] not in seen:
            seen.add(r["config_key"])
            out.append(r["run_id"])
    return out[:limit]
