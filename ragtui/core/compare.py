"""Run comparison: store + statistics -> per-metric verdicts, per-case values, noise, agreement.

Values are fractions in [0, 1]; the margin too (0.05 = 5 points). Every note is a code with
data (`ragtui.core.verdict`); `ragtui.format` turns them into sentences.

Both sides' reruns count, symmetrically: a case's A value is the mean of A's reruns, its B
value the mean of B's (so `compare A B` mirrors `compare B A`), and every per-case figure —
deltas, McNemar's counts, the worst cases, the Case screen — uses those same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from ragtui.core import stats
from ragtui.core.agreement import Agreement
from ragtui.core.analysis import MetricResult, analyse_metric, decide
from ragtui.core.budget import NoiseBudget
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Run
from ragtui.core.ppi import PPIEstimate
from ragtui.core.store import Store
from ragtui.core.verdict import Note, Verdict

__all__ = [
    "Agreement",
    "CaseDelta",
    "CaseValues",
    "Comparison",
    "JudgeVerdict",
    "MetricResult",
    "Replicates",
    "analyse_metric",
    "compare_runs",
    "decide",
]

CASE_SCHEMA = pa.schema(
    [
        ("case_id", pa.string()),
        ("metric", pa.string()),
        ("a", pa.float64()),
        ("b", pa.float64()),
        ("delta", pa.float64()),
    ]
)


@dataclass(frozen=True)
class CaseDelta:
    case_id: str
    metric: str
    a: float
    b: float
    delta: float


@dataclass(frozen=True)
class CaseValues:
    """One case of one metric as the verdict sees it, and each rerun's own value."""

    case_id: str
    metric: str
    a: float  # the mean of A's reruns: the value every screen shows as A
    b: float
    a_runs: tuple[tuple[str, float | None], ...]  # (run id, its value; None: not scored)
    b_runs: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True)
class Replicates:
    """Per metric, the paired cases and each side's replicate runs' values over them."""

    case_ids: np.ndarray
    runs_a: list[str]
    values_a: np.ndarray  # runs_a × cases, NaN where a rerun did not score the case
    runs_b: list[str]
    values_b: np.ndarray

    @property
    def a(self) -> np.ndarray:
        return _case_means(self.values_a) if self.case_ids.size else np.zeros(0)

    @property
    def b(self) -> np.ndarray:
        return _case_means(self.values_b) if self.case_ids.size else np.zeros(0)


def _case_means(values: np.ndarray) -> np.ndarray:
    """Each case's mean over the reruns, without the float dust of the sum (0.1 in three
    reruns averaged 0.10000000000000002): a case B scored as A's reruns all did is unmoved,
    in every count of worse, same and better."""
    return np.round(np.nanmean(values, axis=0), 12)


