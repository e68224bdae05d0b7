"""Writing native run files so that a crash, a kill or a full disk never leaves a broken one.

A run file appears under its name only once its header is on disk (written to a hidden
temporary name, fsynced, renamed). A batch appends one fsynced line per case and holds an
advisory lock meanwhile, which tells readers that the run is still in progress. A full disk
is one clear error, and the file keeps only whole lines.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ragtui.core import runfile
from ragtui.core.errors import RagtuiError, RunFileError, WriteError
from ragtui.core.model import Case, Run, StatedFigure
from ragtui.core.runfile import SUFFIX, fcntl, iter_run_file
from ragtui.core.runschema import FORMAT_VERSION

LOCK_WAIT_S = 5.0  # a reader holds a shared lock for a moment; another batch for long


# ---------------------------------------------------------------- canonical JSON


def header_to_json(run: Run) -> dict[str, Any]:
    return {
        "ragtui_run": FORMAT_VERSION,
        "id": run.id,
        "name": run.name,
        "created_at": run.created_at,
        "config": dict(run.config),
        "config_key": run.config_key or None,
        "judge": {
            "model": run.judge.model,
            "provider": run.judge.provider,
            "prompt_hash": run.judge.prompt_hash,
        },
        "dataset": {"name": run.dataset.name, "version": run.dataset.version},
        "parent": run.parent,
        "kind": run.kind,
        "source": None
        if run.source is None
        else {"format": run.source.format, "path": run.source.path, "sha256": run.source.sha256},
        **({"stated": [_stated_json(f) for f in run.stated]} if run.stated else {}),
    }


def _stated_json(f: StatedFigure) -> dict[str, Any]:
    return _drop_none(
        {
            "metric": f.metric,
            "value": f.value,
            "raw": f.raw,
            "statistic": f.statistic,
            "scale": None if f.scale is None else list(f.scale),
            "n": f.n,
        }
    )


def case_to_json(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {
        "case_id": case.case_id,
        "question": case.question,
        "answer": case.answer,
    }
    if case.reference is not None:
        out["reference"] = case.reference
    if case.contexts:
        out["contexts"] = [
            _drop_none(
                {"id": c.id, "text": c.text, "source": c.source, "rank": c.rank, "score": c.score}
            )
            for c in case.contexts
        ]
    if case.scores:
        out["scores"] = {
            metric: _drop_none(
                {
                    "value": s.value,
                    "raw": s.raw,
                    "label": s.label,
                    "scale": None if s.scale is None else list(s.scale),
                    "reason": s.reason,
                    "reply": s.reply,
                    "prompt_hash": s.prompt_hash,
                    "threshold": s.threshold,
                }
            )
            for metric, s in case.scores.items()
        }
    if case.claims:
        out["claims"] = [
            _drop_none(
                {
                    "metric": c.metric,
                    "text": c.text,
                    "verdict": c.verdict,
                    "chunks": list(c.chunks),
                    "reason": c.reason,
                }
            )
            for c in case.claims
        ]
    if case.errors:
        out["errors"] = dict(case.errors)
    if case.human:
        out["human"] = dict(case.human)
    if case.latency_ms is not None:
        out["latency_ms"] = case.latency_ms
    if case.metadata:
        out["metadata"] = dict(case.metadata)
    if case.cluster is not None:
        out["cluster"] = case.cluster
    return out


def _drop_none(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


def dumps_line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n"


# ---------------------------------------------------------------- writing files


def _encoded(obj: Mapping[str, Any], path: Path, what: str) -> bytes:
    line = dumps_line(obj).encode("utf-8")
    if len(line) > runfile.MAX_LINE_BYTES:
        raise RunFileError(
            path,
            f"{what} would be a line of {len(line):,} bytes; a run file line holds at most "
            f"{runfile.MAX_LINE_BYTES:,}",
        )
    return line


def write_error(path: Path, exc: OSError) -> WriteError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteError(
            f"cannot write {path}: no space left on device; free some space and try again"
        )
    return WriteError(f"cannot write {path}: {exc.strerror or exc}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a folder; the rename is still atomic
    finally:
        os.close(fd)


TEMP_PREFIX, TEMP_SUFFIX = ".tmp-", SUFFIX + ".part"
# the names mkstemp gives here: the prefix, 8 characters of its alphabet, the suffix
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[A-Za-z0-9_]{8}" + re.escape(TEMP_SUFFIX))
STALE_TEMP_S = 60.0  # a part file untouched this long, and unlocked, has no live writer


def _temp(path: Path) -> tuple[int, str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        if fcntl is not None:  # held while it is written: a live writer's part is never stale
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.chmod(tmp, ordinary_mode())  # mkstemp makes 0600; a run file is an ordinary file
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def remove_stale_temps(folder: Path, now: float | None = None) -> list[str]:
    """Remove the part files an interrupted write of ragtui's left in `folder` (a kill during
    an atomic write or a rewrite): only names of ragtui's own pattern, only regular files (a
    link is never followed), only those no writer holds locked and untouched for a minute.
    Returns the names removed."""
    if fcntl is None:  # no way to tell a live writer's part: leave them all
        return []
    removed: list[str] = []
    now = time.time() if now is None else now
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if not _TEMP_NAME.fullmatch(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_TEMP_S:
                continue
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live writer holds it: skipped
            held = os.fstat(fd)
            now_there = os.stat(entry.path, follow_symlinks=False)
            if (held.st_dev, held.st_ino) == (now_there.st_dev, now_there.st_ino):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            pass
        finally:
            os.close(fd)
    return sorted(removed)


def ordinary_mode() -> int:
    """The mode an ordinary new file gets here (0o666 less the umask), for files made with
    mkstemp (0600) and renamed into place. The umask is read from /proc where it can be:
    setting it to read it back would, for a moment, give files that other threads create
    (the TUI writes from workers) no umask at all."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)  # elsewhere: the strictest mask for the moment it takes
    os.umask(mask)
    return 0o666 & ~mask


