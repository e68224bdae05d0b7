"""`ragtui bench` at toy sizes: it runs end to end and prints every figure (no timing asserts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.commands.bench import LABELS, bench_command, render
from ragtui.core import bench
from ragtui.core.bench import Figure
from ragtui.core.store import Store


def test_bench_prints_every_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGTUI_BENCH_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(
        bench_command,
        [
            "--runs",
            "2",
            "--cases",
            "15",
            "--metrics",
            "3",
            "--big",
            "300",
            "--inspect-samples",
            "20",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["figure", "ragtui", "baseline"]
    for label in LABELS:
        assert any(line.startswith(label) for line in lines), (label, result.stdout)
    row = {line.split("  ")[0]: line for line in lines}
    assert re.search(r"\d+\.\d MB/s +duckdb read_json \d+\.\d MB/s", row["cold index"])
    assert "2 runs x 15 cases" in row["warm open (nothing changed)"]
    assert re.search(r"peak RSS \(this process\) +[\d,]+ MB", result.stdout)
    compare = next(line for line in lines if line.startswith("compare 2 x 300 cases"))
    assert "noise floor from a rerun of A" in compare


def test_bench_rejects_a_bad_size() -> None:
    result = CliRunner().invoke(bench_command, ["--metrics", "0"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_speedup_and_table_layout() -> None:
    assert bench.speedup(1.0, 3.0) == "3.0x faster"
    assert bench.speedup(2.0, 1.0) == "2.0x slower"
    assert bench.speedup(0.0, 1.0) == ""
    text = render([Figure("a", "1 s", "b 2 s", "2.0x faster", "n"), Figure("longer label", "3 s")])
    header, rule, first, second = text.splitlines()
    assert header.index("ragtui") == first.index("1 s") == second.index("3 s")
    assert set(rule.replace(" ", "")) == {"-"}


def test_compare_runs_for_the_bench_form_a_rerun_pair(tmp_path: Path) -> None:
    a, b = bench.write_compare_runs(tmp_path, 50, metrics=2)
    with Store.open(tmp_path) as store:
        assert store.reruns(a) == [a, "big-a-rerun"]
        assert store.reruns(b) == [b]
        assert [store.cases(r).num_rows for r in (a, b)] == [50, 50]
