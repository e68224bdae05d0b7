"""Data figures of `ragtui bench`: indexing, Inspect import, comparison, memory.

Everything runs in the calling process on synthetic native run files in a scratch folder, so
the figures describe this machine. Baselines are other tools doing the same work on the same
data: DuckDB's own `read_json` (cold index), `inspect_ai.log.read_eval_log` (Inspect import)
and `flakeval compare` (comparison), each only when installed.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from ragtui.bench.figures import Figure, speedup, timed
from ragtui.bench.synthetic import synthetic_cases, write_synthetic_history
from ragtui.core import indexer
from ragtui.core.compare import compare_runs
from ragtui.core.model import JudgeInfo, Run
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.core.store import INDEX_NAME, Store

REPO = Path(__file__).resolve().parents[2]  # scripts/ exists only in a source checkout


def run_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*" + SUFFIX))


def megabytes(paths: list[Path]) -> float:
    return sum(p.stat().st_size for p in paths) / 1e6


def drop_index(folder: Path) -> None:
    for path in folder.glob(INDEX_NAME + "*"):
        path.unlink()


# ---------------------------------------------------------------- indexing


def _cpu_seconds() -> float:
    """CPU time of this process and of its ended children (the decoding workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


@dataclass
class Timing:
    seconds: float
    cpu: float  # CPU seconds, workers included
    decoders: int = 0  # worker processes that decoded files
    problems: int = 0
    before_close: float = 0.0  # seconds until the data was in (read_json: its CREATE TABLE)


def _index_from_scratch(folder: Path, *, one_thread: bool) -> Timing:
    """Index `folder` from nothing: open (connect), index, close (the file written)."""
    drop_index(folder)
    saved = indexer.PROCESS_BYTES
    if one_thread:
        indexer.PROCESS_BYTES = 1 << 62
    try:
        cpu = _cpu_seconds()
        started = time.perf_counter()
        store = Store.open(folder, refresh=False)
        report = store.refresh()
        store.close()  # included: closing writes the index file
        seconds = time.perf_counter() - started
        return Timing(seconds, _cpu_seconds() - cpu, report.decoders, len(report.failed))
    finally:
        indexer.PROCESS_BYTES = saved


def _read_json(files: list[Path], database: Path) -> Timing:
    """DuckDB loading the same files into a table of a database file, timed like ours: from
    connect to close (its checkpoint writes the file, as ours does)."""
    for path in (database, database.with_name(database.name + ".wal")):
        path.unlink(missing_ok=True)
    listed = ", ".join("'" + str(p).replace("'", "''") + "'" for p in files)
    cpu = _cpu_seconds()
    started = time.perf_counter()
    with duckdb.connect(str(database)) as con:
        con.execute(
            f"CREATE TABLE t AS SELECT * FROM read_json([{listed}], format='newline_delimited')"
        )
        before_close = time.perf_counter() - started
    seconds = time.perf_counter() - started
    return Timing(seconds, _cpu_seconds() - cpu, before_close=before_close)


def _median(timings: list[Timing]) -> Timing:
    return sorted(timings, key=lambda t: t.seconds)[len(timings) // 2]


def cold_index(folder: Path, n_cases: int, repeats: int = 3) -> list[Figure]:
    """Index `folder` from scratch as `ragtui` does (worker processes decode beside the
    committing thread when there is enough), then in one thread, beside DuckDB's own
    `read_json` loading the same files; each `repeats` times, in turn, medians shown."""
    files = run_files(folder)
    size = megabytes(files)
    database = folder.parent / "read_json-baseline.duckdb"
    runs: dict[str, list[Timing]] = {"ours": [], "one": [], "read_json": []}
    for _ in range(repeats):
        runs["read_json"].append(_read_json(files, database))
        runs["one"].append(_index_from_scratch(folder, one_thread=True))
        runs["ours"].append(_index_from_scratch(folder, one_thread=False))  # the index stays
    ours, one, baseline = (_median(runs[k]) for k in ("ours", "one", "read_json"))
    decoding = f"{ours.decoders} decoding processes" if ours.decoders else "decoded in this process"
    note = (
        f"{len(files)} files, {size:.0f} MB, {n_cases:,} cases; median of {repeats}, each from "
        f"connect to a closed database file; {ours.cpu / ours.seconds:.1f} cores busy "
        f"({decoding}), read_json {baseline.cpu / baseline.seconds:.1f}; read_json before "
        f"its close {size / baseline.before_close:.1f} MB/s"
    )
    if ours.problems:
        note += f"; {ours.problems} files failed"
    return [
        Figure(
            "cold index",
            f"{size / ours.seconds:.1f} MB/s",
            f"duckdb read_json {size / baseline.seconds:.1f} MB/s",
            speedup(ours.seconds, baseline.seconds),
            note,
        ),
        Figure("cold index, cases", f"{n_cases / ours.seconds:,.0f} cases/s"),
        Figure(
            "cold index, one thread",
            f"{size / one.seconds:.1f} MB/s",
            "",
            "",
            f"{one.cpu / one.seconds:.1f} cores busy; the default is {speedup(ours.seconds, one.seconds)}",
        ),
    ]


def warm_open(folder: Path, label: str) -> Figure:
    """Open an index whose files did not change (best of three)."""
    seconds = min(timed(lambda: Store.open(folder).close())[0] for _ in range(3))
    return Figure("warm open (nothing changed)", f"{seconds:.3f} s", note=label)


# ---------------------------------------------------------------- Inspect AI


def _load_script(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inspect_import(cache: Path, n_samples: int) -> Figure:
    """ragtui's Inspect importer vs `read_eval_log` on one n-sample `.eval` log (cached)."""
    label = f"Inspect .eval import, {n_samples:,} samples"
    if importlib.util.find_spec("inspect_ai") is None:
        return Figure(
            label, "skipped", note="inspect-ai is not installed (pip install ragtui[bench])"
        )
    script = REPO / "scripts" / "fixtures" / "make_inspect.py"
    if not script.exists():
        return Figure(label, "skipped", note=f"{script} (the log generator) is not here")
    maker = _load_script("ragtui_make_inspect", script)
    path = cache / f"inspect-{n_samples}.eval"
    made = ""
    if not path.exists():
        seconds, _ = timed(lambda: maker.big_eval(path, n_samples))
        made = f"; log generated with mockllm/model in {seconds:.0f} s, cached in {cache}"
    result = maker.bench_import(path, n_samples, repeats=1)
    ours, theirs = result["ragtui_s"], result["inspect_read_eval_log_s"]
    return Figure(
        label,
        f"{ours:.2f} s",
        f"read_eval_log {theirs:.2f} s",
        speedup(ours, theirs),
        f"{path.stat().st_size / 1e6:.0f} MB log" + made,
    )


# ---------------------------------------------------------------- comparison


def write_compare_runs(folder: Path, n_cases: int, metrics: int = 4) -> tuple[str, str]:
    """A, a rerun of A (for the noise floor) and B, `n_cases` lean cases each: (A id, B id)."""
    judge = JudgeInfo("qwen2.5:7b", "ollama", "p-bench")
    specs = [
        ("big-a", "base", 0.0, 1),
        ("big-a-rerun", "base", 0.0, 2),
        ("big-b", "strict", 0.02, 3),
    ]
    for day, (run_id, prompt, shift, seed) in enumerate(specs, start=1):
        run = Run(
            id=run_id,
            name=run_id,
            created_at=f"2026-11-{day:02d}T10:00:00Z",
            config={"top_k": 3, "generator": "llama3.2:3b", "prompt": prompt},
            judge=judge,
            kind="rerun" if "rerun" in run_id else "eval",
        )
        cases = synthetic_cases(n_cases, metrics, seed=seed, shift=shift, texts=False)
        write_run_file(folder / f"{run_id}{SUFFIX}", run, cases)
    return "big-a", "big-b"


def compare(store: Store, a: str, b: str, n_cases: int, workdir: Path) -> Figure:
    """compare_runs (CIs, p, noise floor from the rerun) vs `flakeval compare` on one metric."""
    metric = store.metrics([a])[0]
    everything, result = timed(lambda: compare_runs(store, a, b))
    assert result.metrics, "the comparison found no metric"
    one, _ = timed(lambda: compare_runs(store, a, b, metrics=[metric]))
    label = f"compare 2 x {n_cases:,} cases"
    noise = "noise floor from a rerun of A" if len(result.reruns_a) > 1 else "no noise floor"
    note = f"{len(result.metrics)} metrics in {everything:.2f} s, {noise}; ratio on {metric}"
    flakeval = _flakeval(store, a, b, metric, workdir)
    if isinstance(flakeval, str):
        return Figure(label, f"{one:.2f} s", "", "", f"{note}; flakeval: {flakeval}")
    seconds, peak_mb = flakeval
    return Figure(
        label,
        f"{one:.2f} s",
        f"flakeval compare {seconds:.1f} s, {peak_mb:,} MB",
        speedup(one, seconds),
        note,
    )


_FLAKEVAL = """
import sys
from pathlib import Path
from flakeval.cli import main
code = main(["compare", sys.argv[1], sys.argv[2], "--json"])
status = Path("/proc/self/status").read_text().splitlines()
peak = [int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:")]
print("PEAK_MB", peak[0] if peak else -1, file=sys.stderr)
sys.exit(code)
"""


def _flakeval(store: Store, a: str, b: str, metric: str, workdir: Path) -> tuple[float, int] | str:
    """(seconds, peak MB) of `flakeval compare` on the same scores, or why it did not run."""
    if importlib.util.find_spec("flakeval") is None:
        return "not installed (pip install ragtui[bench])"
    paths = []
    for side, runs in (("a", [a, *(r for r in store.reruns(a) if r not in (a, b))]), ("b", [b])):
        path = workdir / f"flakeval-{side}.jsonl"
        store._cursor().execute(  # item x run rows, flakeval's input format
            "COPY (SELECT case_id AS item_id, list_position(?, run_id) - 1 AS run, value AS score "
            "FROM scores WHERE list_contains(?, run_id) AND metric = ? AND value IS NOT NULL "
            f"ORDER BY case_id, run) TO '{path}' (FORMAT json)",
            [runs, runs, metric],
        )
        paths.append(str(path))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _FLAKEVAL, *paths], capture_output=True, text=True, timeout=600
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return f"failed ({done.stderr.strip().splitlines()[-1][:80] if done.stderr.strip() else done.returncode})"
    peak = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_MB")]
    return seconds, int(peak[0]) if peak else -1


# ---------------------------------------------------------------- the whole bench


def peak_rss(when: str) -> Figure:
    """This process's peak resident memory so far (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mb = peak / 1e6 if sys.platform == "darwin" else peak / 1024
    return Figure("peak RSS (this process)", f"{mb:,.0f} MB", note=f"{when}; resource.getrusage")


def make_history(folder: Path, runs: int, cases: int, metrics: int) -> float:
    """Write the synthetic history; returns seconds taken."""
    seconds, _ = timed(
        lambda: write_synthetic_history(folder, runs=runs, cases=cases, metrics=metrics)
    )
    return seconds


def cache_dir() -> Path:
    """Where generated logs that are slow to make (the Inspect log) are kept between runs."""
    default = Path(tempfile.gettempdir()) / "ragtui-bench"
    base = Path(os.environ.get("RAGTUI_BENCH_CACHE", default))
    base.mkdir(parents=True, exist_ok=True)
    return base
