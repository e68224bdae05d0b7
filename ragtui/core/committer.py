"""Committing decoded run files into the index, never half a file.

Small files are committed a group at a time (one transaction, a handful of statements for
all of them): DuckDB spends milliseconds per statement and per commit, which is most of the
time for a folder of small runs. Their data was fully decoded and checked before, so a group
fails only when the index does. A big file goes alone; one over CHUNKED_BYTES commits piece
by piece under a pending mark, invisible until its last piece.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from ragtui.core import tables
from ragtui.core.decoding import Failed, Head, Piece, Tail, file_error, key
from ragtui.core.errors import RagtuiError, RunFileError, shown_path

if TYPE_CHECKING:
    from ragtui.core.store import Store

ALONE_BYTES = 16 << 20  # a run file above this size is committed alone, as it is decoded
# Small files are committed together up to this much (their decoded rows, ~1/3 of it, wait in
# memory): each transaction costs DuckDB a WAL flush; 64 MB took ~10% less CPU than 16.
GROUP_BYTES = 64 << 20
# ... and up to this many files (each holds a few small Arrow tables until the group commits)
GROUP_FILES = 2000
# One INSERT takes at most this many rows, about this many bytes, as one contiguous batch.
INSERT_ROWS = 1 << 17
INSERT_BYTES = 16 << 20

Done = Callable[[Path, str | None, RagtuiError | None], None]
# (path, the number of its last line, still being written, and the complete cases indexed)
Torn = Callable[[Path, int, int], None]


class DataFault(Exception):
    """DuckDB (or the code before it) refused a transaction's data rather than failing itself."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def is_file_fault(exc: BaseException) -> bool:
    """An error caused by one file's data, not by the index (a full disk, a damaged index)."""
    if not isinstance(exc, duckdb.Error):
        return isinstance(exc, Exception)
    return isinstance(
        exc,
        duckdb.ConversionException
        | duckdb.InvalidInputException
        | duckdb.ConstraintException
        | duckdb.OutOfRangeException,
    )


@dataclass
class Rows:
    head: Head
    tail: Tail = field(default_factory=lambda: Tail(0, ""))
    batches: dict[str, list[pa.Table]] = field(default_factory=dict)


