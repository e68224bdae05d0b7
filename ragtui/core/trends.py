"""Per-metric trends over time, grouped by config (the Trends screen). No textual, no rich.

For every run: the mean of one metric over its scored cases, a 95% interval of that mean that
stays inside [0, 1] (Wilson for binary scores, else the t-interval; see
`intervals.mean_interval`), and the mean of its worst 10% of cases. Runs sharing a config key
form one series; the spread of their means (max - min) is what reruns of that config vary by.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pyarrow as pa

from ragtui.core.costs import RunCosts
from ragtui.core.intervals import mean_interval
from ragtui.core.model import stated_means
from ragtui.core.stats import bottom_indices
from ragtui.core.store import Store

BOTTOM_SHARE = 0.10


@dataclass(frozen=True)
class TrendPoint:
    run_id: str
    name: str
    created_at: datetime
    n: int  # scored cases
    n_errors: int
    mean: float | None  # fractions in [0, 1]; None when nothing was scored
    ci_low: float | None  # None when fewer than 2 scored cases
    ci_high: float | None
    bottom: float | None  # mean of the worst BOTTOM_SHARE of cases
    stated: bool = False  # a summary-only run: the mean its tool stated (no cases, no CI)


@dataclass(frozen=True)
class TrendSeries:
    config_key: str
    label: str  # `name`, with the config key where configs share a name
    points: tuple[TrendPoint, ...]  # oldest first
    name: str  # the name most of its runs carry

    @property
    def spread(self) -> float | None:
        """max - min of the run means: how far reruns of this config drift apart."""
        means = [p.mean for p in self.points if p.mean is not None]
        return max(means) - min(means) if len(means) >= 2 else None


def point(
    run_id: str, name: str, created_at: datetime, values: np.ndarray, errors: int
) -> TrendPoint:
    """One run's figures from its per-case values (fractions) for one metric."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return TrendPoint(run_id, name, created_at, 0, errors, None, None, None, None)
    ci = mean_interval(values)
    worst = values[bottom_indices(values, BOTTOM_SHARE)]
    return TrendPoint(
        run_id=run_id,
        name=name,
        created_at=created_at,
        n=int(values.size),
        n_errors=errors,
        mean=float(values.mean()),
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        bottom=float(worst.mean()),
    )


def metric_trends(store: Store, metric: str) -> list[TrendSeries]:
    """Every config's series for `metric`, ordered by the date of its first run. A
    summary-only run (no cases) is a point at the mean its tool stated."""
    runs = store.runs()
    if runs.num_rows == 0:
        return []
    scores = store.scores(runs.column("run_id").to_pylist(), [metric], ordered=False)
    by_run = _values_by_run(scores)
    stated = {
        run_id: stated_means(figures).get(metric) for run_id, figures in store.stated().items()
    }
    # a series is the reruns of one config: the same config key on the same dataset, as Runs
    # and compare group them (a new version of the golden set under one key is a new series,
    # not a "rerun spread" of the dataset change)
    groups: dict[_Key, list[TrendPoint]] = {}
    names: dict[_Key, list[str]] = {}
    columns = ["run_id", "name", "created_at", "config_key", "dataset_name", "dataset_version"]
    for row in runs.select(columns).to_pylist():
        values, errors = by_run.get(row["run_id"], (np.zeros(0), 0))
        key = (row["config_key"], row["dataset_name"], row["dataset_version"])
        if values.size == 0 and errors == 0:
            said = stated.get(row["run_id"])
            if said is None or row["run_id"] in by_run:
                continue  # this run never scored the metric
            groups.setdefault(key, []).append(
                TrendPoint(
                    row["run_id"],
                    row["name"],
                    row["created_at"],
                    0,
                    0,
                    said,
                    None,
                    None,
                    None,
                    stated=True,
                )
            )
            names.setdefault(key, []).append(row["name"])
            continue
        groups.setdefault(key, []).append(
            point(row["run_id"], row["name"], row["created_at"], values, errors)
        )
        names.setdefault(key, []).append(row["name"])
    named = {key: _most_common(names[key]) for key in groups}
    labels = _distinct_labels(named)
    series = [
        TrendSeries(key[0], labels[key], tuple(points), named[key])
        for key, points in groups.items()
    ]
    series.sort(key=lambda s: (s.points[0].created_at, s.config_key))
    return series


def _values_by_run(scores: pa.Table) -> dict[str, tuple[np.ndarray, int]]:
    """run_id -> (scored values, error count), split with Arrow sorts rather than a row loop."""
    if scores.num_rows == 0:
        return {}
    ordered = scores.sort_by("run_id")
    run_ids = ordered.column("run_id").to_numpy(zero_copy_only=False)
    values = ordered.column("value").to_numpy(zero_copy_only=False).astype(float)
    errored = ordered.column("error").is_valid().to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, run_ids[1:] != run_ids[:-1]])
    ends = np.r_[starts[1:], len(run_ids)]
    out: dict[str, tuple[np.ndarray, int]] = {}
    for lo, hi in zip(starts, ends, strict=True):
        chunk = values[lo:hi]
        out[str(run_ids[lo])] = (chunk[~np.isnan(chunk)], int(errored[lo:hi].sum()))
    return out


_Key = tuple[str, str | None, str | None]  # config key, dataset name, dataset version


def _distinct_labels(labels: dict[_Key, str]) -> dict[_Key, str]:
    """series -> its label, the config key added where series share a name (a rejudge, or a
    harness that names every run "nightly"), and the dataset where they share that too (one
    config key over two versions of the golden set): two dots called the same tell nothing."""
    counts = Counter(labels.values())
    out = {
        key: label if counts[label] == 1 else f"{label} ({key[0]})" for key, label in labels.items()
    }
    counts = Counter(out.values())
    return {
        key: label if counts[label] == 1 else f"{label}, {_dataset(key)}"
        for key, label in out.items()
    }


def _dataset(key: _Key) -> str:
    name, version = key[1], key[2]
    return " ".join(str(x) for x in (name, version) if x) or "no dataset"


def _most_common(names: list[str]) -> str:
    # ties go to the earliest name, so the label is stable as reruns are added
    return max(dict.fromkeys(names), key=names.count)


@dataclass(frozen=True)
class CostPoint:
    """One config on the quality-against-cost plot."""

    config_key: str
    label: str
    quality: float  # the mean of its runs' means of the metric (a fraction)
    costs: Mapping[str, float]  # field -> the mean over its runs of the per-case mean
    runs: int


def quality_against_cost(
    series: list[TrendSeries], costs: Mapping[str, RunCosts], fields: Sequence[str]
) -> list[CostPoint]:
    """Per config with a mean of the metric: its mean quality and its mean per-case figure
    of each field that some run of it carries."""
    out = []
    for one in series:
        quality = [p.mean for p in one.points if p.mean is not None]
        if not quality:
            continue
        means = {}
        for field in fields:
            spend = []
            for p in one.points:
                found = costs.get(p.run_id)
                figure = None if found is None else found.figure(field)
                if figure is not None and figure.mean is not None:
                    spend.append(figure.mean)
            if spend:
                means[field] = float(np.mean(spend))
        out.append(
            CostPoint(one.config_key, one.label, float(np.mean(quality)), means, len(one.points))
        )
    return out
