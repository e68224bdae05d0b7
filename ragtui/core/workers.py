"""Decoding run files in worker processes, so that both cores work while DuckDB commits.

msgspec and the Arrow batch building hold the GIL, so a decoding thread beside the committing
one only took turns with it (measured: 1.0 core busy, slower than one thread). The workers are
not multiprocessing: no semaphores in /dev/shm, no files written, no re-import of the main
module. One `python -c` child imports the decoder, then forks the other workers (a fresh start
costs ~0.1 s of CPU, a fork a millisecond). Each worker reads requests (a path) on its own pipe and writes each
file's pieces, pickled, on another: the same `decoding.pieces` as in this process, so the same
rows and the same errors. A worker ends when its requests pipe closes, which is also what
happens when this process dies, however it dies; one busy on a file ends at its next write.

A worker that cannot start, or stops before it sent a file's first piece, only moves that
file (and its later ones) back to this process; one that stops in the middle of a file makes
that file's error (this process would have died on the same file).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

import ragtui
from ragtui.core import runfile
from ragtui.core.decoding import Failed, Head, Piece, Tail, file_error, guarded, pieces
from ragtui.core.errors import RunFileError

WORKER_PIECES = 8  # decoded pieces a worker may hold ready for the committer: bounds memory
AHEAD = 4  # files asked of each worker ahead of the one being committed

# numpy is kept out: pyarrow imports it when it can (half of a worker's start, ~0.08 s of CPU)
# and decoding never needs it.
_BOOT = (
    "import json, sys; sys.modules['numpy'] = None; settings = json.loads(sys.argv[1]); "
    "sys.path.insert(0, settings['root']); "
    "from ragtui.core.workers import serve; serve(settings)"
)
_SIZE = struct.Struct("<Q")
_ASK = struct.Struct("<QQ")  # chunked_bytes, length of the path that follows
_END = object()  # a worker's output ended


def cores() -> int:
    """CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Worker:
    """One worker's pipes, and the pieces read from it that wait for the committer."""

    def __init__(self, requests: IO[bytes], results: int) -> None:
        self.requests = requests
        self.results = results  # a non-blocking file descriptor
        self.buffer = bytearray()
        self.out: queue.Queue[Any] = queue.Queue()  # the reader keeps it to WORKER_PIECES
        self.up = threading.Event()  # it said it is ready (its imports are done)
        self.gone = threading.Event()  # its output ended
        self.files = 0  # files it decoded

    def ask(self, path: Path, chunked_bytes: int) -> bool:
        if self.gone.is_set():
            return False
        name = os.fsencode(path)
        try:
            self.requests.write(_ASK.pack(chunked_bytes, len(name)) + name)
            self.requests.flush()
        except (OSError, ValueError):
            return False
        return True

    def take(self, data: bytes) -> None:
        """Bytes read from the worker: the whole frames among them become pieces."""
        self.buffer += data
        while len(self.buffer) >= _SIZE.size:
            length = _SIZE.unpack_from(self.buffer)[0]
            end = _SIZE.size + length
            if len(self.buffer) < end:
                return
            if length == 0:  # "ready"
                self.up.set()
            else:
                self.out.put(pickle.loads(self.buffer[_SIZE.size : end]))
            del self.buffer[:end]

    def end(self) -> None:
        self.gone.set()
        self.out.put(_END)


