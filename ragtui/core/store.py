"""The DuckDB index over a folder of run files.

Run files are the source of truth; `.ragtui.duckdb` beside them is a cache of their content
that can be deleted at any time. Writing the index is `indexer`, reading it is `queries`; this
class opens it (read-only and in memory when the folder is not writable or another ragtui holds
it), hands out cursors, and turns every DuckDB error into the project's own. An index that is
damaged (truncated, a zeroed block, random bytes), whether DuckDB says so on opening or on a
later query, is moved aside and rebuilt from the run files, which are never touched.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat as stat_module
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from ragtui.core import committer, decoding, indexer, queries, tables
from ragtui.core.decoding import FileState
from ragtui.core.errors import (
    DiskFull,
    IndexFault,
    InputError,
    RagtuiError,
    RunFileError,
    StoreError,
    shown_path,
)
from ragtui.core.indexer import IndexReport
from ragtui.core.model import Case, Run
from ragtui.core.paths import move_planted_links, planted
from ragtui.core.queries import RunRow
from ragtui.core.runfile import read_case_at
from ragtui.core.tables import SCHEMA_VERSION

INDEX_NAME = ".ragtui.duckdb"
# DuckDB's cache of the index; beyond it DuckDB spills to disk. RAGTUI_DUCKDB_MEMORY overrides.
MEMORY_LIMIT = "256MB"
_SIZE = re.compile(r"\s*\d+(\.\d+)?\s*([kmgt]i?b|b|bytes)?\s*", re.IGNORECASE)


def memory_limit() -> str:
    """RAGTUI_DUCKDB_MEMORY, else MEMORY_LIMIT; a value DuckDB would refuse is named here
    (DuckDB's own error, "Memory must have a number", did not say which setting)."""
    value = os.environ.get("RAGTUI_DUCKDB_MEMORY", "").strip() or MEMORY_LIMIT
    if not _SIZE.fullmatch(value):
        raise InputError(
            f"RAGTUI_DUCKDB_MEMORY: expected a size such as 512MB or 1GB, found {value!r}"
        )
    return value


def _duckdb_config() -> dict[str, str | int | bool]:
    """The index's DuckDB settings: its memory limit, and its threads where the environment
    sets them (RAGTUI_DUCKDB_THREADS: on a machine shared with other work, or where several
    ragtui processes run at once, as the test suite's workers do; DuckDB's own default, one
    per core, otherwise)."""
    config: dict[str, str | int | bool] = {
        "memory_limit": memory_limit(),
        # the index only ever reads what ragtui hands it: no files, URLs or extensions, so
        # nothing a database file holds (a view, a macro) can read or send anything
        "enable_external_access": False,
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
    }
    threads = os.environ.get("RAGTUI_DUCKDB_THREADS", "").strip()
    if threads.isascii() and threads.isdigit() and int(threads) > 0:
        config["threads"] = int(threads)
    return config


T = TypeVar("T")

__all__ = ["INDEX_NAME", "IndexReport", "RunRow", "Store"]


class Store:
    """The index of one runs folder. Reads are thread-safe (one cursor per call)."""

    def __init__(
        self,
        folder: Path,
        con: duckdb.DuckDBPyConnection,
        *,
        read_only: bool,
        notices: list[str],
    ) -> None:
        self.folder = folder
        self._con = con
        self._write_lock = threading.RLock()
        self._rebuild_lock = threading.Lock()
        self._generation = 0
        self.read_only = read_only  # the folder cannot be written: commands that write refuse
        self.private = read_only  # the index is an in-memory copy of this process's own
        # why no run is written here though the folder is writable (the bundled demo), or None
        self.kept_as_is: str | None = None
        self.full: str | None = None  # why the index is in memory though the folder is not
        self.notices = notices
        self.problems: list[RagtuiError] = []
        # files whose incomplete last line was already said (said once, until it completes)
        self._torn_said: set[bytes] = set()

    @property
    def index_path(self) -> Path:
        return self.folder / INDEX_NAME

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, folder: str | Path, *, refresh: bool = True) -> Store:
        """The folder's index, refreshed. A folder that cannot be written (read-only, or its
        disk full) is browsed with an in-memory index, and said; commands that write fail."""
        try:
            return cls._open(folder, refresh=refresh)
        except DiskFull as err:
            full = f"{err}; browsing with an in-memory index meanwhile, commands that write fail"
            return cls._open(folder, refresh=refresh, full=full)

    @classmethod
    def _open(cls, folder: str | Path, *, refresh: bool, full: str | None = None) -> Store:
        if not Path(folder).is_dir():
            raise StoreError(f"{shown_path(folder)}: no such folder")
        folder = Path(folder).resolve()  # file keys must not depend on the working directory
        path = folder / INDEX_NAME
        notices: list[str] = []
        read_only = private = False  # private: an in-memory index of our own
        # a planted symlink would be written through
        # (and DuckDB's spill directory, which it writes into and clears of its own temp files)
        fixed = (INDEX_NAME, INDEX_NAME + ".wal", INDEX_NAME + MARK_SUFFIX, INDEX_NAME + ".tmp")
        notices += move_planted_links(folder, fixed)
        if full is not None or planted(folder, fixed) or not _writable(folder, path):
            notices.append(
                full
                or f"{shown_path(folder)} is read-only: browsing with an in-memory index; "
                "commands that write fail"
            )
            con, read_only, private = (
                duckdb.connect(":memory:", config=_duckdb_config()),
                True,
                True,
            )
        else:
            foreign = _foreign(path)  # decided from the files alone: nothing in it has run yet
            checked = _present_identity(path)
            try:
                con = _connect(path)
                # (a file swapped in between the check and the connect is not the one checked)
                swapped = checked is not None and _present_identity(path) != checked
                foreign = foreign or swapped
                if foreign:  # (we hold its lock: no other ragtui is using it)
                    con.close()
                    notices.append(_discarded(path))
                    con = _connect_fresh(path)
            except duckdb.Error as exc:
                if "could not set lock" in str(exc).lower() and not _is_damage(exc):
                    # The folder is still writable: run files written here (an import, a
                    # re-judge) land, and the ragtui holding the index picks them up.
                    notices.append(
                        f"another ragtui holds {shown_path(path)}: using a private in-memory "
                        "index; run files written here are picked up by the other one"
                    )
                    con, private = duckdb.connect(":memory:", config=_duckdb_config()), True
                elif _disk_full(exc):  # no damage: nothing to move aside
                    raise _store_error(path, exc) from None
                else:
                    notices.append(_moved_aside(path, exc))
                    con = _connect_fresh(path)
        store = cls(folder, con, read_only=read_only, notices=notices)
        store.private = private
        store.full = full
        try:
            store._guard(store._prepare)
            if refresh:
                store.refresh()
        except BaseException:
            store.close()
            raise
        return store

    def _prepare(self) -> None:
        cur = self._cursor()
        _migrate(cur, self.notices)
        if not self.private:
            _mark(self.index_path)
        committer.discard_pending(cur)

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self._con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def require_writable(self, what: str) -> None:
        if self.full is not None:
            raise DiskFull(f"cannot {what}: {shown_path(self.folder)}: no space left on device")
        if self.read_only:
            raise StoreError(
                f"cannot {what}: {shown_path(self.folder)} is open read-only ({self.notices[0]})"
            )
        if self.kept_as_is is not None:
            raise StoreError(f"cannot {what}: {self.kept_as_is}")

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        return self._con.cursor()

    # ------------------------------------------------------------ DuckDB errors

    def _guard(self, call: Callable[[], T], *, retry: bool = True) -> T:
        """Run `call`; a damaged index is rebuilt (and `call` run again), any other DuckDB
        error becomes a StoreError."""
        generation = self._generation
        try:
            return call()
        except duckdb.Error as exc:
            if retry:
                try:
                    rebuilt = self._generation != generation or self._rebuild(exc, generation)
                except duckdb.Error as again:
                    raise _store_error(self.index_path, again) from None
                if rebuilt:
                    return self._guard(call, retry=False)
            raise _store_error(self.index_path, exc) from None

    def _rebuild(self, exc: duckdb.Error, generation: int) -> bool:
        """Move a damaged index aside and rebuild it; False when `exc` is no damage."""
        if self.read_only or not _is_damage(exc):
            return False
        with self._rebuild_lock:
            if self._generation != generation:
                return True  # another thread rebuilt it meanwhile
            self.close()
            self.notices.append(_moved_aside(self.index_path, exc))
            self._con = _connect_fresh(self.index_path)
            self._generation += 1
            self._prepare()
            self._refresh()
        return True

    # ------------------------------------------------------------ indexing

    def run_files(self) -> list[Path]:
        return [path for path, _ in indexer.scan(self.folder)[0]]

    def refresh(self, progress: Callable[[Path], None] | None = None) -> IndexReport:
        """Index new and changed files, drop runs whose file is gone. Unchanged files cost a stat.

        A file's problem (malformed, unreadable, special) is in the report and in `problems`;
        a problem of the index itself (a full disk) raises StoreError.
        """
        try:
            return self._guard(lambda: self._refresh(progress))
        except DiskFull as err:
            if self.private:
                raise
            reason = f"{err}; browsing with an in-memory index meanwhile, commands that write fail"
            self._to_memory(reason)
            report = self._guard(lambda: self._refresh(progress))
            report.notes.insert(0, reason)
            return report

    def _to_memory(self, reason: str) -> None:
        """Go on with an in-memory index: the index file cannot be written (a full disk)."""
        with self._rebuild_lock:
            self.close()
            self.notices.append(reason)
            self._con = duckdb.connect(":memory:", config=_duckdb_config())
            self.read_only = self.private = True
            self.full = reason
            self._generation += 1
            self._prepare()

    def _refresh(self, progress: Callable[[Path], None] | None = None) -> IndexReport:
        started = time.perf_counter()
        report = IndexReport()
        cur = self._cursor()
        known = {
            bytes(r[0]): indexer.Known(FileState(*r[1:5]), r[5], r[6], bool(r[7]), r[8])
            for r in cur.execute(
                "SELECT path, size, mtime_ns, ctime_ns, inode, sha256, run_id, in_progress, "
                "read_ns FROM files"
            ).fetchall()
        }
        found, special = indexer.scan(self.folder)
        for path, why in special:
            report.failed.append(RunFileError(path, why))
        # Forget vanished files first, so a run that moved to another file is not a clash.
        gone = set(known) - {decoding.key(path) for path, _ in found}
        report.removed += self._forget_files(sorted(gone))
        todo: list[Path] = []
        for path, st in found:
            old = known.get(decoding.key(path))
            if old is not None and not self._changed(path, st, old):
                report.skipped += 1
                continue
            todo.append(path)
        chosen = set(todo)
        size = sum(st.st_size for path, st in found if path in chosen)

        torn: dict[bytes, str] = {}

        def done(path: Path, run_id: str | None, error: RagtuiError | None) -> None:
            if error is not None:
                report.failed.append(error)
            else:
                report.indexed.append(path)
            if progress is not None:
                progress(path)

        def on_torn(path: Path, line: int, n_cases: int) -> None:
            torn[decoding.key(path)] = (
                f"{shown_path(path)}: line {line}, its last, is incomplete (still being "
                f"written?): {n_cases} complete case{'' if n_cases == 1 else 's'} indexed; "
                "the rest follows when the line is complete"
            )

        report.decoders = indexer.index_files(self, todo, done, size=size, on_torn=on_torn)
        for path in report.indexed:
            path_key = decoding.key(path)
            if path_key not in torn:
                self._torn_said.discard(path_key)
            elif path_key not in self._torn_said:
                self._torn_said.add(path_key)
                report.notes.append(torn[path_key])
        self.problems = report.failed
        report.seconds = time.perf_counter() - started
        return report

    def _changed(self, path: Path, st: os.stat_result, old: indexer.Known) -> bool:
        """Whether a known file must be indexed again (touched but equal files are not)."""
        state = FileState.of(st)
        racy = old.state.mtime_ns >= old.read_ns - indexer.RACY_NS
        if state == old.state and not racy and not old.in_progress:
            return False
        if old.in_progress:  # read it again once its writer has finished (or died)
            if state != old.state:
                return True
            # (a last line without its newline: the same file reads the same, still running)
            return not (indexer.still_written(path) or indexer.ends_mid_line(path))
        read_ns = time.time_ns()  # when this reading began (a later commit compares with it)
        try:
            same = indexer.sha256_of(path) == old.sha256
        except (RagtuiError, OSError):
            return True  # indexing it names the problem
        # Recording the new reading only helps once the file is older than the racy window:
        # before that the next open hashes it again anyway, and a write here would make every
        # open in that second (a script's next command) write and checkpoint the index.
        if same and state.mtime_ns < time.time_ns() - indexer.RACY_NS:
            with self._write_lock:
                self._cursor().execute(
                    "UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, inode = ?, "
                    "read_ns = ? WHERE path = ?",
                    [
                        *(state.size, state.mtime_ns, state.ctime_ns, state.inode),
                        read_ns,
                        decoding.key(path),
                    ],
                )
        return not same

    def index_file(self, path: str | Path) -> str:
        """Index (or re-index) one file now; returns its run id. Raises the file's error."""
        path = Path(path).resolve()
        result: list[tuple[str | None, RagtuiError | None]] = []
        self._guard(
            lambda: indexer.index_files(self, [path], lambda p, r, e: result.append((r, e)))
        )
        run_id, error = result[0]
        if error is not None:
            raise error
        assert run_id is not None
        # the file reads now (e.g. a batch replaced what a crash left): its problem is gone
        self.problems = [p for p in self.problems if getattr(p, "path", None) != shown_path(path)]
        return run_id

    def _forget_files(self, path_keys: list[bytes]) -> list[str]:
        """Drop these files and their runs from the index, in one transaction (a folder that
        moved forgets every file at once); returns the run ids that left."""
        if not path_keys:
            return []
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                run_ids = tables.forget_files(cur, path_keys)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        return run_ids

    # ------------------------------------------------------------ queries

    def _query(self, fn: Callable[..., T], *args: Any) -> T:
        return self._guard(lambda: fn(self._cursor(), *args))

    def runs(self) -> pa.Table:
        return self._query(queries.runs)

    def run_rows(self) -> list[RunRow]:
        """Every run as a typed row (oldest first) with per-metric means and error counts."""
        return self._query(queries.run_rows)

    def run(self, run_id: str) -> Run:
        return self._query(queries.run, run_id, self.folder)

    def run_path(self, run_id: str) -> Path:
        return self._query(queries.run_path, run_id, self.folder)

    def resolve_run(self, ref: str) -> str:
        """A run id from an id, a name of one run, or a prefix of one run id."""
        return self._query(queries.resolve_run, ref, self.folder)

    def metrics(self, run_ids: Sequence[str] | None = None) -> list[str]:
        return self._query(queries.metrics, run_ids)

    def scores(
        self, run_ids: Sequence[str], metrics: Sequence[str] | None = None, *, ordered: bool = True
    ) -> pa.Table:
        """Per-case scores; `ordered=False` skips the sort for callers that pivot anyway."""
        return self._query(queries.scores, run_ids, metrics, ordered)

    def score_profile(self, run_ids: Sequence[str], metrics: Sequence[str]) -> pa.Table:
        """Per run and metric, how it was scored: one row per (labelled, scale) in use, with
        counts of scores, errors and parse failures (a grade whose reply could not be read:
        an error, or a 0 with a "parse failure: " reason in label mode)."""
        return queries.arrow(
            self._cursor(),
            "SELECT run_id, metric, label IS NOT NULL AS labelled, scale_lo, scale_hi, "
            "count(value) AS n, count(error) AS n_errors, "
            "count(*) FILTER (WHERE parse_failure) AS n_parse_failures, "
            "count(value) FILTER (WHERE parse_failure) AS n_parse_scored FROM scores "
            "WHERE list_contains(?, run_id) AND list_contains(?, metric) "
            "GROUP BY ALL ORDER BY ALL",
            [list(run_ids), list(metrics)],
        )

    def case_clusters(self, run_id: str) -> pa.Table | None:
        """(case_id, cluster) of a run's cases that name a cluster; None while the index has
        no cluster column (the comparison then treats every case as its own cluster)."""
        cur = self._cursor()
        columns = {r[0] for r in cur.execute("DESCRIBE cases").fetchall()}
        if "cluster" not in columns:
            return None
        return queries.arrow(
            cur,
            "SELECT case_id, cluster FROM cases WHERE run_id = ? AND cluster IS NOT NULL",
            [run_id],
        )

    def answer_fingerprints(self, run_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """run id -> (an order-free hash of its (case id, answer) pairs, answered cases): runs
        with equal hashes graded the same answers (judge-only reruns)."""
        rows = (
            self._cursor()
            .execute(
                "SELECT run_id, bit_xor(hash(case_id, coalesce(answer, ''))), "
                "count(*) FILTER (WHERE coalesce(answer, '') <> '') FROM cases "
                "WHERE list_contains(?, run_id) GROUP BY run_id",
                [list(run_ids)],
            )
            .fetchall()
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}

    def run_means(self) -> pa.Table:
        return self._query(queries.run_means)

    def stated(self, run_ids: Sequence[str] | None = None) -> dict[str, tuple[Any, ...]]:
        """Each run's run-level figures as its tool stated them."""
        return self._query(queries.stated, run_ids)

    def cases(self, run_id: str) -> pa.Table:
        return self._query(queries.cases, run_id)

    def case_grid(self, run_id: str, limit: int | None = None) -> tuple[pa.Table, list[str]]:
        """A run's case list for the Cases screen (see queries.case_grid); `limit`: the
        first cases only."""
        return self._query(queries.case_grid, run_id, limit)

    def case_values(self, run_id: str) -> tuple[pa.Table, list[str]]:
        """A run's cases with their scores as data (see queries.case_values)."""
        return self._query(queries.case_values, run_id)

    def run_latency(self, run_ids: Sequence[str]) -> dict[str, tuple[int, int, float]]:
        """run id -> (cases, cases with a latency, summed latency in ms), from the index."""
        return self._query(queries.run_latency, run_ids)

    def case_count(self, run_id: str) -> int:
        return self._query(queries.case_count, run_id)

    def human(self, run_ids: Sequence[str]) -> pa.Table:
        return self._query(queries.human, run_ids)

    def case_history(self, case_id: str) -> pa.Table:
        return self._query(queries.case_history, case_id)

    def reruns(self, run_id: str) -> list[str]:
        """Runs of the same config (same config key and dataset), oldest first, itself included."""
        return self._query(queries.reruns, run_id)

    def case(self, run_id: str, case_id: str) -> Case | None:
        """A case in full, read from its line in the run file (the index keeps its place).

        A file changed since it was indexed is indexed again first.
        """
        for attempt in range(2):
            where = self._query(queries.case_line, run_id, case_id)
            if where is None:
                return None
            path = Path(os.fsdecode(where[0]))
            if attempt == 0 and self._stale(path):
                self.refresh()
                continue
            try:
                case = read_case_at(path, *where[1:])
            except RunFileError:
                if attempt:
                    raise
                self.refresh()
                continue
            if case.case_id == case_id:
                return case
            self.refresh()
        return None

    def _stale(self, path: Path) -> bool:
        try:
            state = FileState.of(path.stat())
        except OSError:
            return True
        row = self._query(
            lambda cur: cur.execute(
                "SELECT size, mtime_ns, ctime_ns, inode FROM files WHERE path = ?",
                [decoding.key(path)],
            ).fetchone()
        )
        return row is None or FileState(*row) != state

    # ------------------------------------------------------------ bulk reads for diagnosis

    def scores_with_thresholds(
        self, run_ids: Sequence[str], metrics: Sequence[str] | None = None
    ) -> pa.Table:
        """Per-case scores with the pass threshold the source stated (NULL when none)."""
        sql = (
            "SELECT run_id, case_id, metric, value, error, threshold FROM scores "
            "WHERE list_contains(?, run_id)"
        )
        params: list[Any] = [list(run_ids)]
        if metrics is not None:
            sql += " AND list_contains(?, metric)"
            params.append(list(metrics))
        return queries.arrow(self._cursor(), sql + " ORDER BY run_id, metric, case_id", params)

    # ------------------------------------------------------------ judge cache

    def not_results(self) -> set[str]:
        """sha256s of the folder's files found to be in no known result format (so the folder
        import mentions each once, not on every open)."""
        row = self._guard(
            lambda: (
                self._cursor()
                .execute("SELECT value FROM meta WHERE key = 'not_results'")
                .fetchone()
            )
        )
        if row is None:
            return set()
        try:
            found = json.loads(row[0])
        except ValueError:
            return set()
        return {s for s in found if isinstance(s, str)} if isinstance(found, list) else set()

    def remember_not_results(self, shas: set[str]) -> None:
        """Record the not-result files (the whole set: files no longer there drop out)."""
        if self.read_only:
            return
        with self._write_lock:
            self._guard(
                lambda: self._cursor().execute(
                    "INSERT OR REPLACE INTO meta VALUES ('not_results', ?)",
                    [json.dumps(sorted(shas))],
                )
            )

    def cache_get(self, key: str) -> str | None:
        row = self._query(
            lambda cur: cur.execute("SELECT reply FROM judge_cache WHERE key = ?", [key]).fetchone()
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
        def put(cur: duckdb.DuckDBPyConnection) -> None:
            with self._write_lock:
                cur.execute(
                    "INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())",
                    [key, provider, url, model, prompt_hash, input_hash, options, reply],
                )

        self._query(put)


# ---------------------------------------------------------------- helpers


def _migrate(con: duckdb.DuckDBPyConnection, notices: list[str]) -> None:
    try:  # the common case, checked first: a warm open runs one query here, not eleven
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and row[0] == str(SCHEMA_VERSION):
            return
    except duckdb.CatalogException:
        pass  # a new index
    # one transaction, not one per statement: a new index is made at every first open
    con.begin()
    try:
        con.execute(tables.SCHEMA_SQL)
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        # (a version that is not a number: as one from a newer ragtui, rebuilt below)
        version = (int(row[0]) if str(row[0]).isdigit() else SCHEMA_VERSION + 1) if row else 0
        if version == 0:
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    except BaseException:
        con.rollback()
        raise
    con.commit()
    if version == 0:
        return
    if version > SCHEMA_VERSION:
        # Written by a newer ragtui: rebuild rather than misread it.
        tables.MIGRATIONS[0](con)
        notices.append("index was written by a newer ragtui; rebuilt from the run files")
        version = SCHEMA_VERSION
    for step in tables.MIGRATIONS[version - 1 : SCHEMA_VERSION - 1]:
        step(con)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])


