"""Which reruns repeat another (a cached copy): the pair-by-pair path (a few runs) and the
keyed one (many: a nightly job's reruns) against the rule written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ragtui.core.score_grid import ScoreGrid


def _grid(rng: np.random.Generator, runs: int, metrics: int, cases: int) -> ScoreGrid:
    grid = ScoreGrid.__new__(ScoreGrid)  # the arrays alone: no index needed for this rule
    grid.state = rng.choice([0, 1, 2], size=(runs, metrics, cases), p=[0.25, 0.6, 0.15])
    grid.state = grid.state.astype(np.int8)
    values = rng.choice([0.0, -0.0, 0.5, 1.0], size=(runs, metrics, cases))
    for r in range(1, runs):  # many runs copy an earlier one, some only where both hold cells
        if rng.random() < 0.5:
            twin = int(rng.integers(0, r))
            both = (grid.state[r] != 0) & (grid.state[twin] != 0)
            grid.state[r][both] = grid.state[twin][both]
            values[r][both] = values[twin][both]
    grid.value = np.where(grid.state == 1, values, np.nan)
    grid.metric_names = [f"m{i}" for i in range(metrics)]
    return grid


def _by_hand(grid: ScoreGrid, i: int, j: int, metric: int | None) -> bool:
    """i repeats j: some case both hold, and on every case both hold the same state, and
    the same value where scored (-0.0 is 0.0)."""
    pick = slice(None) if metric is None else metric
    s1, s2 = grid.state[i][pick].ravel(), grid.state[j][pick].ravel()
    v1, v2 = grid.value[i][pick].ravel(), grid.value[j][pick].ravel()
    shared = [c for c in range(s1.size) if s1[c] and s2[c]]
    return bool(shared) and all(s1[c] == s2[c] and (s1[c] != 1 or v1[c] == v2[c]) for c in shared)


@pytest.mark.parametrize("runs", [2, 5, 20, 40])
def test_repeats_is_the_rule_written_out(runs: int) -> None:
    rng = np.random.default_rng(runs)
    for _ in range(30):
        grid = _grid(rng, runs, int(rng.integers(1, 4)), int(rng.integers(1, 6)))
        order = [int(r) for r in rng.permutation(runs)]
        for metric in (None, 0):
            got = grid.repeats(order, metric)
            want = [[_by_hand(grid, a, b, metric) for b in order] for a in order]
            off = ~np.eye(runs, dtype=bool)
            assert np.array_equal(got[off], np.asarray(want)[off]), (runs, metric)
