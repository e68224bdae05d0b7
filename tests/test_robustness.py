"""Bad bytes, concurrent processes and big files: ragtui reports, never crashes or corrupts.

The native reader, the index and every importer are fed fuzzed and mutated files.

(A corrupt index, a read-only folder, a truncated file and a crash mid-index are tested in
tests/core/test_store.py and tests/core/test_index_faults.py.)
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ragtui import importers
from ragtui.bench.synthetic import write_synthetic_history
from ragtui.core.errors import RagtuiError, RunFileError
from ragtui.core.model import Case, Chunk, Claim, JudgeInfo, Run, Score
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.core.store import INDEX_NAME, Store
from ragtui.importers.base import ImportOptions
from tests.core.index_helpers import content

REPO = Path(__file__).resolve().parents[1]


def _valid_file(folder: Path) -> Path:
    run = Run(
        id="mutant-1",
        name="mutant",
        created_at="2026-11-20T10:00:00Z",
        config={"top_k": 3, "generator": "llama3.2:3b"},
        judge=JudgeInfo("qwen2.5:7b", "ollama", "p1"),
    )
    cases = [
        Case(
            case_id=f"case-{i}",
            question=f"How long do refunds take for plan {i}?",
            answer="Refunds take 5-10 business days.",
            reference="5 to 10 business days.",
            contexts=(
                Chunk("c1", "Refunds are processed in 5-10 days.", "refund.md", 1, 0.83),
                Chunk("c2", "Invoices in EUR.", None, 2, None),
            ),
            scores={
                "faithfulness": Score(1.0 if i % 2 else 0.5, raw="YES", label="YES"),
                "answer_relevance": Score(0.75, raw=4, scale=(1, 5), threshold=0.5),
            },
            claims=(Claim("faithfulness", "Refunds take 5-10 days", "SUPPORTED", ("c1",)),),
            errors={"context_recall": "judge reply was not valid JSON"},
            human={"faithfulness": 1.0},
            latency_ms=812.0 + i,
            metadata={"topic": "refund", "tokens": 375},
        )
        for i in range(4)
    ]
    return write_run_file(folder / "mutant-1.ragtui.jsonl", run, cases)


def _template() -> bytes:
    """The valid run file the mutations start from, written in a folder removed after."""
    with tempfile.TemporaryDirectory(prefix="ragtui-template-") as folder:
        return _valid_file(Path(folder)).read_bytes()


_TEMPLATE = _template()


def _json_values(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    found = [(path, obj)]
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += _json_values(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found += _json_values(v, (*path, i))
    return found


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    obj[path[0]] = _set(obj[path[0]], path[1:], value)
    return obj


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """The template run file after a few byte flips, cuts, line shuffles and value swaps."""
    data = bytearray(_TEMPLATE)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "shuffle", "swap", "insert", "drop"]))
        if kind == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        elif kind == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind in ("shuffle", "drop"):
            lines = bytes(data).split(b"\n")
            if kind == "shuffle":
                lines = draw(st.permutations(lines))
            elif len(lines) > 1:
                del lines[draw(st.integers(0, len(lines) - 1))]
            data = bytearray(b"\n".join(lines))
        elif kind == "swap":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            try:
                obj = json.loads(lines[i])
            except ValueError:
                continue
            values = _json_values(obj)[1:]
            if len(values) < 2:
                continue
            (p1, v1), (p2, v2) = draw(st.lists(st.sampled_from(values), min_size=2, max_size=2))
            if p1[: len(p2)] == p2 or p2[: len(p1)] == p1:
                continue  # one inside the other
            obj = _set(_set(obj, p1, v2), p2, v1)
            lines[i] = json.dumps(obj).encode()
            data = bytearray(b"\n".join(lines))
    return bytes(data)


_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking whole indexes is slow
)


def _read(path: Path) -> int | RunFileError:
    """Cases in the file by the native reader, or its error; anything else fails the test."""
    try:
        return len(read_run_file(path).cases)
    except RunFileError as err:
        return err


@_SETTINGS
@given(data=st.binary(max_size=400) | mutated())
def test_the_reader_raises_only_its_own_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "x.ragtui.jsonl"
    path.write_bytes(data)
    result = _read(path)
    if isinstance(result, RunFileError):
        assert str(result).startswith(str(path))


@_SETTINGS
@given(data=mutated())
def test_the_store_reports_a_bad_file_and_indexes_the_rest(tmp_path: Path, data: bytes) -> None:
    folder = tmp_path / f"runs-{random.getrandbits(32)}"
    folder.mkdir()
    write_synthetic_history(folder, runs=1, cases=3)  # run "synthetic-0000", untouched
    path = folder / "mutant-1.ragtui.jsonl"
    path.write_bytes(data)
    expected = _read(path)
    with Store.open(folder) as store:
        table = store.runs()
        runs = dict(zip(table["run_id"].to_pylist(), table["n_cases"].to_pylist(), strict=True))
        assert runs.pop("synthetic-0000") == 3
        if isinstance(expected, RunFileError):
            assert [str(p) for p in store.problems] == [str(expected)]
            assert runs == {}
            total = store._cursor().execute("SELECT count(*) FROM cases").fetchone()
            assert total == (3,)  # nothing of the bad file is half-indexed
        else:
            assert store.problems == []
            assert list(runs.values()) == [expected]
    shutil.rmtree(folder)


@pytest.mark.parametrize("number", ["18014398509481985", "9" * 400])
def test_a_huge_integer_is_a_clear_error_or_a_number(tmp_path: Path, number: str) -> None:
    (tmp_path / "x.ragtui.jsonl").write_text(
        '{"ragtui_run": 1, "id": "x", "created_at": "2026-01-01T00:00:00Z"}\n'
        f'{{"case_id": "c", "question": "q", "answer": "a", "latency_ms": {number}}}\n'
    )
    with Store.open(tmp_path) as store:
        assert store.runs().num_rows + len(store.problems) == 1


_FIXTURES = sorted(
    p
    for p in (REPO / "tests" / "data").rglob("*")
    if p.is_file() and p.suffix not in (".md", ".txt")
)


@st.composite
def mutated_fixture(draw: st.DrawFn) -> tuple[str, bytes]:
    """A result file of some harness (tests/data) after a few byte flips, cuts, inserts, or
    (JSON files) swaps of two values, which keep the file well-formed and reach deeper."""
    source = draw(st.sampled_from(_FIXTURES))
    data = bytearray(source.read_bytes())
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "swap", "swap"]))
        if kind == "swap":
            try:
                obj = json.loads(data)
            except ValueError:
                continue
            values = _json_values(obj)[1:]
            if len(values) < 2:
                continue
            (p1, v1), (p2, v2) = draw(st.lists(st.sampled_from(values), min_size=2, max_size=2))
            if p1[: len(p2)] != p2 and p2[: len(p1)] != p1:  # neither inside the other
                data = bytearray(json.dumps(_set(_set(obj, p1, v2), p2, v1)).encode())
        elif kind == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        elif kind == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        else:
            at = draw(st.integers(0, len(data)))
            data[at:at] = draw(st.binary(min_size=1, max_size=6))
    return "".join(source.suffixes), bytes(data)


@_SETTINGS
@given(case=mutated_fixture())
def test_every_importer_raises_only_its_own_error(tmp_path: Path, case: tuple[str, bytes]) -> None:
    suffix, data = case
    path = tmp_path / f"mutant{suffix}"
    path.write_bytes(data)
    for name, importer in importers.REGISTRY.items():
        try:
            importer.load(path, ImportOptions())
        except RagtuiError as err:
            assert str(err), name  # a message to show, never an empty line


# ---------------------------------------------------------------- two processes

_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from ragtui.core.store import Store
    folder = Path({folder!r})
    seen = []
    for round in range(4):
        with Store.open(folder) as store:
            runs = store.runs()
            means = store.run_means()
            assert not store.problems, store.problems
            assert means.num_rows == 4 * runs.num_rows, (means.num_rows, runs.num_rows)
            for run_id in runs["run_id"].to_pylist():
                assert store.cases(run_id).num_rows == 40
            seen.append((runs.num_rows, store.read_only))
        time.sleep(0.05)
    print(seen)
    """
)


