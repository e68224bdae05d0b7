"""Claim diff of one case: B's faithfulness claims matched to A's, and what became of each.

Two claims match when their words are similar enough: the Ratcliff–Obershelp ratio over
normalised words (2·matched / total) is at least CLAIM_MATCH (0.5), best pairs first, each
claim used once. Why 0.5: in the bundled sample history the same claim scores 1.0 across runs;
a claim rewritten with changed facts ("Starter allows up to 5 members and 10 projects" against
"... 3 members and 2 projects") scores 0.56–0.78; two different claims of one answer score at
most 0.36. At 0.5 a reworded claim still matches its old self (so "became unsupported" is
seen), while an unrelated claim is left unmatched and shows as new, which is the safer error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragtui.core.model import Claim, is_faithfulness
from ragtui.core.retrieval_diff import RetrievalDiff
from ragtui.core.text_match import similarity, words

CLAIM_MATCH = 0.5
MAX_CLAIMS = 100  # per case and side; more are listed as new / dropped without matching
_RANK = {"SUPPORTED": 2, "PARTIAL": 1, "UNSUPPORTED": 0}

CHANGES = ("lost support", "fixed", "weakened", "strengthened", "same", "new", "dropped")


@dataclass(frozen=True)
class ClaimChange:
    change: str  # one of CHANGES
    metric: str
    text_a: str | None
    text_b: str | None
    verdict_a: str | None
    verdict_b: str | None
    similarity: float | None
    chunks_a: tuple[str, ...] = ()
    chunks_b: tuple[str, ...] = ()
    # For a claim that lost its support: True when every chunk that supported it in A is gone
    # from B's retrieval, False when one is still there, None when A named no chunk we know.
    chunk_gone: bool | None = None
    reason_b: str | None = None
    # for a claim that lost its support: the chunks it cited in A that left B's retrieval,
    # and those still there (a chunk id the retrieval diff does not know is in neither)
    chunks_left: tuple[str, ...] = ()
    chunks_kept: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("chunks_a", "chunks_b", "chunks_left", "chunks_kept"):
            out[key] = list(out[key])
        return out


@dataclass(frozen=True)
class ClaimDiff:
    case_id: str
    changes: tuple[ClaimChange, ...]  # B's claims in B's order, then A's dropped claims

    def count(self, change: str) -> int:
        return sum(c.change == change for c in self.changes)

    @property
    def new_unsupported(self) -> int:
        return sum(c.change == "new" and c.verdict_b == "UNSUPPORTED" for c in self.changes)

    @property
    def more_unsupported(self) -> bool:
        """B makes more unsupported claims than A: a new unsupported claim that stands in for
        an unsupported one A dropped (or had fixed) is no new hallucination."""
        a = sum(c.text_a is not None and c.verdict_a == "UNSUPPORTED" for c in self.changes)
        b = sum(c.text_b is not None and c.verdict_b == "UNSUPPORTED" for c in self.changes)
        return b > a

    @property
    def lost_chunk_gone(self) -> int:
        return sum(c.change == "lost support" and c.chunk_gone is True for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "counts": {c: self.count(c) for c in CHANGES},
            "new_unsupported": self.new_unsupported,
            "lost_support_chunk_gone": self.lost_chunk_gone,
            "changes": [c.to_json() for c in self.changes],
        }


def _verdict(claim: Claim) -> str | None:
    word = claim.verdict.strip().upper()
    return word if word in _RANK else None


def _change(va: str | None, vb: str | None) -> str:
    if va is None or vb is None or va == vb:
        return "same"
    if vb == "UNSUPPORTED":
        return "lost support"
    if va == "UNSUPPORTED":
        return "fixed"
    return "strengthened" if _RANK[vb] > _RANK[va] else "weakened"


def _chunk_fate(
    claim: Claim, retrieval: RetrievalDiff | None
) -> tuple[bool | None, tuple[str, ...], tuple[str, ...]]:
    """(every cited chunk gone, None when none is known; the cited chunks that left B's
    retrieval; those still in it)."""
    if retrieval is None:
        return None, (), ()
    present = [(cid, retrieval.in_b(cid)) for cid in dict.fromkeys(claim.chunks)]
    left = tuple(cid for cid, p in present if p is False)
    kept = tuple(cid for cid, p in present if p is True)
    if not left and not kept:
        return None, (), ()
    return not kept, left, kept


def _match(a: Sequence[Claim], b: Sequence[Claim]) -> dict[int, tuple[int, float]]:
    """B index -> (A index, similarity): greedy on the best pairs, ties to the nearer position."""
    wa = [words(c.text) for c in a[:MAX_CLAIMS]]
    wb = [words(c.text) for c in b[:MAX_CLAIMS]]
    pairs = []
    for j, y in enumerate(wb):
        for i, x in enumerate(wa):
            s = 1.0 if x == y else similarity(x, y)
            if s >= CLAIM_MATCH:
                pairs.append((-s, abs(i - j), j, i))
    pairs.sort()
    used_a: set[int] = set()
    out: dict[int, tuple[int, float]] = {}
    for neg, _, j, i in pairs:
        if j not in out and i not in used_a:
            out[j] = (i, -neg)
            used_a.add(i)
    return out


def diff_claims(
    case_id: str,
    claims_a: Sequence[Claim],
    claims_b: Sequence[Claim],
    retrieval: RetrievalDiff | None = None,
) -> ClaimDiff:
    """Faithfulness claims only (their verdicts are about support); matched within a metric."""
    changes: list[ClaimChange] = []
    dropped: list[ClaimChange] = []
    metrics = dict.fromkeys(c.metric for c in (*claims_b, *claims_a) if is_faithfulness(c.metric))
    for metric in metrics:
        a = [c for c in claims_a if c.metric == metric]
        b = [c for c in claims_b if c.metric == metric]
        matched = _match(a, b)
        for j, cb in enumerate(b):
            vb = _verdict(cb)
            if j not in matched:
                changes.append(
                    ClaimChange(
                        "new", metric, None, cb.text, None, vb, None, (), cb.chunks, None, cb.reason
                    )
                )
                continue
            i, sim = matched[j]
            ca = a[i]
            change = _change(_verdict(ca), vb)
            gone, left, kept = (
                _chunk_fate(ca, retrieval) if change == "lost support" else (None, (), ())
            )
            changes.append(
                ClaimChange(
                    change,
                    metric,
                    ca.text,
                    cb.text,
                    _verdict(ca),
                    vb,
                    sim,
                    ca.chunks,
                    cb.chunks,
                    gone,
                    cb.reason,
                    left,
                    kept,
                )
            )
        used = {i for i, _ in matched.values()}
        dropped += [
            ClaimChange("dropped", metric, ca.text, None, _verdict(ca), None, None, ca.chunks)
            for i, ca in enumerate(a)
            if i not in used
        ]
    return ClaimDiff(case_id, tuple(changes + dropped))


@dataclass(frozen=True)
class ClaimSummary:
    """Per comparison: counts over the paired cases that carry faithfulness claims."""

    n_cases: int  # paired cases with claims in A or B
    lost_support: int
    lost_support_chunk_gone: int
    fixed: int
    new: int
    new_unsupported: int
    dropped: int
    cases_with_lost: int

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarise_claims(diffs: Sequence[ClaimDiff]) -> ClaimSummary:
    with_claims = [d for d in diffs if d.changes]
    return ClaimSummary(
        n_cases=len(with_claims),
        lost_support=sum(d.count("lost support") for d in with_claims),
        lost_support_chunk_gone=sum(d.lost_chunk_gone for d in with_claims),
        fixed=sum(d.count("fixed") for d in with_claims),
        new=sum(d.count("new") for d in with_claims),
        new_unsupported=sum(d.new_unsupported for d in with_claims),
        dropped=sum(d.count("dropped") for d in with_claims),
        cases_with_lost=sum(d.count("lost support") > 0 for d in with_claims),
    )
