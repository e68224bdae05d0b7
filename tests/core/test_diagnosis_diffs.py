"""Retrieval, answer and claim diffs on hand-worked examples (expected values worked out by hand)."""

from __future__ import annotations

import json

import pytest

from ragtui.core.answer_diff import MAX_TOKENS, diff_answers
from ragtui.core.claim_diff import CLAIM_MATCH, diff_claims, summarise_claims
from ragtui.core.model import Chunk, Claim
from ragtui.core.retrieval_diff import diff_retrieval, summarise_retrieval
from ragtui.format import chunk_mark, word_diff


def ck(cid: str, text: str, rank: int | None = None) -> Chunk:
    return Chunk(cid, text, "doc.md", rank)


def marks(diff) -> dict[str, tuple[str, int | None, int | None]]:
    return {(c.id_b or c.id_a): (c.mark, c.rank_a, c.rank_b) for c in diff.chunks}


# ---------------------------------------------------------------- retrieval


def test_chunks_matched_by_id_with_moves_and_overlap() -> None:
    a = [ck("x", "ex"), ck("y", "why"), ck("z", "zed")]
    b = [ck("y", "why"), ck("x", "ex"), ck("w", "double")]
    d = diff_retrieval("q", a, b)
    assert d.matched_by == "id"
    assert marks(d) == {
        "y": ("moved", 2, 1),
        "x": ("moved", 1, 2),
        "w": ("added", None, 3),
        "z": ("removed", 3, None),
    }
    assert [chunk_mark(c.mark, c.move) for c in d.chunks] == ["↑1", "↓1", "+", "-"]
    assert d.k == 3 and d.overlap == pytest.approx(2 / 4)  # {x,y,z} vs {y,x,w}
    assert d.top_changed is True


def test_chunks_that_only_shift_with_a_removal_or_an_insertion_keep_their_place() -> None:
    """x removed above y and z (A x y z, B y z), or n put first (A x y, B n x y): y, z and x
    keep their order among the chunks both kept, so they are kept (their ranks say they
    shifted), not moved; a case counts among the "moved" only when B reorders what it kept."""
    a = [ck("x", "ex"), ck("y", "why"), ck("z", "zed")]
    removal = diff_retrieval("q1", a, [ck("y", "why"), ck("z", "zed")])
    assert marks(removal) == {
        "y": ("kept", 2, 1),
        "z": ("kept", 3, 2),
        "x": ("removed", 1, None),
    }
    insertion = diff_retrieval("q2", a[:2], [ck("n", "new"), ck("x", "ex"), ck("y", "why")])
    assert marks(insertion) == {"n": ("added", None, 1), "x": ("kept", 1, 2), "y": ("kept", 2, 3)}
    swap = diff_retrieval("q3", a[:2], [ck("y", "why"), ck("x", "ex")])
    summary = summarise_retrieval([removal, insertion, swap], 3)
    assert summary.with_moved == 1 and summary.with_removed == 1 and summary.with_added == 1


def test_positional_ids_fall_back_to_text() -> None:
    """Importers number chunks c1, c2, ...: the same id with another text is another chunk."""
    a = [ck("c1", "Alpha text"), ck("c2", "Beta text"), ck("c3", "Gamma text")]
    b = [ck("c1", "beta  TEXT"), ck("c2", "alpha text"), ck("c3", "Delta text")]
    d = diff_retrieval("q", a, b)
    assert d.matched_by == "text"
    got = {(c.mark, c.id_a, c.id_b, c.rank_a, c.rank_b) for c in d.chunks}
    assert got == {
        ("moved", "c2", "c1", 2, 1),  # Beta: whitespace and case do not matter
        ("moved", "c1", "c2", 1, 2),
        ("added", None, "c3", None, 3),
        ("removed", "c3", None, 3, None),
    }
    assert d.overlap == pytest.approx(2 / 4)
    assert d.in_b("c1") is True and d.in_b("c3") is False and d.in_b("c9") is None


def test_deeper_retrieval_compares_the_common_top_k() -> None:
    a = [ck(c, c) for c in "abc"]
    b = [ck(c, c, rank=r) for r, c in reversed(list(enumerate("abcde", start=1)))]
    d = diff_retrieval("q", a, b)  # B given in reverse order: ranks decide
    assert [c.id_b for c in d.chunks] == list("abcde")
    assert (d.k, d.overlap, d.top_changed) == (3, 1.0, False)
    assert (d.count("kept"), d.count("added"), d.count("removed")) == (3, 2, 0)


def test_retrieval_summary_over_cases() -> None:
    same = diff_retrieval("s", [ck("a", "a")], [ck("a", "a")])
    moved = diff_retrieval("m", [ck("a", "a"), ck("b", "b")], [ck("b", "b"), ck("a", "a")])
    none = diff_retrieval("n", [], [ck("a", "a")])
    s = summarise_retrieval([same, moved, none], n_paired=4)
    assert (s.n_cases, s.n_without) == (2, 2)
    assert s.mean_overlap == 1.0 and s.top_changed_share == 0.5
    assert (s.with_moved, s.unchanged, s.with_added) == (1, 1, 0)


# ---------------------------------------------------------------- answers


