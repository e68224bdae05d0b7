"""The index tables: their schema, migrations, and decoded lines turned into Arrow batches.

The index is derived data: a migration may drop and recreate tables, since the run files
re-index on the next refresh. Long texts (chunks, claims, judge replies, metadata) are not
copied here: each case row keeps the byte offset and length of its line, and the Case screen
reads that line from the run file (see `queries.case`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
import pyarrow as pa

from ragtui.core.runschema import CaseLine, HeaderLine

if TYPE_CHECKING:  # not at run time: a decoding worker process never loads DuckDB
    import duckdb

    from ragtui.core.runfile import Lines

SCHEMA_VERSION = 3

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS files (
    path BLOB PRIMARY KEY, size BIGINT, mtime_ns BIGINT, ctime_ns BIGINT, inode UBIGINT,
    sha256 VARCHAR, run_id VARCHAR, in_progress BOOLEAN, read_ns BIGINT);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, name VARCHAR, created_at TIMESTAMP, kind VARCHAR,
    config_key VARCHAR, config VARCHAR, generator VARCHAR, judge_model VARCHAR,
    judge_provider VARCHAR, judge_prompt_hash VARCHAR, dataset_name VARCHAR,
    dataset_version VARCHAR, parent VARCHAR, source_format VARCHAR, source_path VARCHAR,
    source_sha256 VARCHAR, file_path BLOB, n_cases INTEGER, in_progress BOOLEAN,
    created_at_text VARCHAR);
CREATE TABLE IF NOT EXISTS cases (
    run_id VARCHAR, case_id VARCHAR, ordinal INTEGER, question VARCHAR, answer VARCHAR,
    reference VARCHAR, latency_ms DOUBLE, cluster VARCHAR, line INTEGER, "offset" BIGINT,
    length INTEGER);
CREATE TABLE IF NOT EXISTS scores (
    run_id VARCHAR, case_id VARCHAR, metric VARCHAR, value DOUBLE, error VARCHAR,
    label VARCHAR, scale_lo DOUBLE, scale_hi DOUBLE, threshold DOUBLE, parse_failure BOOLEAN);
CREATE TABLE IF NOT EXISTS human (run_id VARCHAR, case_id VARCHAR, metric VARCHAR, value DOUBLE);
CREATE TABLE IF NOT EXISTS stated (
    run_id VARCHAR, ordinal INTEGER, metric VARCHAR, value DOUBLE, raw VARCHAR,
    statistic VARCHAR, scale_lo DOUBLE, scale_hi DOUBLE, n BIGINT);
CREATE TABLE IF NOT EXISTS judge_cache (
    key VARCHAR PRIMARY KEY, provider VARCHAR, url VARCHAR, model VARCHAR,
    prompt_hash VARCHAR, input_hash VARCHAR, options VARCHAR, reply VARCHAR,
    created_at TIMESTAMP);
"""

RUN_TABLES = ("cases", "scores", "human", "stated")
DERIVED = ("files", "runs", "cases", "chunks", "scores", "claims", "human", "stated")


def _rebuild_derived(con: duckdb.DuckDBPyConnection) -> None:
    """Version 1 kept texts and typed paths differently: drop what the files rebuild."""
    for table in DERIVED:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(SCHEMA_SQL)


# Each entry upgrades the schema from version i to i + 1.
# Version 3 keeps each score's scale, threshold and parse-failure flag (the comparison refuses to
# mix scales and counts parse failures; diagnosis reads thresholds): rebuilt from the files.
MIGRATIONS: list[Callable[[duckdb.DuckDBPyConnection], None]] = [_rebuild_derived, _rebuild_derived]


def delete_run(cur: duckdb.DuckDBPyConnection, run_id: str) -> None:
    delete_runs(cur, [run_id])


