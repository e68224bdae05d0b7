"""The index tables: their schema, migrations, and turning cases into column batches.

The index is derived data: a migration may drop and recreate tables, since the run files
re-index on the next refresh.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import duckdb
import pyarrow as pa

from ragtui.core.model import Case

SCHEMA_VERSION = 1

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS files (
    path VARCHAR PRIMARY KEY, size BIGINT, mtime_ns BIGINT, sha256 VARCHAR, run_id VARCHAR,
    indexed_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, name VARCHAR, created_at TIMESTAMP, kind VARCHAR,
    config_key VARCHAR, config VARCHAR, generator VARCHAR, judge_model VARCHAR,
    judge_provider VARCHAR, judge_prompt_hash VARCHAR, dataset_name VARCHAR,
    dataset_version VARCHAR, parent VARCHAR, source_format VARCHAR, source_path VARCHAR,
    source_sha256 VARCHAR, file_path VARCHAR, n_cases INTEGER);
CREATE TABLE IF NOT EXISTS cases (
    run_id VARCHAR, case_id VARCHAR, ordinal INTEGER, question VARCHAR, answer VARCHAR,
    reference VARCHAR, latency_ms DOUBLE, metadata VARCHAR);
CREATE TABLE IF NOT EXISTS chunks (
    run_id VARCHAR, case_id VARCHAR, ordinal INTEGER, chunk_id VARCHAR, rank INTEGER,
    source VARCHAR, score DOUBLE, text VARCHAR);
CREATE TABLE IF NOT EXISTS scores (
    run_id VARCHAR, case_id VARCHAR, metric VARCHAR, value DOUBLE, error VARCHAR,
    label VARCHAR, raw VARCHAR, scale_lo DOUBLE, scale_hi DOUBLE, reason VARCHAR,
    reply VARCHAR, prompt_hash VARCHAR, threshold DOUBLE);
CREATE TABLE IF NOT EXISTS claims (
    run_id VARCHAR, case_id VARCHAR, ordinal INTEGER, metric VARCHAR, text VARCHAR,
    verdict VARCHAR, chunks VARCHAR[], reason VARCHAR);
CREATE TABLE IF NOT EXISTS human (run_id VARCHAR, case_id VARCHAR, metric VARCHAR, value DOUBLE);
CREATE TABLE IF NOT EXISTS judge_cache (
    key VARCHAR PRIMARY KEY, provider VARCHAR, url VARCHAR, model VARCHAR,
    prompt_hash VARCHAR, input_hash VARCHAR, options VARCHAR, reply VARCHAR,
    created_at TIMESTAMP);
"""

# Each entry upgrades the schema from version i to i + 1. The index is derived data, so a
# migration may also simply drop tables: the files re-index on the next refresh.
MIGRATIONS: list[Callable[[duckdb.DuckDBPyConnection], None]] = []

RUN_TABLES = ("cases", "chunks", "scores", "claims", "human")

COLUMNS: dict[str, list[str]] = {
    "cases": [
        "run_id",
        "case_id",
        "ordinal",
        "question",
        "answer",
        "reference",
        "latency_ms",
        "metadata",
    ],
    "chunks": ["run_id", "case_id", "ordinal", "chunk_id", "rank", "source", "score", "text"],
    "scores": [
        "run_id",
        "case_id",
        "metric",
        "value",
        "error",
        "label",
        "raw",
        "scale_lo",
        "scale_hi",
        "reason",
        "reply",
        "prompt_hash",
        "threshold",
    ],
    "claims": ["run_id", "case_id", "ordinal", "metric", "text", "verdict", "chunks", "reason"],
    "human": ["run_id", "case_id", "metric", "value"],
}
TYPES: dict[str, pa.DataType] = {
    "ordinal": pa.int32(),
    "rank": pa.int32(),
    "latency_ms": pa.float64(),
    "score": pa.float64(),
    "value": pa.float64(),
    "scale_lo": pa.float64(),
    "scale_hi": pa.float64(),
    "threshold": pa.float64(),
    "chunks": pa.list_(pa.string()),
}


def delete_run(cur: duckdb.DuckDBPyConnection, run_id: str) -> None:
    for table in (*RUN_TABLES, "runs"):
        cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])


def batches(items: Iterator[Case], size: int) -> Iterable[list[Case]]:
    batch: list[Case] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def case_rows(run_id: str, cases: list[Case], start: int) -> dict[str, dict[str, list[Any]]]:
    cols: dict[str, dict[str, list[Any]]] = {
        t: {c: [] for c in names} for t, names in COLUMNS.items()
    }
    cs, ch, sc, cl, hu = (cols[t] for t in ("cases", "chunks", "scores", "claims", "human"))
    for ordinal, case in enumerate(cases, start=start):
        cid = case.case_id
        for name, value in (
            ("run_id", run_id),
            ("case_id", cid),
            ("ordinal", ordinal),
            ("question", case.question),
            ("answer", case.answer),
            ("reference", case.reference),
            ("latency_ms", case.latency_ms),
            ("metadata", json.dumps(case.metadata, ensure_ascii=False) if case.metadata else None),
        ):
            cs[name].append(value)
        for i, chunk in enumerate(case.contexts):
            for name, value in (
                ("run_id", run_id),
                ("case_id", cid),
                ("ordinal", i),
                ("chunk_id", chunk.id),
                ("rank", chunk.rank),
                ("source", chunk.source),
                ("score", chunk.score),
                ("text", chunk.text),
            ):
                ch[name].append(value)
        rows = [(m, s, None) for m, s in case.scores.items()]
        rows += [(m, None, e) for m, e in case.errors.items() if m not in case.scores]
        for metric, s, error in rows:
            sc["run_id"].append(run_id)
            sc["case_id"].append(cid)
            sc["metric"].append(metric)
            sc["error"].append(error)
            sc["value"].append(None if s is None else s.value)
            sc["label"].append(None if s is None else s.label)
            sc["raw"].append(
                None if s is None or s.raw is None else json.dumps(s.raw, ensure_ascii=False)
            )
            sc["scale_lo"].append(None if s is None or s.scale is None else s.scale[0])
            sc["scale_hi"].append(None if s is None or s.scale is None else s.scale[1])
            sc["reason"].append(None if s is None else s.reason)
            sc["reply"].append(None if s is None else s.reply)
            sc["prompt_hash"].append(None if s is None else s.prompt_hash)
            sc["threshold"].append(None if s is None else s.threshold)
        for i, claim in enumerate(case.claims):
            for name, value in (
                ("run_id", run_id),
                ("case_id", cid),
                ("ordinal", i),
                ("metric", claim.metric),
                ("text", claim.text),
                ("verdict", claim.verdict),
                ("chunks", list(claim.chunks)),
                ("reason", claim.reason),
            ):
                cl[name].append(value)
        for metric, value in case.human.items():
            hu["run_id"].append(run_id)
            hu["case_id"].append(cid)
            hu["metric"].append(metric)
            hu["value"].append(value)
    return cols


def insert_columns(
    cur: duckdb.DuckDBPyConnection, table: str, columns: dict[str, list[Any]]
) -> None:
    if not columns["run_id"]:
        return
    arrow = pa.table(
        {
            name: pa.array(values, type=TYPES.get(name, pa.string()))
            for name, values in columns.items()
        }
    )
    cur.register("_batch", arrow)
    try:
        cur.execute(f"INSERT INTO {table} SELECT * FROM _batch")
    finally:
        cur.unregister("_batch")
