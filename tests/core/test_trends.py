"""Trend figures checked against scipy and hand-worked values."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragtui.core.store import Store
from ragtui.core.trends import metric_trends, point
from tests.tui.conftest import write_history

WHEN = datetime(2026, 11, 20, 10, 0)


def test_point_matches_scipy_t_interval_and_hand_worked_bottom_decile() -> None:
    values = np.array([1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.75, 0.25])
    p = point("r", "r", WHEN, values, errors=2)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    assert p.mean == pytest.approx(values.mean())
    assert p.ci_low == pytest.approx(low) and p.ci_high == pytest.approx(high)
    # 10% of 12 cases rounds up to 2: the two zeros
    assert p.bottom == 0.0
    assert (p.n, p.n_errors) == (12, 2)


def test_point_of_one_or_no_values() -> None:
    one = point("r", "r", WHEN, np.array([0.8]), errors=0)
    assert (
        one.mean == pytest.approx(0.8) and one.ci_low is None and one.bottom == pytest.approx(0.8)
    )
    none = point("r", "r", WHEN, np.array([]), errors=3)
    assert none.mean is None and none.n_errors == 3


def _json_values(path: Path, metric: str) -> tuple[list[float], int]:
    values, errors = [], 0
    with path.open(encoding="utf-8") as handle:
        next(handle)  # header
        for line in handle:
            case = json.loads(line)
            if metric in case.get("scores", {}):
                values.append(case["scores"][metric]["value"])
            elif metric in case.get("errors", {}):
                errors += 1
    return values, errors


def test_metric_trends_groups_reruns_and_matches_the_files(tmp_path: Path) -> None:
    folder = write_history(tmp_path / "runs")
    with Store.open(folder) as store:
        series = metric_trends(store, "context_recall")
    assert [s.config_key for s in series] == ["cfg-base", "cfg-strict", "cfg-strict-rejudged"]
    # the re-judged config carries its run's name: both strict configs say which they are
    assert [s.label for s in series] == [
        "baseline",
        "strict-prompt (cfg-strict)",
        "strict-prompt (cfg-strict-rejudged)",
    ]
    assert [s.name for s in series] == ["baseline", "strict-prompt", "strict-prompt"]
    base = series[0]
    assert [p.run_id for p in base.points] == ["baseline-1120", "baseline-1121", "baseline-1122"]
    means = []
    for p in base.points:
        values, errors = _json_values(folder / f"{p.run_id}.ragtui.jsonl", "context_recall")
        assert p.mean == pytest.approx(sum(values) / len(values))
        assert p.n_errors == errors > 0
        worst = sorted(values)[: math.ceil(0.1 * len(values))]
        assert p.bottom == pytest.approx(sum(worst) / len(worst))
        means.append(sum(values) / len(values))
    assert base.spread == pytest.approx(max(means) - min(means))
    assert series[2].spread is None  # a single run has no rerun spread


def test_one_config_key_on_two_dataset_versions_is_two_series(tmp_path: Path) -> None:
    """A CI job keeps its config key while the golden set moves from v1 to v2: the runs are
    not reruns of each other (Runs and compare do not pair them), so Trends gives each its
    own series, not a "rerun spread" of 50 points that is the dataset change."""
    from ragtui.core.model import DatasetInfo, Run
    from ragtui.core.runfile import write_run_file
    from tests.core.runs_factory import make_case

    for day, version, value in ((1, "v1", 1.0), (2, "v2", 0.5)):
        run = Run(
            id=f"ds-{version}",
            name="nightly",
            created_at=f"2026-11-0{day}T10:00:00Z",
            config_key="cfg-ds",
            dataset=DatasetInfo("golden", version),
        )
        cases = [make_case(i, value) for i in range(5)]
        write_run_file(tmp_path / f"ds-{version}.ragtui.jsonl", run, cases)
    with Store.open(tmp_path) as store:
        series = metric_trends(store, "faithfulness")
    assert [[p.run_id for p in s.points] for s in series] == [["ds-v1"], ["ds-v2"]]
    assert [s.spread for s in series] == [None, None]
    assert [s.label for s in series] == [
        "nightly (cfg-ds), golden v1",
        "nightly (cfg-ds), golden v2",
    ]
    assert [s.points[0].mean for s in series] == [1.0, 0.5]


def test_metric_trends_skips_runs_without_the_metric(tmp_path: Path) -> None:
    folder = write_history(tmp_path / "runs")
    with Store.open(folder) as store:
        assert metric_trends(store, "no_such_metric") == []


def test_point_interval_stays_within_0_100_wilson_for_binary() -> None:
    """9 of 10 passing: the t-interval would reach 112.6 points; Wilson stays inside."""
    values = np.array([1.0] * 9 + [0.0])
    p = point("r", "r", WHEN, values, errors=0)
    ref = stats.binomtest(9, 10).proportion_ci(0.95, method="wilson")
    assert (p.ci_low, p.ci_high) == pytest.approx((ref.low, ref.high))
    all_pass = point("r", "r", WHEN, np.ones(10), errors=0)
    assert all_pass.ci_low < 0.8 and all_pass.ci_high == pytest.approx(1.0)


def test_a_summary_only_run_is_listed_at_its_level_never_its_stderr(tmp_path: Path) -> None:
    """An Inspect log without samples states accuracy 0.667 then its stderr 0.333: the run was
    listed at 33.3, the stderr (the last figure of the metric won). Listed and plotted at its
    accuracy; a spread statistic is never a mean."""
    from ragtui.core.model import StatedFigure
    from tests.core.runs_factory import make_summary_only_run

    folder = tmp_path / "runs"
    folder.mkdir()
    # a spread alone: no level to list
    make_summary_only_run(folder, StatedFigure("other", 0.1, raw=0.1, statistic="std"))
    with Store.open(folder) as store:
        (row,) = store.run_rows()
        assert row.summary_only
        assert row.listed_means == {"match": pytest.approx(2 / 3)}
        (series,) = metric_trends(store, "match")
        assert [p.mean for p in series.points] == [pytest.approx(2 / 3)]
        assert metric_trends(store, "other") == []
