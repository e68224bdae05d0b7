"""The data side of a comparison: scores pivoted to arrays, rerun checks, agreement, warnings.

Split from compare.py to keep each file readable; compare.py is the public face.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragtui.core import stats
from ragtui.core.agreement import Agreement, agreement
from ragtui.core.model import Run
from ragtui.core.runfile import iter_run_file
from ragtui.core.store import Store
from ragtui.core.verdict import (
    Note,
    RerunDrift,
    RerunIdentical,
    RunsDiffer,
    ScaleInfo,
    SelfJudged,
)

DRIFT_ALPHA = 0.01  # stricter than 0.05: it is tested per rerun and metric, a false alarm misleads


# ---------------------------------------------------------------- the data of a comparison


def metadata_clusters(store: Store, run_id: str, field: str) -> dict[str, str]:
    """case id -> the value of a case metadata field that names its cluster ([compare] cluster
    in ragtui.toml), for the cases that carry it. The index keeps no metadata, so this reads
    the run file. Values that are not strings are keyed by their JSON text; null is no cluster.
    """
    _, cases = iter_run_file(store.run_path(run_id))
    out: dict[str, str] = {}
    for case in cases:
        value = case.metadata.get(field) if case.metadata else None
        if value is None:
            continue
        out[case.case_id] = (
            value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        )
    return out


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
        """`rerun` repeats `kept` on every score (or on one metric): on every case both hold,
        the same state and the same value. A cache that served a rerun of part of the cases,
        or of the old cases of a grown dataset, gives one too: such a rerun says nothing of
        the noise where the runs meet (and a comparison pairs A's own cases only)."""
        pick = slice(None) if metric is None else metric
        s1, s2 = self.state[kept][pick], self.state[rerun][pick]
        held = (s1 != 0) & (s2 != 0)
        if not held.any() or not np.array_equal(s1[held], s2[held]):
            return False
        v1, v2 = self.value[kept][pick], self.value[rerun][pick]
        scored = held & (s2 == 1)
        return bool(np.array_equal(v1[scored], v2[scored]))


def _generator(run: Run) -> str | None:
    value = run.config.get("generator") or run.config.get("model")
    return None if value is None else str(value)


def comparability_notes(a: Run, b: Run) -> list[Note]:
    out: list[Note] = []
    pairs = [
        ("judge model", a.judge.model, b.judge.model),
        ("judge prompt", a.judge.prompt_hash, b.judge.prompt_hash),
        ("dataset version", a.dataset.version, b.dataset.version),
        ("dataset", a.dataset.name, b.dataset.name),
    ]
    out += [RunsDiffer(what, x, y) for what, x, y in pairs if x != y]
    for side, run in (("A", a), ("B", b)):
        gen = _generator(run)
        if gen is not None and run.judge.model is not None and gen == run.judge.model:
            out.append(SelfJudged(side, gen))
    return out


def judged_same_answers(a: Run, b: Run) -> bool:
    """A rejudge keeps its parent's answers: only then do the two judges grade the same thing."""
    if b.kind == "rejudge" and b.parent == a.id:
        return True
    if a.kind == "rejudge" and a.parent == b.id:
        return True
    return a.kind == b.kind == "rejudge" and a.parent is not None and a.parent == b.parent


def replicates(
    grid: ScoreGrid, rows: list[int], ids: list[str], side: str, notes: list[Note]
) -> list[int]:
    """Drop reruns identical to an earlier one on every score: a cache hit would fake a zero
    noise floor and count one run twice in the per-case mean."""
    kept: list[int] = []
    for r in rows:
        twin = next((k for k in kept if grid.same(k, r)), None)
        if twin is None:
            kept.append(r)
        else:
            notes.append(RerunIdentical(side, ids[r], ids[twin]))
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
    for r in rows:
        twin = next((k for k in kept if grid.same(k, r, mi)), None)
        if twin is None:
            kept.append(r)
        else:
            dupes.setdefault((side, ids[r], ids[twin]), []).append(grid.metric_names[mi])
    return kept


def drift_notes(metric: str, x: np.ndarray, names: list[str], side: str, notes: list[Note]) -> None:
    for k in range(1, x.shape[0]):
        p = stats.drift_p(x[0], x[k])
        if p is not None and p < DRIFT_ALPHA:
            notes.append(
                RerunDrift(metric, side, names[k], names[0], float((x[k] - x[0]).mean()), p)
            )


def bottom_cases(grid: ScoreGrid, values: np.ndarray, cases: np.ndarray) -> list[tuple[str, float]]:
    """The worst 10% (at least one case) of `cases` (a mask), lowest first, ties by case id."""
    idx = grid.by_id[cases[grid.by_id]]
    if not idx.size:
        return []
    v = values[idx]
    take = idx[np.argsort(v, kind="stable")[: stats.bottom_count(v.size)]]
    return list(zip(grid.case_ids[take].tolist(), values[take].tolist(), strict=True))


def mean_or_none(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


@dataclass(frozen=True)
class Profile:
    """How one run scored one metric: the scales in use, errors and parse failures."""

    scales: tuple[ScaleInfo, ...]
    errors: int
    parse_failures: int
    parse_scored: int  # parse failures that carry a value anyway


def profiles(table: pa.Table) -> dict[tuple[str, str], Profile]:
    """(run id, metric) -> Profile, from `Store.score_profile`."""
    scales: dict[tuple[str, str], set[ScaleInfo]] = {}
    errors: dict[tuple[str, str], int] = {}
    parse: dict[tuple[str, str], int] = {}
    parse_scored: dict[tuple[str, str], int] = {}
    for row in table.to_pylist():
        key = (row["run_id"], row["metric"])
        errors[key] = errors.get(key, 0) + row["n_errors"]
        parse[key] = parse.get(key, 0) + row["n_parse_failures"]
        parse_scored[key] = parse_scored.get(key, 0) + row["n_parse_scored"]
        # a label-mode reply that could not be read is scored 0 with no label: counted as a
        # parse failure, it says nothing of the scale (it is no second, numeric one)
        if row["n"] > row["n_parse_scored"]:
            lo, hi = row["scale_lo"], row["scale_hi"]
            scale = ScaleInfo(
                "label" if row["labelled"] else "number",
                0.0 if lo is None else float(lo),
                1.0 if hi is None else float(hi),
            )
            scales.setdefault(key, set()).add(scale)
    return {
        key: Profile(
            tuple(sorted(scales.get(key, ()), key=lambda s: (s.kind, s.lo, s.hi))),
            errors[key],
            parse[key],
            parse_scored[key],
        )
        for key in errors
    }


def rerun_source(fingerprints: dict[str, tuple[int, int]], runs: list[str]) -> str:
    """ "judge-only" when the replicates share their answers (same answers, fresh judge calls),
    "full" when every one has its own, "mixed" between; "unknown" without answers to compare."""
    prints = [fingerprints.get(r) for r in runs]
    if any(p is None or p[1] == 0 for p in prints):
        return "unknown"
    distinct = len({p for p in prints})
    if distinct == 1:
        return "judge-only"
    return "full" if distinct == len(prints) else "mixed"


def human_labels(
    store: Store, grid: ScoreGrid, names: list[str], run_ids: tuple[str, str]
) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """(side 0/1, metric index) -> (grid positions of the cases the judge scored that carry a
    human label, the labels), from the human labels stored with each run's cases."""
    table = store.human(list(run_ids))
    out: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    if table.num_rows == 0:
        return out
    where = grid.index_of(table["case_id"])
    runs = table["run_id"].to_numpy(zero_copy_only=False)
    metrics = table["metric"].to_numpy(zero_copy_only=False)
    values = table["value"].to_numpy(zero_copy_only=False).astype(float)
    for ri, run_id in enumerate(run_ids):
        for mi, m in enumerate(names):
            sel = (runs == run_id) & (metrics == m) & (where >= 0)
            idx, human = where[sel], values[sel]
            scored = grid.state[ri, mi, idx] == 1
            if scored.any():
                out[(ri, mi)] = (idx[scored], human[scored])
    return out


def human_agreement(
    grid: ScoreGrid,
    names: list[str],
    labels: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]],
) -> list[Agreement]:
    """Each run's judge against the human labels stored with that run's cases."""
    out = []
    for (ri, mi), (idx, human) in sorted(labels.items()):
        if idx.size < 2:
            continue
        side = "AB"[ri]
        out.append(
            agreement(
                names[mi],
                f"{side} judge vs human",
                grid.case_ids[idx],
                grid.value[ri, mi, idx],
                human,
            )
        )
    return out
