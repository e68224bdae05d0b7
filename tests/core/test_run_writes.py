"""Writing run files and the index through a full disk, a kill and a second writer."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragtui.core import runfile, runwrite
from ragtui.core.errors import RagtuiError, RunFileError, WriteError
from ragtui.core.model import JudgeInfo, Run
from ragtui.core.runfile import SUFFIX, RunFileAppender, read_run_file, write_run_file
from tests.core.runs_factory import make_case, make_run

REPO = Path(__file__).resolve().parents[2]
RUN = Run("batch-1", "batch", "2026-11-20T10:00:00Z", judge=JudgeInfo("m", "ollama", "p"))
FULL = "no space left on device; free some space and try again"


def _no_space(*args: object) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_batch_file_appears_only_once_its_header_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"batch-1{SUFFIX}"
    monkeypatch.setattr(os, "fsync", _no_space)  # the header cannot be made durable
    with pytest.raises(WriteError) as info:
        RunFileAppender(path, RUN)
    assert str(info.value) == f"cannot write {path}: {FULL}"
    assert _leftovers(tmp_path) == []  # no empty or header-less file left behind
    monkeypatch.undo()
    with RunFileAppender(path, RUN) as out:
        out.append(make_case(0))
    assert read_run_file(path).cases == (make_case(0),)


def test_a_full_disk_mid_batch_keeps_whole_lines_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"batch-1{SUFFIX}"
    out = RunFileAppender(path, RUN)
    out.append(make_case(0))
    real_write = os.write
    calls = {"n": 0}

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])  # half a line gets out
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(WriteError, match=FULL):
        out.append(make_case(1))
    monkeypatch.undo()
    out.close()
    assert read_run_file(path).cases == (make_case(0),)  # whole lines only
    with RunFileAppender(path, RUN) as again:
        assert again.done == {"case-000"} and again.notices == []
        again.append(make_case(1))
    assert [c.case_id for c in read_run_file(path).cases] == ["case-000", "case-001"]


def test_write_run_file_on_a_full_disk_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", _no_space)
    with pytest.raises(WriteError, match=FULL):
        write_run_file(tmp_path / f"x{SUFFIX}", RUN, [make_case(0)])
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("content", "what"),
    [(b"", "empty"), (b'{"ragtui_run": 1, "id": "batch-1", "crea', "without a complete header")],
)
def test_a_file_a_crash_left_empty_or_headerless_is_started_again(
    tmp_path: Path, content: bytes, what: str
) -> None:
    path = tmp_path / f"batch-1{SUFFIX}"
    path.write_bytes(content)
    with RunFileAppender(path, RUN) as out:
        assert out.notices == [
            f"{path} was {what} (left by an interrupted batch): started it again"
        ]
        assert out.done == set()
        out.append(make_case(0))
    assert read_run_file(path).run.id == "batch-1"
    assert read_run_file(path).cases == (make_case(0),)


def test_a_second_batch_on_the_same_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runwrite, "LOCK_WAIT_S", 0.1)
    path = tmp_path / f"batch-1{SUFFIX}"
    with (
        RunFileAppender(path, RUN),
        pytest.raises(RagtuiError, match="is being written by another ragtui batch"),
    ):
        RunFileAppender(path, RUN)


def test_a_case_too_long_for_a_line_is_refused_by_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runfile, "MAX_LINE_BYTES", 1000)
    case = make_case(0)
    long = case.__class__(**{**case.__dict__, "answer": "x" * 2000})
    with pytest.raises(RunFileError, match=r"case 'case-000' would be a line of 2,\d+ bytes"):
        write_run_file(tmp_path / f"x{SUFFIX}", RUN, [long])
    assert _leftovers(tmp_path) == []


_INDEX_CANNOT_GROW = textwrap.dedent(
    """
    import resource, signal, sys
    sys.path.insert(0, {repo!r})
    from ragtui.cli import cli
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (16_384, 16_384))
    cli(["runs", {folder!r}])
    """
)


def test_an_index_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    for i in range(3):
        make_run(tmp_path, f"run-{i}", n=20, created_at=f"2026-11-2{i}T10:00:00Z")
    files = {p: p.read_bytes() for p in tmp_path.iterdir()}
    out = subprocess.run(
        [sys.executable, "-c", _INDEX_CANNOT_GROW.format(repo=str(REPO), folder=str(tmp_path))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"Error: index {tmp_path / '.ragtui.duckdb'}: "), line
    assert {p: p.read_bytes() for p in files} == files  # the run files are untouched


def test_a_full_disk_under_the_index_browses_in_memory_and_writing_fails(tmp_path: Path) -> None:
    """A real ENOSPC on a tiny tmpfs, where mounting one is allowed (root in a container).
    `ragtui runs` only reads: it refused ("no space left", exit 2) where a read-only folder
    falls back to an in-memory index; now it browses so too, and a command that writes fails
    (exit 1)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=164k", "tmpfs", str(mount)],
        capture_output=True,
        timeout=30,
    )
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs is not allowed here (the RLIMIT_FSIZE test covers it)")
    try:
        source = make_run(tmp_path, "full-1", n=200)
        shutil.copy(source, mount)

        def ragtui(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "ragtui", *args],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=REPO,
            )

        out = ragtui("runs", str(mount))
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        (line,) = out.stderr.strip().splitlines()
        assert line == (
            f"notice: cannot write the index {mount / '.ragtui.duckdb'}: {FULL} "
            "(the run files are untouched); browsing with an in-memory index meanwhile, "
            "commands that write fail"
        )
        assert out.stdout.splitlines()[1].startswith("full-1 ")
        # again and again: no empty index moved aside by each command (".corrupt-<time>")
        for _ in range(2):
            assert ragtui("runs", str(mount)).returncode == 0
        assert not list(mount.glob(".ragtui.duckdb.corrupt-*"))
        judged = ragtui(
            "rejudge",
            "full-1",
            "-p",
            str(mount),
            "--provider",
            "ollama",
            "--url",
            "http://127.0.0.1:9",
            "--model",
            "m",
        )
        assert judged.returncode == 1, judged.stderr
        assert judged.stderr.strip().splitlines()[-1] == (
            f"Error: cannot write a judged run: {mount}: no space left on device"
        )
        assert (mount / source.name).read_bytes() == source.read_bytes()
        # an import into it says the disk is full (it said "is read-only"), exit 1
        imported = ragtui("import", str(source), "--into", str(mount))
        assert imported.returncode == 1, imported.stderr
        assert imported.stderr.strip().splitlines()[-1] == (
            f"Error: cannot import: {mount}: no space left on device: nothing imported"
        )
        # a disk so full the index is left an empty file: each command moved one more aside
        for index in mount.glob(".ragtui.duckdb*"):
            index.unlink()
        with contextlib.suppress(OSError), (mount / "filler").open("wb") as filler:
            filler.write(bytes(1 << 20))
        for _ in range(3):
            assert ragtui("runs", str(mount)).returncode == 0
        assert not list(mount.glob(".ragtui.duckdb.corrupt-*")), sorted(mount.iterdir())
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, timeout=30)


