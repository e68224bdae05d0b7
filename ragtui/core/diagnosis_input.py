"""The one place diagnosis reads the comparison engine (a thin adapter).

Diagnosis needs, per metric, the comparison's Δ and verdict, and per case the value of every
rerun of A and of B. Today that comes from `compare.compare_runs` and `compare_data.ScoreGrid`;
when the comparison engine changes, only this module is re-pointed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragtui.core import stats
from ragtui.core.compare import Comparison, compare_runs
from ragtui.core.compare_data import ScoreGrid
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
    """A vs B: per metric the comparison's figures; per case every A rerun's value and B's."""

    a: str
    b: str
    a_name: str
    b_name: str
    a_runs: tuple[str, ...]  # A and the reruns averaged into its baseline, A first
    metrics: tuple[MetricDelta, ...]
    warnings: tuple[str, ...]
    case_ids: tuple[str, ...]  # cases scored in both runs on some metric, sorted
    # values[r, m, c]: run r (A's runs, then B), metric m, case c; NaN when not scored
    values: np.ndarray = field(repr=False, compare=False)

    def metric_names(self) -> list[str]:
        return [m.metric for m in self.metrics]

    def a_values(self, metric: int, case: int) -> list[float]:
        """The scores of A's reruns for one case (those that scored it)."""
        col = self.values[:-1, metric, case]
        return [float(v) for v in col[~np.isnan(col)]]

    def b_value(self, metric: int, case: int) -> float | None:
        v = self.values[-1, metric, case]
        return None if np.isnan(v) else float(v)


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
    verdicts are then not computed twice."""
    if comparison is None:
        c = compare_runs(store, a_ref, b_ref, margin=margin, seed=seed, cluster_field=cluster_field)
    elif (store.resolve_run(a_ref), store.resolve_run(b_ref)) != (comparison.a, comparison.b):
        raise RagtuiError(f"the comparison given is of {comparison.a} vs {comparison.b}")
    else:
        c = comparison
    names = [m.metric for m in c.metrics if m.n > 0]
    if not names:
        raise RagtuiError(
            f"runs {c.a} and {c.b} share no scored case on any metric: nothing to diagnose"
        )
    run_ids = [*c.reruns_a, c.b]
    grid = ScoreGrid(store.scores(run_ids, names, ordered=False), run_ids, names)
    # A metric pairs a case when A's own run and B both scored it (as in the comparison);
    # elsewhere every row is NaN, so an A rerun alone never makes a pair.
    both = (grid.state[0] == 1) & (grid.state[-1] == 1)  # [metric, case]
    values = np.where(both[None, :, :], grid.value, np.nan)
    paired = both.any(axis=0)
    order = np.argsort(grid.case_ids[paired], kind="stable")
    case_ids = grid.case_ids[paired][order]
    values = values[:, :, paired][:, :, order]
    return PairedScores(
        a=c.a,
        b=c.b,
        a_name=c.run_a.name,
        b_name=c.run_b.name,
        a_runs=tuple(c.reruns_a),
        metrics=tuple(_metric_delta(c, n) for n in names),
        warnings=tuple(_note_texts(c)),
        case_ids=tuple(str(x) for x in case_ids),
        values=values,
    )


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