def write_run_file(path: str | Path, run: Run, cases: Iterable[Case]) -> Path:
    """Write atomically (temp file, fsync, rename), so a reader never sees half a file."""
    path = Path(path)
    try:
        fd, tmp = _temp(path)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            out.write(_encoded(header_to_json(run), path, "the run header"))
            for case in cases:
                out.write(_encoded(case_to_json(case), path, f"case {case.case_id!r}"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise write_error(path, exc) from None
        raise
    _fsync_folder(path.parent)
    return path


class RunFileAppender:
    """Appends cases one fsynced line at a time, for batches that must survive a killed
    process. Reopening an existing file resumes it: `done` lists the cases already there.

    While open it holds an exclusive advisory lock on the file: readers show the run as in
    progress, and a second batch on the same file is refused. `notices` says what a resume
    repaired (a file left empty or header-less by a crash is replaced).

    `retry`: which cases of a resumed file a batch may grade again (`retryable`, still in the
    file and in `done`); `replace` puts their new lines in, in one atomic rewrite.
    """

    def __init__(
        self, path: str | Path, run: Run, retry: Callable[[Case], bool] | None = None
    ) -> None:
        self.path = Path(path)
        self.done: set[str] = set()
        self.retryable: dict[str, Case] = {}
        self._retry = retry
        self.notices: list[str] = []
        self._header = _encoded(header_to_json(run), self.path, "the run header")
        stale = remove_stale_temps(self.path.parent)
        if stale:
            self.notices.append(
                f"removed {len(stale)} temporary file{'s' if len(stale) > 1 else ''} an "
                f"interrupted write left in {self.path.parent}: {', '.join(stale)}"
            )
        try:
            if self.path.exists():
                self._fd = self._resume()
            else:
                self._fd = self._create()
        except OSError as exc:
            raise write_error(self.path, exc) from None

    def _create(self) -> int:
        return self._swap_in(lambda fd: _write_all(fd, self._header))

    def _swap_in(self, write: Callable[[int], None]) -> int:
        """A new file written by `write` beside the path, locked before it is renamed over it
        (a batch waiting for the lock then finds the new file), fsynced: its open fd."""
        fd, tmp = _temp(self.path)
        try:
            _lock(fd, self.path)
            write(fd)
            os.fsync(fd)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_folder(self.path.parent)
        return fd

    def _resume(self) -> int:
        fd = os.open(self.path, os.O_RDWR)
        try:
            _lock(fd, self.path)
            if os.fstat(fd).st_ino != os.stat(self.path).st_ino:
                # the batch we waited for replaced the file (`replace`): lock the new one
                os.close(fd)
                return self._resume()
            size = os.fstat(fd).st_size
            head = os.pread(fd, min(size, runfile.MAX_LINE_BYTES + 1), 0)
            if not head.strip() or b"\n" not in head:
                what = "empty" if not head.strip() else "without a complete header"
                self.notices.append(
                    f"{self.path} was {what} (left by an interrupted batch): started it again"
                )
                new = self._create()
                os.close(fd)
                return new
            _truncate_torn_tail(fd, size)
            _, cases = iter_run_file(self.path)
            retry = self._retry
            for case in cases:  # (an iterator: one pass)
                self.done.add(case.case_id)
                if retry is not None and retry(case):
                    self.retryable[case.case_id] = case
        except BaseException:
            os.close(fd)
            raise
        os.lseek(fd, 0, os.SEEK_END)
        return fd

    def append(self, case: Case) -> None:
        line = _encoded(case_to_json(case), self.path, f"case {case.case_id!r}")
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            _write_all(self._fd, line)
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, end)  # keep whole lines only
            raise write_error(self.path, exc) from None
        self.done.add(case.case_id)

    def replace(self, cases: Mapping[str, Case]) -> None:
        """The file with these cases' lines replaced by theirs (the other lines byte for byte),
        written beside it, locked, and renamed over it: a kill leaves the old file or the new
        one, never a case twice."""
        if not cases:
            return
        try:
            self._replace(cases)
        except OSError as exc:
            raise write_error(self.path, exc) from None

    def _replace(self, cases: Mapping[str, Case]) -> None:
        def write(fd: int) -> None:
            with open(os.dup(self._fd), "rb") as old:
                old.seek(0)
                _write_all(fd, old.readline())  # the header as it was
                for line in old:
                    case_id = json.loads(line).get("case_id") if line.strip() else None
                    new = cases.get(case_id) if isinstance(case_id, str) else None
                    if new is not None:
                        line = _encoded(case_to_json(new), self.path, f"case {case_id!r}")
                    _write_all(fd, line)

        fd = self._swap_in(write)
        os.close(self._fd)  # the old file's lock goes with it; the new one is held
        self._fd = fd

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # also releases the lock
            self._fd = -1

    def __enter__(self) -> RunFileAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:
        return
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise RagtuiError(
                    f"{path} is being written by another ragtui batch; wait for it to finish"
                ) from None
            time.sleep(0.05)


def _truncate_torn_tail(fd: int, size: int) -> None:
    """Drop a last line cut short by a kill (everything after the last newline)."""
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        block = os.pread(fd, end - start, start)
        cut = block.rfind(b"\n")
        if cut >= 0:
            keep = start + cut + 1
            if keep != size:
                os.ftruncate(fd, keep)
            return
        end = start
