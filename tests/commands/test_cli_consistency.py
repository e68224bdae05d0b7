"""One CLI: every command names its folder with -p/--path, types and shows points, refuses an
unknown metric with exit 2 and the list of known ones, and every --json carries the folder's
notices and skipped files (also on stderr). A non-result file is mentioned once, briefly."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragtui.cli import cli
from tests.core.run_writer import RunWriter

REPO = Path(__file__).resolve().parents[2]
N = 40
IDS = [f"case-{i:03d}" for i in range(N)]
BAD_RUN = '{"ragtui_run": 2}\n'


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "runs"
    root.mkdir()
    w = RunWriter(root)
    rng = np.random.default_rng(4)
    a = rng.uniform(0.3, 0.9, N)
    rel = np.round(rng.uniform(0, 1, N) * 4) / 4

    def scores(faith: np.ndarray) -> dict[str, dict[str, float]]:
        return {
            "faithfulness": dict(zip(IDS, np.clip(faith, 0, 1).tolist(), strict=True)),
            "answer_relevance": dict(zip(IDS, rel.tolist(), strict=True)),
        }

    w.write("baseline-0", scores(a), config={"prompt": "v1", "seed": 0})
    w.write("baseline-1", scores(a + rng.normal(0, 0.02, N)), config={"prompt": "v1", "seed": 1})
    w.write("strict-v2", scores(a + 0.2), config={"prompt": "v2"})
    w.write("small-gen", scores(a - 0.3), config={"prompt": "v1", "generator": "tiny"})
    (root / "broken.ragtui.jsonl").write_text(BAD_RUN, encoding="utf-8")
    return root


def _skipped_line(folder: Path) -> str:
    return f"{folder / 'broken.ragtui.jsonl'}:1: field 'ragtui_run': expected format version 1"


# ---------------------------------------------------------------- -p/--path everywhere


@pytest.mark.parametrize(
    "args",
    [
        ("runs",),
        ("show", "baseline-0"),
        ("compare", "baseline-0", "strict-v2"),
        ("compare", "baseline-0", "strict-v2", "small-gen"),
        ("compare-many", "baseline-0", "strict-v2"),
        ("gate", "baseline-0", "strict-v2", "-m", "faithfulness"),
        ("report", "baseline-0", "strict-v2"),
        ("diagnose", "baseline-0", "small-gen"),
        ("history", "small-gen"),
    ],
)
def test_every_command_takes_the_folder_as_dash_p(folder: Path, args: tuple[str, ...]) -> None:
    short = run(*args, "-p", str(folder))
    assert short.exit_code == 0, short.output
    long = run(*args, "--path", str(folder))
    assert long.stdout == short.stdout
    assert _skipped_line(folder) in short.stderr  # the bad file is named, the rest listed


def test_judge_commands_take_dash_p_too(folder: Path) -> None:
    for command in ("rejudge", "noise", "judges"):
        helped = run(command, "--help")
        assert "-p, --path DIRECTORY" in helped.stdout, command
    judges = run("judges", "-p", str(folder))
    assert judges.exit_code == 1 and "no judges configured" in judges.stderr


def test_a_trailing_path_still_works_and_two_folders_are_refused(folder: Path, tmp_path) -> None:
    positional = run("compare", "baseline-0", "strict-v2", str(folder))
    assert positional.stdout == run("compare", "baseline-0", "strict-v2", "-p", str(folder)).stdout
    both = run("diagnose", "baseline-0", "small-gen", str(folder), "-p", str(tmp_path))
    assert both.exit_code == 2 and "two folders given" in both.output


# ---------------------------------------------------------------- --json carries the folder


@pytest.mark.parametrize(
    "args",
    [
        ("runs",),
        ("show", "baseline-0"),
        ("show", "baseline-0", "case-001"),
        ("compare", "baseline-0", "strict-v2"),
        ("compare", "baseline-0", "strict-v2", "small-gen"),
        ("gate", "baseline-0", "strict-v2", "-m", "faithfulness"),
        ("diagnose", "baseline-0", "small-gen"),
        ("diagnose", "baseline-0", "small-gen", "--case", "case-001"),
        ("history", "small-gen"),
    ],
)
def test_json_carries_skipped_files_and_notices(folder: Path, args: tuple[str, ...]) -> None:
    result = run(*args, "-p", str(folder), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["folder"] == str(folder) and data["notices"] == []
    assert data["skipped"] == [_skipped_line(folder) + ", found int 2"]
    assert f"skipped: {data['skipped'][0]}" in result.stderr  # and said on stderr too
    assert "NaN" not in result.stdout and "Infinity" not in result.stdout


# ---------------------------------------------------------------- points and known metrics


def test_options_are_typed_in_points(folder: Path) -> None:
    p = ("-p", str(folder), "--json")
    diag = json.loads(
        run("diagnose", "baseline-0", "small-gen", *p, "--min-drop", "20", "--margin", "3").stdout
    )
    assert diag["min_drop"] == pytest.approx(0.2)
    assert all(m["verdict"] for m in diag["metrics"])
    history = json.loads(run("history", "small-gen", *p, "--pass", "faithfulness=90").stdout)
    faith = [c for c in history["cases"] if c["metric"] == "faithfulness"]
    assert {c["threshold"] for c in faith} == {0.9}
    several = json.loads(
        run("compare", "baseline-0", "strict-v2", "small-gen", *p, "--margin", "3").stdout
    )
    assert several["margin"] == pytest.approx(0.03)
    for bad in (
        ("diagnose", "baseline-0", "small-gen", "--min-drop", "0"),
        ("diagnose", "baseline-0", "small-gen", "--margin", "0.05x"),
        ("history", "small-gen", "--pass", "faithfulness=150"),
    ):
        assert run(*bad, "-p", str(folder)).exit_code == 2, bad


KNOWN = "answer_relevance, faithfulness"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("compare", "baseline-0", "strict-v2", "-m", "faith"), f"(they have: {KNOWN})"),
        (("compare", "baseline-0", "strict-v2", "small-gen", "-m", "faith"), KNOWN),
        (("gate", "baseline-0", "strict-v2", "--min", "faith=80"), f"(they have: {KNOWN})"),
        (("report", "baseline-0", "strict-v2", "-m", "faith"), f"(they have: {KNOWN})"),
        (("diagnose", "baseline-0", "small-gen", "-m", "faith"), f"(they share: {KNOWN})"),
        (("diagnose", "baseline-0", "small-gen", "--pass", "faith=50"), f"(it has: {KNOWN})"),
        (("history", "small-gen", "-m", "faith"), f"(it has: {KNOWN})"),
        (("history", "small-gen", "--pass", "faith=50"), f"(it has: {KNOWN})"),
    ],
)
def test_unknown_metrics_exit_2_with_the_known_ones(
    folder: Path, args: tuple[str, ...], says: str
) -> None:
    result = run(*args, "-p", str(folder))
    assert result.exit_code == 2, result.output
    assert "'faith'" in result.stderr and says in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- readable tables


def test_piped_compare_table_keeps_ids_and_names_whole(folder: Path) -> None:
    result = run("compare", "baseline-0", "strict-v2", "-p", str(folder))
    lines = result.stdout.splitlines()
    assert "A baseline-0 (baseline-0), mean of 2 reruns  vs  B strict-v2 (strict-v2)" in lines[0]
    header = lines[1].split()
    assert header[:3] == ["metric", "N", "A"] and header[-1] == "verdict"
    rows = {line.split()[0]: line for line in lines[2:4]}
    assert set(rows) == {"answer_relevance", "faithfulness"}
    assert rows["faithfulness"].rstrip().endswith("improved")
    assert "…" not in result.stdout


def _in_a_terminal(args: list[str], columns: int) -> str:
    """The command's output as a terminal `columns` wide shows it."""
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragtui", *args], stdout=child, stderr=child, env=env, cwd=REPO
    )
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_narrow_terminal_gets_one_block_per_metric(folder: Path) -> None:
    out = _in_a_terminal(["compare", "baseline-0", "strict-v2", "-p", str(folder)], 70)
    lines = [line.rstrip() for line in out.splitlines()]
    title = next(i for i, line in enumerate(lines) if line.startswith("A baseline-0"))
    block = lines[title + 1 : title + 7]  # two metrics, three lines each
    assert block[0] == "answer_relevance: too few cases" and block[3] == "faithfulness: improved"
    assert block[4].startswith("  A ") and " → B " in block[4] and "95% CI [+" in block[4]
    assert all(len(line) <= 70 for line in block), block
    assert "…" not in out