def test_word_diff_of_two_answers() -> None:
    a = "They need manager approval and are issued as credit."
    b = "They need support approval and are paid by card."
    d = diff_answers(a, b)
    assert [(s.kind, s.text) for s in d.segments] == [
        ("equal", "They need "),
        ("removed", "manager "),
        ("added", "support "),
        ("equal", "approval and are "),
        ("removed", "issued as credit"),
        ("added", "paid by card"),
        ("equal", "."),
    ]
    assert (d.words_added, d.words_removed) == (4, 4)
    assert d.similarity == pytest.approx(2 * 6 / 20)  # 6 of 10 tokens each side in common
    assert d.text("b") == b and d.text("a") == a
    # each side keeps its own line breaks where only the whitespace differs (a bulleted A)
    bulleted = diff_answers("- They need\n- manager approval.", "- They need - support approval.")
    assert bulleted.text("a") == "- They need\n- manager approval."
    assert bulleted.text("b") == "- They need - support approval."
    shown = word_diff((s.kind, s.text) for s in d.segments)
    assert shown == (
        "They need [-manager -]{+support +}approval and are [-issued as credit-]{+paid by card+}."
    )


def test_whitespace_alone_is_no_change_and_text_stays_literal() -> None:
    assert diff_answers("Refunds\ntake  5 days.", "Refunds take 5 days.").identical
    d = diff_answers("ok", "ok \x1b[31mred\x1b]52;c;Zm9v\x07")
    added = "".join(s.text for s in d.segments if s.kind == "added")
    assert "\x1b[31m" in added  # data keeps the literal text
    shown = word_diff((s.kind, s.text) for s in d.segments)
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b[31m" in shown


def test_huge_answers_are_bounded() -> None:
    long = "word " * (MAX_TOKENS + 50)
    d = diff_answers(long, long + "tail")
    assert d.truncated and not d.identical
    assert sum(len(s.text.split()) for s in d.segments) == MAX_TOKENS


# ---------------------------------------------------------------- claims


def fc(text: str, verdict: str, *chunks: str) -> Claim:
    return Claim("faithfulness", text, verdict, chunks)


def test_claim_changes_and_the_chunk_that_left() -> None:
    retrieval = diff_retrieval(
        "q",
        [ck("k1", "one"), ck("k2", "two"), ck("k3", "three")],
        [ck("k2", "two"), ck("k4", "four")],
    )
    a = [
        fc("Starter allows up to 5 members and 10 projects.", "SUPPORTED", "k1"),
        fc("Invoices are issued in EUR or USD.", "SUPPORTED", "k2"),
        fc("Refunds go to the original card.", "UNSUPPORTED"),
        fc("Exports run every night at 2am.", "SUPPORTED", "k3"),
        fc("Admins can reset passwords for members.", "SUPPORTED", "k2"),
    ]
    b = [
        fc("Starter allows up to 3 members and 2 projects.", "UNSUPPORTED"),
        fc("Invoices are issued in EUR or in USD.", "UNSUPPORTED"),
        fc("Refunds go back to the original card.", "SUPPORTED", "k2"),
        fc("Admins can reset passwords for members.", "PARTIAL", "k2"),
        fc("Support answers within one hour on weekends.", "UNSUPPORTED"),
        Claim("answer_relevancy", "Refunds go to the original card.", "yes"),
    ]
    d = diff_claims("q", a, b, retrieval)
    got = [(c.change, c.text_b or c.text_a, c.chunk_gone) for c in d.changes]
    assert got == [
        ("lost support", b[0].text, True),  # k1 left B's retrieval
        ("lost support", b[1].text, False),  # k2 is still there
        ("fixed", b[2].text, None),
        ("weakened", b[3].text, None),
        ("new", b[4].text, None),
        ("dropped", a[3].text, None),
    ]  # the answer_relevancy claim is not about support: left out
    # 7 of 9 words in common: 2*7/18
    assert d.changes[0].similarity == pytest.approx(14 / 18)
    assert (d.new_unsupported, d.lost_chunk_gone) == (1, 1)
    s = summarise_claims([d])
    assert (s.lost_support, s.lost_support_chunk_gone, s.fixed, s.new, s.dropped) == (2, 1, 1, 1, 1)
    json.dumps(d.to_json(), allow_nan=False)


def test_different_claims_do_not_match() -> None:
    """Two different claims of one escalation answer (sample history): 0.36, under 0.5."""
    a = [
        fc(
            "If there's still no acknowledgement after another 10 minutes, it goes to the Engineering Manager.",
            "SUPPORTED",
        )
    ]
    b = [
        fc(
            "If the page isn't acknowledged within 10 minutes, PagerDuty escalates it to the secondary on-call.",
            "SUPPORTED",
        )
    ]
    d = diff_claims("q", a, b)
    assert [c.change for c in d.changes] == ["new", "dropped"]
    assert CLAIM_MATCH == 0.5


def test_punctuation_is_diffed_but_not_counted_as_words() -> None:
    d = diff_answers("Refunds take 5 days.", "Refunds take 7 days!")
    assert (d.words_added, d.words_removed) == (1, 1)  # 5 -> 7; "." -> "!" is no word
    assert (
        word_diff((s.kind, s.text) for s in d.segments) == "Refunds take [-5 -]{+7 +}days[-.-]{+!+}"
    )
