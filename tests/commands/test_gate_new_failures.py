"""`ragtui gate BASE CANDIDATE --no-new-failures`: a case that passed in every baseline rerun and
fails in the candidate fails the gate (exit 1) and is listed, even when the means pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from tests.core.run_writer import RunWriter

N = 200
IDS = [f"c{i:03d}" for i in range(N)]


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def folder(tmp_path: Path) -> str:
    """Two reruns of the base (c199 flaky between them), candidates that keep the means."""
    w = RunWriter(tmp_path)
    base = dict.fromkeys(IDS, 1.0)
    w.write("base-0", {"faithfulness": base}, config={"prompt": "v1", "seed": 0})
    w.write("base-1", {"faithfulness": base | {"c199": 0.0}}, config={"prompt": "v1", "seed": 1})
    # c000 held in both reruns and fails now: newly broken; c199 was already flaky
    w.write(
        "broke",
        {"faithfulness": base | {"c000": 0.0, "c199": 0.0}},
        config={"prompt": "v2"},
    )
    # c005 falls to 0.4: a fail at the default threshold (50), a pass at --pass 40
    w.write("partial", {"faithfulness": base | {"c005": 0.4}}, config={"prompt": "v3"})
    w.write("same", {"faithfulness": base | {"c199": 0.0}}, config={"prompt": "v4"})
    return str(tmp_path)


def test_the_means_alone_pass(folder: str) -> None:
    result = run("gate", "base-0", "broke", folder)
    assert result.exit_code == 0, result.output
    assert "gate: passed" in result.stdout


def test_a_newly_broken_case_fails_and_is_listed(folder: str) -> None:
    result = run("gate", "base-0", "broke", "-p", folder, "--no-new-failures")
    assert result.exit_code == 1, result.output
    assert (
        "FAIL faithfulness: 1 case passed in every baseline run and fails in the candidate"
        in result.stdout
    )
    assert (
        "c000 faithfulness: passed in every baseline run (100, 100), fails in the candidate "
        "(0; pass ≥ 50)" in result.stdout
    )
    assert "c199" not in result.stdout  # flaky in the baseline: not new
    assert "gate: failed (1 reason)" in result.stdout


def test_no_new_failure_passes(folder: str) -> None:
    result = run("gate", "base-0", "same", folder, "--no-new-failures")
    assert result.exit_code == 0, result.output
    assert (
        "ok   every metric: no case that passed in every baseline run fails in the candidate"
        in result.stdout
    )


def test_the_pass_threshold_is_in_points(folder: str) -> None:
    assert run("gate", "base-0", "partial", folder, "--no-new-failures").exit_code == 1
    lenient = run(
        "gate", "base-0", "partial", folder, "--no-new-failures", "--pass", "faithfulness=40"
    )
    assert lenient.exit_code == 0, lenient.output
    typo = run("gate", "base-0", "partial", folder, "--no-new-failures", "--pass", "faith=40")
    assert typo.exit_code == 2
    assert "metric 'faith' is in neither run (they have: faithfulness)" in typo.output
    bad = run("gate", "base-0", "partial", folder, "--pass", "faithfulness=0.4x")
    assert bad.exit_code == 2 and "METRIC=POINTS" in bad.output


def test_gate_json_lists_the_new_failures(folder: str) -> None:
    result = run("gate", "base-0", "broke", folder, "--no-new-failures", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["outcome"], data["exit_code"]) == ("failed", 1)
    assert [c["case_id"] for c in data["new_failures"]] == ["c000"]
    codes = {(c["metric"], c["code"]) for c in data["checks"]}
    assert ("faithfulness", "new_failures") in codes and ("faithfulness", "non_inferior") in codes
    assert data["folder"] == folder and data["skipped"] == [] and data["notices"] == []
    plain = json.loads(run("gate", "base-0", "broke", folder, "--json").stdout)
    assert plain["new_failures"] is None and plain["exit_code"] == 0
