"""Comparing runs, for both shells: A vs B, several candidates against one base, the CI gate
and the Markdown report.

The configuration is read once, when the workspace opens: the margin (`[compare] margin`) and
the case metadata field that names a case's cluster (`[compare] cluster`) come from it unless
the caller gives a margin. Core decides (core.compare, core.gate, core.case_history); this
module gathers their inputs. Figures are fractions, as in the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragtui.core import multi_compare, stats
from ragtui.core.case_history import CaseClass, new_failures
from ragtui.core.compare import Comparison, compare_runs
from ragtui.core.errors import UnknownMetricError
from ragtui.core.gate import MIN_SHARED_CASES, GateResult, decide_gate
from ragtui.core.multi_compare import MultiComparison, compare_many
from ragtui.services.workspace import Workspace

__all__ = [
    "GateReport",
    "compare",
    "compare_several",
    "gate",
    "margin_of",
    "other_configs",
    "other_configs_changed",
    "report",
]


def margin_of(workspace: Workspace, margin: float | None) -> float:
    """The margin given, else the configured one (a fraction: 0.05 = 5 points)."""
    return workspace.config.margin if margin is None else margin


def compare(
    workspace: Workspace,
    a: str,
    b: str,
    *,
    metrics: Sequence[str] | None = None,
    margin: float | None = None,
    seed: int = stats.DEFAULT_SEED,
) -> Comparison:
    """B against A, metric by metric, with the folder's margin and cluster field. Runs
    queries and statistics: call it off the UI thread."""
    return compare_runs(
        workspace.store,
        a,
        b,
        metrics=list(metrics) if metrics else None,
        margin=margin_of(workspace, margin),
        seed=seed,
        cluster_field=workspace.config.cluster_field,
    )


def compare_several(
    workspace: Workspace,
    base: str,
    candidates: Sequence[str],
    *,
    metrics: Sequence[str] | None = None,
    margin: float | None = None,
    seed: int = stats.DEFAULT_SEED,
) -> MultiComparison:
    """Several candidates against one base: one table, Holm over every cell."""
    return compare_many(
        workspace.store,
        base,
        candidates,
        list(metrics) if metrics else None,
        margin_of(workspace, margin),
        seed,
        cluster_field=workspace.config.cluster_field,
    )


def other_configs(workspace: Workspace, base: str) -> list[str]:
    """The candidates of "the base against every other config" (the TUI's `v`, and
    `compare BASE --all-configs`): the first run with cases of each other config of the
    base's dataset, re-judges and summary-only runs left out."""
    return multi_compare.other_configs(workspace.store, base)


def other_configs_changed(
    workspace: Workspace, base: str, candidates: Sequence[str]
) -> tuple[list[str], list[str]]:
    """How "the base against every other config" differs now from `candidates` (what
    other_configs gave before the folder changed): the names of the runs that now stand for a
    config not among them (a new config), and the candidates that no longer stand for one (a
    vanished config). Runs queries: call it off the UI thread."""
    now = other_configs(workspace, base)
    names = {r["run_id"]: r["name"] for r in workspace.store.runs().to_pylist()}
    added = [names.get(r) or r for r in now if r not in candidates]
    gone = [c for c in candidates if c not in now]
    return added, gone


# ---------------------------------------------------------------- gate


@dataclass(frozen=True)
class GateReport:
    comparison: Comparison
    result: GateResult
    new_failures: tuple[CaseClass, ...] | None  # None: --no-new-failures was not asked

    def exit_code(self, undecided_passes: bool = False) -> int:
        return self.result.exit_code(undecided_passes)

    def to_json(self) -> dict[str, Any]:
        from ragtui import format as fmt

        margin = self.comparison.margin
        return {
            "outcome": str(self.result.outcome),
            "base": self.comparison.a,
            "candidate": self.comparison.b,
            "margin": margin,
            "checks": [
                {
                    "metric": ch.metric,
                    "outcome": str(ch.outcome),
                    "code": ch.code,
                    "value": ch.value,
                    "threshold": ch.threshold,
                    "n_needed": ch.n_needed,
                    "text": fmt.gate_check_text(ch, margin),
                }
                for ch in self.result.checks
            ],
            "new_failures": None
            if self.new_failures is None
            else [c.to_json() for c in self.new_failures],
            "comparison": self.comparison.to_json(),
        }


