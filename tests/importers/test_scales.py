"""Scales are declared (by the tool or the user), never guessed from one file's values.

Expectations are hand-worked: (v - low) / (high - low) on the declared scale.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragtui.importers import ImportOptions, load_file
from ragtui.importers.scales import parse_scale

DATA = Path(__file__).resolve().parents[1] / "data"
REFUNDS_JSON = DATA / "inspect" / "refunds.json"

# two harness files rated on the same 0-10 scale: A's mean is 7.3, B never goes above 5
FILE_A = "question,answer,rating\n" + "".join(
    f"q{i},a{i},{v}\n" for i, v in enumerate([7, 8, 6, 9, 7, 7, 8, 6, 7, 8])
)
FILE_B = "question,answer,rating\n" + "".join(
    f"q{i},a{i},{v}\n" for i, v in enumerate([3, 4, 5, 2, 4, 3, 5, 4, 1, 0])
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _mean(run_file, metric: str) -> float:
    values = [c.scores[metric].value for c in run_file.cases if metric in c.scores]
    return sum(values) / len(values)


def test_two_0_to_10_files_with_a_declared_scale_are_comparable(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.csv", FILE_A)
    b = _write(tmp_path, "b.csv", FILE_B)
    options = ImportOptions(scales={"rating": (0.0, 10.0)})
    [run_a] = load_file(a, options=options)
    [run_b] = load_file(b, options=options)
    # (v - 0) / 10 for both: A 7.3/10, B 3.1/10; both say which scale they were read on
    assert _mean(run_a, "rating") == pytest.approx(0.73)
    assert _mean(run_b, "rating") == pytest.approx(0.31)
    assert {c.scores["rating"].scale for c in (*run_a.cases, *run_b.cases)} == {(0.0, 10.0)}
    assert [c.scores["rating"].raw for c in run_b.cases][:3] == ["3", "4", "5"]


def test_without_a_scale_values_above_one_are_errors_not_guesses(tmp_path: Path) -> None:
    b = _write(tmp_path, "b.csv", FILE_B)
    notices: list[str] = []
    [run_b] = load_file(b, notices=notices)
    # B never exceeds 5: once it was read as 1-5 and became comparable to A's 0-10 by accident
    assert all("rating" not in c.scores for c in run_b.cases)
    first = run_b.cases[0]
    assert first.errors["rating"] == (
        "scale unknown for rating (value 3; this file has values up to 5, outside [0, 1]): "
        "declare it with --scale rating=LOW:HIGH or [metrics.rating] scale in ragtui.toml"
    )
    assert first.metadata["raw_score:rating"] == "3"
    # the 1 and the 0 of this file are on the same unknown scale: not scores either
    assert "scale unknown" in run_b.cases[8].errors["rating"]
    assert "scale unknown" in run_b.cases[9].errors["rating"]
    assert any("rating: 10 value(s) not scored, scale unknown" in n for n in notices)


def test_config_scales_apply_and_command_line_scales_win(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.csv", FILE_A)
    [run] = load_file(a, scales={"rating": (0.0, 10.0)})  # as from ragtui.toml
    assert _mean(run, "rating") == pytest.approx(0.73)
    [run] = load_file(
        a, options=ImportOptions(scales={"rating": (5.0, 10.0)}), scales={"rating": (0.0, 10.0)}
    )
    # --scale rating=5:10: (7 - 5) / 5 = 0.4 for the first case
    assert run.cases[0].scores["rating"].value == pytest.approx(0.4)


def test_a_value_outside_the_declared_scale_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.csv", "question,answer,rating\nq1,a1,4\nq2,a2,6\n")
    [run] = load_file(path, options=ImportOptions(scales={"rating": (1.0, 5.0)}))
    assert run.cases[0].scores["rating"].value == pytest.approx(0.75)
    assert run.cases[1].errors["rating"] == "value 6 is outside declared scale 1..5 of rating"


def test_ragas_rubric_scores_map_one_to_five(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "rubric.csv",
        "user_input,response,domain_specific_rubrics,faithfulness\n"
        "q1,a1,1,0.5\nq2,a2,2,1\nq3,a3,4,0\nq4,a4,5,0.25\n",
    )
    [run] = load_file(path)
    rubric = [c.scores["domain_specific_rubrics"] for c in run.cases]
    # RAGAS defines rubric scores on 1-5: (1-1)/4, (2-1)/4, (4-1)/4, (5-1)/4
    assert [s.value for s in rubric] == [0.0, 0.25, 0.75, 1.0]
    assert {s.scale for s in rubric} == {(1.0, 5.0)}
    assert [s.raw for s in rubric] == [1, 2, 4, 5]
    # the same file where no value reaches 5 still reads 4 as 0.75, not as the top of the scale
    low = _write(
        tmp_path, "low.csv", "user_input,response,domain_specific_rubrics\nq1,a1,2\nq2,a2,4\n"
    )
    assert [c.scores["domain_specific_rubrics"].value for c in load_file(low)[0].cases] == [
        0.25,
        0.75,
    ]
    assert {c.scores["faithfulness"].scale for c in run.cases} == {(0.0, 1.0)}


def _inspect_with_values(tmp_path: Path, values: list[int]) -> Path:
    log = json.loads(REFUNDS_JSON.read_text())
    for sample, value in zip(log["samples"], values, strict=True):
        sample["scores"]["includes"]["value"] = value
    path = tmp_path / "counts.json"
    path.write_text(json.dumps(log))
    return path


def test_inspect_numbers_on_a_declared_scale_with_a_non_zero_minimum(tmp_path: Path) -> None:
    path = _inspect_with_values(tmp_path, [1, 2, 3, 4, 5, 3, 2, 1])
    runs = load_file(path, "inspect", ImportOptions(scales={"includes": (1.0, 5.0)}))
    by_raw = {c.scores["includes"].raw: c.scores["includes"].value for r in runs for c in r.cases}
    # (v - 1) / (5 - 1), never v / 5 and never this log's own min..max
    assert by_raw == {1: 0.0, 2: 0.25, 3: 0.5, 4: 0.75, 5: 1.0}
    assert {c.scores["includes"].scale for r in runs for c in r.cases} == {(1.0, 5.0)}


def test_inspect_numbers_without_a_scale_are_errors_with_raw_kept(tmp_path: Path) -> None:
    path = _inspect_with_values(tmp_path, [0, 1, 2, 3, 4, 5, 6, 7])
    notices: list[str] = []
    runs = load_file(path, "inspect", notices=notices)
    cases = [c for r in runs for c in r.cases]
    assert all("includes" not in c.scores for c in cases)
    assert all(c.errors["includes"].startswith("scale unknown for includes") for c in cases)
    assert sorted(c.metadata["raw_score:includes"] for c in cases) == list(range(8))
    # the other scorers of the same log are untouched
    assert all("model_graded_fact" in c.scores for c in cases)
    assert any("includes: 8 value(s) not scored" in n for n in notices), notices


@pytest.mark.parametrize(
    ("text", "expected"), [("1:5", (1.0, 5.0)), ("0:10", (0.0, 10.0)), ("-1:1", (-1.0, 1.0))]
)
def test_parse_scale(text: str, expected: tuple[float, float]) -> None:
    assert parse_scale(text) == expected


@pytest.mark.parametrize("text", ["5", "5:1", "1:1", "a:b", "1:inf", "nan:2"])
def test_parse_scale_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="LOW"):
        parse_scale(text)


def test_cli_scale_option(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.csv", FILE_A)
    into = tmp_path / "runs"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragtui",
            "import",
            str(a),
            "--scale",
            "rating=0:10",
            "--into",
            into,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "rating read on declared scale 0..10" in result.stderr
    [native] = into.glob("*.ragtui.jsonl")
    first_case = json.loads(native.read_text().splitlines()[1])
    assert first_case["scores"]["rating"] == {"value": 0.7, "raw": "7", "scale": [0.0, 10.0]}
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragtui",
            "import",
            str(a),
            "--scale",
            "rating=10:0",
            "--into",
            into,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "LOW < HIGH" in bad.stderr


def test_a_scale_for_a_metric_the_file_does_not_have_is_said(tmp_path: Path) -> None:
    """`--scale ratng=0:10` (a typo): the rating is still refused for its unknown scale, and
    the notice names the option that did nothing and the file's metrics."""
    from click.testing import CliRunner

    from ragtui.cli import cli

    a = _write(tmp_path, "a.csv", FILE_A)
    into = tmp_path / "runs"
    args = ["import", str(a), "--scale", "ratng=0:10", "--scale", "rating=0:10", "--into"]
    result = CliRunner().invoke(cli, [*args, str(into)])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "--scale" in line]
    assert said == [
        f"notice: {a}: --scale ratng: no metric of that name in this file (its metrics: "
        "rating); it did nothing here"
    ]
