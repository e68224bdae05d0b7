"""A run file decoded into the pieces the committer takes: Head, Arrow batches, Tail.

This is the one decoder behind every way of indexing (in this thread, in a thread beside the
committer, in a worker process): the same pieces, the same errors. It imports no DuckDB, so a
worker process starts quickly.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragtui.core import tables
from ragtui.core.errors import RagtuiError, RunFileError
from ragtui.core.runfile import (
    being_written,
    decode_complete,
    open_run_file,
    parse_header,
    read_header_line,
    split_lines,
    to_run,
)


def key(path: Path) -> bytes:
    """A path as the index keys it: its bytes, whatever their encoding."""
    return os.fsencode(path)


@dataclass(frozen=True)
class FileState:
    """What must stay equal for a file to count as unchanged."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileState:
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass
class Head:
    """What a run file's header line gives, before its cases."""

    path: Path
    run_id: str
    row: list[Any]  # the runs row up to file_path
    stated: pa.Table | None
    state: FileState
    read_ns: int
    in_progress: bool
    chunked: bool
    created_text: str


@dataclass
class Tail:
    n_cases: int
    sha256: str
    # the number of the file's last line when it has no newline and no complete JSON yet (a
    # harness mid-line): the cases before it are indexed and the run is in progress; else 0
    torn: int = 0


Piece = Head | dict[str, pa.Table] | Tail


class Failed(Exception):
    """The error of one file, carried from the decoder to the committer (the last piece)."""

    def __init__(self, error: RagtuiError) -> None:
        super().__init__(str(error))
        self.error = error

    def __reduce__(self) -> tuple[Any, ...]:  # sent back by a worker process
        return (Failed, (self.error,))


def file_error(path: Path, exc: BaseException) -> RagtuiError:
    """Any exception while indexing one file, as that file's error."""
    if isinstance(exc, RagtuiError):
        return exc
    detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    name = type(exc).__name__
    return RunFileError(path, f"could not be indexed ({name}{': ' if detail else ''}{detail})")


def pieces(path: Path, chunked_bytes: int) -> Iterator[Piece]:
    """A run file as Head, then a dict of Arrow batches per block of cases, then Tail.
    A file over `chunked_bytes` is marked to be committed piece by piece."""
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
            chunked=st.st_size > chunked_bytes,
            created_text=run.created_at,
        )
        n = torn = 0
        if line.endswith(b"\n"):
            seen: set[str] = set()
            blocks = split_lines(
                handle, path, first, len(line), digest=digest, drop_torn_tail=in_progress
            )
            for block in blocks:
                with paused_gc():
                    decoded = decode_complete(block, path, seen)
                    if decoded is None:  # its last line is still being written
                        torn = block.numbers[0]
                        continue
                    cases, kept = decoded
                    batches = tables.case_batches(cases, kept, n) if cases else None
                if batches is not None:
                    yield batches
                    n += len(cases)
        yield Tail(n, digest.hexdigest(), torn)


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cycle collector off for one block: decoding allocates thousands of lists and dicts
    (no cycles), which set off collections that walk every live object of the process; they
    doubled the decoding time (measured). Refcounting still frees everything."""
    if not gc.isenabled():  # paused by another thread, or by the program: left as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def guarded(path: Path, stream: Iterator[Piece]) -> Iterator[Piece | Failed]:
    """The file's pieces; an error ends them with Failed (as the last piece)."""
    try:
        yield from stream
    except Exception as exc:
        yield Failed(file_error(path, exc))
