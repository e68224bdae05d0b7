"""`ragtui bench` at toy sizes: it runs end to end and prints every figure (no timing asserts);
bad sizes are usage errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.bench import data
from ragtui.bench.figures import Figure, render, speedup
from ragtui.cli import cli
from ragtui.commands.bench import bench_command
from ragtui.core.store import Store

LABELS = (
    "cold index",
    "cold index, cases",
    "cold index, one thread",
    "warm open (nothing changed)",
    "compare 2 x 300 cases",
    "Inspect .eval import, 20 samples",
    "Runs screen paint, 12 runs",
    "case list first screen, 450 cases",
    "case list, every case in",
    "case list filter keystroke",
    "case list sort",
    "peak RSS (this process)",
)


def test_bench_prints_every_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTUI_BENCH_CACHE", str(tmp_path / "cache"))
    args = "--runs 2 --cases 15 --metrics 3 --big 300 --inspect-samples 20 "
    args += "--tui-runs 12 --case-list 450 --no-startup"
    result = CliRunner().invoke(bench_command, args.split())
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["figure", "ragtui", "baseline"]
    for label in LABELS:
        assert any(line.startswith(label) for line in lines), (label, result.stdout)
    row = {line.split("  ")[0]: line for line in lines}
    assert re.search(r"\d+\.\d MB/s +duckdb read_json \d+\.\d MB/s", row["cold index"])
    assert re.search(
        r"median of 3, each from connect to a closed database file; \d+\.\d cores busy "
        r"\(decoded in this process\), read_json \d+\.\d; read_json before its close "
        r"\d+\.\d MB/s",
        row["cold index"],
    )  # 2 runs x 15 cases: too little to start decoding processes
    assert "2 runs x 15 cases" in row["warm open (nothing changed)"]
    assert "noise floor from a rerun of A" in row["compare 2 x 300 cases"]
    paints = [line for line in lines if line.startswith("Runs screen paint, 12 runs")]
    assert re.search(r"\d\.\d\d s +stock DataTable \d\.\d\d s", paints[0])
    assert re.search(r"\d\.\d\d s +fastdatatable \d\.\d\d s", paints[1])
    first = [line for line in lines if line.startswith("case list first screen")]
    assert "stock DataTable" in first[0] and "fastdatatable" in first[1]
    for label in ("case list filter keystroke", "case list sort"):
        assert re.search(r"UI blocked at most \d+ ms", row[label])


def test_start_up_is_timed_in_fresh_processes(tmp_path: Path) -> None:
    from ragtui.bench.startup import startup_figures

    help_, paint = startup_figures(tmp_path, repeats=1)
    assert help_.label == "ragtui --help" and paint.label == "Runs first paint, index present"
    for figure, goal in ((help_, "0.3"), (paint, "0.6")):
        assert re.fullmatch(r"\d+\.\d\d s \(median \d+\.\d\d\)", figure.value)
        assert re.fullmatch(r'python -c "import textual" \d+\.\d\d s', figure.baseline)
        assert re.match(rf"(meets|misses) the goal < {goal} s", figure.note)
    assert "sample history (" in paint.note


@pytest.mark.parametrize(
    "args",
    [
        ["--runs", "0"],
        ["--runs", "-3"],
        ["--runs", "many"],
        ["--cases", "0"],
        ["--big", "0"],
        ["--metrics", "0"],
        ["--tui-runs", "0"],
        ["--case-list", "0"],
        ["--inspect-samples", "-1"],
    ],
)
def test_bad_sizes_are_usage_errors(args: list[str]) -> None:
    result = CliRunner().invoke(cli, ["bench", *args])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{args[0]}'" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_speedup_and_table_layout() -> None:
    assert speedup(1.0, 3.0) == "3.0x faster"
    assert speedup(2.0, 1.0) == "2.0x slower"
    assert speedup(0.0, 1.0) == ""
    text = render([Figure("a", "1 s", "b 2 s", "2.0x faster", "n"), Figure("longer label", "3 s")])
    header, rule, first, second = text.splitlines()
    assert header.index("ragtui") == first.index("1 s") == second.index("3 s")
    assert set(rule.replace(" ", "")) == {"-"}


def test_compare_runs_for_the_bench_form_a_rerun_pair(tmp_path: Path) -> None:
    a, b = data.write_compare_runs(tmp_path, 50, metrics=2)
    with Store.open(tmp_path) as store:
        assert store.reruns(a) == [a, "big-a-rerun"]
        assert store.reruns(b) == [b]
        assert [store.cases(r).num_rows for r in (a, b)] == [50, 50]


def test_the_cold_index_figure_names_the_decoding_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above the threshold (lowered here) the default indexing decodes in worker processes,
    and the figure says so; the one-thread figure is decoded here (no workers)."""
    from ragtui.bench.synthetic import write_synthetic_history
    from ragtui.core import indexer, workers

    monkeypatch.setattr(indexer, "PROCESS_BYTES", 0)
    monkeypatch.setattr(indexer, "MAX_PROCESSES", 2)
    monkeypatch.setattr(indexer, "HERE_WHILE_STARTING", False)
    folder = tmp_path / "history"
    write_synthetic_history(folder, runs=4, cases=10)
    cold, _cases, one = data.cold_index(folder, 40, repeats=1)
    expected = "(2 decoding processes)" if workers.cores() >= 2 else "(decoded in this process)"
    assert expected in cold.note, cold.note
    assert cold.note.startswith("4 files, 0 MB, 40 cases; median of 1")
    assert re.fullmatch(r"\d\.\d cores busy; the default is \d+\.\dx (faster|slower)", one.note)
    with Store.open(folder) as store:  # the bench leaves the index of the default path
        assert store.problems == [] and len(store.runs()) == 4