def delete_runs(cur: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    for table in (*RUN_TABLES, "runs"):
        cur.execute(f"DELETE FROM {table} WHERE list_contains(?, run_id)", [run_ids])


def forget_files(cur: duckdb.DuckDBPyConnection, path_keys: list[bytes]) -> list[str]:
    """Delete these files' rows and their runs' (in the caller's transaction); returns the
    run ids deleted, in the files' order."""
    run_ids = [
        r[0]
        for r in cur.execute(
            "SELECT run_id FROM files WHERE list_contains(?, path) AND run_id IS NOT NULL "
            "ORDER BY path",
            [path_keys],
        ).fetchall()
    ]
    if run_ids:
        delete_runs(cur, run_ids)
    cur.execute("DELETE FROM files WHERE list_contains(?, path)", [path_keys])
    return run_ids


# ---------------------------------------------------------------- Arrow batches

_STR = pa.string()
_F64 = pa.float64()
_I32 = pa.int32()


PARSE_FAILURE = "parse failure: "


def _parse_failure(text: str | None) -> bool:
    return text is not None and text.startswith(PARSE_FAILURE)


def case_batches(cases: list[CaseLine], lines: Lines, start: int) -> dict[str, pa.Table]:
    """The rows of a block of decoded cases, one Arrow table per index table (run_id is
    added by the insert). Plain comprehensions: the per-row cost is a few attribute reads."""
    ids = [c.case_id for c in cases]
    out = {
        "cases": pa.table(
            {
                "case_id": pa.array(ids, _STR),
                "ordinal": pa.array(range(start, start + len(cases)), _I32),
                "question": pa.array([c.question for c in cases], _STR),
                "answer": pa.array([c.answer for c in cases], _STR),
                "reference": pa.array([c.reference for c in cases], _STR),
                "latency_ms": pa.array([c.latency_ms for c in cases], _F64),
                "cluster": pa.array([c.cluster for c in cases], _STR),
                "line": pa.array(lines.numbers, _I32),
                "offset": pa.array(lines.offsets, pa.int64()),
                "length": pa.array(lines.lengths, _I32),
            }
        )
    }
    scored = [(c.case_id, m, s) for c in cases if c.scores for m, s in c.scores.items()]
    failed = [
        (c.case_id, m, e)
        for c in cases
        if c.errors
        for m, e in c.errors.items()
        if not (c.scores and m in c.scores)  # a metric both scored and failed counts as scored
    ]
    if scored or failed:
        s_ids, s_metrics, s_scores = zip(*scored, strict=True) if scored else ((), (), ())
        e_ids, e_metrics, e_messages = zip(*failed, strict=True) if failed else ((), (), ())
        out["scores"] = pa.table(
            {
                "case_id": pa.array(s_ids + e_ids, _STR),
                "metric": pa.array(s_metrics + e_metrics, _STR),
                "value": pa.array([s.value for s in s_scores] + [None] * len(e_ids), _F64),
                "error": pa.array([None] * len(s_ids) + list(e_messages), _STR),
                "label": pa.array([s.label for s in s_scores] + [None] * len(e_ids), _STR),
                "scale_lo": pa.array(
                    [s.scale[0] if s.scale else None for s in s_scores] + [None] * len(e_ids), _F64
                ),
                "scale_hi": pa.array(
                    [s.scale[1] if s.scale else None for s in s_scores] + [None] * len(e_ids), _F64
                ),
                "threshold": pa.array([s.threshold for s in s_scores] + [None] * len(e_ids), _F64),
                # a grade whose judge reply could not be read: an error, or (label mode) a 0
                # whose reason says so
                "parse_failure": pa.array(
                    [_parse_failure(s.reason) for s in s_scores]
                    + [_parse_failure(e) for e in e_messages],
                    pa.bool_(),
                ),
            }
        )
    human = [(c.case_id, m, v) for c in cases if c.human for m, v in c.human.items()]
    if human:
        h_ids, h_metrics, h_values = zip(*human, strict=True)
        out["human"] = pa.table(
            {
                "case_id": pa.array(h_ids, _STR),
                "metric": pa.array(h_metrics, _STR),
                "value": pa.array(h_values, _F64),
            }
        )
    return out


def stated_batch(header: HeaderLine) -> pa.Table | None:
    figures = header.stated or []
    if not figures:
        return None
    return pa.table(
        {
            "ordinal": pa.array(range(len(figures)), _I32),
            "metric": pa.array([f.metric for f in figures], _STR),
            "value": pa.array([f.value for f in figures], _F64),
            "raw": pa.array(
                [None if f.raw is None else msgspec.json.encode(f.raw).decode() for f in figures],
                _STR,
            ),
            "statistic": pa.array([f.statistic for f in figures], _STR),
            "scale_lo": pa.array([None if f.scale is None else f.scale[0] for f in figures], _F64),
            "scale_hi": pa.array([None if f.scale is None else f.scale[1] for f in figures], _F64),
            "n": pa.array([f.n for f in figures], pa.int64()),
        }
    )


def insert(cur: duckdb.DuckDBPyConnection, table: str, batch: pa.Table, run_id: str) -> None:
    """Insert an Arrow batch whose columns follow `table`'s after run_id."""
    if batch.num_rows == 0:
        return
    cur.register("_batch", batch)
    try:
        cur.execute(f"INSERT INTO {table} SELECT ?::VARCHAR, * FROM _batch", [run_id])
    finally:
        cur.unregister("_batch")


def canonical_json(value: Any) -> str:
    """JSON text of a decoded value, keys in order (configs are compared by their text)."""
    return msgspec.json.encode(value, order="sorted").decode()