MARK_SUFFIX = ".made"  # beside the index: the device and inode of the index ragtui made


def _identity(path: Path) -> str | None:
    """The index file's device and inode; None where it cannot be ragtui's own: not this
    user's file (another user of a shared folder could stat it and write the mark), or a file
    with another name too (a hard link carries its mark along)."""
    st = os.stat(path, follow_symlinks=False)
    if not _mine(st) or st.st_nlink != 1:
        return None
    return _device_inode(st)


def _device_inode(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}"


def _mine(st: os.stat_result) -> bool:
    """A file of this user's (where the system has owners to tell)."""
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid()


def _present_identity(path: Path) -> str | None:
    try:
        return _device_inode(os.stat(path, follow_symlinks=False))
    except FileNotFoundError:
        return None


def _read_mark(path: Path) -> str | None:
    """The mark beside the index, if it is a plain file of this user's (a FIFO there must not
    block the open: O_NONBLOCK)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path.with_name(path.name + MARK_SUFFIX), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _mine(st) or not stat_module.S_ISREG(st.st_mode):
            return None
        return os.read(fd, 64).decode("ascii", "replace").strip()
    finally:
        os.close(fd)


def _foreign(path: Path) -> bool:
    """Whether an index sits here that ragtui did not make in this very file. A runs folder is
    untrusted, and so is an index that came with it (a copied folder, a repository that
    committed one): its rows could name files outside the folder for the Case screen to read,
    plant judge replies for a re-judge to take as the judge's, or show figures its run files
    do not hold, and its views and macros would run inside ragtui's own queries. So the
    decision is made before any of it runs, from its file's device and inode, which whoever
    made the folder cannot know, against the mark ragtui wrote beside the index it made
    (DuckDB writes its file in place: they hold as long as the file does)."""
    try:
        identity = _identity(path)
    except FileNotFoundError:
        return False  # no index yet: a new one
    return identity is None or _read_mark(path) != identity or _foreign_wal(path)


def _foreign_wal(path: Path) -> bool:
    """A WAL beside the index that is not a plain file of this user's: DuckDB replays a WAL
    written over a copy of the index into it, and another user of a shared folder can read
    the index and write one at the free name (ragtui's own is gone after a clean close)."""
    try:
        st = os.stat(path.with_name(path.name + ".wal"), follow_symlinks=False)
    except FileNotFoundError:
        return False
    return not (stat_module.S_ISREG(st.st_mode) and _mine(st) and st.st_nlink == 1)


def _discarded(path: Path) -> str:
    """Remove an index ragtui did not make (and its WAL): derived data, rebuilt from the files."""
    for stale in (path, path.with_name(path.name + ".wal")):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    return (
        f"{shown_path(path)} was not made here by ragtui (a copied or restored folder, an index "
        "from elsewhere, or one from before ragtui marked its own): rebuilt from the run files, "
        "its cached judge replies dropped"
    )


def _mark(path: Path) -> None:
    """Write the mark of the index ragtui made (atomically; a planted link at the mark's name
    was moved aside before the index was opened)."""
    mark = path.with_name(path.name + MARK_SUFFIX)
    identity = _identity(path)
    if identity is None or _read_mark(path) == identity:
        return
    try:  # (not written: the next open rebuilds the index, nothing worse)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-mark-", dir=path.parent)
    except OSError:
        return
    try:
        try:
            os.write(fd, identity.encode("ascii") + b"\n")
        finally:
            os.close(fd)
        os.replace(tmp, mark)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _writable(folder: Path, path: Path) -> bool:
    if not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), config=_duckdb_config())
    try:
        con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()
    except duckdb.Error:
        con.close()
        raise
    return con


