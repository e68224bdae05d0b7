"""The one place diagnosis reads the comparison engine (a thin adapter).

Diagnosis needs, per metric, the comparison's Δ and verdict, and per case the value of every
rerun of A and of B. Today that comes from `compare.compare_runs` and its per-metric
`replicates`; when the comparison engine changes, only this module is re-pointed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragtui.core import stats
from ragtui.core.compare import Comparison, compare_runs
from ragtui.core.errors import RagtuiError, UnknownMetricError
from ragtui.core.store import Store


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    n: int
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_adj: float | None
    verdict: str  # a Verdict's value: "improved", "regressed", "inconclusive", ...
    reason: str  # why, in words (ragtui.format.verdict_reason)


@dataclass(frozen=True)
class PairedScores:
    """A vs B: per metric the comparison's figures; per case the value of every rerun of A and
    of every rerun of B, exactly the values the comparison averages (a rerun the comparison
    left out of a metric as a cache hit is NaN there)."""

    a: str
    b: str
    a_name: str
    b_name: str
    a_runs: tuple[str, ...]  # A and the reruns averaged into its baseline, A first
    metrics: tuple[MetricDelta, ...]
    warnings: tuple[str, ...]
    case_ids: tuple[str, ...]  # cases scored in both runs on some metric, sorted
    # values_a[r, m, c]: A's run r, metric m, case c; NaN when not scored or not paired
    values_a: np.ndarray = field(repr=False, compare=False)
    values_b: np.ndarray = field(repr=False, compare=False)  # the same for B's runs
    b_runs: tuple[str, ...] = ()  # B and the reruns averaged into its value, B first
    # per metric, A's runs the comparison kept for it (a rerun identical to another on that
    # metric, a cache hit, is left out of it)
    metric_a_runs: tuple[tuple[str, ...], ...] = ()

    def metric_names(self) -> list[str]:
        return [m.metric for m in self.metrics]

    def a_values(self, metric: int, case: int) -> list[float]:
        """The scores of A's reruns for one case (those that scored it)."""
        return _present(self.values_a[:, metric, case])

    def b_values(self, metric: int, case: int) -> list[float]:
        """The scores of B's reruns for one case (those that scored it)."""
        return _present(self.values_b[:, metric, case])

    def b_value(self, metric: int, case: int) -> float | None:
        """B's value as the comparison shows it: the mean of B's reruns."""
        got = self.b_values(metric, case)
        return sum(got) / len(got) if got else None


def _present(column: np.ndarray) -> list[float]:
    return [float(v) for v in column[~np.isnan(column)]]


def _metric_delta(c: Comparison, name: str) -> MetricDelta:
    from ragtui.format import verdict_reason  # words come from the one formatting module

    m = c.metric(name)
    assert m is not None
    reason = verdict_reason(m, c.margin)
    return MetricDelta(name, m.n, m.delta, m.ci_low, m.ci_high, m.p_adj, str(m.verdict), reason)


def paired_scores(
    store: Store,
    a_ref: str,
    b_ref: str,
    *,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
    cluster_field: str | None = None,
    comparison: Comparison | None = None,
) -> PairedScores:
    """Every metric both runs scored (the stage rules need all of them, whatever is asked).
    A screen that already holds the comparison of A and B passes it (`comparison`): the
    verdicts are then not computed twice. A comparison of some metrics only (`-m`) does not
    hold them all: A and B are then compared again over every metric, so the stages are the
    same whichever metrics a command shows."""
    if comparison is not None:
        if (store.resolve_run(a_ref), store.resolve_run(b_ref)) != (comparison.a, comparison.b):
            raise RagtuiError(f"the comparison given is of {comparison.a} vs {comparison.b}")
        have_b = set(store.metrics([comparison.b]))
        shared = {m for m in store.metrics([comparison.a]) if m in have_b}
        if not shared <= {m.metric for m in comparison.metrics}:
            margin, seed = comparison.margin, comparison.seed
            comparison = None
    if comparison is None:
        c = compare_runs(store, a_ref, b_ref, margin=margin, seed=seed, cluster_field=cluster_field)
    else:
        c = comparison
    names = [m.metric for m in c.metrics if m.n > 0]
    if not names:
        raise RagtuiError(
            f"runs {c.a} and {c.b} share no scored case on any metric: nothing to diagnose"
        )
    case_ids, values_a, values_b = _replicate_values(c, names)
    return PairedScores(
        a=c.a,
        b=c.b,
        a_name=c.run_a.name,
        b_name=c.run_b.name,
        a_runs=tuple(c.reruns_a),
        metrics=tuple(_metric_delta(c, n) for n in names),
        warnings=tuple(_note_texts(c)),
        case_ids=case_ids,
        values_a=values_a,
        values_b=values_b,
        b_runs=tuple(c.reruns_b or [c.b]),
        metric_a_runs=tuple(tuple(c.replicates[n].runs_a) for n in names),
    )


def _replicate_values(
    c: Comparison, names: Sequence[str]
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The comparison's own per-case values of both sides' reruns (its `replicates`), laid out
    as [run, metric, case]: diagnosis reads A and B exactly as compare does, B's reruns
    included, so a case's values are the same on every screen."""
    reps = [c.replicates[m] for m in names]
    case_ids = tuple(sorted({str(x) for r in reps for x in r.case_ids}))
    col = {cid: i for i, cid in enumerate(case_ids)}
    runs_a, runs_b = list(c.reruns_a), list(c.reruns_b or [c.b])
    values_a = np.full((len(runs_a), len(names), len(case_ids)), np.nan)
    values_b = np.full((len(runs_b), len(names), len(case_ids)), np.nan)
    for mi, rep in enumerate(reps):
        cols = [col[str(x)] for x in rep.case_ids]
        for out, runs, rows, values in (
            (values_a, runs_a, rep.runs_a, rep.values_a),
            (values_b, runs_b, rep.runs_b, rep.values_b),
        ):
            for run, row in zip(rows, values, strict=True):
                out[runs.index(run), mi, cols] = row
    return case_ids, values_a, values_b


def _note_texts(c: Comparison) -> list[str]:
    from ragtui.format import note_text

    return [note_text(w) for w in c.warnings]


def require_metrics(paired: PairedScores, asked: Sequence[str] | None) -> list[str]:
    """The metrics to summarise: those asked (each must be scored in both runs), else all."""
    have = paired.metric_names()
    if not asked:
        return have
    for m in asked:
        if m not in have:
            raise UnknownMetricError(
                f"metric {m!r} is not scored in both runs {paired.a} and {paired.b} "
                f"(they share: {', '.join(have) or 'none'})"
            )
    return list(dict.fromkeys(asked))