def _known_metrics(workspace: Workspace, c: Comparison) -> list[str]:
    return sorted(set(workspace.store.metrics([c.a])) | set(workspace.store.metrics([c.b])))


def _check_named(names: Sequence[str], known: Sequence[str], option: str) -> None:
    for name in names:
        if name not in known:
            raise UnknownMetricError(
                f"{option}: metric {name!r} is in neither run "
                f"(they have: {', '.join(known) or 'none'})"
            )


def gate(
    workspace: Workspace,
    base: str,
    candidate: str,
    *,
    floors: Mapping[str, float] | None = None,
    metrics: Sequence[str] | None = None,
    margin: float | None = None,
    seed: int = stats.DEFAULT_SEED,
    min_cases: int = MIN_SHARED_CASES,
    no_new_failures: bool = False,
    thresholds: Mapping[str, float] | None = None,
) -> GateReport:
    """The CI gate: the comparison, the candidate's means for the floors, and (when asked)
    the cases newly broken against the base's reruns; core.gate decides.
    `floors` and `thresholds` are fractions per metric (--min, --pass)."""
    c = compare(workspace, base, candidate, metrics=metrics, margin=margin, seed=seed)
    floors, thresholds = dict(floors or {}), dict(thresholds or {})
    known = _known_metrics(workspace, c)
    _check_named(list(floors), known, "--min")
    _check_named(list(thresholds), known, "--pass")
    # a floor reads B as a comparison shows it (shared cases, reruns averaged), also on a
    # metric -m left out of the gate; only a metric the base lacks reads the candidate's own
    means = {
        r["metric"]: r["mean"]
        for r in workspace.store.run_means().to_pylist()
        if r["run_id"] == c.b
    }
    compared, in_base = {m.metric for m in c.metrics}, set(workspace.store.metrics([c.a]))
    aside = [m for m in floors if m not in compared and m in in_base]
    if aside:
        shown = compare(workspace, base, candidate, metrics=aside, margin=margin, seed=seed)
        means.update({m.metric: m.mean_b for m in shown.metrics})
    broken: tuple[CaseClass, ...] | None = None
    counts: dict[str, int] | None = None
    if no_new_failures:
        checked = [m.metric for m in c.metrics]
        in_candidate = set(workspace.store.metrics([c.b]))
        broken = tuple(
            case
            for metric in checked
            if metric in in_candidate
            for case in new_failures(
                workspace.store,
                c.a,
                c.b,
                metric,
                {k: v for k, v in thresholds.items() if k == metric},
            )
        )
        counts = {m: sum(case.metric == m for case in broken) for m in checked}
    result = decide_gate(c, floors, means, min_cases=min_cases, new_failures=counts)
    return GateReport(c, result, broken)


# ---------------------------------------------------------------- report


def report(
    workspace: Workspace,
    a: str,
    b: str,
    *,
    metrics: Sequence[str] | None = None,
    margin: float | None = None,
    seed: int = stats.DEFAULT_SEED,
) -> str:
    """The comparison as a Markdown document (verdicts, noise, warnings, the worst cases)."""
    from ragtui.services.report import render_report

    c = compare(workspace, a, b, metrics=metrics, margin=margin, seed=seed)
    return render_report(c, workspace.store, diagnosis_of(workspace, c))


def diagnosis_of(workspace: Workspace, c: Comparison) -> Any | None:
    """The diagnosis of a comparison, or None when the runs give it nothing to work on (no
    metric both scored): a report then simply has no Diagnosis section."""
    from ragtui.core.diagnosis import diagnose
    from ragtui.core.errors import RagtuiError

    try:
        return diagnose(
            workspace.store,
            c.a,
            c.b,
            # the metrics this comparison shows; the stages still use every metric both
            # runs score (paired_scores compares them all when `c` holds only some)
            metrics=[m.metric for m in c.metrics if m.n > 0] or None,
            margin=c.margin,
            seed=c.seed,
            cluster_field=workspace.config.cluster_field,
            comparison=c,
        )
    except RagtuiError:
        return None