@dataclass(frozen=True)
class JudgeVerdict:
    """The A-vs-B verdict of one metric under one judge (the runs' own, or a re-judge's)."""

    judge: str
    a: str
    b: str
    metric: str
    verdict: Verdict
    delta: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    seed: int
    margin: float
    warnings: list[Note]
    metrics: list[MetricResult]
    noise: list[Note]
    bottom: dict[str, dict[str, list[tuple[str, float]]]]
    agreement: list[Agreement]
    human: list[Agreement]
    run_a: Run
    run_b: Run
    reruns_a: list[str]  # A's runs averaged per case, A first
    reruns_b: list[str] = field(default_factory=list)
    replicates: dict[str, Replicates] = field(default_factory=dict, repr=False, compare=False)
    judges: list[JudgeVerdict] = field(default_factory=list)
    ppi: list[PPIEstimate] = field(default_factory=list)
    budget: list[NoiseBudget] = field(default_factory=list)
    cluster_field: str | None = None  # the case metadata field that named clusters, if any

    @cached_property
    def deltas(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """metric -> (case ids, A per case, B per case) over the paired cases."""
        return {m: (r.case_ids, r.a, r.b) for m, r in self.replicates.items()}

    @cached_property
    def cases(self) -> list[CaseDelta]:
        """Every paired case of every metric, worst delta first (built on first use: can be big)."""
        t = self.case_table()
        return [
            CaseDelta(*row)
            for row in zip(
                *(t[c].to_pylist() for c in ("case_id", "metric", "a", "b", "delta")), strict=True
            )
        ]

    def case_table(self) -> pa.Table:
        """The per-case values as an Arrow table (case_id, metric, a, b, delta), worst first."""
        parts = [
            pa.table(
                {
                    "case_id": pa.array(ids, pa.string()),
                    "metric": pa.array([m] * len(ids), pa.string()),
                    "a": pa.array(a, pa.float64()),
                    "b": pa.array(b, pa.float64()),
                    "delta": pa.array(b - a, pa.float64()),
                },
                schema=CASE_SCHEMA,
            )
            for m, (ids, a, b) in self.deltas.items()
        ]
        table = pa.concat_tables(parts) if parts else CASE_SCHEMA.empty_table()
        return table.sort_by(
            [("delta", "ascending"), ("metric", "ascending"), ("case_id", "ascending")]
        )

    def metric(self, name: str) -> MetricResult | None:
        return next((m for m in self.metrics if m.metric == name), None)

    def made_from(self) -> dict[str, list[str]]:
        """The runs each side's figures were made from: "A" and "B", their reruns averaged per
        case, then the re-judges whose verdicts it shows beside its own judge's."""
        a, b = list(self.reruns_a) or [self.a], list(self.reruns_b) or [self.b]
        a += [r for r in dict.fromkeys(j.a for j in self.judges) if r not in a]
        b += [r for r in dict.fromkeys(j.b for j in self.judges) if r not in b]
        return {"A": a, "B": b}

    def case_values(self, metric: str, case_id: str) -> CaseValues | None:
        """A case as the verdict saw it: each side's rerun mean and every rerun's value."""
        rep = self.replicates.get(metric)
        if rep is None:
            return None
        where = np.flatnonzero(rep.case_ids == case_id)
        if not where.size:
            return None
        i = int(where[0])

        def runs(ids: list[str], values: np.ndarray) -> tuple[tuple[str, float | None], ...]:
            return tuple(
                (r, None if np.isnan(v) else float(v))
                for r, v in zip(ids, values[:, i], strict=True)
            )

        return CaseValues(
            case_id,
            metric,
            float(rep.a[i]),
            float(rep.b[i]),
            runs(rep.runs_a, rep.values_a),
            runs(rep.runs_b, rep.values_b),
        )

    def to_json(self, *, rerun_values: bool = False) -> dict[str, Any]:
        """Codes and data, each with its sentence; strict JSON (no NaN or infinity anywhere).
        `rerun_values`: each case also lists every rerun's value."""
        from ragtui import format as fmt

        def note(n: Note) -> dict[str, Any]:
            return n.to_json() | {"text": fmt.note_text(n)}

        cases = self.case_table().to_pylist()
        if rerun_values:
            for row in cases:
                cv = self.case_values(row["metric"], row["case_id"])
                assert cv is not None
                row["a_runs"] = [{"run": r, "value": v} for r, v in cv.a_runs]
                row["b_runs"] = [{"run": r, "value": v} for r, v in cv.b_runs]
        return {
            "a": self.a,
            "b": self.b,
            "a_name": self.run_a.name,
            "b_name": self.run_b.name,
            "seed": self.seed,
            "margin": self.margin,
            "cluster_field": self.cluster_field,
            "warnings": [note(w) for w in self.warnings],
            "noise": [note(n) for n in self.noise],
            "reruns_a": list(self.reruns_a),
            "reruns_b": list(self.reruns_b),
            "metrics": [
                asdict(m)
                | {
                    "verdict_text": fmt.verdict_label(m),
                    "why": fmt.verdict_reason(m, self.margin),
                    "method_text": fmt.method_name(m),
                }
                for m in self.metrics
            ],
            "cases": cases,
            "bottom": {
                m: {
                    side: [{"case_id": c, "value": v} for c, v in rows]
                    for side, rows in sides.items()
                }
                for m, sides in self.bottom.items()
            },
            "agreement": [asdict(g) for g in self.agreement],
            "human": [asdict(g) for g in self.human],
            "judges": [asdict(j) for j in self.judges],
            "ppi": [asdict(p) for p in self.ppi],
            "budget": [asdict(b) | {"text": fmt.budget_text(b)} for b in self.budget],
        }


# ---------------------------------------------------------------- compare_runs


def compare_runs(
    store: Store,
    a_ref: str,
    b_ref: str,
    *,
    metrics: Sequence[str] | None = None,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
    other_judges: bool = True,
    cluster_field: str | None = None,
) -> Comparison:
    """Compare B with A, metric by metric. `other_judges`: also decide A vs B under every
    judge that re-graded both (judge robustness). `cluster_field`: a case metadata field that
    names the cluster of cases whose own `cluster` is unset ([compare] cluster in ragtui.toml)."""
    from ragtui.core import compare_build

    if not 0 < margin < 1:
        raise RagtuiError(
            f"margin must be a fraction between 0 and 1 (0.05 = 5 points), got {margin}"
        )
    if seed < 0:
        raise RagtuiError(f"seed must be 0 or more, got {seed}")
    a_id, b_id = store.resolve_run(a_ref), store.resolve_run(b_ref)
    if a_id == b_id:
        raise RagtuiError(f"A and B are the same run ({a_id}): pick two different runs")
    compare_build.refuse_summary_only(store, [a_id, b_id])
    built = compare_build.Builder(store, a_id, b_id, metrics, margin, seed, cluster_field).build()
    results = built.results
    adjusted = stats.holm(
        [r.p if r.verdict is not Verdict.NOT_COMPARABLE else None for r in results]
    )
    results = [
        decide(replace(r, p_adj=None if p is None else float(p)), margin)
        for r, p in zip(results, adjusted, strict=True)
    ]
    comparison = Comparison(
        a=a_id,
        b=b_id,
        seed=seed,
        margin=margin,
        warnings=built.warnings,
        metrics=results,
        noise=built.noise,
        bottom=built.bottom,
        agreement=built.agreement,
        human=built.human,
        run_a=built.run_a,
        run_b=built.run_b,
        reruns_a=built.reruns_a,
        reruns_b=built.reruns_b,
        replicates=built.replicates,
        ppi=built.ppi,
        budget=built.budget,
        cluster_field=cluster_field,
    )
    if other_judges:
        judges, notes = compare_build.judge_verdicts(store, comparison)
        comparison = replace(comparison, judges=judges, warnings=[*comparison.warnings, *notes])
    return comparison