def _connect_fresh(path: Path) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), config=_duckdb_config())
    except duckdb.Error as exc:
        raise _store_error(path, exc) from None


_DAMAGE = (
    "corrupt",
    "checksum",
    "not a valid duckdb database",
    "could not read enough bytes",
    "failed to deserialize",
    "database has been invalidated",
)


def _is_damage(exc: duckdb.Error) -> bool:
    if isinstance(exc, duckdb.FatalException | duckdb.InternalException):
        return True
    text = str(exc).lower()
    return any(word in text for word in _DAMAGE)


def _store_error(path: Path, exc: duckdb.Error) -> StoreError:
    text = str(exc)
    if _disk_full(exc):
        return DiskFull(
            f"cannot write the index {shown_path(path)}: no space left on device; "
            "free some space and try again (the run files are untouched)"
        )
    if isinstance(exc, duckdb.OutOfMemoryException) or text.startswith("Out of Memory"):
        return IndexFault(
            f"index {shown_path(path)}: DuckDB ran out of its {memory_limit()} memory limit "
            f"({_first_line(exc)}); RAGTUI_DUCKDB_MEMORY=1GB raises it"
        )
    return IndexFault(f"index {shown_path(path)}: {_first_line(exc)}")


def _disk_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(
        sign in text for sign in ("no space left", f"errno {errno.ENOSPC}", "disk quota exceeded")
    )


def _moved_aside(path: Path, exc: BaseException) -> str:
    wal = path.with_name(path.name + ".wal")
    if _empty_file(path) and (not wal.exists() or _empty_file(wal)):
        # nothing in it to keep (a start cut short, a full disk): on a full disk every command
        # moved one more empty file aside, `.corrupt-<time>` piling up beside the runs
        path.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)
        return f"index {shown_path(path)} was an empty file: rebuilt from the run files"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    if path.exists():
        path.replace(aside)
    if wal.exists():
        wal.replace(aside.with_name(aside.name + ".wal"))
    return (
        f"index {shown_path(path)} was unreadable ({_first_line(exc)}); moved to {aside.name} "
        "and rebuilt from the run files"
    )


def _empty_file(path: Path) -> bool:
    """A plain file of no bytes (a link or anything else is not empty: it is moved aside)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat_module.S_ISREG(info.st_mode) and info.st_size == 0


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
