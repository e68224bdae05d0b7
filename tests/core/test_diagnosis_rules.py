"""Stage attribution on constructed cases, one per rule, through real run files and DuckDB.

Each case is built so that exactly one rule of attribution.py applies; the expected cause is
read off the rule table by hand, not from the code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.attribution import find_roles
from ragtui.core.diagnosis import Diagnosis, diagnose, diagnose_case
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.format import attribution_line
from tests.core.diagnosis_builder import case, chunks, claim, write

FULL = ("faithfulness", "context_recall", "context_precision", "answer_relevance")


def scores(faith: float, recall: float, precision: float, relevance: float) -> dict[str, float]:
    return dict(zip(FULL, (faith, recall, precision, relevance), strict=True))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rules")
    ok = [claim("Refunds take 5-10 business days.", "SUPPORTED", "refund-1")]
    a_cases = [
        case("miss", scores(1, 1, 1, 1), contexts=chunks("refund-1", "refund-2"), claims=ok),
        case("noise", scores(1, 1, 1, 1), contexts=chunks("refund-1", "refund-2"), claims=ok),
        case("halluc", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
        case("ignored", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
        case("offintent", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
        case("steady", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
        case("small", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
    ]
    b_cases = [
        # recall fell (the relevant chunk left): retrieval miss, whatever else moved
        case("miss", scores(0.5, 0.5, 1, 1), contexts=chunks("billing-7", "refund-2")),
        # precision fell, faithfulness held; relevance fell too: retrieval noise
        case(
            "noise",
            scores(1, 1, 0.5, 0.75),
            contexts=chunks("billing-7", "refund-1", "refund-2"),
            claims=ok,
        ),
        # a new unsupported claim while recall held: hallucination
        case(
            "halluc",
            scores(0, 1, 1, 1),
            contexts=chunks("refund-1"),
            claims=[*ok, claim("Refunds are paid in cash at any branch.", "UNSUPPORTED")],
        ),
        # faithfulness fell, recall held, no unsupported claim (one weakened): ignored context
        case(
            "ignored",
            scores(0.5, 1, 1, 1),
            contexts=chunks("refund-1"),
            claims=[claim("Refunds take 5-10 business days.", "PARTIAL", "refund-1")],
        ),
        # answer relevance fell, the rest held: off-intent
        case("offintent", scores(1, 1, 1, 0.25), contexts=chunks("refund-1"), claims=ok),
        case("steady", scores(1, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
        # 5 points: below the 10-point minimum drop, so not a fall
        case("small", scores(0.95, 1, 1, 1), contexts=chunks("refund-1"), claims=ok),
    ]
    write(root, "a", a_cases, day=1)
    write(root, "b", b_cases, day=2, config={"generator": "llama3.2:1b", "top_k": 3})
    # A pair with only faithfulness and answer relevance: the chunk evidence must decide.
    lost = [claim("Refunds take 5-10 business days.", "UNSUPPORTED", "refund-1")]
    weak = [claim("Refunds take 5-10 business days.", "PARTIAL", "refund-1")]
    short = [
        case("nothing", {"faithfulness": 1, "answer_relevance": 1}),
        case(
            "gone",
            {"faithfulness": 1, "answer_relevance": 1},
            contexts=chunks("refund-1"),
            claims=ok,
        ),
        case(
            "kept",
            {"faithfulness": 1, "answer_relevance": 1},
            contexts=chunks("refund-1"),
            claims=ok,
        ),
    ]
    short_b = [
        case("nothing", {"faithfulness": 0, "answer_relevance": 1}),
        case(
            "gone",
            {"faithfulness": 0, "answer_relevance": 1},
            contexts=chunks("billing-7"),
            claims=lost,
        ),
        case(
            "kept",
            {"faithfulness": 0.5, "answer_relevance": 1},
            contexts=chunks("refund-1"),
            claims=weak,
        ),
    ]
    write(root, "s-a", short, day=3, dataset=("short", "v1"))
    write(root, "s-b", short_b, day=4, dataset=("short", "v1"), config={"generator": "x"})
    # Reruns of A: the per-case noise band replaces the minimum drop.
    band = {"wobbly": (1.0, 0.5, 0.5), "solid": (1.0, 1.0, 0.5), "tiny": (1.0, 1.0, 0.95)}
    for k, day in ((0, 5), (1, 6)):
        write(
            root,
            f"r-a{k}",
            [case(c, {"faithfulness": v[k]}) for c, v in band.items()],
            day=day,
            dataset=("band", "v1"),
            config={"generator": "llama3.2:3b", "seed": k},
        )
    write(
        root,
        "r-b",
        [case(c, {"faithfulness": v[2]}) for c, v in band.items()],
        day=7,
        dataset=("band", "v1"),
        config={"generator": "small"},
    )
    return root


@pytest.fixture(scope="module")
def store(folder: Path):
    with Store.open(folder) as s:
        assert not s.problems, s.problems
        yield s


@pytest.fixture(scope="module")
def full(store: Store) -> Diagnosis:
    return diagnose(store, "a", "b")


def causes(d: Diagnosis, metric: str) -> dict[str, str]:
    m = next(x for x in d.metrics if x.metric == metric)
    return {c.case_id: c.cause for c in m.cases}


def test_each_rule_names_its_stage(full: Diagnosis) -> None:
    assert causes(full, "faithfulness") == {
        "miss": "retrieval miss",
        "halluc": "hallucination",
        "ignored": "ignored context",
    }
    assert causes(full, "answer_relevance") == {
        "noise": "retrieval noise",
        "offintent": "off-intent",
    }
    assert causes(full, "context_precision") == {"noise": "retrieval noise"}
    assert causes(full, "context_recall") == {"miss": "retrieval miss"}


def test_summary_line_counts_stages(full: Diagnosis) -> None:
    faith = next(m for m in full.metrics if m.metric == "faithfulness")
    # paired faithfulness deltas: -0.5, 0, -1, -0.5, 0, 0, -0.05 -> mean -0.292857
    assert faith.delta == pytest.approx(-2.05 / 7)
    line = attribution_line(faith.metric, faith.delta, len(faith.cases), faith.by_stage())
    assert line == "faithfulness -29.3 pts: 3 cases fell — 2 generation, 1 retrieval"
    assert full.noise_rule == "min_drop"


def test_worst_cases_are_sorted_by_drop(full: Diagnosis) -> None:
    worst = full.worst(3)
    assert [(w.case_id, w.metric, w.delta) for w in worst] == [
        ("halluc", "faithfulness", -1.0),
        ("offintent", "answer_relevance", -0.75),
        ("noise", "context_precision", -0.5),  # ties: by metric, then case id
    ]


def test_without_recall_the_chunks_decide(store: Store) -> None:
    d = diagnose(store, "s-a", "s-b", metrics=["faithfulness"])
    got = {c.case_id: (c.cause, c.basis, c.missing) for c in d.metrics[0].cases}
    assert got == {
        "gone": ("retrieval miss", "supporting chunk gone", ()),
        # the very same chunks in A and B: the retrieval held, whatever no recall metric says
        "kept": ("ignored context", "faithfulness fell, same chunks", ()),
        # faithfulness fell, so precision could not decide (rule 2 needs it held): recall only
        "nothing": ("unattributed", "metrics missing", ("context_recall",)),
    }
    assert d.metrics[0].by_stage() == {
        "generation": 1,
        "retrieval": 1,
        "judge": 0,
        "unattributed": 1,
    }


def test_reruns_of_a_set_the_per_case_noise(store: Store) -> None:
    d = diagnose(store, "r-a0", "r-b")
    assert d.a_runs == ("r-a0", "r-a1") and d.noise_rule == "reruns"
    # wobbly: A's reruns 1.0 and 0.5, B 0.5 -> within their spread; solid: 1, 1 -> 0.5 fell;
    # tiny: 1, 1 -> 0.95 fell (any value below every rerun), although it is only 5 points.
    assert sorted(c.case_id for c in d.metrics[0].cases) == ["solid", "tiny"]
    solid = next(c for c in d.metrics[0].cases if c.case_id == "solid")
    assert (solid.a, solid.b) == (1.0, 0.5)


def test_one_case_in_full(store: Store) -> None:
    one = diagnose_case(store, "a", "b", "miss")
    assert [(a.metric, a.cause) for a in one.attributions] == [
        ("context_recall", "retrieval miss"),
        ("faithfulness", "retrieval miss"),
    ]
    marks = {(c.mark, c.id_a, c.id_b, c.rank_a, c.rank_b) for c in one.retrieval.chunks}
    assert marks == {
        ("added", None, "billing-7", None, 1),
        ("kept", "refund-2", "refund-2", 2, 2),
        ("removed", "refund-1", None, 1, None),
    }
    assert one.retrieval.overlap == pytest.approx(1 / 3)  # {r1, r2} vs {b7, r2}
    json.dumps(one.to_json(), allow_nan=False)


def test_roles_from_other_tools_names() -> None:
    deepeval = find_roles(
        ["Faithfulness", "Contextual Recall", "Contextual Precision", "Answer Relevancy"]
    )
    assert deepeval.metric == {
        "faithfulness": "Faithfulness",
        "context_recall": "Contextual Recall",
        "context_precision": "Contextual Precision",
        "answer_relevance": "Answer Relevancy",
    }
    two = find_roles(
        ["llm_context_precision_with_reference", "llm_context_precision_without_reference"]
    )
    assert "context_precision" not in two.metric
    assert "--role context_precision=METRIC" in two.notes[0]
    chosen = find_roles(
        ["llm_context_precision_with_reference", "llm_context_precision_without_reference"],
        {"context_precision": "llm_context_precision_with_reference"},
    )
    assert chosen.metric["context_precision"] == "llm_context_precision_with_reference"


def test_bad_requests_are_clear_errors(store: Store) -> None:
    with pytest.raises(RagtuiError, match="metric 'nope' is not scored in both runs"):
        diagnose(store, "a", "b", metrics=["nope"])
    with pytest.raises(RagtuiError, match="unknown stage role 'retriever'"):
        diagnose(store, "a", "b", roles={"retriever": "context_recall"})
    with pytest.raises(RagtuiError, match="no case 'absent' in run a"):
        diagnose_case(store, "a", "b", "absent")
    with pytest.raises(RagtuiError, match="min drop must be a fraction"):
        diagnose(store, "a", "b", min_drop=5)


def test_one_case_reuses_the_comparison(store: Store) -> None:
    from ragtui.core.diagnosis_input import paired_scores

    paired = paired_scores(store, "a", "b")
    again = diagnose_case(store, "a", "b", "halluc", paired=paired)
    assert again.to_json() == diagnose_case(store, "a", "b", "halluc").to_json()
    assert [a.cause for a in again.attributions] == ["hallucination"]
