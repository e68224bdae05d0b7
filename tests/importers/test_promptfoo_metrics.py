"""promptfoo: assertions sharing one `metric` are one metric, read as promptfoo's own figure
(older versions wrote the sum of its assertions' scores: sum / count); a metric's scale is one
for the whole file, said once."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from ragtui.importers import load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "promptfoo"
V2 = DATA / "promptfoo_v2_refunds.json"
V3 = DATA / "promptfoo_v3_refunds.json"


def _one_metric(result: dict, figure) -> list[float]:
    """Both assertions of a result graded under metric `quality`, namedScores as `figure` of
    their scores; the component scores."""
    grading = result.get("gradingResult") or {}
    parts = grading.get("componentResults") or []
    for c in parts:
        c["assertion"]["metric"] = "quality"
    scores = [c["score"] for c in parts]
    named = {"quality": figure(scores)} if scores else {}
    result["namedScores"] = named
    if grading:
        grading["namedScores"] = named
    return scores


def _quality(run_files) -> list[tuple[float, float | None, bool]]:
    return [
        (c.scores["quality"].value if "quality" in c.scores else None, "quality" in c.errors)
        for r in run_files
        for c in r.cases
    ]


def test_v2_summed_named_scores_are_divided_by_their_count(tmp_path: Path) -> None:
    # promptfoo 0.43 wrote namedScores.quality = the sum of the two assertions' scores
    data = json.loads(V2.read_text())
    parts = [_one_metric(r, sum) for r in data["results"]["results"]]
    assert any(sum(p) == 2 for p in parts)  # a sum no [0, 1] score can be
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    notices: list[str] = []
    run_files = load_file(path, notices=notices)
    assert all(set(c.scores) | set(c.errors) <= {"quality"} for r in run_files for c in r.cases)
    expected = []
    for result, scores in zip(data["results"]["results"], parts, strict=True):
        grading = result.get("gradingResult") or {}
        reasons = [c.get("reason") or "" for c in grading.get("componentResults") or []]
        failed = any("malformed response" in x for x in reasons)  # the grader gave no grade
        if scores and not failed:
            expected.append(
                (result["provider"]["id"], result["vars"]["query"], statistics.fmean(scores))
            )
    got = [
        (r.run.config["provider"], c.question, c.scores["quality"].value)
        for r in run_files
        for c in r.cases
        if "quality" in c.scores
    ]
    assert sorted(got) == sorted(expected) and any(v == 0.5 for *_, v in got)
    assert not any("scale unknown" in n for n in notices), notices


def test_v3_weighted_named_scores_are_read_as_they_are(tmp_path: Path) -> None:
    data = json.loads(V3.read_text())
    for result in data["results"]["results"]:
        _one_metric(result, statistics.fmean)
        if result.get("gradingResult"):
            result["gradingResult"]["namedScoreWeights"] = {"quality": 2}
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    run_files = load_file(path)
    assert {m for r in run_files for c in r.cases for m in c.scores} == {"quality"}
    values = sorted(v for v, _ in _quality(run_files) if v is not None)
    assert values and set(values) <= {0.0, 0.5, 1.0} and 0.5 in values


def test_a_named_score_that_does_not_add_up_is_an_error(tmp_path: Path) -> None:
    data = json.loads(V2.read_text())
    first = data["results"]["results"][0]
    _one_metric(first, lambda s: 0.3)  # neither 1 + 1 nor their mean
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    run_files = load_file(path)
    case = next(c for r in run_files for c in r.cases if "quality" in c.errors)
    assert "neither the sum nor the mean of its 2 assertions' scores" in case.errors["quality"]


def test_an_unknown_scale_is_one_fact_of_the_file(tmp_path: Path) -> None:
    data = json.loads(V3.read_text())
    results = data["results"]["results"]
    results[0]["namedScores"]["rating"] = 3  # pair 0
    results[1]["namedScores"]["rating"] = 0.5  # pair 1: on the same unknown scale
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data))
    notices: list[str] = []
    run_files = load_file(path, notices=notices)
    cases = [c for r in run_files for c in r.cases]
    assert not any("rating" in c.scores for c in cases)  # 0.5 is on the scale 3 is on
    refused = [c for c in cases if "scale unknown" in c.errors.get("rating", "")]
    assert len(refused) == 2
    assert len([n for n in notices if "rating" in n]) == 1, notices
    assert len(notices) == len(set(notices))
