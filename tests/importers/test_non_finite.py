"""NaN and Infinity as Python's json writes them into result files (allow_nan is its default):
a real file with one outside its scores imports; scores that are NaN are failed metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner

from ragtui.cli import cli

DATA = Path(__file__).resolve().parents[1] / "data"
POPULARITY = DATA / "inspect" / "inspect_v0.3.95_match_popularity.json"


def _strict(line: str) -> dict:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in a run file")

    return json.loads(line, parse_constant=refuse)


def _imported(tmp_path: Path, source: Path) -> list[dict]:
    into = tmp_path / "runs"
    result = CliRunner().invoke(cli, ["import", str(source), "--into", str(into)])
    assert result.exit_code == 0, result.output
    [written] = into.glob("*.ragtui.jsonl")
    return [_strict(line) for line in written.read_text(encoding="utf-8").splitlines()]


def test_an_inspect_log_with_nan_stderr_metadata_and_score_imports(tmp_path: Path) -> None:
    """It was 'not imported: cannot write into runs (…ragtui.jsonl:1: expected one JSON object
    per line …)': the file was blamed on the output folder."""
    log = json.loads(POPULARITY.read_text(encoding="utf-8"))
    [scorer] = log["results"]["scores"]
    scorer["metrics"]["stderr"]["value"] = math.nan  # stated, e.g. a stderr of one sample
    log["samples"][0]["metadata"]["weight"] = math.inf
    log["samples"][2]["scores"]["match"]["value"] = math.nan
    source = tmp_path / "popularity.json"
    source.write_text(json.dumps(log), encoding="utf-8")  # NaN/Infinity, as Python writes
    header, *cases = _imported(tmp_path, source)
    stated = {f["statistic"]: f for f in header["stated"]}
    assert stated["accuracy"]["value"] == scorer["metrics"]["accuracy"]["value"]
    assert stated["stderr"].get("value") is None and stated["stderr"]["raw"] == "NaN"
    assert cases[0]["metadata"]["weight"] == "Infinity"
    grades = {"C": 1.0, "I": 0.0}  # Inspect's letter grades
    expected = [grades[s["scores"]["match"]["value"]] for s in log["samples"][:2]]
    assert [c["scores"]["match"]["value"] for c in cases[:2]] == expected
    assert "match" not in cases[2].get("scores", {}) and "match" in cases[2]["errors"]


def test_a_deepeval_run_with_a_nan_hyperparameter_imports(tmp_path: Path) -> None:
    run = json.loads((DATA / "deepeval" / "latest_test_run.json").read_text(encoding="utf-8"))
    run["testRunData"]["hyperparameters"]["temperature"] = math.nan
    source = tmp_path / "latest_test_run.json"
    source.write_text(json.dumps(run), encoding="utf-8")
    header, *cases = _imported(tmp_path, source)
    assert header["config"]["temperature"] == "NaN"
    assert len(cases) == len(run["testRunData"]["testCases"])


def test_a_harness_jsonl_with_an_infinite_field_imports(tmp_path: Path) -> None:
    lines = (DATA / "generic" / "harness.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    records[1]["cost"] = -math.inf
    source = tmp_path / "harness.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    _header, *cases = _imported(tmp_path, source)
    assert len(cases) == 3 and cases[1]["metadata"]["cost"] == "-Infinity"
    faith = [r["faithfulness"] for r in records if r["faithfulness"] is not None]
    got = [
        c["scores"]["faithfulness"]["value"] for c in cases if "faithfulness" in c.get("scores", {})
    ]
    assert got == faith