_RUNS = pa.schema(
    [(name, pa.string()) for name in ("run_id", "name")]
    + [("created_at", pa.timestamp("us"))]
    + [
        (name, pa.string())
        for name in (
            "kind",
            "config_key",
            "config",
            "generator",
            "judge_model",
            "judge_provider",
            "judge_prompt_hash",
            "dataset_name",
            "dataset_version",
            "parent",
            "source_format",
            "source_path",
            "source_sha256",
        )
    ]
    + [
        ("file_path", pa.binary()),
        ("n_cases", pa.int32()),
        ("in_progress", pa.bool_()),
        ("created_at_text", pa.string()),
    ]
)
_FILES = pa.schema(
    [
        ("path", pa.binary()),
        ("size", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("ctime_ns", pa.int64()),
        ("inode", pa.uint64()),
        ("sha256", pa.string()),
        ("run_id", pa.string()),
        ("in_progress", pa.bool_()),
        ("read_ns", pa.int64()),
    ]
)


def _runs_row(head: Head, tail: Tail) -> list[Any]:
    return [*head.row, tail.n_cases, _in_progress(head, tail), head.created_text]


def _in_progress(head: Head, tail: Tail) -> bool:
    """A batch holds the file, or its last line is still being written (no newline yet)."""
    return head.in_progress or tail.torn > 0


def _files_row(head: Head, tail: Tail) -> list[Any]:
    s = head.state
    return [
        key(head.path),
        s.size,
        s.mtime_ns,
        s.ctime_ns,
        s.inode,
        tail.sha256,
        head.run_id,
        _in_progress(head, tail),
        head.read_ns,
    ]


def _table(rows: list[list[Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array(column, f.type)
            for column, f in zip(zip(*rows, strict=True), schema, strict=True)
        ],
        schema=schema,
    )


class Committer:
    """Takes decoded files one after another and commits them, grouped or alone."""

    def __init__(self, store: Store, on_done: Done, on_torn: Torn | None = None) -> None:
        self.store = store
        self.cur = store._cursor()
        self.on_done = on_done
        self.on_torn = on_torn
        self.group: list[Rows] = []
        self.group_bytes = 0

    def take(self, path: Path, stream: Iterator[Piece], *, drain: bool) -> None:
        """One file's pieces (a Failed raised by `stream` is the file's error). After a
        failure of a big file, `drain` reads what the decoder still sends of it."""
        try:
            head = next(stream)
            assert isinstance(head, Head)
            if head.chunked or head.state.size > min(ALONE_BYTES, GROUP_BYTES):
                self.flush()
                self._alone(head, stream)
                self.on_done(path, head.run_id, None)
                return
            rows = Rows(head)
            for piece in stream:
                if isinstance(piece, Tail):
                    rows.tail = piece
                else:
                    for table, batch in piece.items():  # type: ignore[union-attr]
                        rows.batches.setdefault(table, []).append(batch)
        except Failed as failed:
            try:
                if drain:
                    for _ in stream:
                        pass
            except Failed:
                pass
            self._failed(path, failed.error)
            return
        self.group.append(rows)
        self.group_bytes += head.state.size
        if self.group_bytes >= GROUP_BYTES or len(self.group) >= GROUP_FILES:
            self.flush()

    def flush(self) -> None:
        group, self.group, self.group_bytes = self.group, [], 0
        if not group:
            return
        try:
            failed = self._transaction(lambda: self._write_group(group))
        except DataFault as fault:
            if len(group) == 1:
                self._failed(group[0].head.path, file_error(group[0].head.path, fault.cause))
                return
            # Not expected (the files were checked): find the file by committing one by one.
            for rows in group:
                self.group = [rows]
                self.flush()
            return
        for rows in group:
            head = rows.head
            error = failed.get(head.run_id + "\0" + str(head.path))
            if error is None:
                self._torn(head, rows.tail)
                self.on_done(head.path, head.run_id, None)
            else:
                self._failed(head.path, error)

    def _failed(self, path: Path, error: RagtuiError) -> None:
        """A file that no longer holds a valid run: its earlier run leaves the index too."""
        self.store._forget_files([key(path)])
        self.on_done(path, None, error)

    def _transaction(self, work: Callable[[], Any], *, chunked: bool = False) -> Any:
        cur = self.cur
        with self.store._write_lock:
            cur.execute("BEGIN TRANSACTION")
            try:
                result = work()
                cur.execute("COMMIT")
                return result
            except BaseException as exc:
                try:
                    cur.execute("ROLLBACK")
                    if chunked:
                        discard_pending(cur)
                except duckdb.Error:
                    pass  # the index itself failed: the store hears of it from `exc`
                if isinstance(exc, Failed) or not is_file_fault(exc):
                    raise
                raise DataFault(exc) from exc

    def _write_group(self, group: list[Rows]) -> dict[str, RagtuiError]:
        cur = self.cur
        group = [r for r in group if not self._newer_landed(r.head)]
        if not group:
            return {}
        tables.forget_files(cur, [key(r.head.path) for r in group])
        taken = {
            r[0]: shown_path(os.fsdecode(r[1]))
            for r in cur.execute(
                "SELECT run_id, file_path FROM runs WHERE list_contains(?, run_id)",
                [[r.head.run_id for r in group]],
            ).fetchall()
        }
        failed: dict[str, RagtuiError] = {}
        kept = []
        for rows in group:
            head = rows.head
            if head.run_id in taken:
                failed[head.run_id + "\0" + str(head.path)] = _clash(head, taken[head.run_id])
                continue
            taken[head.run_id] = shown_path(head.path)
            kept.append(rows)
        if not kept:
            return failed
        for table in sorted({t for r in kept for t in r.batches}):
            parts = [
                _with_run_id(batch, r.head.run_id)
                for r in kept
                for batch in r.batches.get(table, ())
            ]
            _insert_all(cur, table, parts)
        stated = [_with_run_id(r.head.stated, r.head.run_id) for r in kept if r.head.stated]
        _insert_all(cur, "stated", stated)
        _insert_all(cur, "runs", [_table([_runs_row(r.head, r.tail) for r in kept], _RUNS)])
        _insert_all(cur, "files", [_table([_files_row(r.head, r.tail) for r in kept], _FILES)])
        return failed

    def _newer_landed(self, head: Head) -> bool:
        """Whether a reading of this file begun after this one's is already in the index:
        two indexers of one file (a refresh begun while a batch still held it, and the batch's
        own after it let go) may commit in either order, and the older reading (the file still
        being written) must not overwrite the newer, or the run stays "running" for good."""
        row = self.cur.execute(
            "SELECT read_ns FROM files WHERE path = ?", [key(head.path)]
        ).fetchone()
        if row is None or row[0] is None:
            return False
        # (a reading stamped in the future is a clock that went back: not "newer", re-read)
        return head.read_ns < row[0] <= time.time_ns()

    def _alone(self, head: Head, stream: Iterator[Piece]) -> None:
        """One big file in its own transaction (or, over CHUNKED_BYTES, in pieces)."""
        cur = self.cur

        def work() -> Tail | None:
            if self._newer_landed(head):  # (checked under the write lock, as a group is)
                for _ in stream:  # read out, as a failed file's stream is
                    pass
                return None
            old = cur.execute(
                "SELECT run_id FROM files WHERE path = ?", [key(head.path)]
            ).fetchone()
            if old is not None and old[0]:
                tables.delete_run(cur, old[0])
            clash = cur.execute(
                "SELECT file_path FROM runs WHERE run_id = ?", [head.run_id]
            ).fetchone()
            if clash is not None:
                raise Failed(_clash(head, shown_path(os.fsdecode(clash[0]))))
            if head.chunked:
                # The pieces commit one by one; until the last the run has no runs row (it is
                # invisible) and the pending mark lets a failure or a kill drop them.
                cur.execute("INSERT OR REPLACE INTO meta VALUES ('pending_run', ?)", [head.run_id])
            if head.stated is not None:
                tables.insert(cur, "stated", head.stated, head.run_id)
            tail = Tail(0, "")
            for piece in stream:
                if isinstance(piece, Tail):
                    tail = piece
                    continue
                for table, batch in piece.items():  # type: ignore[union-attr]
                    tables.insert(cur, table, batch, head.run_id)
                if head.chunked:
                    cur.execute("COMMIT")
                    cur.execute("BEGIN TRANSACTION")
            cur.execute("DELETE FROM files WHERE path = ?", [key(head.path)])
            _insert_all(cur, "runs", [_table([_runs_row(head, tail)], _RUNS)])
            _insert_all(cur, "files", [_table([_files_row(head, tail)], _FILES)])
            cur.execute("DELETE FROM meta WHERE key = 'pending_run'")
            return tail

        try:
            tail = self._transaction(work, chunked=head.chunked)
        except DataFault as fault:
            raise Failed(file_error(head.path, fault.cause)) from None
        if tail is not None:
            self._torn(head, tail)

    def _torn(self, head: Head, tail: Tail) -> None:
        if tail.torn and self.on_torn is not None:
            self.on_torn(head.path, tail.torn, tail.n_cases)


def _clash(head: Head, other: str) -> RunFileError:
    return RunFileError(
        head.path, f"run id {head.run_id!r} is already used by {other}", line=1, field="id"
    )


def _with_run_id(batch: pa.Table, run_id: str) -> pa.Table:
    return batch.add_column(0, "run_id", pa.array([run_id] * batch.num_rows, pa.string()))


def _insert_all(cur: duckdb.DuckDBPyConnection, table: str, parts: list[pa.Table]) -> None:
    """Insert `parts` into `table`, at most INSERT_ROWS rows and about INSERT_BYTES a statement,
    each one contiguous Arrow batch: DuckDB gave every tiny table of a group (two cases of one
    file) its own buffers, and ~8,000 of them ran out of its 256 MB memory limit."""
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return
    batch = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    per_row = max(1, batch.nbytes // batch.num_rows)
    step = max(1, min(INSERT_ROWS, INSERT_BYTES // per_row))
    for start in range(0, batch.num_rows, step):
        piece = batch.slice(start, step).combine_chunks()
        cur.register("_rows", piece)
        try:
            cur.execute(f"INSERT INTO {table} SELECT * FROM _rows")
        finally:
            # (after a failed insert the transaction is aborted and this fails too: the
            # insert's own error is the one that tells what happened)
            with contextlib.suppress(duckdb.Error):
                cur.unregister("_rows")


def discard_pending(cur: duckdb.DuckDBPyConnection) -> None:
    """Drop the committed pieces of a huge file whose indexing failed or was killed."""
    row = cur.execute("SELECT value FROM meta WHERE key = 'pending_run'").fetchone()
    if row is None:
        return
    cur.execute("BEGIN TRANSACTION")
    tables.delete_run(cur, row[0])
    cur.execute("DELETE FROM files WHERE run_id = ?", [row[0]])
    cur.execute("DELETE FROM meta WHERE key = 'pending_run'")
    cur.execute("COMMIT")