class Workers:
    """Worker processes decoding run files; each file's pieces come back in order.

    One thread reads every worker's pipe (a thread each would reserve address space for its
    stack and its malloc arena), and stops reading a worker that is WORKER_PIECES ahead.
    """

    def __init__(self, process: subprocess.Popen[bytes], workers: list[Worker]) -> None:
        self.process = process  # the first worker, which forked the others
        self.all = workers
        self.turn = 0
        self.stop = threading.Event()
        self.reader = threading.Thread(target=self._read, name="ragtui-workers", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        poll = select.poll()
        polled: set[int] = set()
        live = {worker.results: worker for worker in self.all}
        try:
            while live and not self.stop.is_set():
                for fd, worker in live.items():
                    wanted = worker.out.qsize() < WORKER_PIECES
                    if wanted and fd not in polled:
                        poll.register(fd, select.POLLIN)
                        polled.add(fd)
                    elif not wanted and fd in polled:
                        poll.unregister(fd)
                        polled.discard(fd)
                if not polled:  # every worker is ahead: wait for the committer
                    self.stop.wait(0.002)
                    continue
                for fd, _ in poll.poll(10):
                    try:
                        data = os.read(fd, 1 << 20)
                        if data:
                            live[fd].take(data)
                            continue
                    except BlockingIOError:
                        continue
                    except Exception:  # a broken worker: what it had not sent is redone here
                        pass
                    live.pop(fd).end()  # its output ended
                    poll.unregister(fd)
                    polled.discard(fd)
        finally:
            for worker in live.values():
                worker.end()

    @classmethod
    def start(cls, n: int) -> Workers | None:
        """`n` workers, or None when processes cannot be started here (indexing stays here)."""
        if not sys.executable or getattr(sys, "frozen", False):  # no interpreter to run -c
            return None
        if not hasattr(os, "fork") or not hasattr(select, "poll"):  # Windows
            return None
        ours: list[int] = []  # per worker: requests (write end), results (read end)
        theirs: list[int] = []  # the other ends, for the child
        try:
            for _ in range(n):
                ask_r, ask_w = os.pipe()
                out_r, out_w = os.pipe()
                ours += [ask_w, out_r]
                theirs += [ask_r, out_w]
            settings = {
                "root": str(Path(ragtui.__file__).resolve().parents[1]),
                "block_bytes": runfile.BLOCK_BYTES,
                "max_line_bytes": runfile.MAX_LINE_BYTES,
                "channels": [theirs[i : i + 2] for i in range(0, len(theirs), 2)],
            }
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(settings)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=theirs,
            )
        except (OSError, ValueError, subprocess.SubprocessError):
            for fd in ours + theirs:
                with contextlib.suppress(OSError):
                    os.close(fd)
            return None
        for fd in theirs:
            os.close(fd)
        pairs = [(ours[i], ours[i + 1]) for i in range(0, len(ours), 2)]
        for _, results in pairs:
            os.set_blocking(results, False)
        try:
            return cls(process, [Worker(os.fdopen(a, "wb"), r) for a, r in pairs])
        except RuntimeError:  # no thread can be started to read them
            process.kill()
            process.wait()
            for fd in ours:
                with contextlib.suppress(OSError):
                    os.close(fd)
            return None

    def ask(self, path: Path, chunked_bytes: int, *, up: bool = True) -> Worker | None:
        """Ask a worker for `path` (with `up`, only one that is ready); None when none can
        take it now: decode it here."""
        for _ in self.all:
            worker = self.all[self.turn % len(self.all)]
            self.turn += 1
            if (worker.up.is_set() or not up) and worker.ask(path, chunked_bytes):
                return worker
        return None

    def pieces(self, worker: Worker, path: Path, chunked_bytes: int) -> Iterator[Piece | Failed]:
        """The pieces of `path`, asked of `worker` before."""
        got = False
        while True:
            piece = worker.out.get()
            if piece is _END:
                worker.out.put(_END)  # for the files asked after this one
                break
            if isinstance(piece, Head):
                piece.path, got = path, True  # the path as this process knows it
            yield piece
            if isinstance(piece, Tail | Failed):
                worker.files += 1
                return
        if got:
            stopped = "its decoding process stopped unexpectedly"
            yield Failed(RunFileError(path, f"could not be indexed ({stopped})"))
        else:
            yield from guarded(path, pieces(path, chunked_bytes))

    def used(self) -> int:
        """Workers that decoded at least one file."""
        return sum(1 for worker in self.all if worker.files)

    def close(self, *, kill: bool) -> None:
        """Tell the workers to end (idle ones end when their requests pipe closes)."""
        self.stop.set()
        for worker in self.all:
            with contextlib.suppress(OSError, ValueError):
                worker.requests.close()
        if kill:
            self.process.kill()  # its forks end at their next write, or when idle

    def reap(self) -> None:
        """Wait for the workers to end (after `close`), and let go of their pipes."""
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join()
        for worker in self.all:
            os.close(worker.results)


# ---------------------------------------------------------------- inside a worker process


def serve(settings: dict[str, Any]) -> None:
    """The first worker: fork one process per further channel, then serve the first."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's; it closes our pipes
    runfile.BLOCK_BYTES = settings["block_bytes"]
    runfile.MAX_LINE_BYTES = settings["max_line_bytes"]
    # mimalloc (Arrow's default) reserves 1 GB of address space at its first allocation: under
    # a limit on it (RLIMIT_AS), which this process inherits, a worker would fail where this
    # process does not.
    pa.set_memory_pool(pa.system_memory_pool())
    channels = settings["channels"]
    forks = []
    for mine in range(1, len(channels)):
        pid = os.fork()
        if pid == 0:
            _serve_channel(channels, mine)
            os._exit(0)
        forks.append(pid)
    _serve_channel(channels, 0)
    for pid in forks:  # reaped here, so that their CPU time reaches the parent's accounts
        os.waitpid(pid, 0)
    os._exit(0)  # nothing to tidy: skips the interpreter's teardown, which the parent waits for


def _serve_channel(channels: list[list[int]], mine: int) -> None:
    """Say "ready", then decode the files asked on one channel until its requests pipe closes."""
    for i, fds in enumerate(channels):
        if i != mine:  # another worker's pipes: holding them would hide its end from the parent
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
    ask_fd, out_fd = channels[mine]
    with os.fdopen(ask_fd, "rb") as requests, os.fdopen(out_fd, "wb") as out:
        _write(out, b"")
        while True:
            ask = requests.read(_ASK.size)
            if len(ask) < _ASK.size:
                return
            chunked_bytes, length = _ASK.unpack(ask)
            path = Path(os.fsdecode(requests.read(length)))
            for piece in guarded(path, pieces(path, chunked_bytes)):
                if not _send(out, piece, path):
                    break


def _send(out: IO[bytes], piece: Piece | Failed, path: Path) -> bool:
    """Write one piece; False when the file's pieces must end here (it could not be sent)."""
    try:
        data = pickle.dumps(piece, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # sent as the file's error instead
        piece = Failed(file_error(path, exc))
        data = pickle.dumps(piece, protocol=pickle.HIGHEST_PROTOCOL)
    _write(out, data)
    return not isinstance(piece, Failed)


def _write(out: IO[bytes], data: bytes) -> None:
    try:
        out.write(_SIZE.pack(len(data)))
        out.write(data)
        out.flush()
    except OSError:  # the parent is gone
        os._exit(0)
