"""Run comparison: store + stats -> per-metric verdicts, per-case deltas, noise and agreement.

Values are fractions in [0, 1]; the margin too (0.05 = 5 points). Text says points (x 100).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from ragtui.core import stats
from ragtui.core.compare_data import (
    Agreement,
    ScoreGrid,
    agreement,
    bottom_cases,
    comparability_warnings,
    drift_warnings,
    human_agreement,
    judged_same_answers,
    mean_or_none,
    replicates,
)
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Run
from ragtui.core.store import Store

__all__ = ["Agreement", "CaseDelta", "Comparison", "MetricResult", "analyse_metric", "compare_runs"]

ALPHA = 0.05
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
class MetricResult:
    metric: str
    n: int
    only_a: int
    only_b: int
    errors: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_adj: float | None
    noise_floor: float | None
    rerun_delta: float | None
    icc: float | None
    mde: float | None
    power: float | None
    verdict: str
    reason: str
    fixed: int | None = None
    broke: int | None = None
    mcnemar_p: float | None = None
    errors_a: int = 0
    errors_b: int = 0
    ci_method: str = "none"
    sd: float | None = None
    cases_needed: int | None = None
    noise_runs: int = 0  # reruns behind the noise floor (0: none)
    bottom_a: float | None = None  # mean of the worst 10 % of A's cases
    bottom_b: float | None = None


@dataclass(frozen=True)
class CaseDelta:
    case_id: str
    metric: str
    a: float
    b: float
    delta: float


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    seed: int
    margin: float
    warnings: list[str]
    metrics: list[MetricResult]
    noise_lines: list[str]
    bottom: dict[str, dict[str, list[tuple[str, float]]]]
    agreement: list[Agreement]
    human: list[Agreement]
    run_a: Run
    run_b: Run
    reruns_a: list[str]  # A's reruns averaged into the baseline, A first
    deltas: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(repr=False, compare=False)

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
        """The per-case deltas as an Arrow table (case_id, metric, a, b, delta), worst first."""
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

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "a_name": self.run_a.name,
            "b_name": self.run_b.name,
            "seed": self.seed,
            "margin": self.margin,
            "warnings": list(self.warnings),
            "noise": list(self.noise_lines),
            "reruns_a": list(self.reruns_a),
            "metrics": [asdict(m) for m in self.metrics],
            "cases": self.case_table().to_pylist(),
            "bottom": {
                m: {
                    side: [{"case_id": c, "value": v} for c, v in rows]
                    for side, rows in sides.items()
                }
                for m, sides in self.bottom.items()
            },
            "agreement": [asdict(g) for g in self.agreement],
            "human": [asdict(g) for g in self.human],
        }


# ---------------------------------------------------------------- one metric, pure


def _f(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def analyse_metric(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    rng: np.random.Generator,
    margin: float = 0.05,
    a_first: np.ndarray | None = None,
) -> MetricResult:
    """Paired statistics of one metric over its paired cases. `a` may be a rerun mean; McNemar
    uses `a_first` (A's own scores) because a mean of binary reruns is not binary.
    The verdict here uses the raw p; `compare_runs` re-decides it with the Holm-adjusted p.
    """
    d = b - a
    pd = stats.paired_delta(d, rng)
    p = stats.sign_flip_p(d, rng)
    sd = float(d.std(ddof=1)) if d.size >= 2 else None
    binary_a = a if a_first is None else a_first
    mc = stats.mcnemar(binary_a, b) if stats.is_binary(binary_a, b) else None
    result = MetricResult(
        metric=metric,
        n=int(d.size),
        only_a=0,
        only_b=0,
        errors=0,
        mean_a=_f(float(a.mean())) if a.size else None,
        mean_b=_f(float(b.mean())) if b.size else None,
        delta=_f(pd.delta),
        se=_f(pd.se),
        ci_low=_f(pd.ci_low),
        ci_high=_f(pd.ci_high),
        p=_f(p),
        p_adj=_f(p),
        noise_floor=None,
        rerun_delta=None,
        icc=None,
        mde=_f(stats.mde(pd.se)),
        power=_f(stats.power(margin, pd.se)),
        verdict="",
        reason="",
        fixed=None if mc is None else mc.fixed,
        broke=None if mc is None else mc.broke,
        mcnemar_p=None if mc is None else mc.p,
        ci_method=pd.method,
        sd=_f(sd),
        cases_needed=None if sd is None else stats.cases_needed(sd, margin),
    )
    return decide(result, margin)


def decide(r: MetricResult, margin: float) -> MetricResult:
    """Verdict rules of DESIGN.md §3, on the (adjusted) p in `r.p_adj`."""
    if r.n == 0:
        verdict, reason = "no data", "no case scored in both runs"
    elif r.p_adj is None or r.ci_low is None or r.ci_high is None or r.delta is None:
        verdict, reason = "within noise", f"too few cases ({r.n}) for a test"
    elif r.p_adj < ALPHA and r.delta != 0:
        verdict = "improved" if r.delta > 0 else "regressed"
        reason = f"adjusted p {r.p_adj:.3g} < {ALPHA:g}"
    elif -margin <= r.ci_low and r.ci_high <= margin:
        verdict, reason = "within noise", "no meaningful change"
    elif r.cases_needed is not None and r.cases_needed > r.n:
        verdict, reason = "within noise", f"inconclusive (need ~{r.cases_needed:,} cases)"
    else:
        verdict = "within noise"
        reason = f"inconclusive (CI crosses ±{margin * 100:g} points)"
    return replace(r, verdict=verdict, reason=reason)


# ---------------------------------------------------------------- compare_runs


def compare_runs(
    store: Store,
    a_ref: str,
    b_ref: str,
    *,
    metrics: Sequence[str] | None = None,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
) -> Comparison:
    a_id, b_id = store.resolve_run(a_ref), store.resolve_run(b_ref)
    if a_id == b_id:
        raise RagtuiError(f"A and B are the same run ({a_id}): pick two different runs")
    run_a, run_b = store.run(a_id), store.run(b_id)
    if not 0 < margin < 1:
        raise RagtuiError(
            f"margin must be a fraction between 0 and 1 (0.05 = 5 points), got {margin}"
        )
    have_a, have_b = store.metrics([a_id]), store.metrics([b_id])
    if metrics is None:
        names = [m for m in have_a if m in set(have_b)]
    else:
        names = list(dict.fromkeys(metrics))
        unknown = [m for m in names if m not in have_a and m not in have_b]
        if unknown:
            known = ", ".join(sorted({*have_a, *have_b})) or "none"
            raise RagtuiError(f"metric {unknown[0]!r} is in neither run (they have: {known})")
    warnings = comparability_warnings(run_a, run_b)
    for m in names:
        for side, have in (("A", have_a), ("B", have_b)):
            if m not in have:
                warnings.append(f"{m}: not scored in run {side}")
    siblings_a = [r for r in store.reruns(a_id) if r not in (a_id, b_id)]
    siblings_b = [r for r in store.reruns(b_id) if r not in (a_id, b_id, *siblings_a)]
    ids = [a_id, b_id, *siblings_a, *siblings_b]
    grid = ScoreGrid(store.scores(ids, names, ordered=False), ids, names)
    if run_a.config_key == run_b.config_key and grid.same(0, 1):
        warnings.append("B is identical to A on every score: a cached rerun, not a replicate")
    reruns_a = replicates(grid, [0] + [grid.runs[r] for r in siblings_a], ids, warnings)
    reruns_b = replicates(grid, [1] + [grid.runs[r] for r in siblings_b], ids, warnings)
    noise_rows, noise_side = (reruns_a, "A") if len(reruns_a) > 1 else (reruns_b, "B")

    results, deltas, bottom, noise_lines = [], {}, {}, []
    for mi, m in enumerate(names):
        st, val = grid.state[:, mi], grid.value[:, mi]
        paired = (st[0] == 1) & (st[1] == 1)
        rows = val[reruns_a][:, paired]
        base = np.nanmean(rows, axis=0) if rows.shape[1] else np.zeros(0)
        r = analyse_metric(
            m,
            base,
            val[1, paired],
            rng=stats.rng_for(seed, m),
            margin=margin,
            a_first=val[0, paired] if len(reruns_a) > 1 else None,
        )
        nf = None
        if len(noise_rows) > 1:
            full = np.all(st[noise_rows] == 1, axis=0)
            nf = stats.noise_floor(val[noise_rows][:, full])
            drift_warnings(
                m, val[noise_rows][:, full], [ids[i] for i in noise_rows], noise_side, warnings
            )
        bot_a, bot_b = (bottom_cases(grid, val[i], st[i] == 1) for i in (0, 1))
        bottom[m] = {"a": bot_a, "b": bot_b}
        results.append(
            replace(
                r,
                only_a=int(np.count_nonzero((st[0] == 1) & (st[1] == 0))),
                only_b=int(np.count_nonzero((st[0] == 0) & (st[1] == 1))),
                errors=int(np.count_nonzero((st[0] == 2) | (st[1] == 2))),
                errors_a=int(np.count_nonzero(st[0] == 2)),
                errors_b=int(np.count_nonzero(st[1] == 2)),
                noise_floor=None if nf is None else nf.noise_floor,
                rerun_delta=None if nf is None else nf.rerun_delta,
                icc=None if nf is None else _f(nf.icc),
                noise_runs=0 if nf is None else nf.k,
                bottom_a=mean_or_none([v for _, v in bot_a]),
                bottom_b=mean_or_none([v for _, v in bot_b]),
            )
        )
        deltas[m] = (grid.case_ids[paired], base, val[1, paired])
        if nf is not None:
            noise_lines.append(
                f"{m}: reruns of {noise_side} ({nf.k} runs, {nf.n} cases) differ by "
                f"{nf.rerun_delta * 100:.1f} points (rule of thumb: < {margin * 100:g}) · "
                f"noise floor ±{nf.noise_floor * 100:.1f}"
                + ("" if nf.icc is None else f" · ICC {nf.icc:.2f}")
            )
            if nf.rerun_delta > margin + 1e-9:  # float slack: 5.0 points is within "< 5"
                warnings.append(
                    f"{m}: reruns of {noise_side} differ by {nf.rerun_delta * 100:.1f} "
                    f"points, more than the {margin * 100:g}-point rule of thumb"
                )
    adjusted = stats.holm([r.p for r in results])
    results = [
        decide(replace(r, p_adj=_f(p)), margin) for r, p in zip(results, adjusted, strict=True)
    ]
    for r in results:
        if r.errors:
            warnings.append(
                f"{r.metric}: {r.errors} cases errored (A {r.errors_a}, B {r.errors_b}); "
                "they are counted, not scored"
            )
        if r.only_a or r.only_b:
            warnings.append(
                f"{r.metric}: {r.only_a} cases only in A, {r.only_b} only in B; "
                f"compared on the {r.n} both scored"
            )
    if len(reruns_a) > 1:
        noise_lines.append(f"A's per-case baseline is the mean of its {len(reruns_a)} reruns")
    if len(noise_rows) < 2:
        noise_lines.append(
            "no reruns of A or B with the same config: noise floor unknown "
            "(run a noise rerun of A to measure it)"
        )
    noise_lines.append(f"seed {seed} · {stats.BOOTSTRAP_RESAMPLES:,} bootstrap resamples (N ≥ 30)")

    judge_agree: list[Agreement] = []
    if judged_same_answers(run_a, run_b):
        for mi, m in enumerate(names):
            p = (grid.state[0, mi] == 1) & (grid.state[1, mi] == 1)
            if p.any():
                judge_agree.append(
                    agreement(
                        m,
                        "A judge vs B judge",
                        grid.case_ids[p],
                        grid.value[0, mi, p],
                        grid.value[1, mi, p],
                        grid.labels(0, mi)[p],
                        grid.labels(1, mi)[p],
                    )
                )
    human = human_agreement(store, grid, names, a_id, b_id)
    for g in [*judge_agree, *human]:
        if g.flagged:
            figures = ", ".join(
                f"{k} {v:.2f}" for k, v in (("κ", g.kappa), ("ρ", g.rho)) if v is not None
            )
            warnings.append(
                f"{g.metric}: low agreement, {g.between} ({figures}; "
                f"{len(g.flipped)} of {g.n} cases flipped)"
            )
    return Comparison(
        a=a_id,
        b=b_id,
        seed=seed,
        margin=margin,
        warnings=warnings,
        metrics=results,
        noise_lines=noise_lines,
        bottom=bottom,
        agreement=judge_agree,
        human=human,
        run_a=run_a,
        run_b=run_b,
        reruns_a=[ids[i] for i in reruns_a],
        deltas=deltas,
    )
