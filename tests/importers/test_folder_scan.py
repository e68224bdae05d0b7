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


def test_the_live_watch_leaves_a_result_file_still_being_written_for_later(
    tmp_path: Path, monkeypatch
) -> None:
    """A RAGAS CSV seen by the watch with its first row written became a run of its own, and
    stayed beside the whole file's run as a fake rerun of its config. The watch now waits for
    a file changed a moment ago; an open (`ragtui runs` after the harness) takes it as it is."""
    import os
    import time

    from ragtui.config import Config
    from ragtui.core.store import Store
    from ragtui.services import workspace as workspaces
    from ragtui.services.workspace import Workspace, refresh_workspace

    # "a moment ago", made long: on a loaded machine the first row must not settle meanwhile
    monkeypatch.setattr(workspaces, "SETTLE_SECONDS", 60.0)

    rows = (DATA / "ragas" / "ragas_v04_refunds.csv").read_text(encoding="utf-8").splitlines()
    results = tmp_path / "results.csv"
    results.write_text("\n".join(rows[:2]) + "\n", encoding="utf-8")  # the header and a row
    with Store.open(tmp_path) as store:
        workspace = Workspace(folder=tmp_path, store=store, config=Config())
        first = refresh_workspace(workspace)
        assert first.waiting == [str(results)] and first.look_again is not None
        assert not (tmp_path / "imported").exists()  # nothing converted from the first row

        results.write_text("\n".join(rows) + "\n", encoding="utf-8")  # the harness is done
        past = time.time() - 600  # and the file held still since
        os.utime(results, (past, past))
        done = refresh_workspace(workspace)
        assert done.waiting == [] and done.look_again is None
        assert len(list((tmp_path / "imported").iterdir())) == 1
        assert len(store.cases(done.changed[0])) == len(rows) - 1  # every row, one run
