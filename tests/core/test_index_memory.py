"""Hostile run files cannot make indexing use much memory: lines are capped, and what a line
holds is bounded by the cap. Checked in a subprocess that may not grow by more than 500 MB."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from ragtui.core.runfile import MAX_LINE_BYTES, SUFFIX
from tests.core.runs_factory import make_run

REPO = Path(__file__).resolve().parents[2]
HEADER = '{"ragtui_run": 1, "id": "%s", "created_at": "2026-11-20T10:00:00Z"}\n'
LIMIT_MB = 500

_SCRIPT = textwrap.dedent(
    """
    import json, resource, shutil, sys, tempfile
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from ragtui.core import indexer
    from ragtui.core.store import Store

    def status(key):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    with tempfile.TemporaryDirectory() as warm:  # start DuckDB's threads first, and the
        for name in ("a", "b"):  # thread that reads decoding workers (its malloc arena)
            shutil.copy({good!r}, Path(warm) / (name + ".ragtui.jsonl"))
        size, indexer.PROCESS_BYTES = indexer.PROCESS_BYTES, 0
        Store.open(warm).close()
        indexer.PROCESS_BYTES = size
    # From here the process may not grow by more than the limit: an allocation past it fails.
    grown = status("VmSize") + {limit} * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (grown, grown))
    with Store.open(Path({folder!r})) as store:
        runs = store.runs().column("run_id").to_pylist()
        problems = sorted(str(p) for p in store.problems)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the largest
    print(json.dumps({{"runs": runs, "problems": problems, "peak": status("VmHWM"),
                      "workers": workers}}))
    """
)


def _write(path: Path, run_id: str, *pieces: bytes) -> Path:
    with path.open("wb") as out:
        out.write((HEADER % run_id).encode())
        for piece in pieces:
            out.write(piece)
    return path


def test_hostile_files_index_within_a_memory_limit(tmp_path: Path) -> None:
    good = make_run(tmp_path, "good-1")
    room = MAX_LINE_BYTES - 200
    lists = b"[]," * (room // 3)  # ~2.8 million empty arrays in one line under the cap
    endless = _write(tmp_path / f"endless{SUFFIX}", "endless-1", b"a" * (48 << 20))
    _write(
        tmp_path / f"wide{SUFFIX}",
        "wide-1",
        b'{"case_id": "c1", "question": "q", "answer": "a", "metadata": {"k": ['
        + lists[:-1]
        + b"]}}\n",
    )
    wide_bad = _write(
        tmp_path / f"wide-bad{SUFFIX}",
        "wide-bad-1",
        b'{"case_id": 7, "question": "q", "answer": "a", "metadata": {"k": ['
        + lists[:-1]
        + b"]}}\n",
    )
    deep = _write(
        tmp_path / f"deep{SUFFIX}", "deep-1", b'{"case_id": "c", "m": ' + b"[" * room + b"\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _SCRIPT.format(repo=str(REPO), folder=str(tmp_path), limit=LIMIT_MB, good=str(good)),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["runs"] == ["good-1", "wide-1"]
    assert result["problems"] == [
        f"{deep}:2: expected JSON nested less deeply",
        f"{endless}:2: expected a line of at most {MAX_LINE_BYTES >> 20} MB, found a longer one",
        f"{wide_bad}:2: field 'case_id': expected a string, found int 7",
    ]
    assert result["peak"] < LIMIT_MB * 2**20, result["peak"] / 2**20
    # Decoding worker processes (when this machine has the cores) are bounded alike.
    assert result["workers"] < LIMIT_MB * 2**20, result["workers"] / 2**20
