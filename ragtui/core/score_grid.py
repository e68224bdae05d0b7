"""Scores of several runs pivoted to arrays, and which of them are replicates: what a
comparison and the Runs screen's rerun groups both build on (no scipy here: the Runs screen
imports it before its first paint)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragtui.core.store import Store
from ragtui.core.verdict import Note, RerunIdentical


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
        self.metric_names = list(metrics)
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

    def same(self, kept: int, rerun: int, metric: int | None = None) -> bool:
        """`rerun` repeats `kept` on every score (or on one metric): see `repeats`."""
        return bool(self.repeats([kept, rerun], metric)[1, 0])

    def repeats(self, rows: Sequence[int], metric: int | None = None) -> np.ndarray:
        """[i, j]: run rows[i] repeats rows[j] on every score (or on one metric): on every
        case both hold, the same state and the same value. A cache that served a rerun of part
        of the cases, or of the old cases of a grown dataset, gives one too: such a rerun says
        nothing of the noise where the runs meet (and a comparison pairs A's own cases only).

        By key, not pair by pair: runs holding the same cells repeat each other when their
        scores there are equal, byte for byte; runs holding different cells are matched on
        the cells both hold. Hundreds of reruns of a config (a nightly job) cost a blink."""
        idx = np.asarray(rows, dtype=np.int64)
        n = idx.size
        out = np.zeros((n, n), dtype=bool)
        if n < 2:
            return out  # (A alone: nothing to repeat)
        pick = (slice(None),) if metric is None else (metric,)
        if n <= _PAIRWISE:  # a few runs: each pair at once, no copy of a million cells
            for i in range(1, n):
                for j in range(i):
                    out[i, j] = out[j, i] = self._pair(idx[i], idx[j], pick)
            return out
        state = self.state[(idx, *pick)].reshape(n, -1)
        # one code per cell: the value (+0.0 makes -0.0 equal 0.0 byte for byte), -1 an error
        code = np.where(state == 2, -1.0, self.value[(idx, *pick)].reshape(n, -1) + 0.0)
        held = state != 0
        # runs by the cells they hold (a dict of the packed rows: np.unique over rows of a
        # million cells took seconds a call)
        grouped: dict[bytes, list[int]] = {}
        for r, packed in enumerate(np.packbits(held, axis=1)):
            grouped.setdefault(packed.tobytes(), []).append(r)
        patterns = [(held[members[0]], np.asarray(members)) for members in grouped.values()]
        for held_a, rows_a in patterns:
            for held_b, rows_b in patterns:
                both = held_a & held_b
                if not both.any():
                    continue  # no case in common: nothing repeated
                keyed: dict[bytes, tuple[list[int], list[int]]] = {}
                for side, members in ((0, rows_a), (1, rows_b)):
                    for r, key in zip(members, code[np.ix_(members, both)], strict=True):
                        keyed.setdefault(key.tobytes(), ([], []))[side].append(int(r))
                for xs, ys in keyed.values():
                    if xs and ys and not (len(xs) == len(ys) == 1 and xs == ys):  # not itself
                        out[np.ix_(xs, ys)] = True
        return out

    def _pair(self, a: int, b: int, pick: tuple[slice | int]) -> bool:
        """Run a repeats run b (or b a: it is one relation) on the cells both hold."""
        s1, s2 = self.state[(a, *pick)], self.state[(b, *pick)]
        held = (s1 != 0) & (s2 != 0)
        if not held.any() or not np.array_equal(s1[held], s2[held]):
            return False
        scored = held & (s1 == 1)
        return bool(np.array_equal(self.value[(a, *pick)][scored], self.value[(b, *pick)][scored]))


_PAIRWISE = 12  # up to this many runs, pair by pair; more (a nightly job's reruns), by key


def _first_of_each(repeats: np.ndarray) -> list[int | None]:
    """Per position, in order: None when it repeats no earlier position kept, else the one it
    repeats (a dropped run is no one's twin)."""
    earlier: dict[int, list[int]] = {}
    for i, j in zip(*np.nonzero(np.tril(repeats, -1)), strict=True):  # row-major: j ascending
        earlier.setdefault(int(i), []).append(int(j))
    dropped: set[int] = set()
    out: list[int | None] = []
    for i in range(repeats.shape[0]):
        twin = next((j for j in earlier.get(i, ()) if j not in dropped), None)
        out.append(twin)
        if twin is not None:
            dropped.add(i)
    return out


def replicates(
    grid: ScoreGrid, rows: list[int], ids: list[str], side: str, notes: list[Note]
) -> list[int]:
    """Drop reruns identical to an earlier one on every score: a cache hit would fake a zero
    noise floor and count one run twice in the per-case mean."""
    kept: list[int] = []
    for r, twin in zip(rows, _first_of_each(grid.repeats(rows)), strict=True):
        if twin is None:
            kept.append(r)
        else:
            notes.append(RerunIdentical(side, ids[r], ids[rows[twin]]))
    return kept


def metric_replicates(
    grid: ScoreGrid,
    rows: list[int],
    mi: int,
    ids: list[str],
    side: str,
    dupes: dict[tuple[str, str, str], list[str]],
) -> list[int]:
    """The same, per metric: a rerun that is a cache hit on this metric only is left out of
    this metric's mean and noise floor; `dupes` collects (side, run, twin) -> metrics."""
    kept: list[int] = []
    for r, twin in zip(rows, _first_of_each(grid.repeats(rows, mi)), strict=True):
        if twin is None:
            kept.append(r)
        else:
            dupes.setdefault((side, ids[r], ids[rows[twin]]), []).append(grid.metric_names[mi])
    return kept


def group_means(
    store: Store, groups: dict[str, list[str]]
) -> dict[str, tuple[dict[str, float], int]]:
    """Per group of reruns (key -> run ids): each metric's mean over its cases of the case's
    mean over the group's runs, and the number of cases. A rerun that repeats another on the
    cases both graded (a cached copy) is left out, of every metric or of the one it repeats,
    as a comparison leaves it out of A: the group's line is the A a comparison shows."""
    out: dict[str, tuple[dict[str, float], int]] = {}
    for key, ids in groups.items():
        table = store.scores(ids, ordered=False)  # every metric: one query a group
        names = sorted(pc.unique(table["metric"]).to_pylist())
        grid = ScoreGrid(table, ids, names)
        if not grid.case_ids.size:
            continue
        held = (grid.state != 0).sum(axis=(1, 2))
        # the run holding most cases first: of a run and its cached copy, that one stays
        order = sorted(range(len(ids)), key=lambda r: -held[r])
        rows = replicates(grid, order, ids, "", [])
        means: dict[str, float] = {}
        for mi, metric in enumerate(names):
            values = grid.value[metric_replicates(grid, rows, mi, ids, "", {}), mi, :]
            scored = ~np.isnan(values).all(axis=0)
            if scored.any():
                means[metric] = float(np.nanmean(values[:, scored], axis=0).mean())
        out[key] = (means, int(grid.case_ids.size))
    return out
