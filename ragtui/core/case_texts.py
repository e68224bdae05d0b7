"""Bulk reads of what the index does not keep (chunks, claims, metadata): the run files.

The index keeps each case's place in its file, not its long texts (smaller and faster to
build); diagnosis, which needs every chunk and claim of two runs, reads the files themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from ragtui.core.model import Case
from ragtui.core.runfile import iter_run_file
from ragtui.core.store import Store

_CHUNKS = pa.schema(
    [
        ("run_id", pa.string()),
        ("case_id", pa.string()),
        ("ordinal", pa.int32()),
        ("chunk_id", pa.string()),
        ("rank", pa.int64()),
        ("source", pa.string()),
        ("score", pa.float64()),
        ("text", pa.string()),
    ]
)
_CLAIMS = pa.schema(
    [
        ("run_id", pa.string()),
        ("case_id", pa.string()),
        ("ordinal", pa.int32()),
        ("metric", pa.string()),
        ("text", pa.string()),
        ("verdict", pa.string()),
        ("chunks", pa.list_(pa.string())),
        ("reason", pa.string()),
    ]
)
_EXTRAS = pa.schema(
    [
        ("run_id", pa.string()),
        ("case_id", pa.string()),
        ("ordinal", pa.int32()),
        ("latency_ms", pa.float64()),
        ("metadata", pa.string()),
    ]
)


def chunks(store: Store, run_ids: Sequence[str], case_ids: Sequence[str] | None = None) -> pa.Table:
    """Retrieved chunks of several runs (optionally some cases), in retrieval order. Texts
    live in the run files, not the index: read from there."""
    rows: dict[str, list[Any]] = {
        k: []
        for k in ("run_id", "case_id", "ordinal", "chunk_id", "rank", "source", "score", "text")
    }
    for run_id, case in _file_cases(store, run_ids, case_ids):
        for i, c in enumerate(case.contexts):
            for k, v in zip(
                rows,
                (run_id, case.case_id, i, c.id, c.rank, c.source, c.score, c.text),
                strict=True,
            ):
                rows[k].append(v)
    return pa.table(rows, schema=_CHUNKS)


def claims(store: Store, run_ids: Sequence[str], case_ids: Sequence[str] | None = None) -> pa.Table:
    """Claims of several runs (optionally some cases), in answer order (from the files)."""
    rows: dict[str, list[Any]] = {
        k: []
        for k in (
            "run_id",
            "case_id",
            "ordinal",
            "metric",
            "text",
            "verdict",
            "chunks",
            "reason",
        )
    }
    for run_id, case in _file_cases(store, run_ids, case_ids):
        for i, c in enumerate(case.claims):
            values = (
                run_id,
                case.case_id,
                i,
                c.metric,
                c.text,
                c.verdict,
                list(c.chunks),
                c.reason,
            )
            for k, v in zip(rows, values, strict=True):
                rows[k].append(v)
    return pa.table(rows, schema=_CLAIMS)


def case_extras(store: Store, run_ids: Sequence[str]) -> pa.Table:
    """Latency and the metadata JSON (tokens, cost, ...) of every case of several runs."""
    rows: dict[str, list[Any]] = {
        k: [] for k in ("run_id", "case_id", "ordinal", "latency_ms", "metadata")
    }
    for i, (run_id, case) in enumerate(_file_cases(store, run_ids, None)):
        metadata = json.dumps(dict(case.metadata), ensure_ascii=False) if case.metadata else None
        for k, v in zip(rows, (run_id, case.case_id, i, case.latency_ms, metadata), strict=True):
            rows[k].append(v)
    return pa.table(rows, schema=_EXTRAS)


def _file_cases(
    store: Store, run_ids: Sequence[str], case_ids: Sequence[str] | None
) -> Iterator[tuple[str, Case]]:
    """Every case of some runs (optionally only some ids), read from their run files."""
    wanted = None if case_ids is None else set(case_ids)
    for run_id in sorted(set(run_ids)):
        _, cases = iter_run_file(store.run_path(run_id))
        for case in cases:
            if wanted is None or case.case_id in wanted:
                yield run_id, case
