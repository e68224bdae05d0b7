"""The data side of a comparison: scores pivoted to arrays, rerun checks, agreement, warnings.

Split from compare.py to keep each file readable; compare.py is the public face.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragtui.core import stats
from ragtui.core.model import Run
from ragtui.core.store import Store

DRIFT_ALPHA = 0.01  # stricter than 0.05: it is tested per rerun and metric, a false alarm misleads
RHO_FLAG = 0.7
KAPPA_FLAG = 0.6
MAX_CATEGORIES = 10  # a metric with at most this many distinct values can be treated as labels
BINARY_THRESHOLD = 0.5  # pass/fail cut for listing flips of continuous scores


def finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class Agreement:
    metric: str
    between: str  # e.g. "A judge vs B judge", "B judge vs human"
    n: int
    kappa: float | None
    rho: float | None
    flipped: list[str]
    flagged: bool


# ---------------------------------------------------------------- the data of a comparison


def _codes(column: pa.ChunkedArray | pa.Array, names: Sequence[str]) -> np.ndarray:
    """Positions of a column's strings in `names` (few distinct values: encode, then map)."""
    enc = pc.dictionary_encode(column)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    lookup = {n: i for i, n in enumerate(names)}
    table = np.array([lookup[v] for v in enc.dictionary.to_pylist()], dtype=np.int64)
    return table[enc.indices.to_numpy(zero_copy_only=False)] if len(table) else np.zeros(0, int)


