"""A noise check of some metrics, then one of more (review): since re-judges of some metrics
count as the same judge, the first check's reruns join the group of the second, and they graded
faithfulness only: answer_relevance had no case in common over the group ("no noise floor")."""

from __future__ import annotations

import json
from pathlib import Path

from ragtui.core.runfile import read_run_file
from tests.commands.test_judge_cli import adhoc, invoke, make_runs, server  # noqa: F401


def test_a_metric_reads_the_reruns_that_graded_it(tmp_path: Path, server) -> None:  # noqa: F811
    runs = make_runs(tmp_path / "runs", n=6)
    server.when("1 to 5", "4")
    two = ("-m", "faithfulness", "-m", "answer_relevance")
    assert invoke("rejudge", "base", str(runs), *adhoc(server), *two).exit_code == 0
    (path,) = runs.glob("base--rejudge-*.ragtui.jsonl")
    rejudged = read_run_file(path).run.id
    first = invoke("noise", rejudged, str(runs), *adhoc(server), "-k", "2", "-m", "faithfulness")
    assert first.exit_code == 0, first.output
    second = invoke("noise", rejudged, str(runs), *adhoc(server), "-k", "2", *two, "--json")
    assert second.exit_code == 0, second.output
    data = json.loads(second.stdout)
    noise = {m["metric"]: m for m in data["noise"]}
    group = set(data["reruns"])
    # faithfulness: every rerun of the group graded it; answer_relevance: those that did
    assert set(noise["faithfulness"]["runs"]) == group
    graded = {r for r in group if "answer_relevance" in read_run_of(runs, r)}
    assert set(noise["answer_relevance"]["runs"]) == graded and len(graded) >= 3
    assert noise["answer_relevance"]["n"] == 6  # every case, by hand: the judge answered all
    assert len(noise["answer_relevance"]["means"]) == len(graded)


def read_run_of(folder: Path, run_id: str) -> set[str]:
    """The metrics a run's file scores (read with plain json)."""
    for path in folder.glob("*.ragtui.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        if json.loads(lines[0])["id"] == run_id:
            return {m for line in lines[1:] for m in json.loads(line).get("scores", {})}
    return set()
