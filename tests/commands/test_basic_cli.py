from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from tests.core.runs_factory import make_run


def test_runs_json_lists_every_run_with_means(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1", faith=[1.0, 0.5, 0.0, 1.0])
    make_run(tmp_path, "strict-1", faith=[1.0, 1.0, 1.0, 0.5], created_at="2026-11-21T10:00:00Z")
    result = CliRunner().invoke(cli, ["runs", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["id"] for r in data["runs"]] == ["base-1", "strict-1"]
    assert data["runs"][0]["means"]["faithfulness"] == 0.625
    assert data["runs"][1]["means"]["answer_relevance"] == 0.75
    assert data["runs"][0]["n_cases"] == 4


def test_runs_table_prints_points(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1", faith=[1.0, 0.5, 0.0, 1.0])
    result = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "base-1" in result.stdout and "62.5" in result.stdout and "75.0" in result.stdout


def test_show_case_prints_question_chunks_claims(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1")
    result = CliRunner().invoke(cli, ["show", "base-1", "case-001", "--path", str(tmp_path)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "How long do refunds take for plan 1?" in out
    assert "refund_policy.md" in out and "SUPPORTED" in out and "faithfulness: 100.0 YES" in out
    as_json = CliRunner().invoke(
        cli, ["show", "base", "case-001", "--path", str(tmp_path), "--json"]
    )
    assert json.loads(as_json.stdout)["case_id"] == "case-001"


def test_user_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    make_run(tmp_path, "base-1")
    env = {**os.environ, "COLUMNS": "200"}
    for args in (
        ["show", "nope", "--path", str(tmp_path)],
        ["runs", str(tmp_path / "missing")],
        ["show", "base-1", "no-such-case", "--path", str(tmp_path)],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "ragtui", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 2  # a run, folder or case that is not there: bad input
        assert "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_bad_options_and_values_are_one_line_naming_the_help(
    tmp_path: Path, user_config: Path
) -> None:
    """An unknown option, a bad value, an unknown command, an unknown --map field and a bad
    judge setting in the user's ragtui.toml: bad input, exit 2, one line on stderr (click
    printed a four-line usage block; --map was read per file and exited 1 as a failed import;
    a bad judge setting exited 1 as a failed judge)."""
    make_run(tmp_path, "base-1")
    make_run(tmp_path, "good-1")
    user_config.write_text(
        '[judges.j]\nprovider = "ollama"\nurl = "http://127.0.0.1:9"\nmodel = "m"\n'
        "temperature = 3.0\n"
    )
    cases = {
        ("compare", "base-1", "good-1", str(tmp_path), "--bogus"): "No such option '--bogus'",
        ("compare", "base-1", "good-1", str(tmp_path), "--margin", "0.05"): "--margin",
        ("nosuch",): "No such command 'nosuch'",
        (
            "import",
            str(tmp_path / "base-1.ragtui.jsonl"),
            "--into",
            str(tmp_path / "x"),
            "--map",
            "faithfulness=f",
        ): "--map: faithfulness=...: unknown field",
        ("rejudge", "base-1", str(tmp_path), "--judge", "j"): "judges.j.temperature",
    }
    for args, says in cases.items():
        result = CliRunner().invoke(cli, list(args))
        lines = [x for x in result.stderr.splitlines() if not x.startswith("notice: ")]
        assert result.exit_code == 2, (args, result.output)
        assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], lines
        if args[0] != "rejudge":  # a usage error names where the options are listed
            assert lines[0].endswith(" --help)"), lines


def test_bad_file_is_reported_on_stderr_and_others_listed(tmp_path: Path) -> None:
    make_run(tmp_path, "good-1")
    (tmp_path / "bad.ragtui.jsonl").write_text('{"ragtui_run": 2}\n')
    out = subprocess.run(
        [sys.executable, "-m", "ragtui", "runs", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0
    assert (
        f"skipped: {tmp_path / 'bad.ragtui.jsonl'}:1: field 'ragtui_run': expected format version 1"
        in out.stderr
    )
    assert "good-1" in out.stdout


def test_a_summary_only_run_lists_its_level_and_shows_every_stated_figure(tmp_path: Path) -> None:
    """A summary-only run stating accuracy 2/3 and its stderr 1/3: `runs` lists 66.7 (it
    listed 33.3, the stderr), and `show` prints each stated figure (it printed "0 cases")."""
    from tests.core.runs_factory import make_summary_only_run

    make_summary_only_run(tmp_path)
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    (line,) = [x for x in listed.stdout.splitlines() if x.startswith("popularity")]
    assert line.split()[-1] == "66.7"
    shown = CliRunner().invoke(cli, ["show", "popularity", "--path", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert "stated match accuracy 66.7 (3 cases)" in shown.stdout.splitlines()
    assert "stated match stderr 33.3 (3 cases)" in shown.stdout.splitlines()


def test_runs_prints_every_column_whole_however_many_metrics(tmp_path) -> None:
    """16 metrics with long names: the table was squeezed to 240 cells, dropping N and the ids
    and cutting figures ('65.5 !2 (2 er…')."""
    from click.testing import CliRunner

    from ragtui.cli import cli
    from tests.core.run_writer import RunWriter

    writer = RunWriter(tmp_path)
    names = [
        f"judge_metric_{w}_score" for w in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    ]
    names += [f"llm_context_precision_with_reference_{i}" for i in range(10)]
    cases = [f"c{i}" for i in range(4)]
    long_id = "a-candidate-run-with-a-long-id-2026-12-02"
    writer.write(long_id, {m: dict.fromkeys(cases, 0.948) for m in names})
    out = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert out.exit_code == 0, out.output
    header, row = out.stdout.splitlines()[:2]
    assert header.split()[:7] == ["id", "date", "name", "kind", "config", "key", "judge"]
    assert " N " in header and row.startswith(long_id + " ")
    figures = row.split("qwen2.5:7b", 1)[1]  # (a long name is cut by design; figures never)
    assert figures.split() == ["4"] + ["94.8"] * 16


def test_an_index_that_fails_itself_is_exit_1_with_its_cause_not_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB out of memory is no bad input (exit 2): a failure (1), saying what ran out."""
    from ragtui.core import store as store_module

    monkeypatch.setattr(store_module, "MEMORY_LIMIT", "1MB")
    for k in range(3):
        make_run(tmp_path, f"r-{k}", n=2)
    result = CliRunner().invoke(cli, ["runs", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "aborted" not in result.output
    assert "DuckDB ran out of its 1MB memory limit" in result.stderr
    assert "RAGTUI_DUCKDB_MEMORY" in result.stderr


def test_show_of_a_run_that_names_no_judge_says_unknown_not_none(tmp_path: Path) -> None:
    """An imported RAGAS table names no judge: `show` printed 'judge None (None) prompt None'."""
    source = Path(__file__).resolve().parents[1] / "data" / "ragas" / "ragas_v04_refunds.csv"
    (tmp_path / source.name).write_bytes(source.read_bytes())
    listed = CliRunner().invoke(cli, ["runs", str(tmp_path), "--json"])
    (run,) = json.loads(listed.stdout)["runs"]
    assert run["judge"] is None  # the file's own: no judge named
    result = CliRunner().invoke(cli, ["show", run["id"], "--path", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "judge unknown prompt unknown" in result.stdout
    assert "None" not in result.stdout


def test_a_bad_duckdb_memory_setting_names_the_variable(tmp_path: Path) -> None:
    """It said 'Parser Error: Memory must have a number (e.g. 1GB)': no word of which setting."""
    make_run(tmp_path, "base-1")
    bad = CliRunner().invoke(cli, ["runs", str(tmp_path)], env={"RAGTUI_DUCKDB_MEMORY": "lots"})
    assert bad.exit_code == 2
    assert bad.stderr.strip() == (
        "Error: RAGTUI_DUCKDB_MEMORY: expected a size such as 512MB or 1GB, found 'lots'"
    )
    good = CliRunner().invoke(cli, ["runs", str(tmp_path)], env={"RAGTUI_DUCKDB_MEMORY": "512 MiB"})
    assert good.exit_code == 0 and "base-1" in good.stdout
