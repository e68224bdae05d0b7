"""Worker processes decode run files while this process commits (`core/workers`): the same
index and the same errors as decoding here, no worker left behind when this process is
killed, and indexing here when workers cannot start. Thresholds are lowered so that small
folders take the worker path; no timing is asserted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ragtui.bench.synthetic import write_synthetic_history
from ragtui.core import indexer, runfile, workers
from ragtui.core.decoding import Failed, Head
from ragtui.core.model import JudgeInfo, Run
from ragtui.core.runfile import SUFFIX, RunFileAppender
from ragtui.core.store import Store
from tests.core.index_helpers import content
from tests.core.runs_factory import make_case

REPO = Path(__file__).resolve().parents[2]
TWO_CORES = workers.cores() >= 2
BATCH = Run("batch-1", "batch", "2026-11-20T10:00:00Z", judge=JudgeInfo("m", "ollama", "p"))


def _history(folder: Path) -> None:
    """Six good runs, a clash, a bad line, an empty file."""
    write_synthetic_history(folder, runs=6, cases=12)
    shutil.copy(folder / f"synthetic-0001{SUFFIX}", folder / f"twin{SUFFIX}")
    broken = (folder / f"synthetic-0002{SUFFIX}").read_text().splitlines()
    broken[0] = broken[0].replace('"synthetic-0002"', '"broken-1"')
    broken[7] = broken[7].replace('"case_id": "case-000006"', '"case_id": 6')
    (folder / f"zbroken{SUFFIX}").write_text("\n".join(broken) + "\n")
    (folder / f"zempty{SUFFIX}").write_bytes(b"")


@contextmanager
def _being_written(folder: Path) -> Iterator[None]:
    """A run a batch is still writing, its writer mid-line."""
    path = folder / f"batch-1{SUFFIX}"
    with RunFileAppender(path, BATCH) as out:
        out.append(make_case(0))
        out.append(make_case(1))
        with path.open("a") as handle:
            handle.write('{"case_id": "case-002", "quest')
        yield


def _decode_in(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    if where == "here":
        monkeypatch.setattr(indexer, "PROCESS_BYTES", 1 << 62)
    else:  # worker processes for any folder of two files or more, each asked files at once
        monkeypatch.setattr(indexer, "PROCESS_BYTES", 0)
        monkeypatch.setattr(indexer, "MAX_PROCESSES", 2)
        monkeypatch.setattr(indexer, "HERE_WHILE_STARTING", False)


def _index(folder: Path) -> tuple[dict[str, Any], list[str], int]:
    with Store.open(folder, refresh=False) as store:
        with _being_written(folder):
            report = store.refresh()
        problems = sorted(str(p).replace(str(folder), "<folder>") for p in report.failed)
        return content(store), problems, report.decoders


PROBLEMS = [
    "<folder>/twin.ragtui.jsonl:1: field 'id': run id 'synthetic-0001' is already used by "
    "<folder>/synthetic-0001.ragtui.jsonl",
    "<folder>/zbroken.ragtui.jsonl:8: field 'case_id': expected a string, found int 6",
    "<folder>/zempty.ragtui.jsonl:1: expected a run header on line 1, found an empty file",
]


@pytest.mark.parametrize("chunked", [False, True])  # files committed whole / piece by piece
def test_worker_processes_index_what_this_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunked: bool
) -> None:
    monkeypatch.setattr(runfile, "BLOCK_BYTES", 4096)  # several pieces per file, in workers too
    if chunked:
        monkeypatch.setattr(indexer, "CHUNKED_BYTES", 0)
    _history(tmp_path / "source")
    results = {}
    for where in ("here", "processes"):
        folder = tmp_path / where
        shutil.copytree(tmp_path / "source", folder)
        _decode_in(monkeypatch, where)
        results[where] = _index(folder)
    here, processes = results["here"], results["processes"]
    assert here[2] == 0
    # Both workers decoded files (on one core, none is started: decoding stays here).
    assert processes[2] == (2 if TWO_CORES else 0)
    assert processes[0] == here[0]  # every row of every table, byte for byte
    assert processes[1] == here[1] == PROBLEMS
    runs = {row[0]: row for row in processes[0]["runs"]}
    assert sorted(runs) == ["batch-1", *(f"synthetic-{i:04d}" for i in range(6))]
    n_cases, in_progress = runs["batch-1"][-3:-1]
    assert (n_cases, in_progress) == (2, True)  # the torn last line is left for later
    assert len(processes[0]["cases"]) == 6 * 12 + 2


@pytest.mark.parametrize("python", ["/nonexistent/python3", shutil.which("false") or "false"])
def test_workers_that_cannot_start_leave_decoding_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: str
) -> None:
    """No interpreter to start (a sandbox), or one that exits at once: the same index."""
    _history(tmp_path / "source")
    shutil.copytree(tmp_path / "source", tmp_path / "here")
    _decode_in(monkeypatch, "here")
    expected = _index(tmp_path / "here")
    _decode_in(monkeypatch, "processes")
    monkeypatch.setattr(sys, "executable", python)
    shutil.copytree(tmp_path / "source", tmp_path / "fallback")
    assert _index(tmp_path / "fallback") == expected


_KILLED = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from ragtui.core import committer, indexer
    from ragtui.core.store import Store

    committer.GROUP_BYTES = 0  # each file committed (and reported) as soon as it is decoded
    indexer.PROCESS_BYTES = 0
    indexer.MAX_PROCESSES = 2
    indexer.HERE_WHILE_STARTING = False

    def descendants(pid):
        parents = {{}}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        found, todo = [], [pid]
        while todo:
            todo += [p for p, parent in parents.items() if parent == todo[0]]
            found.append(todo.pop(0))
        return found[1:]

    def killed_after_the_first_file(path):
        print(json.dumps(descendants(os.getpid())), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    Store.open({folder!r}, refresh=False).refresh(killed_after_the_first_file)
    """
)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not (sys.platform == "linux" and TWO_CORES), reason="/proc, two cores")
def test_no_worker_outlives_a_killed_indexer(tmp_path: Path) -> None:
    write_synthetic_history(tmp_path, runs=8, cases=20)
    script = _KILLED.format(repo=str(REPO), folder=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == -9, out.stderr
    pids = json.loads(out.stdout)
    assert len(pids) == 2  # the started worker and the one it forked, both decoding
    deadline = time.monotonic() + 20
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if _alive(pid)] == []


