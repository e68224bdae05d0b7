"""Writing the index: which run files changed, and decoding them into Arrow batches.

A file is decoded (msgspec, in C) into Arrow batches by one thread while the other commits
the previous ones into DuckDB (which releases the GIL while it inserts): with several files,
both cores work. How batches are committed, never half a file, is `committer`. Any problem
with one file is that file's error; the others still index. An unchanged file costs a stat:
size, mtime, ctime and inode must all match, and a file modified within a second of its
reading is hashed again (git's "racy clean" rule: a same-size edit inside one clock tick).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import stat as stat_module
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragtui.core import tables
from ragtui.core.committer import (
    Committer,
    Done,
    Failed,
    FileState,
    Head,
    Piece,
    Tail,
    file_error,
    key,
)
from ragtui.core.errors import RagtuiError
from ragtui.core.runfile import (
    SUFFIX,
    being_written,
    decode_cases,
    file_kind,
    open_run_file,
    parse_header,
    read_header_line,
    split_lines,
    to_run,
)

if TYPE_CHECKING:
    from ragtui.core.store import Store

CHUNKED_BYTES = 64 << 20  # run files above this size are committed in pieces
RACY_NS = 1_000_000_000  # a file changed this close to its reading is hashed again
PIPELINE_BYTES = 8 << 20  # from this much to index, decoding and inserting overlap
QUEUE_PIECES = 8  # decoded blocks (<= BLOCK_BYTES of lines each) waiting for DuckDB: bounds memory


@dataclass
class IndexReport:
    indexed: list[Path] = field(default_factory=list)
    skipped: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[RagtuiError] = field(default_factory=list)
    seconds: float = 0.0


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
    for root, dirs, files in os.walk(folder):
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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open_run_file(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- decoding (the producer)


def pieces(path: Path) -> Iterator[Piece]:
    """A run file as Head, then a dict of Arrow batches per block of cases, then Tail."""
    read_ns = time.time_ns()
    with open_run_file(path) as handle:
        st = os.fstat(handle.fileno())
        in_progress = being_written(handle)
        digest = hashlib.sha256()
        line, first = read_header_line(handle, path, digest)
        header, created = parse_header(line, path)
        run = to_run(header)
        judge = run.judge
        generator = run.config.get("generator") or run.config.get("model")
        yield Head(
            path=path,
            run_id=run.id,
            row=[
                run.id,
                run.name,
                created,
                run.kind,
                run.config_key,
                tables.canonical_json(run.config),
                None if generator is None else str(generator),
                judge.model,
                judge.provider,
                judge.prompt_hash,
                run.dataset.name,
                run.dataset.version,
                run.parent,
                run.source.format if run.source else None,
                run.source.path if run.source else None,
                run.source.sha256 if run.source else None,
                key(path),
            ],
            stated=tables.stated_batch(header),
            state=FileState.of(st),
            read_ns=read_ns,
            in_progress=in_progress,
            chunked=st.st_size > CHUNKED_BYTES,
            created_text=run.created_at,
        )
        n = 0
        if line.endswith(b"\n"):
            seen: set[str] = set()
            blocks = split_lines(
                handle, path, first, len(line), digest=digest, drop_torn_tail=in_progress
            )
            for block in blocks:
                cases, kept = decode_cases(block, path, seen)
                if cases:
                    yield tables.case_batches(cases, kept, n)
                    n += len(cases)
        yield Tail(n, digest.hexdigest())


# ---------------------------------------------------------------- the two threads


_DONE = object()


def index_files(store: Store, paths: list[Path], on_done: Done, *, overlap: bool) -> None:
    """Index `paths` one after another; `on_done(path, run_id, error)` after each.

    With `overlap`, a thread decodes while this one commits (DuckDB releases the GIL while
    it inserts, msgspec does not while it decodes: measured, see ragtui bench).
    """
    committer = Committer(store, on_done)
    if not overlap:
        for path in paths:
            committer.take(path, _raising(_guarded(path, pieces(path))), drain=False)
        committer.flush()
        return
    channel: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_PIECES)
    stop = threading.Event()

    def produce() -> None:
        for path in paths:
            for piece in _guarded(path, pieces(path)):
                while not stop.is_set():
                    try:
                        channel.put(piece, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        channel.put(_DONE)

    worker = threading.Thread(target=produce, name="ragtui-decode", daemon=True)
    worker.start()
    try:
        for path in paths:
            committer.take(path, _raising(_from_channel(channel)), drain=True)
        committer.flush()
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                channel.get(timeout=0.05)
        worker.join()


def _guarded(path: Path, stream: Iterator[Piece]) -> Iterator[Any]:
    """The file's pieces; an error ends them with Failed (as the last piece)."""
    try:
        yield from stream
    except Exception as exc:
        yield Failed(file_error(path, exc))


def _from_channel(channel: queue.Queue[Any]) -> Iterator[Any]:
    while True:
        piece = channel.get()
        if piece is _DONE:
            return
        yield piece
        if isinstance(piece, Tail | Failed):
            return


def _raising(stream: Iterator[Any]) -> Iterator[Piece]:
    for piece in stream:
        if isinstance(piece, Failed):
            raise piece
        yield piece
