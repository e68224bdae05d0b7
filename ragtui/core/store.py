"""The DuckDB index over a folder of run files.

Run files are the source of truth; `.ragtui.duckdb` beside them is a cache of their content that
can be deleted at any time. Each file is indexed in one transaction, so a failure never leaves a
half-indexed run. Queries return Arrow tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from ragtui.core import tables
from ragtui.core.errors import RagtuiError, RunFileError, RunNotFoundError, StoreError
from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score, SourceInfo
from ragtui.core.paths import move_planted_links, planted
from ragtui.core.runfile import SUFFIX, iter_run_file
from ragtui.core.tables import RUN_TABLES, SCHEMA_VERSION

INDEX_NAME = ".ragtui.duckdb"
CHUNKED_BYTES = 64 << 20  # run files above this size are committed in pieces
# DuckDB's cache of the index; beyond it DuckDB spills to disk. RAGTUI_DUCKDB_MEMORY overrides.
MEMORY_LIMIT = os.environ.get("RAGTUI_DUCKDB_MEMORY", "256MB")
BATCH_CASES = 20_000  # cases buffered before a flush to DuckDB: bounds memory on huge files


@dataclass
class IndexReport:
    indexed: list[Path] = field(default_factory=list)
    skipped: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[RagtuiError] = field(default_factory=list)
    seconds: float = 0.0


class Store:
    """The index of one runs folder. Reads are thread-safe (one cursor per call)."""

    def __init__(
        self, folder: Path, con: duckdb.DuckDBPyConnection, *, read_only: bool, notices: list[str]
    ) -> None:
        self.folder = folder
        self._con = con
        self._write_lock = threading.Lock()
        self.read_only = read_only
        self.notices = notices
        self.problems: list[RagtuiError] = []

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, folder: str | Path, *, refresh: bool = True) -> Store:
        if not Path(folder).is_dir():
            raise StoreError(f"{folder}: no such folder")
        folder = Path(folder).resolve()  # file keys must not depend on the working directory
        path = folder / INDEX_NAME
        notices: list[str] = []
        read_only = False
        fixed = (INDEX_NAME, INDEX_NAME + ".wal")  # a planted symlink would be written through
        notices += move_planted_links(folder, fixed)
        if planted(folder, fixed) or not _writable(folder, path):
            notices.append(
                f"{folder} is read-only: browsing with an in-memory index; commands that write fail"
            )
            con, read_only = duckdb.connect(":memory:"), True
        else:
            try:
                con = _connect_checked(path)
            except duckdb.Error as exc:
                if "lock" in str(exc).lower():
                    notices.append(
                        f"another ragtui holds {path}: browsing read-only with a private in-memory index"
                    )
                    con, read_only = duckdb.connect(":memory:"), True
                else:
                    aside = _move_aside(path)
                    notices.append(
                        f"index {path} was unreadable ({_first_line(exc)}); moved to {aside.name} "
                        "and rebuilt from the run files"
                    )
                    con = duckdb.connect(str(path), config={"memory_limit": MEMORY_LIMIT})
        store = cls(folder, con, read_only=read_only, notices=notices)
        store._migrate()
        store._discard_pending()
        if refresh:
            store.refresh()
        return store

    def _migrate(self) -> None:
        con = self._con
        con.execute(tables.SCHEMA_SQL)
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version == 0:
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            return
        if version > SCHEMA_VERSION:
            # Written by a newer ragtui: rebuild rather than misread it.
            for table in ("files", "runs", *RUN_TABLES):
                con.execute(f"DELETE FROM {table}")
            self.notices.append("index was written by a newer ragtui; rebuilt from the run files")
            version = SCHEMA_VERSION
        for step in tables.MIGRATIONS[version - 1 : SCHEMA_VERSION - 1]:
            step(con)
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def require_writable(self, what: str) -> None:
        if self.read_only:
            raise StoreError(f"cannot {what}: {self.folder} is open read-only ({self.notices[0]})")

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        return self._con.cursor()

    # ------------------------------------------------------------ indexing

    def run_files(self) -> list[Path]:
        found = []
        for root, dirs, files in os.walk(self.folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found.extend(
                Path(root) / f
                for f in sorted(files)
                if f.endswith(SUFFIX) and not f.startswith(".")
            )
        return found

    def refresh(self, progress: Callable[[Path], None] | None = None) -> IndexReport:
        """Index new and changed files, drop runs whose file is gone. Unchanged files cost a stat."""
        started = time.perf_counter()
        report = IndexReport()
        cur = self._cursor()
        known = {
            row[0]: row[1:]
            for row in cur.execute("SELECT path, size, mtime_ns, sha256 FROM files").fetchall()
        }
        files = self.run_files()
        # Forget vanished files first, so a run that moved to another file is not a clash.
        for key in set(known) - {str(path) for path in files}:
            run_id = self._forget_file(key)
            if run_id:
                report.removed.append(run_id)
        for path in files:
            key = str(path)
            try:
                stat = path.stat()
            except OSError as exc:
                report.failed.append(RunFileError(path, f"cannot be read ({exc.strerror})"))
                continue
            old = known.get(key)
            if old is not None and old[0] == stat.st_size and old[1] == stat.st_mtime_ns:
                report.skipped += 1
                continue
            if progress is not None:
                progress(path)
            try:
                if self._index_path(path, stat, old[2] if old else None):
                    report.indexed.append(path)
                else:
                    report.skipped += 1
            except RagtuiError as err:
                report.failed.append(err)
        self.problems = report.failed
        report.seconds = time.perf_counter() - started
        return report

    def index_file(self, path: str | Path) -> str:
        """Index (or re-index) one file now; returns its run id. Raises the file's error."""
        path = Path(path)
        self._index_path(path, path.stat(), None)
        row = (
            self._cursor()
            .execute("SELECT run_id FROM files WHERE path = ?", [str(path)])
            .fetchone()
        )
        assert row is not None
        return row[0]

    def _index_path(self, path: Path, stat: os.stat_result, old_sha: str | None) -> bool:
        try:
            sha = _sha256(path)
        except OSError as exc:
            raise RunFileError(path, f"cannot be read ({exc.strerror})") from None
        with self._write_lock:
            cur = self._cursor()
            if sha == old_sha:  # touched, not changed
                cur.execute(
                    "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                    [stat.st_size, stat.st_mtime_ns, str(path)],
                )
                return False
            cur.execute("BEGIN TRANSACTION")
            try:
                self._write_run(cur, path, stat, sha)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                self._discard_pending()
                raise
        return True

    def _write_run(
        self, cur: duckdb.DuckDBPyConnection, path: Path, stat: os.stat_result, sha: str
    ) -> None:
        run, cases = iter_run_file(path)
        old = cur.execute("SELECT run_id FROM files WHERE path = ?", [str(path)]).fetchone()
        if old is not None:
            tables.delete_run(cur, old[0])
        clash = cur.execute("SELECT file_path FROM runs WHERE run_id = ?", [run.id]).fetchone()
        if clash is not None:
            raise RunFileError(
                path, f"run id {run.id!r} is already used by {clash[0]}", line=1, field="id"
            )
        from ragtui.core import fastindex  # the SQL fast path; None: the Python path decides

        checkpoint = None
        if stat.st_size > CHUNKED_BYTES:
            # A huge file commits piece by piece so memory stays bounded; the run stays
            # invisible (no runs row) until the last piece, and the pending mark lets a failure
            # or a killed process discard the pieces (see _discard_pending).
            cur.execute("INSERT OR REPLACE INTO meta VALUES ('pending_run', ?)", [run.id])

            def checkpoint() -> None:
                cur.execute("COMMIT")
                cur.execute("BEGIN TRANSACTION")

        try:
            fast = fastindex.index_cases(cur, path, run.id, checkpoint=checkpoint)
        except duckdb.Error:
            # A statement failed and aborted the transaction: start again (dropping any piece
            # of this run already committed) and let the Python path index the file.
            cur.execute("ROLLBACK")
            cur.execute("BEGIN TRANSACTION")
            if old is not None:
                tables.delete_run(cur, old[0])
            tables.delete_run(cur, run.id)
            fast = None
        if fast is not None:
            n_cases = fast
            next(cases, None)  # start the reader so that close() closes its file
            cases.close()
        else:
            n_cases = 0
            for batch in tables.batches(cases, BATCH_CASES):
                n_cases += len(batch)
                for table, columns in tables.case_rows(run.id, batch, n_cases - len(batch)).items():
                    tables.insert_columns(cur, table, columns)
                if checkpoint is not None:
                    checkpoint()
        cur.execute(
            "INSERT INTO runs VALUES (" + ", ".join("?" * 18) + ")",
            [
                run.id,
                run.name,
                _utc(run.created_at),
                run.kind,
                run.config_key,
                json.dumps(run.config, sort_keys=True, ensure_ascii=False),
                _generator(run),
                run.judge.model,
                run.judge.provider,
                run.judge.prompt_hash,
                run.dataset.name,
                run.dataset.version,
                run.parent,
                run.source.format if run.source else None,
                run.source.path if run.source else None,
                run.source.sha256 if run.source else None,
                str(path),
                n_cases,
            ],
        )
        cur.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, now())",
            [str(path), stat.st_size, stat.st_mtime_ns, sha, run.id],
        )
        cur.execute("DELETE FROM meta WHERE key = 'pending_run'")

    def _discard_pending(self) -> None:
        """Drop the committed pieces of a huge file whose indexing failed or was killed."""
        cur = self._cursor()
        row = cur.execute("SELECT value FROM meta WHERE key = 'pending_run'").fetchone()
        if row is None:
            return
        cur.execute("BEGIN TRANSACTION")
        tables.delete_run(cur, row[0])
        cur.execute("DELETE FROM files WHERE run_id = ?", [row[0]])
        cur.execute("DELETE FROM meta WHERE key = 'pending_run'")
        cur.execute("COMMIT")

    def _forget_file(self, key: str) -> str | None:
        with self._write_lock:
            cur = self._cursor()
            row = cur.execute("SELECT run_id FROM files WHERE path = ?", [key]).fetchone()
            cur.execute("BEGIN TRANSACTION")
            if row and row[0]:
                tables.delete_run(cur, row[0])
            cur.execute("DELETE FROM files WHERE path = ?", [key])
            cur.execute("COMMIT")
        return row[0] if row else None

    # ------------------------------------------------------------ queries

    def runs(self) -> pa.Table:
        return _arrow(
            self._cursor(), "SELECT * EXCLUDE (source_path) FROM runs ORDER BY created_at, run_id"
        )

    def run(self, run_id: str) -> Run:
        cur = self._cursor()
        row = cur.execute("SELECT * FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.folder}")
        names = [d[0] for d in cur.description]
        r = dict(zip(names, row, strict=True))
        return Run(
            id=r["run_id"],
            name=r["name"],
            created_at=r["created_at"].strftime("%Y-%m-%dT%H:%M:%SZ"),
            config=json.loads(r["config"]),
            config_key=r["config_key"],
            judge=JudgeInfo(r["judge_model"], r["judge_provider"], r["judge_prompt_hash"]),
            dataset=DatasetInfo(r["dataset_name"], r["dataset_version"]),
            parent=r["parent"],
            kind=r["kind"],
            source=None
            if r["source_format"] is None
            else SourceInfo(r["source_format"], r["source_path"], r["source_sha256"]),
        )

    def run_path(self, run_id: str) -> Path:
        row = (
            self._cursor()
            .execute("SELECT file_path FROM runs WHERE run_id = ?", [run_id])
            .fetchone()
        )
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.folder}")
        return Path(row[0])

    def resolve_run(self, ref: str) -> str:
        """A run id from an id, a unique id prefix, or a name (the newest run of that name)."""
        cur = self._cursor()
        if cur.execute("SELECT 1 FROM runs WHERE run_id = ?", [ref]).fetchone():
            return ref
        prefixed = [
            r[0]
            for r in cur.execute(
                "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id", [ref]
            ).fetchall()
        ]
        if len(prefixed) == 1:
            return prefixed[0]
        named = [
            r[0]
            for r in cur.execute(
                "SELECT run_id FROM runs WHERE name = ? ORDER BY created_at DESC", [ref]
            ).fetchall()
        ]
        if named:
            return named[0]
        if prefixed:
            raise RunNotFoundError(
                f"run {ref!r} is ambiguous: it starts {len(prefixed)} run ids ({', '.join(prefixed[:5])}"
                + (", ..." if len(prefixed) > 5 else "")
                + ")"
            )
        raise RunNotFoundError(
            f"no run {ref!r} in {self.folder} (give a run id, a unique prefix or a name)"
        )

    def metrics(self, run_ids: Sequence[str] | None = None) -> list[str]:
        sql = "SELECT DISTINCT metric FROM scores"
        params: list[Any] = []
        if run_ids is not None:
            sql += " WHERE list_contains(?, run_id)"
            params.append(list(run_ids))
        return sorted(r[0] for r in self._cursor().execute(sql, params).fetchall())

    def scores(
        self, run_ids: Sequence[str], metrics: Sequence[str] | None = None, *, ordered: bool = True
    ) -> pa.Table:
        """Per-case scores; `ordered=False` skips the sort for callers that pivot anyway."""
        sql = (
            "SELECT run_id, case_id, metric, value, error, label FROM scores "
            "WHERE list_contains(?, run_id)"
        )
        params: list[Any] = [list(run_ids)]
        if metrics is not None:
            sql += " AND list_contains(?, metric)"
            params.append(list(metrics))
        if ordered:
            sql += " ORDER BY run_id, metric, case_id"
        return _arrow(self._cursor(), sql, params)

    def run_means(self) -> pa.Table:
        return _arrow(
            self._cursor(),
            "SELECT run_id, metric, avg(value) AS mean, count(value) AS n, count(error) AS n_errors "
            "FROM scores GROUP BY run_id, metric ORDER BY run_id, metric",
        )

    def cases(self, run_id: str) -> pa.Table:
        return _arrow(
            self._cursor(),
            "SELECT case_id, ordinal, question, answer, reference, latency_ms FROM cases "
            "WHERE run_id = ? ORDER BY ordinal",
            [run_id],
        )

    def human(self, run_ids: Sequence[str]) -> pa.Table:
        return _arrow(
            self._cursor(),
            "SELECT run_id, case_id, metric, value FROM human WHERE list_contains(?, run_id) "
            "ORDER BY run_id, metric, case_id",
            [list(run_ids)],
        )

    def case(self, run_id: str, case_id: str) -> Case | None:
        cur = self._cursor()
        key = [run_id, case_id]
        row = cur.execute(
            "SELECT question, answer, reference, latency_ms, metadata FROM cases "
            "WHERE run_id = ? AND case_id = ?",
            key,
        ).fetchone()
        if row is None:
            return None
        chunks = tuple(
            Chunk(id=c[0], text=c[4], source=c[2], rank=c[1], score=c[3])
            for c in cur.execute(
                "SELECT chunk_id, rank, source, score, text FROM chunks WHERE run_id = ? "
                "AND case_id = ? ORDER BY ordinal",
                key,
            ).fetchall()
        )
        scores: dict[str, Score] = {}
        errors: dict[str, str] = {}
        for s in cur.execute(
            "SELECT metric, value, error, label, raw, scale_lo, scale_hi, reason, reply, "
            "prompt_hash, threshold FROM scores WHERE run_id = ? AND case_id = ? ORDER BY rowid",
            key,
        ).fetchall():
            if s[2] is not None:
                errors[s[0]] = s[2]
                continue
            scores[s[0]] = Score(
                value=s[1],
                raw=None if s[4] is None else json.loads(s[4]),
                label=s[3],
                scale=None if s[5] is None else (_num(s[5]), _num(s[6])),
                reason=s[7],
                reply=s[8],
                prompt_hash=s[9],
                threshold=s[10],
            )
        claims = tuple(
            Claim(metric=c[0], text=c[1], verdict=c[2], chunks=tuple(c[3] or ()), reason=c[4])
            for c in cur.execute(
                "SELECT metric, text, verdict, chunks, reason FROM claims WHERE run_id = ? "
                "AND case_id = ? ORDER BY ordinal",
                key,
            ).fetchall()
        )
        human = dict(
            cur.execute(
                "SELECT metric, value FROM human WHERE run_id = ? AND case_id = ? ORDER BY rowid",
                key,
            ).fetchall()
        )
        return Case(
            case_id=case_id,
            question=row[0],
            answer=row[1],
            reference=row[2],
            contexts=chunks,
            scores=scores,
            claims=claims,
            errors=errors,
            human=human,
            latency_ms=row[3],
            metadata=json.loads(row[4]) if row[4] else {},
        )

    def case_history(self, case_id: str) -> pa.Table:
        return _arrow(
            self._cursor(),
            "SELECT s.run_id, r.name, r.created_at, s.metric, s.value FROM scores s "
            "JOIN runs r USING (run_id) WHERE s.case_id = ? ORDER BY r.created_at, s.metric",
            [case_id],
        )

    def reruns(self, run_id: str) -> list[str]:
        """Runs of the same config (same config key and dataset), oldest first, itself included."""
        rows = (
            self._cursor()
            .execute(
                "SELECT o.run_id FROM runs r JOIN runs o ON o.config_key = r.config_key "
                "AND o.dataset_name IS NOT DISTINCT FROM r.dataset_name "
                "AND o.dataset_version IS NOT DISTINCT FROM r.dataset_version "
                "WHERE r.run_id = ? ORDER BY o.created_at, o.run_id",
                [run_id],
            )
            .fetchall()
        )
        return [r[0] for r in rows]

    # ------------------------------------------------------------ judge cache

    def cache_get(self, key: str) -> str | None:
        row = (
            self._cursor().execute("SELECT reply FROM judge_cache WHERE key = ?", [key]).fetchone()
        )
        return None if row is None else row[0]

    def cache_put(
        self,
        key: str,
        *,
        provider: str,
        url: str,
        model: str,
        prompt_hash: str,
        input_hash: str,
        options: str,
        reply: str,
    ) -> None:
        with self._write_lock:
            self._cursor().execute(
                "INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())",
                [key, provider, url, model, prompt_hash, input_hash, options, reply],
            )


# ---------------------------------------------------------------- helpers


def _arrow(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pa.Table:
    return cur.sql(sql, params=params).to_arrow_table()


def _writable(folder: Path, path: Path) -> bool:
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _connect_checked(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), config={"memory_limit": MEMORY_LIMIT})
    try:
        con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
    except duckdb.Error:
        con.close()
        raise
    return con


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    path.replace(aside)
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        wal.replace(aside.with_name(aside.name + ".wal"))
    return aside


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _utc(stamp: str) -> datetime:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _num(value: float) -> float:
    return int(value) if float(value).is_integer() else value


def _generator(run: Run) -> str | None:
    value = run.config.get("generator") or run.config.get("model")
    return None if value is None else str(value)
