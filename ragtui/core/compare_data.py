"""The data side of a comparison: scores pivoted to arrays, rerun checks, agreement, warnings.

Split from compare.py to keep each file readable; compare.py is the public face.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ragtui.core import stats
from ragtui.core.agreement import Agreement, agreement
from ragtui.core.model import Run
from ragtui.core.runfile import iter_run_file
from ragtui.core.score_grid import ScoreGrid
from ragtui.core.store import Store
from ragtui.core.verdict import (
    Note,
    RerunDrift,
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
