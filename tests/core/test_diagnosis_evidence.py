"""Stage attribution where the evidence is unusual, on hand-built runs through real files and
DuckDB: chunks that did not change (a recall or precision fall there is the judge's), a side
that retrieved nothing, a grade that failed on one side, and what an off-intent case says held.
Each expectation is read off README's Diagnosis rules by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.core.diagnosis import diagnose, diagnose_case
from ragtui.core.store import Store
from ragtui.format import attribution_text, diagnosis_summary_lines
from tests.core.diagnosis_builder import case, chunks, write

FULL = ("faithfulness", "context_recall", "context_precision", "answer_relevance")


def s(faith: float | str, recall: float | str, precision: float, relevance: float) -> dict:
    return dict(zip(FULL, (faith, recall, precision, relevance), strict=True))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evidence")
    same, other = chunks("refund-1", "refund-2"), chunks("billing-7", "refund-2")
    a = [
        case(cid, s(1, 1, 1, 1), contexts=same, answer=f"A's answer to {cid}")
        for cid in ("r", "p", "f", "m", "e", "u", "o")
    ]
    b = [
        # same chunks, recall 100 -> 0: the judge graded the same chunks differently
        case("r", s(1, 0, 1, 1), contexts=same, answer="B's r"),
        # same chunks, precision 100 -> 50, faithfulness held: not retrieval noise, the judge
        case("p", s(1, 1, 0.5, 1), contexts=same, answer="B's p"),
        # same chunks, recall and faithfulness fell: recall the judge's, faithfulness the
        # generator's (the retrieval held: the chunks are the same)
        case("f", s(0, 0, 1, 1), contexts=same, answer="B's f"),
        # the chunks changed and recall fell: a retrieval miss, as before
        case("m", s(1, 0, 1, 1), contexts=other, answer="B's m"),
        # B retrieved nothing where A retrieved two chunks: the chunks are gone
        case("e", s(0, 1, 1, 1), contexts=(), answer="B's e"),
        # the chunks changed, faithfulness fell and B's recall grade failed
        case("u", s(0, "parse failure: maybe", 1, 1), contexts=other, answer="B's u"),
        # answer relevance fell alone, the chunks unchanged
        case("o", s(1, 1, 1, 0.25), contexts=same, answer="B's o"),
    ]
    write(root, "a", a, day=1)
    write(root, "b", b, day=2, config={"generator": "other"})
    return root


@pytest.fixture(scope="module")
def store(folder: Path):
    with Store.open(folder) as st:
        yield st


def _causes(store: Store) -> dict[tuple[str, str], tuple[str, str, str]]:
    d = diagnose(store, "a", "b")
    assert not d.same_output
    return {(c.case_id, c.metric): (c.stage, c.cause, c.basis) for m in d.metrics for c in m.cases}


def test_a_retrieval_metric_falling_on_the_same_chunks_is_the_judge(store: Store) -> None:
    got = _causes(store)
    assert got[("r", "context_recall")] == ("judge", "regraded", "recall fell, same chunks")
    assert got[("p", "context_precision")] == ("judge", "regraded", "precision fell, same chunks")
    assert got[("f", "context_recall")] == ("judge", "regraded", "recall fell, same chunks")
    assert got[("f", "faithfulness")] == (
        "generation",
        "ignored context",
        "faithfulness fell, same chunks",
    )
    assert got[("m", "context_recall")] == ("retrieval", "retrieval miss", "recall fell")
    # no retrieval stage for any case whose chunks did not change
    assert not [k for k, v in got.items() if v[0] == "retrieval" and k[0] in "rpfo"]
    one = diagnose_case(store, "a", "b", "r")
    assert [attribution_text(x) for x in one.attributions] == [
        "judge: regraded (context recall fell on the same chunks: the judge graded them "
        "differently)"
    ]


def test_b_that_retrieved_nothing_is_a_retrieval_miss_and_said(store: Store) -> None:
    got = _causes(store)
    assert got[("e", "faithfulness")] == ("retrieval", "retrieval miss", "no chunks in B")
    d = diagnose(store, "a", "b")
    assert (d.retrieval.n_cases, d.retrieval.only_a, d.retrieval.only_b) == (6, 1, 0)
    line = next(x for x in diagnosis_summary_lines(d) if x.startswith("retrieval"))
    assert line.endswith(" · B retrieved nothing in 1 case (A did)")
    assert d.to_json()["retrieval"]["only_a"] == 1


def test_a_grade_that_failed_on_one_side_is_named_not_a_missing_role(store: Store) -> None:
    d = diagnose(store, "a", "b")
    u = next(c for m in d.metrics for c in m.cases if c.case_id == "u")
    assert (u.metric, u.cause, u.missing) == ("faithfulness", "unattributed", ())
    assert [(x.role, x.side, x.failed) for x in u.ungraded] == [("context_recall", "B", True)]
    text = attribution_text(u)
    assert text == "unattributed: context_recall's grade failed in B for this case"
    assert "--role" not in text


def test_off_intent_says_only_what_held(store: Store) -> None:
    one = diagnose_case(store, "a", "b", "o")
    assert [attribution_text(x) for x in one.attributions] == [
        "generation: off-intent (answer relevance fell while context recall, context precision "
        "and faithfulness held and the chunks are unchanged)"
    ]


def test_off_intent_without_recall_does_not_claim_every_other_metric_held(
    tmp_path: Path,
) -> None:
    # g_eval fell too and no recall or precision is scored: only faithfulness held
    ctx = chunks("x-1")
    write(
        tmp_path,
        "a",
        [case("h", {"answer_relevance": 1, "faithfulness": 1, "g_eval": 0.8}, contexts=ctx)],
        day=1,
    )
    write(
        tmp_path,
        "b",
        [
            case(
                "h",
                {"answer_relevance": 0.5, "faithfulness": 1, "g_eval": 0.5},
                contexts=ctx,
                answer="another answer",
            )
        ],
        day=2,
        config={"generator": "b"},
    )
    with Store.open(tmp_path) as store:
        one = diagnose_case(store, "a", "b", "h")
    texts = {x.metric: attribution_text(x) for x in one.attributions}
    assert texts["answer_relevance"] == (
        "generation: off-intent (answer relevance fell while faithfulness held and the chunks "
        "are unchanged)"
    )
    assert "other metrics" not in texts["g_eval"]


def test_one_case_names_a_metric_whose_grade_failed_on_a_side(tmp_path: Path) -> None:
    ctx = chunks("x-1")
    write(
        tmp_path,
        "a",
        [
            case("ok", {"faithfulness": 1, "context_recall": 1}, contexts=ctx),
            case("err", {"faithfulness": "judge timeout", "context_recall": 1}, contexts=ctx),
        ],
        day=1,
    )
    write(
        tmp_path,
        "b",
        [
            case("ok", {"faithfulness": 1, "context_recall": 1}, contexts=ctx),
            case("err", {"faithfulness": 0, "context_recall": 1}, contexts=ctx),
        ],
        day=2,
        config={"generator": "b"},
    )
    with Store.open(tmp_path) as store:
        one = diagnose_case(store, "a", "b", "err")
    assert [m.metric for m in one.moves] == ["context_recall"]
    gaps = one.to_json()["not_compared"]
    assert gaps == [
        {"metric": "faithfulness", "a": None, "b": 0.0, "error_a": "judge timeout", "error_b": None}
    ]
