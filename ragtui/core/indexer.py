"""Writing the index: which run files changed, and decoding them into Arrow batches.

Decoding (msgspec, in C, then Arrow batches: `decoding`) and committing into DuckDB
(`committer`, never half a file) run side by side when there is enough to index: with several
files, worker processes decode (`workers`) while this thread commits. Decoding holds the GIL,
so a decoding thread only took turns with the committing one (measured slower than one
thread, which is what runs below the threshold and where processes cannot be started). Any
problem with one file is that file's error; the others still index. An unchanged
file costs a stat: size, mtime, ctime and inode must all match, and a file modified within a
second of its reading is hashed again (git's "racy clean" rule: a same-size edit inside one
clock tick).
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtui.core import workers
from ragtui.core.committer import Committer, Done, Torn
from ragtui.core.decoding import Failed, FileState, Piece, guarded, pieces
from ragtui.core.errors import RagtuiError
from ragtui.core.runfile import SUFFIX, being_written, file_kind, open_run_file

if TYPE_CHECKING:
    from ragtui.core.store import Store

CHUNKED_BYTES = 64 << 20  # run files above this size are committed in pieces
RACY_NS = 1_000_000_000  # a file changed this close to its reading is hashed again
PROCESS_BYTES = 32 << 20  # from this much (and 2 cores), worker processes decode
MAX_PROCESSES = 4  # measured on 2 cores only (DuckDB's commits are the other ~40% of the work)
HERE_WHILE_STARTING = True  # this thread decodes files itself until a worker is ready


@dataclass
class IndexReport:
    indexed: list[Path] = field(default_factory=list)
    skipped: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[RagtuiError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. a run whose last line is incomplete
    seconds: float = 0.0
    decoders: int = 0  # worker processes that decoded files (0: decoded in this process)


@dataclass(frozen=True)
class Known:
    state: FileState
    sha256: str
    run_id: str | None
    in_progress: bool
    read_ns: int


# ---------------------------------------------------------------- scanning


def scan(folder: Path) -> tuple[list[tuple[Path, os.stat_result]], list[tuple[Path, str]]]:
    """(run files with their stat, [(path, why skipped)]), sorted; specials are never opened."""
    found, skipped = [], []

    def unreadable(exc: OSError) -> None:  # a subfolder that cannot be listed: said, as a file
        if exc.filename is not None and Path(exc.filename) != folder:
            why = exc.strerror or type(exc).__name__
            skipped.append((Path(exc.filename), f"is a folder that cannot be read ({why})"))

    for root, dirs, files in os.walk(folder, onerror=unreadable):  # (symlinked folders: not)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(SUFFIX) or name.startswith("."):
                continue
            path = Path(root) / name
            try:
                st = path.stat()
            except OSError as exc:
                skipped.append((path, f"cannot be read ({exc.strerror})"))
                continue
            if stat_module.S_ISREG(st.st_mode):
                found.append((path, st))
            else:
                skipped.append((path, f"is {file_kind(st.st_mode)}, not a regular file: skipped"))
    return found, skipped


def still_written(path: Path) -> bool:
    try:
        with open_run_file(path) as handle:
            return being_written(handle)
    except (RagtuiError, OSError):
        return False


def ends_mid_line(path: Path) -> bool:
    """Whether the file's last byte is not a newline (its writer may be mid-line)."""
    try:
        with open_run_file(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return False
            handle.seek(size - 1)
            return handle.read(1) != b"\n"
    except (RagtuiError, OSError):
        return False


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open_run_file(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- decoding beside committing


def decoding_processes(n_files: int, size: int) -> int:
    """How many worker processes decode `n_files` files of `size` bytes in all (0: here).
    Measured on 2 cores: from ~32 MB on they pay for their start (~0.1 s of CPU each, while
    this thread decodes the first files itself); below, decoding here is as fast or faster."""
    if n_files < 2 or size < PROCESS_BYTES or workers.cores() < 2:
        return 0
    return min(workers.cores(), n_files, MAX_PROCESSES)


def index_files(
    store: Store, paths: list[Path], on_done: Done, *, size: int = 0, on_torn: Torn | None = None
) -> int:
    """Index `paths` (`size` bytes in all) in order; `on_done(path, run_id, error)` after
    each, `on_torn(path, line, cases)` before it for a file whose last line is still being
    written. Returns how many worker processes decoded files (0: all were decoded here)."""
    committer = Committer(store, on_done, on_torn)
    n = decoding_processes(len(paths), size)
    pool = workers.Workers.start(n) if n else None
    if pool is not None:  # None too where processes cannot be started (a sandbox)
        return _with_processes(committer, paths, pool)
    for path in paths:
        committer.take(path, _raising(guarded(path, pieces(path, CHUNKED_BYTES))), drain=False)
    committer.flush()
    return 0


def _with_processes(committer: Committer, paths: list[Path], pool: workers.Workers) -> int:
    """Workers decode the next files while this thread commits, in the order of `paths`.
    Until a worker is up (~0.2 s), this thread decodes the files itself."""
    chunked = CHUNKED_BYTES
    asked: dict[int, workers.Worker] = {}
    ahead = workers.AHEAD * len(pool.all)
    placed = 0  # files before this one were asked of a worker or decoded here
    failed = True
    try:
        try:
            for i, path in enumerate(paths):
                placed = max(placed, i)
                while placed <= min(i + ahead, len(paths) - 1):
                    worker = pool.ask(paths[placed], chunked, up=HERE_WHILE_STARTING)
                    if worker is None:
                        break
                    asked[placed] = worker
                    placed += 1
                worker = asked.pop(i, None)
                if worker is None:
                    stream = guarded(path, pieces(path, chunked))
                else:
                    stream = pool.pieces(worker, path, chunked)
                committer.take(path, _raising(stream), drain=True)
            failed = False
        finally:
            pool.close(kill=failed)  # every file is decoded: the workers end meanwhile
        committer.flush()
    finally:
        pool.reap()
    return pool.used()


def _raising(stream: Iterator[Any]) -> Iterator[Piece]:
    for piece in stream:
        if isinstance(piece, Failed):
            raise piece
        yield piece