def test_a_worker_dying_mid_file_is_that_files_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process decoding a file ends before its last piece: that file's error, named."""
    path = tmp_path / f"long{SUFFIX}"
    lines = ['{"ragtui_run": 1, "id": "long-1", "created_at": "2026-11-20T10:00:00Z"}']
    for i in range(16):  # a piece per line, each larger than a pipe holds
        lines.append(json.dumps({"case_id": f"c{i}", "question": "q" * 100_000, "answer": "a"}))
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(runfile, "BLOCK_BYTES", 4096)
    pool = workers.Workers.start(1)
    if pool is None:
        pytest.skip("processes cannot be started here")
    try:
        worker = pool.ask(path, 1 << 62, up=False)
        assert worker is not None
        stream = pool.pieces(worker, path, 1 << 62)
        head = next(stream)
        assert isinstance(head, Head) and head.run_id == "long-1"
        # The worker is blocked: 4 pieces wait here, a pipe is full. It is killed.
        os.kill(pool.process.pid, 9)
        rest = list(stream)
    finally:
        pool.close(kill=True)
        pool.reap()
    assert 1 <= len(rest) < 16
    failed = rest[-1]
    assert isinstance(failed, Failed)
    assert str(failed.error) == (
        f"{path}: could not be indexed (its decoding process stopped unexpectedly)"
    )