class ScoreGrid:
    """Scores of several runs pivoted to arrays [run, metric, case]: value (NaN when not
    scored) and state (0 absent, 1 scored, 2 errored), plus labels on demand."""

    def __init__(self, table: pa.Table, run_ids: Sequence[str], metrics: Sequence[str]) -> None:
        t = table.combine_chunks()
        enc = pc.dictionary_encode(t["case_id"]).combine_chunks()
        self._dictionary = enc.dictionary
        self.case_ids = enc.dictionary.to_numpy(zero_copy_only=False)
        ci = enc.indices.to_numpy(zero_copy_only=False)
        ri = _codes(t["run_id"], run_ids)
        mi = _codes(t["metric"], metrics)
        shape = (len(run_ids), len(metrics), len(self.case_ids))
        self.value = np.full(shape, np.nan)
        self.state = np.zeros(shape, dtype=np.int8)
        values = pc.fill_null(t["value"], np.nan).to_numpy(zero_copy_only=False)
        errored = t["error"].is_valid().to_numpy(zero_copy_only=False)
        self.value[ri, mi, ci] = np.where(errored, np.nan, values)
        self.state[ri, mi, ci] = np.where(errored, 2, 1)
        self._where = (ri, mi, ci)
        self._labels = t["label"]
        self.runs = {r: i for i, r in enumerate(run_ids)}
        # case positions in case-id order: sorting by value over this order breaks ties by id
        self.by_id = pc.sort_indices(enc.dictionary).to_numpy(zero_copy_only=False)

    def index_of(self, ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Grid positions of case ids, -1 for ids not in the grid."""
        pos = pc.index_in(ids, value_set=self._dictionary)
        return pc.fill_null(pos, -1).to_numpy(zero_copy_only=False).astype(np.int64)

    def labels(self, run: int, metric: int) -> np.ndarray:
        out = np.full(len(self.case_ids), None, dtype=object)
        ri, mi, ci = self._where
        sel = (ri == run) & (mi == metric)
        out[ci[sel]] = np.asarray(self._labels.to_numpy(zero_copy_only=False), dtype=object)[sel]
        return out

    def same(self, r1: int, r2: int) -> bool:
        v1, v2 = self.value[r1], self.value[r2]
        both = ~np.isnan(v1) & ~np.isnan(v2)
        return bool(
            np.array_equal(self.state[r1], self.state[r2]) and np.array_equal(v1[both], v2[both])
        )


def _generator(run: Run) -> str | None:
    value = run.config.get("generator") or run.config.get("model")
    return None if value is None else str(value)


def comparability_warnings(a: Run, b: Run) -> list[str]:
    out = []
    pairs = [
        ("judge model", a.judge.model, b.judge.model),
        ("judge prompt", a.judge.prompt_hash, b.judge.prompt_hash),
        ("dataset version", a.dataset.version, b.dataset.version),
        ("dataset", a.dataset.name, b.dataset.name),
    ]
    for what, x, y in pairs:
        if x != y:
            consequence = (
                "deltas mix judge and system changes"
                if what.startswith("judge")
                else "the cases may not be the same questions"
            )
            out.append(
                f"{what} differs between A and B ({x or 'unknown'} → {y or 'unknown'}): {consequence}"
            )
    for side, run in (("A", a), ("B", b)):
        gen = _generator(run)
        if gen is not None and run.judge.model is not None and gen == run.judge.model:
            out.append(
                f"run {side} is judged by its own generator ({gen}): self-judging inflates scores"
            )
    return out


def judged_same_answers(a: Run, b: Run) -> bool:
    """A rejudge keeps its parent's answers: only then do the two judges grade the same thing."""
    if b.kind == "rejudge" and b.parent == a.id:
        return True
    if a.kind == "rejudge" and a.parent == b.id:
        return True
    return a.kind == b.kind == "rejudge" and a.parent is not None and a.parent == b.parent


def agreement(
    metric: str,
    between: str,
    ids: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    lx: np.ndarray | None = None,
    ly: np.ndarray | None = None,
) -> Agreement:
    """κ on labels (or on discrete values), ρ on values, and the cases whose verdict flipped."""
    if (
        lx is not None
        and ly is not None
        and all(v is not None for v in lx)
        and all(v is not None for v in ly)
    ):
        cats_x, cats_y = list(lx), list(ly)
        flips = lx != ly
    else:
        cats_x = cats_y = None
        if np.unique(np.concatenate((x, y))).size <= MAX_CATEGORIES:
            # few distinct values (YES/PARTIAL/NO, a 1-5 scale): each value is a category
            cats_x, cats_y = x.tolist(), y.tolist()
            flips = x != y
        else:
            flips = (x >= BINARY_THRESHOLD) != (y >= BINARY_THRESHOLD)
    kappa = stats.cohen_kappa(cats_x, cats_y) if cats_x is not None else None
    rho = stats.spearman(x, y)
    order = np.argsort(-np.abs(y - x)[flips], kind="stable")
    flagged = (rho is not None and rho < RHO_FLAG) or (kappa is not None and kappa < KAPPA_FLAG)
    return Agreement(
        metric,
        between,
        int(x.size),
        finite(kappa),
        finite(rho),
        [str(c) for c in ids[flips][order]],
        flagged,
    )


def replicates(grid: ScoreGrid, rows: list[int], ids: list[str], warnings: list[str]) -> list[int]:
    """Drop reruns identical to an earlier one: a cache hit would fake a zero noise floor."""
    kept: list[int] = []
    for r in rows:
        twin = next((k for k in kept if grid.same(k, r)), None)
        if twin is None:
            kept.append(r)
        else:
            warnings.append(
                f"rerun {ids[r]} is identical to {ids[twin]} on every score: "
                "a cache hit, not a replicate (left out of the noise floor)"
            )
    return kept


def drift_warnings(
    metric: str, x: np.ndarray, names: list[str], side: str, warnings: list[str]
) -> None:
    for k in range(1, x.shape[0]):
        p = stats.drift_p(x[0], x[k])
        if p is not None and p < DRIFT_ALPHA:
            shift = float((x[k] - x[0]).mean()) * 100
            warnings.append(
                f"{metric}: rerun {names[k]} of {side} drifted from {names[0]} by "
                f"{shift:+.1f} points (p {p:.2g}): a systematic change, not noise"
            )


def bottom_cases(
    grid: ScoreGrid, values: np.ndarray, scored: np.ndarray
) -> list[tuple[str, float]]:
    """The worst 10 % (at least one case) of the scored cases, lowest first, ties by case id."""
    idx = grid.by_id[scored[grid.by_id]]
    if not idx.size:
        return []
    v = values[idx]
    take = idx[np.argsort(v, kind="stable")[: max(1, math.ceil(0.1 * v.size))]]
    return list(zip(grid.case_ids[take].tolist(), values[take].tolist(), strict=True))


def mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def human_agreement(
    store: Store, grid: ScoreGrid, names: list[str], a_id: str, b_id: str
) -> list[Agreement]:
    """Each run's judge against the human labels stored with that run's cases."""
    table = store.human([a_id, b_id])
    out: list[Agreement] = []
    if table.num_rows == 0:
        return out
    where = grid.index_of(table["case_id"])
    runs = table["run_id"].to_numpy(zero_copy_only=False)
    metrics = table["metric"].to_numpy(zero_copy_only=False)
    values = table["value"].to_numpy(zero_copy_only=False).astype(float)
    for side, run_id, ri in (("A", a_id, 0), ("B", b_id, 1)):
        for mi, m in enumerate(names):
            sel = (runs == run_id) & (metrics == m) & (where >= 0)
            idx, human = where[sel], values[sel]
            scored = grid.state[ri, mi, idx] == 1
            idx, human = idx[scored], human[scored]
            if idx.size < 2:
                continue
            out.append(
                agreement(
                    m, f"{side} judge vs human", grid.case_ids[idx], grid.value[ri, mi, idx], human
                )
            )
    return out
