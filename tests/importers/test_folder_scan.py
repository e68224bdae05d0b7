"""Opening a project folder finds the results known tools keep in their dot-folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ragtui.importers.folder import foreign_files, import_foreign_files

DATA = Path(__file__).resolve().parents[1] / "data"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    dot = project / ".deepeval"
    dot.mkdir(parents=True)
    shutil.copy(DATA / "deepeval" / "latest_test_run.json", dot / ".latest_test_run.json")
    # what else DeepEval keeps there: a cache, telemetry, the key file; none are results
    (dot / ".deepeval-cache.json").write_text(json.dumps({"test_cases_lookup_map": {}}))
    (dot / ".deepeval_telemetry.txt").write_text("DEEPEVAL_ID=abc\n")
    (dot / ".deepeval").write_text('{"API_KEY": "not-a-real-key"}')
    (project / ".venv").mkdir()
    (project / ".venv" / "results.csv").write_text("question,answer,f\nq,a,0.5\n")
    return project


def test_deepeval_latest_run_in_its_dot_folder_is_found(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert foreign_files(project) == [project / ".deepeval" / ".latest_test_run.json"]


def test_opening_the_project_imports_the_deepeval_run(tmp_path: Path) -> None:
    project = _project(tmp_path)
    written, notices = import_foreign_files(project)
    [native] = written
    lines = native.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["source"]["format"] == "deepeval"
    assert len(lines) - 1 == 4  # the run's 4 test cases
    assert any("imported" in n and "(deepeval): 1 run(s), 4 cases" in n for n in notices)
    assert not any("API_KEY" in n or "cache" in n for n in notices)
    assert import_foreign_files(project)[0] == []  # once only