def test_two_processes_index_and_read_one_folder_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    write_synthetic_history(folder, runs=6, cases=40)
    script = _WORKER.format(repo=str(REPO), folder=str(folder))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert all(n == 6 for n, _ in eval(out))  # every round saw every run, whole
    # Nothing is corrupted: the shared index holds what a fresh rebuild holds.
    fresh = tmp_path / "fresh"
    shutil.copytree(folder, fresh, ignore=shutil.ignore_patterns(INDEX_NAME + "*"))
    with Store.open(folder) as shared, Store.open(fresh) as rebuilt:
        assert not shared.read_only
        assert content(shared) == content(rebuilt)
        assert len(content(shared)["runs"]) == 6


# ---------------------------------------------------------------- a big file

_RSS = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from ragtui.core.store import Store

    def peak_mb():
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent.
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024

    base = peak_mb()
    started = time.perf_counter()
    store = Store.open(Path({folder!r}))
    seconds = time.perf_counter() - started
    assert not store.problems, store.problems
    print(store.cases("synthetic-0000").num_rows, base, peak_mb(), round(seconds, 2))
    """
)


def test_a_big_run_file_indexes_with_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    (path,) = write_synthetic_history(folder, runs=1, cases=7_000, metrics=4)
    size_mb = path.stat().st_size / 1e6
    assert size_mb > 19
    out = subprocess.run(
        [sys.executable, "-c", _RSS.format(repo=str(REPO), folder=str(folder))],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    n, base_mb, peak_mb, _seconds = out.stdout.split()
    assert int(n) == 7_000
    # Streamed in blocks: the peak stays far below what holding the parsed file would take.
    assert int(peak_mb) < 400, (size_mb, base_mb, peak_mb)
