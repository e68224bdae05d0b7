from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from ragtui.cli import cli
from ragtui.services.workspace import open_folder

DATA = Path(__file__).parent / "data"


def test_opening_a_folder_of_foreign_files_imports_them_once(tmp_path: Path) -> None:
    shutil.copy(DATA / "ragas" / "ragas_v04_refunds.csv", tmp_path)
    with open_folder(tmp_path) as store:
        runs = store.runs().to_pylist()
        assert [r["source_format"] for r in runs] == ["ragas"]
        assert runs[0]["n_cases"] == 5
        assert any("imported 1 run(s) from foreign result files" in n for n in store.notices)
    with open_folder(tmp_path) as store:  # the second start converts nothing again
        assert store.runs().num_rows == 1
        assert not any("imported" in n for n in store.notices)
    assert len(list((tmp_path / "imported").glob("*.ragtui.jsonl"))) == 1


def test_runs_command_on_foreign_folder_lists_the_import(tmp_path: Path) -> None:
    shutil.copy(DATA / "ragas" / "ragas_v04_refunds.csv", tmp_path)
    result = CliRunner().invoke(cli, ["runs", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    import json

    assert json.loads(result.stdout)["runs"][0]["n_cases"] == 5


def test_the_notice_counts_runs_and_files_apart(tmp_path: Path) -> None:
    """Two foreign files holding 2 + 4 runs (an Inspect log of two tasks, a promptfoo export
    of four providers): six runs written, each file named with its own count."""
    shutil.copy(DATA / "inspect" / "refunds.json", tmp_path)
    shutil.copy(DATA / "promptfoo" / "promptfoo_v3_refunds.json", tmp_path)
    with open_folder(tmp_path) as store:
        assert store.runs().num_rows == 6
        notices = store.notices
    assert f"imported 6 run(s) from foreign result files into {tmp_path / 'imported'}" in notices
    per_file = sorted(n.split(": ")[-1] for n in notices if n.startswith(f"imported {tmp_path}/"))
    assert [n.split(",")[0] for n in per_file] == ["2 run(s)", "4 run(s)"]
