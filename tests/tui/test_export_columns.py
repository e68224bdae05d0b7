"""Exports keep every column apart: a metric named like a built-in column (question, n,
judge, errors) overwrote it, or wrote a Parquet file with two columns of one name."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from ragtui.core.export import write_table
from ragtui.core.store import Store
from ragtui.format.text import metric_columns
from ragtui.tui.widgets.case_grid import export_cases
from ragtui.tui.widgets.runs_model import load_model
from tests.core.run_writer import RunWriter


def test_metric_columns_never_take_a_name_already_there() -> None:
    named = metric_columns(["question", "faith", "n", "n (metric)"], ["case_id", "n", "question"])
    assert named == {
        "question": "question (metric)",
        "faith": "faith",
        "n": "n (metric 2)",  # "n (metric)" is another metric's own name
        "n (metric)": "n (metric)",
    }
    # a name whose " error" column would clash moves too
    assert metric_columns(["x"], ["x error"], (" error",)) == {"x": "x (metric)"}


def test_runs_and_cases_exports_keep_metrics_named_like_their_columns(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path)
    cases = ["c1", "c2"]
    writer.write(
        "r1",
        {"question": dict.fromkeys(cases, 0.25), "n": {"c1": 0.5, "c2": "judge failed"},
         "judge": dict.fromkeys(cases, 1.0), "errors": dict.fromkeys(cases, 0.75)},
    )  # fmt: skip
    with Store.open(tmp_path) as store:
        runs = load_model(store).export_table(load_model(store).lines)
        table = export_cases(store, "r1", store.case_values("r1")[0].column(0))
    row = runs.to_pylist()[0]
    assert row["judge"] == "qwen2.5:7b" and row["judge (metric)"] == 1.0
    assert row["errors"] == 1 and row["errors (metric)"] == 0.75
    assert len(set(table.column_names)) == len(table.column_names)
    first = table.to_pylist()[0]
    assert first["question"] == "question c1?" and first["question (metric)"] == 0.25
    assert first["n"] == 1 and first["n (metric)"] == 0.5
    assert table.to_pylist()[1]["n (metric) error"] == "judge failed"
    out = write_table(table, tmp_path / "cases.parquet", "parquet")
    assert pq.read_table(out).column_names == table.column_names  # a reader opens it


def test_a_metric_named_like_another_s_error_column_moves_aside() -> None:
    named = metric_columns(["x", "x error"], ["case_id"], (" error",))
    columns = [c for m in named.values() for c in (m, f"{m} error")]
    assert named["x"] == "x" and len(set(columns)) == 4
