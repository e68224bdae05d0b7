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


QUESTIONS = ["Who approves refunds?", "Which currencies?", "How fast?", "Gift cards?", "SSO?"]


def _table(tmp_path: Path, name: str, metric: str, values: list) -> Path:
    """A split table as mlflow.evaluate writes it for one make_genai_metric judge."""
    path = tmp_path / name
    rows = [[q, "an answer", v, "why"] for q, v in zip(QUESTIONS, values, strict=True)]
    columns = ["inputs", "outputs", f"{metric}/score", f"{metric}/justification"]
    path.write_text(json.dumps({"columns": columns, "data": rows}))
    return path


def test_a_custom_judge_on_a_declared_scale(tmp_path: Path) -> None:
    # a make_genai_metric judge with a 1-10 rubric, declared: (v - 1) / 9, never MLflow's 1-5
    path = _table(tmp_path, "t.json", "helpfulness/v1", [8, 9, 3, 10, 5])
    [run] = load_file(path, scales={"helpfulness/v1": (1, 10)})
    values = [c.scores["helpfulness/v1"].value for c in run.cases]
    assert values == pytest.approx([7 / 9, 8 / 9, 2 / 9, 1.0, 4 / 9])
    assert not any(c.errors for c in run.cases)
    # a pass/fail judge that passed every row, declared 0:1: all 1, not all 0
    path = _table(tmp_path, "b.json", "grounded/v1", [1, 1, 1, 1, 1])
    [run] = load_file(path, scales={"grounded/v1": (0, 1)})
    assert [c.scores["grounded/v1"].value for c in run.cases] == [1.0] * 5


def test_a_custom_judge_without_a_declared_scale_is_refused(tmp_path: Path) -> None:
    path = _table(tmp_path, "b.json", "grounded/v1", [1, 1, 0, 1, 1])
    notices: list[str] = []
    [run] = load_file(path, notices=notices)
    assert all(not c.scores for c in run.cases)
    for case, raw in zip(run.cases, [1, 1, 0, 1, 1], strict=True):
        reason = case.errors["grounded/v1"]
        assert "make_genai_metric" in reason and "--scale grounded/v1=LOW:HIGH" in reason
        assert case.metadata["raw_score:grounded/v1"] == raw
    assert any("grounded/v1: 5 value(s) not scored" in n for n in notices), notices


def test_a_builtin_judge_stays_on_mlflows_scale(tmp_path: Path) -> None:
    notices: list[str] = []
    [run] = load_file(TABLE, notices=notices, scales={"faithfulness/v1": (0, 10)})
    scores = [c.scores["faithfulness/v1"] for c in run.cases if "faithfulness/v1" in c.scores]
    assert {s.scale for s in scores} == {(1.0, 5.0)}
    assert any("MLflow defines faithfulness/v1 on 1..5" in n for n in notices), notices


def test_a_metric_without_a_version(tmp_path: Path) -> None:
    # make_metric(name="keyword_hit") with no version: MLflow writes `keyword_hit/score`
    path = tmp_path / "t.json"
    rows = [[q, "an answer", v] for q, v in zip(QUESTIONS, [1.0, 0.0, 1.0, 0.0, 0.5], strict=True)]
    path.write_text(
        json.dumps({"columns": ["inputs", "outputs", "keyword_hit/score"], "data": rows})
    )
    assert detect(path).name == "mlflow"
    [run] = load_file(path)
    values = [c.scores["keyword_hit"].value for c in run.cases]
    assert values == [1.0, 0.0, 1.0, 0.0, 0.5] and sum(values) / 5 == 0.5
    # beside versioned metrics too
    data = json.loads(TABLE.read_text())
    data["columns"].append("keyword_hit/score")
    for row, value in zip(data["data"], [1.0, 0.0, 1.0, 0.0, 0.5], strict=True):
        row.append(value)
    path.write_text(json.dumps(data))
    [run] = load_file(path)
    assert [c.scores["keyword_hit"].value for c in run.cases] == values
