"""MLflow eval_results_table.json (made by mlflow.evaluate itself): 1-5 judge metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.importers import detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "mlflow"
TABLE = DATA / "eval_results_table.json"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def test_detected_as_mlflow() -> None:
    assert detect(TABLE).name == "mlflow"


@pytest.mark.parametrize("metric", ["faithfulness/v1", "answer_relevance/v1"])
def test_means_equal_what_mlflow_computed(metric: str) -> None:
    [run] = load_file(TABLE)
    scores = [c.scores[metric] for c in run.cases if metric in c.scores]
    raw_mean = sum(s.raw for s in scores) / len(scores)
    assert raw_mean == pytest.approx(EXPECTED[f"{metric}/mean"])
    # normalised on MLflow's 1-5 judge scale: (mean - 1) / 4
    mean = sum(s.value for s in scores) / len(scores)
    assert mean == pytest.approx((EXPECTED[f"{metric}/mean"] - 1) / 4)
    assert {s.scale for s in scores} == {(1.0, 5.0)}


def test_cases_reasons_and_the_unscored_row() -> None:
    [run] = load_file(TABLE)
    assert len(run.cases) == 5
    first = run.cases[0]
    assert first.question.startswith("Who approves refunds")
    assert first.answer.startswith("A manager approves them")
    assert first.reference == "A manager approves them as account credit."
    assert first.contexts[0].text.startswith("Refunds requested more than 30 days")
    assert (
        first.scores["faithfulness/v1"].reason == "80% of the output's words match (faithfulness)."
    )
    gift = run.cases[3]
    assert not gift.scores
    assert gift.errors["faithfulness/v1"].startswith("MLflow recorded no score: Failed to extract")
