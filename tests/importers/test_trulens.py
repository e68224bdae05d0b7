"""TruLens default.sqlite (made by trulens itself): one run per app version, the RAG triad."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ragtui.importers import ImportFormatError, detect, load_file

DATA = Path(__file__).resolve().parents[1] / "data" / "trulens"
DB = DATA / "default.sqlite"
EXPECTED = json.loads((DATA / "expected.json").read_text())
METRICS = {
    "Groundedness": "groundedness",
    "Answer Relevance": "answer_relevance",
    "Context Relevance": "context_relevance",
}


def _runs() -> dict[str, object]:
    return {r.run.config["app_version"]: r for r in load_file(DB)}


def test_detected_and_one_run_per_app_version() -> None:
    assert detect(DB).name == "trulens"
    runs = _runs()
    assert sorted(runs) == ["base", "strict"]
    assert all(len(r.cases) == 4 for r in runs.values())
    assert runs["base"].run.config_key != runs["strict"].run.config_key


@pytest.mark.parametrize("version", ["base", "strict"])
@pytest.mark.parametrize("feedback", sorted(METRICS))
def test_means_equal_trulens_leaderboard(version: str, feedback: str) -> None:
    run = _runs()[version]
    metric = METRICS[feedback]
    values = [c.scores[metric].value for c in run.cases if metric in c.scores]
    assert sum(values) / len(values) == pytest.approx(EXPECTED[version][feedback])


def test_failed_feedback_is_an_error_and_cases_pair_across_versions() -> None:
    runs = _runs()
    gift = next(c for c in runs["base"].cases if "gift" in c.question)
    assert set(gift.errors) == {"groundedness", "answer_relevance"}
    assert gift.errors["groundedness"].startswith("TruLens feedback failed: RuntimeError")
    assert "context_relevance" in gift.scores
    ids = {v: [c.case_id for c in r.cases] for v, r in runs.items()}
    assert ids["base"] == ids["strict"]  # the same questions: paired by case id


def test_reasons_contexts_and_groundedness_claims() -> None:
    first = _runs()["base"].cases[0]
    assert first.question == "Who approves refunds requested after 30 days?"
    assert first.answer == "A manager approves them. They are paid back by card."
    assert first.contexts[0].text.startswith("Refunds requested more than 30 days")
    assert [(c.text, c.verdict) for c in first.claims] == [
        ("A manager approves them.", "PARTIAL"),
        ("They are paid back by card.", "UNSUPPORTED"),
    ]
    assert "50% of the words are found" in first.scores["groundedness"].reason
    assert first.scores["answer_relevance"].scale == (0.0, 1.0)


def test_events_only_database_is_refused_with_the_way_out(tmp_path: Path) -> None:
    db = tmp_path / "default.sqlite"
    with sqlite3.connect(db) as con:
        for table in ("trulens_apps", "trulens_records", "trulens_feedbacks"):
            con.execute(f"CREATE TABLE {table} (app_id TEXT, record_id TEXT)")
        con.execute("CREATE TABLE trulens_events (event_id TEXT)")
        con.execute("INSERT INTO trulens_events VALUES ('e1')")
    with pytest.raises(ImportFormatError, match="TRULENS_OTEL_TRACING=0"):
        load_file(db)


def test_corrupt_database_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "default.sqlite"
    data = DB.read_bytes()
    db.write_bytes(data[:4096] + b"\x00garbage" * 200)
    with pytest.raises(ImportFormatError) as info:
        load_file(db, "trulens")
    assert str(info.value).startswith(str(db)) and "\n" not in str(info.value)


def test_two_feedbacks_of_one_name_on_a_record_are_an_error_not_the_last(tmp_path: Path) -> None:
    """Two feedback definitions named "Groundedness" (say, two providers) graded one record:
    the later silently replaced the earlier; with one failed, the case held a score and an
    error for the metric at once. Which is the grade is unknown: an error naming both."""
    import shutil

    db = tmp_path / "two.sqlite"
    shutil.copy(DB, db)
    with sqlite3.connect(db) as con:
        record, result = con.execute(
            "SELECT record_id, result FROM trulens_feedbacks WHERE name = 'Groundedness' "
            "AND status = 'done' ORDER BY last_ts LIMIT 1"
        ).fetchone()
        con.execute(
            "INSERT INTO trulens_feedbacks SELECT 'dup-1', record_id, 'other-def', last_ts + 1, "
            "'done', NULL, calls_json, 0.9, name, cost_json, multi_result FROM trulens_feedbacks "
            "WHERE record_id = ? AND name = 'Groundedness'",
            [record],
        )
    cases = [c for r in load_file(db) for c in r.cases]
    (case,) = [c for c in cases if c.metadata["trulens_record_id"] == record]
    assert "groundedness" not in case.scores
    said = case.errors["groundedness"]
    assert said.startswith(f"2 feedback results named 'groundedness' for this record ({result!r}")
    assert "0.9" in said and "give them distinct names" in said
    others = [c for c in cases if c is not case and "groundedness" in c.scores]
    assert others  # the other records keep their grade
