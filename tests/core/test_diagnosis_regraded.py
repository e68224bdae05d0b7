"""The regraded rule (A and B gave the same answers and chunks on every case) for the summary
and for one case, on hand-built runs: expectations read off README's Diagnosis section."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragtui.core.diagnosis import diagnose, diagnose_case
from ragtui.core.store import Store
from tests.core.diagnosis_builder import case, chunks, write

IDS = [f"k{i:02d}" for i in range(6)]


def _cases(falls: dict[str, float], empty: set[str] = frozenset()) -> list:
    """Same answers throughout; `falls`: case -> its faithfulness and recall; `empty`: cases
    that retrieved nothing."""
    return [
        case(
            cid,
            {"faithfulness": falls.get(cid, 1.0), "context_recall": falls.get(cid, 1.0)},
            contexts=() if cid in empty else chunks("x-1", "y-1"),
            answer=f"the same answer to {cid}",
        )
        for cid in IDS
    ]


def _store(root: Path, b_cases: list) -> Store:
    write(root, "A", _cases({}), config={"retriever": "dense"}, day=1)
    write(root, "B", b_cases, config={"retriever": "bm25"}, day=2)
    store = Store.open(root)
    assert not store.problems
    return store


def test_a_case_that_retrieved_nothing_is_a_retrieval_miss_not_regraded(tmp_path: Path) -> None:
    # k00 in B: no chunks, recall 100 -> 0: the chunks changed, so no "same output"
    with _store(tmp_path, _cases({"k00": 0.0}, empty={"k00"})) as store:
        d = diagnose(store, "A", "B")
        assert not d.same_output
        causes = {(c.metric, c.case_id): c.cause for m in d.metrics for c in m.cases}
        assert causes == {
            ("context_recall", "k00"): "retrieval miss",
            ("faithfulness", "k00"): "retrieval miss",
        }


def test_b_that_recorded_no_chunks_at_all_is_not_regraded(tmp_path: Path) -> None:
    with _store(tmp_path, _cases({"k00": 0.0}, empty=set(IDS))) as store:
        d = diagnose(store, "A", "B")
        assert not d.same_output
        assert {c.cause for m in d.metrics for c in m.cases} == {"retrieval miss"}


def test_one_case_applies_the_regraded_rule_like_the_summary(tmp_path: Path) -> None:
    # B regrades A's very outputs: k01's faithfulness 100 -> 0 is the judge's doing
    with _store(tmp_path, _cases({"k01": 0.0})) as store:
        d = diagnose(store, "A", "B")
        assert d.same_output
        one = diagnose_case(store, "A", "B", "k01")
        assert [(a.metric, a.cause, a.stage) for a in one.attributions] == [
            ("context_recall", "regraded", "judge"),
            ("faithfulness", "regraded", "judge"),
        ]


@pytest.mark.parametrize("same", [True, False])
def test_a_screen_may_pass_the_condition_it_computed_once(tmp_path: Path, same: bool) -> None:
    with _store(tmp_path, _cases({"k01": 0.0})) as store:
        one = diagnose_case(store, "A", "B", "k01", same_output=same)
        causes = [(a.metric, a.cause) for a in one.attributions]
        if same:
            assert causes == [("context_recall", "regraded"), ("faithfulness", "regraded")]
        else:  # recall fell on the same chunks: the judge's; faithfulness: the generator's
            assert causes == [("context_recall", "regraded"), ("faithfulness", "ignored context")]


def test_the_summary_names_the_pass_threshold_it_applied(tmp_path: Path) -> None:
    from ragtui.format import diagnosis_summary_lines

    with _store(tmp_path, _cases({"k01": 0.0})) as store:
        mine = diagnosis_summary_lines(diagnose(store, "A", "B", thresholds={"faithfulness": 0.72}))
        plain = diagnosis_summary_lines(diagnose(store, "A", "B"))
    head = "case classes (B against the runs of A's config; pass: "
    assert (
        head + "faithfulness ≥ 72 (--pass), other metrics: the source's threshold, else ≥ 50)"
        in mine
    )
    assert head + "the source's threshold, else ≥ 50)" in plain


def test_an_unsupported_claim_swapped_for_another_is_no_hallucination(tmp_path: Path) -> None:
    """A had one unsupported claim, which B dropped; B has a different unsupported one: still
    one unsupported claim, so no new hallucination. Only answer relevance fell (100 -> 25),
    the rest held: README's rule 5, off-intent. With a second unsupported claim in B it is
    rule 3, hallucination (B has more unsupported claims than A)."""
    from ragtui.core.model import Claim

    def claim(text: str, verdict: str) -> Claim:
        return Claim("faithfulness", text, verdict, ())

    ok = claim("Refunds take 5-10 business days.", "SUPPORTED")
    old = claim("Refunds arrive by carrier pigeon on Sundays.", "UNSUPPORTED")
    new = claim("Support is open around the clock in every country.", "UNSUPPORTED")
    more = claim("Every order ships with a free umbrella.", "UNSUPPORTED")
    full = {"faithfulness": 1.0, "context_recall": 1.0, "answer_relevance": 1.0}
    fell = {**full, "answer_relevance": 0.25}
    ctx = chunks("x-1")
    write(tmp_path, "A", [case("k", full, contexts=ctx, claims=[ok, old])], day=1)
    write(
        tmp_path,
        "B",
        [case("k", fell, contexts=ctx, claims=[ok, new], answer="B")],
        day=2,
        config={"generator": "b"},
    )
    write(
        tmp_path,
        "C",
        [case("k", fell, contexts=ctx, claims=[ok, new, more], answer="C")],
        day=3,
        config={"generator": "c"},
    )
    with Store.open(tmp_path) as store:
        swapped = diagnose_case(store, "A", "B", "k")
        grown = diagnose_case(store, "A", "C", "k")
    assert [(a.metric, a.cause) for a in swapped.attributions] == [
        ("answer_relevance", "off-intent")
    ]
    assert [(a.metric, a.cause) for a in grown.attributions] == [
        ("answer_relevance", "hallucination")
    ]
