"""Metric grading from judge replies, with hand-worked values."""

from __future__ import annotations

import json

import pytest

from ragtui.core.model import Case, Chunk
from ragtui.judge.metrics import METRICS, NotGradable, average_precision, get_metrics

CASE = Case(
    case_id="refund-01",
    question="Who approves late refunds?",
    answer="A manager approves them. They are paid as credit. It takes 24 hours.",
    reference="A manager approves late refunds. They are issued as account credit.",
    contexts=(
        Chunk(id="c1", text="Late refunds need manager approval."),
        Chunk(id="c2", text="Refunds are issued as account credit."),
        Chunk(id="c3", text="Office hours are 9 to 5."),
    ),
)


@pytest.mark.parametrize(("reply", "value"), [("YES", 1.0), ("PARTIAL", 0.5), ("no", 0.0)])
def test_faithfulness_label(reply: str, value: float) -> None:
    m = METRICS["faithfulness"]
    out = m.outcome(CASE, reply)
    assert out.kind == "scored" and out.score is not None
    assert out.score.value == value and out.score.label == reply.upper()
    assert out.score.prompt_hash == m.prompt.hash and out.score.reply == reply


def test_faithfulness_label_garbage_is_zero_and_a_parse_failure() -> None:
    out = METRICS["faithfulness"].outcome(CASE, "As an AI model I cannot say.")
    assert out.kind == "parse_failure" and out.error is None
    assert out.score is not None and out.score.value == 0.0 and out.score.label is None
    assert out.score.reason is not None and out.score.reason.startswith("parse failure: ")


def test_faithfulness_prompt_has_context_and_answer_only() -> None:
    user = METRICS["faithfulness"].messages(CASE)[1]["content"]
    assert CASE.answer in user and CASE.contexts[2].text in user
    assert CASE.question not in user and CASE.reference not in user  # context only


def claims_reply(*items: tuple[str, str, int | None]) -> str:
    claims = [{"claim": t, "verdict": v, "chunk": c, "reason": "r"} for t, v, c in items]
    return json.dumps({"claims": claims})


def test_faithfulness_claims() -> None:
    reply = claims_reply(
        ("A manager approves", "SUPPORTED", 1),
        ("paid as credit", "supported", 2),
        ("credit within the day", "PARTIAL", 2),
        ("takes 24 hours", "UNSUPPORTED", None),
    )
    out = METRICS["faithfulness_claims"].outcome(CASE, "```json\n" + reply + "\n```")
    assert out.kind == "scored" and out.score is not None
    assert out.score.value == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert out.score.raw == {"supported": 2, "partial": 1, "unsupported": 1}
    assert [(c.verdict, c.chunks) for c in out.claims] == [
        ("SUPPORTED", ("c1",)),
        ("SUPPORTED", ("c2",)),
        ("PARTIAL", ("c2",)),
        ("UNSUPPORTED", ()),
    ]
    assert all(c.metric == "faithfulness_claims" for c in out.claims)


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        '{"claims": "many"}',
        claims_reply(("x", "MAYBE", 1)),
        claims_reply(("x", "SUPPORTED", 7)),  # there is no chunk 7
        '{"claims": [{"verdict": "SUPPORTED"}]}',
    ],
)
def test_faithfulness_claims_bad_reply_is_a_counted_error(reply: str) -> None:
    out = METRICS["faithfulness_claims"].outcome(CASE, reply)
    assert out.kind == "parse_failure" and out.score is None
    assert out.error is not None and out.error.startswith("parse failure: ")


def test_faithfulness_claims_none_found_is_an_error_not_a_score() -> None:
    out = METRICS["faithfulness_claims"].outcome(CASE, '{"claims": []}')
    assert out.kind == "error" and out.error == "judge found no claims in the answer"


@pytest.mark.parametrize(("reply", "value"), [("1", 0.0), ("2", 0.25), ("4", 0.75), ("5", 1.0)])
def test_answer_relevance_normalised(reply: str, value: float) -> None:
    out = METRICS["answer_relevance"].outcome(CASE, reply)
    assert out.score is not None and out.score.value == value
    assert out.score.raw == int(reply) and out.score.scale == (1, 5)


def test_answer_relevance_garbage_is_error() -> None:
    out = METRICS["answer_relevance"].outcome(CASE, "very relevant")
    assert out.kind == "parse_failure" and out.score is None


def test_average_precision_hand_worked() -> None:
    assert average_precision([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([False, True]) == pytest.approx(0.5)
    assert average_precision([True, True, False]) == 1.0
    assert average_precision([False, False]) == 0.0


def precision_reply(*flags: bool) -> str:
    return json.dumps({"chunks": [{"chunk": i, "useful": f} for i, f in enumerate(flags, 1)]})


def test_context_precision() -> None:
    out = METRICS["context_precision"].outcome(CASE, precision_reply(False, True, True))
    assert out.score is not None
    assert out.score.value == pytest.approx((1 / 2 + 2 / 3) / 2) and out.score.raw == "011"
    missing = METRICS["context_precision"].outcome(CASE, precision_reply(True, False))
    assert missing.kind == "parse_failure" and "chunk 3" in (missing.error or "")


def test_context_precision_without_chunks_is_not_gradable() -> None:
    bare = Case(case_id="x", question="q", answer="a")
    with pytest.raises(NotGradable, match="no retrieved chunks"):
        METRICS["context_precision"].messages(bare)


def test_context_recall() -> None:
    reply = json.dumps(
        {
            "statements": [
                {"statement": "A manager approves", "attributed": True, "chunk": 1},
                {"statement": "issued as credit", "attributed": True, "chunk": 2},
                {"statement": "within a week", "attributed": False, "chunk": None},
            ]
        }
    )
    out = METRICS["context_recall"].outcome(CASE, reply)
    assert out.score is not None and out.score.value == pytest.approx(2 / 3)


def test_context_recall_needs_a_reference() -> None:
    no_ref = Case(case_id="x", question="q", answer="a", contexts=CASE.contexts)
    with pytest.raises(NotGradable, match="needs a reference"):
        METRICS["context_recall"].messages(no_ref)


def test_get_metrics_rejects_unknown_names() -> None:
    assert [m.name for m in get_metrics(None)] == ["faithfulness", "answer_relevance"]
    with pytest.raises(Exception, match="unknown metric 'faithfullness'"):
        get_metrics(["faithfullness"])