# ---------------------------------------------------------------- short notices, once


def test_a_non_result_file_is_mentioned_once_in_one_short_line(tmp_path: Path) -> None:
    RunWriter(tmp_path).write("good", {"f": {"x": 1.0, "y": 0.5}})
    other = tmp_path / "budget.csv"
    other.write_text("month,amount\njan,12\n", encoding="utf-8")
    first = run("runs", "-p", str(tmp_path))
    assert first.exit_code == 0 and "good" in first.stdout
    [line] = [x for x in first.stderr.splitlines() if "budget.csv" in x]
    assert line.startswith("notice: ") and "not a result file" in line and len(line) < 200
    again = run("runs", "-p", str(tmp_path), "--json")
    assert "budget.csv" not in again.stderr and json.loads(again.stdout)["notices"] == []
    other.write_text("month,amount\nfeb,13\n", encoding="utf-8")  # a new file: said again
    assert "budget.csv" in run("runs", "-p", str(tmp_path)).stderr


def test_runs_lists_kind_and_n_as_the_runs_screen_does(tmp_path: Path) -> None:
    """The demo's aggregate-only run: kind "summary" and N "—" on both (the CLI said N 0,
    a count of cases the run never had); parse failures marked `!n` on both."""
    import shutil

    folder = tmp_path / "runs"
    shutil.copytree(REPO / "sample_runs", folder)
    result = run("runs", str(folder))
    assert result.exit_code == 0, result.output
    import re

    header, *rows = result.stdout.splitlines()[:16]
    names = re.split(r"\s{2,}", header.strip())  # columns are two spaces or more apart
    table = {}
    for row in rows:
        cells = dict(zip(names, re.split(r"\s{2,}", row.strip()), strict=True))
        table[cells["id"]] = cells
    assert (table["nightly-ci-2026-11-30"]["kind"], table["nightly-ci-2026-11-30"]["N"]) == (
        "summary",
        "—",
    )
    assert (table["baseline-2026-11-02"]["kind"], table["baseline-2026-11-02"]["N"]) == (
        "eval",
        "48",
    )
    # the 3 parse failures counted as 0 in this mean are marked, as on the Runs screen
    assert table["strict-topk5-2026-11-26"]["ctx rec"] == "98.9 !3 (3 err)"