def test_a_batch_that_waited_for_a_rewritten_file_locks_and_writes_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch A holds the file and rewrites it (a retried grade put in); batch B, waiting for
    the lock meanwhile, opened the old file. When A lets go, B must not lock and append to
    that replaced copy (its lines would be lost): it takes the new file."""
    import threading

    path = tmp_path / f"batch-1{SUFFIX}"
    with RunFileAppender(path, RUN) as first:
        first.append(make_case(0))
    a = RunFileAppender(path, RUN)  # resumes, holds the lock
    got: dict[str, RunFileAppender] = {}
    waiting = threading.Thread(target=lambda: got.setdefault("b", RunFileAppender(path, RUN)))
    asking = threading.Event()
    real_lock = runwrite._lock

    def lock(fd: int, where: Path) -> None:
        if threading.current_thread() is waiting:
            asking.set()  # B has opened the old file and waits for its lock
        real_lock(fd, where)

    monkeypatch.setattr(runwrite, "_lock", lock)
    waiting.start()
    assert asking.wait(timeout=10)
    a.replace({"case-000": make_case(0, faith=0.5)})
    a.close()
    waiting.join(timeout=10)
    b = got["b"]
    b.append(make_case(1))
    b.close()
    cases = read_run_file(path).cases
    assert [c.case_id for c in cases] == ["case-000", "case-001"]
    assert cases[0] == make_case(0, faith=0.5)
