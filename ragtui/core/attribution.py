"""Stage attribution: which stage of the RAG pipeline made a case worse, from the metrics present.

A metric *fell* for a case when B's value is below every one of A's reruns (the per-case noise
the reruns show); with a single A run (or A's reruns identical on that metric: a cache hit,
left out), when it dropped by at least `min_drop` (default 10 points). It *held* when both runs
scored it and it did not fall. The retrieval *held* when context recall held, or when both runs
retrieved the very same chunks (the retrieval diff: nothing added, removed or moved). The rules,
first match wins:

1. retrieval miss     context recall fell (the chunks changed); or B retrieved nothing where A
                      retrieved chunks; or a claim lost its support and every chunk that
                      supported it in A is gone from B's retrieval
2. retrieval noise    context precision fell (the chunks changed) while faithfulness held
3. hallucination      a claim lost its support, or B makes more unsupported claims than A, while
                      the retrieval held (without a recall metric or the same chunks: every
                      chunk that supported A's claims is still retrieved)
4. ignored context    faithfulness fell while the retrieval held (as in 3)
5. off-intent         answer relevance fell while every other stage metric scored held
6. unattributed       the metrics needed to tell are missing (their names are listed), or
                      this case's grade of one failed on a side (named)

Rules 1–2 are the retrieval stage, 3–5 the generation stage. Before them all: when A and B
gave the same answers and chunks on every case (a re-judge against its parent), no stage
changed, and a case that fell was *regraded* (the judge stage). So is a context recall or
precision fall on chunks that did not change: the judge graded the same chunks differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragtui.core.claim_diff import ClaimDiff
from ragtui.core.errors import RagtuiError, UnknownMetricError
from ragtui.core.model import is_faithfulness
from ragtui.core.retrieval_diff import RetrievalDiff

DEFAULT_MIN_DROP = 0.10
_SLACK = 1e-9

ROLES = ("faithfulness", "context_recall", "context_precision", "answer_relevance")
CAUSES = (
    "regraded",
    "retrieval miss",
    "retrieval noise",
    "hallucination",
    "ignored context",
    "off-intent",
    "unattributed",
)
STAGE_OF = {
    "regraded": "judge",
    "retrieval miss": "retrieval",
    "retrieval noise": "retrieval",
    "hallucination": "generation",
    "ignored context": "generation",
    "off-intent": "generation",
    "unattributed": "unattributed",
}
STAGES = ("generation", "retrieval", "judge", "unattributed")

_PATTERNS = {
    "context_recall": re.compile(r"context(ual)?_(entity_)?recall"),
    "context_precision": re.compile(r"context(ual)?_(precision|relevan(ce|cy)|utili[sz]ation)"),
    "answer_relevance": re.compile(r"(answer|response)_relevan(ce|cy)"),
}


@dataclass(frozen=True)
class Roles:
    """Which metric plays each role; `notes` says why a role is empty when names were ambiguous."""

    metric: Mapping[str, str]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"metric": dict(self.metric), "notes": list(self.notes)}


def find_roles(metrics: Iterable[str], overrides: Mapping[str, str] | None = None) -> Roles:
    """Roles from metric names (RAGAS, DeepEval, TruLens spellings), or as the user named them."""
    names = sorted(set(metrics))
    overrides = dict(overrides or {})
    for role, metric in overrides.items():
        if role not in ROLES:
            raise RagtuiError(f"unknown stage role {role!r}: use one of {', '.join(ROLES)}")
        if metric not in names:
            raise UnknownMetricError(
                f"--role {role}={metric}: no metric {metric!r} in both runs "
                f"(they share: {', '.join(names) or 'none'})"
            )
    found: dict[str, str] = {}
    notes: list[str] = []
    for role in ROLES:
        if role in overrides:
            found[role] = overrides[role]
            continue
        if role == "faithfulness":
            hits = [m for m in names if is_faithfulness(m)]
        else:
            key = {m: re.sub(r"[^a-z0-9]+", "_", m.casefold()) for m in names}
            hits = [m for m in names if _PATTERNS[role].search(key[m])]
        if len(hits) == 1:
            found[role] = hits[0]
        elif hits:
            notes.append(
                f"several metrics could be {role} ({', '.join(hits)}): "
                f"name one with --role {role}=METRIC"
            )
    return Roles(found, tuple(notes))


def fell(a_runs: list[float], b: float, min_drop: float = DEFAULT_MIN_DROP) -> bool:
    """B below every rerun of A (k >= 2), else a drop of at least `min_drop`."""
    if len(a_runs) >= 2:
        return b < min(a_runs) - _SLACK
    return sum(a_runs) / len(a_runs) - b >= min_drop - _SLACK


@dataclass(frozen=True)
class Move:
    """One metric of one case: A (the mean of its reruns), B, and whether it fell."""

    a: float
    b: float
    fell: bool


@dataclass(frozen=True)
class Ungraded:
    """A role's metric both runs score, with no grade for this case on `side`."""

    role: str
    metric: str
    side: str  # "A", "B" or "A and B"
    failed: bool  # the grade failed (an error), not merely absent

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Attribution:
    cause: str  # one of CAUSES
    basis: str  # which evidence decided: a key of format.ATTRIBUTION_BASIS
    missing: tuple[str, ...] = ()  # roles whose metric would have decided (unattributed only)
    # roles whose metric exists but has no grade for this case (unattributed only)
    ungraded: tuple[Ungraded, ...] = ()
    held: tuple[str, ...] = ()  # off-intent: the roles whose metric held

    @property
    def stage(self) -> str:
        return STAGE_OF[self.cause]


def _supporting_chunks_kept(
    claims: ClaimDiff | None, retrieval: RetrievalDiff | None
) -> bool | None:
    """Every chunk A's claims cited is still in B's retrieval (None: no cited chunk is known)."""
    if claims is None or retrieval is None:
        return None
    cited = {cid for c in claims.changes for cid in c.chunks_a}
    known = [p for p in (retrieval.in_b(cid) for cid in cited) if p is not None]
    return all(known) if known else None


def same_chunks(retrieval: RetrievalDiff | None) -> bool:
    """Both runs retrieved chunks and they are the same, in the same order."""
    return (
        retrieval is not None
        and retrieval.n_a > 0
        and retrieval.n_b > 0
        and all(c.mark == "kept" for c in retrieval.chunks)
    )


def chunks_gone(retrieval: RetrievalDiff | None) -> bool:
    """A retrieved chunks for this case and B retrieved none."""
    return retrieval is not None and retrieval.n_a > 0 and retrieval.n_b == 0


def attribute(
    moves: Mapping[str, Move],
    roles: Roles,
    claims: ClaimDiff | None = None,
    retrieval: RetrievalDiff | None = None,
    same_output: bool = False,
    metric: str | None = None,
    ungraded: Mapping[str, tuple[str, bool]] | None = None,
) -> Attribution:
    """The stage that made this case's `metric` worse; `moves` has the metrics both runs
    scored for it. `same_output`: A and B gave the same answers and chunks on every case.
    `ungraded`: metric -> (side, failed) for a metric both runs score that has no grade for
    this case on that side."""
    if same_output:
        return Attribution("regraded", "same answers and chunks")
    unchanged = same_chunks(retrieval)

    def state(role: str) -> str:  # "fell", "held" or "missing"
        name = roles.metric.get(role)
        move = moves.get(name) if name else None
        return "missing" if move is None else ("fell" if move.fell else "held")

    recall, precision = state("context_recall"), state("context_precision")
    faith, relevance = state("faithfulness"), state("answer_relevance")
    if unchanged:
        # the chunks did not change: a recall or precision fall is the judge grading the
        # same chunks differently, and the retrieval held whatever those metrics say
        for role, basis in (
            ("context_recall", "recall fell, same chunks"),
            ("context_precision", "precision fell, same chunks"),
        ):
            name = roles.metric.get(role)
            if metric is not None and metric == name and state(role) == "fell":
                return Attribution("regraded", basis)
        recall_seen = recall
        recall = precision = "held"
    else:
        recall_seen = recall
        if recall == "fell":
            return Attribution("retrieval miss", "recall fell")
        if chunks_gone(retrieval):
            return Attribution("retrieval miss", "no chunks in B")
    if claims is not None and claims.lost_chunk_gone:
        return Attribution("retrieval miss", "supporting chunk gone")
    if precision == "fell" and faith == "held":
        return Attribution("retrieval noise", "precision fell, faithfulness held")
    if recall_seen == "held":
        retrieval_held, how = True, "recall held"
    elif unchanged:
        retrieval_held, how = True, "same chunks"
    else:
        kept = _supporting_chunks_kept(claims, retrieval)
        retrieval_held, how = bool(kept), "chunks kept"
    # a claim that lost its support, or more unsupported claims than A had (a net growth: one
    # unsupported claim swapped for another is no new hallucination)
    new_unsupported = claims is not None and (
        claims.count("lost support") > 0 or claims.more_unsupported
    )
    if new_unsupported and retrieval_held:
        return Attribution("hallucination", f"new unsupported claims, {how}")
    if faith == "fell" and retrieval_held:
        return Attribution("ignored context", f"faithfulness fell, {how}")
    others = [recall, precision, faith]
    if relevance == "fell" and "fell" not in others and "held" in others:
        held = tuple(
            r for r in ("context_recall", "context_precision", "faithfulness") if state(r) == "held"
        )
        basis = "relevance fell, same chunks" if unchanged else "relevance fell alone"
        return Attribution("off-intent", basis, held=held)
    need = _missing(recall, precision, faith)
    found = {**(ungraded or {})}
    ungraded_roles = tuple(
        Ungraded(role, roles.metric[role], *found[roles.metric[role]])
        for role in need
        if roles.metric.get(role) in found
    )
    missing = tuple(r for r in need if roles.metric.get(r) not in found)
    return Attribution(
        "unattributed",
        "metrics missing" if need else "no rule fits",
        missing,
        ungraded_roles,
    )


def _missing(recall: str, precision: str, faith: str) -> tuple[str, ...]:
    """The roles whose metric would have let a rule decide."""
    out = []
    if recall == "missing":
        out.append("context_recall")
    if faith == "missing":
        out.append("faithfulness")
    if precision == "missing" and faith != "fell":
        out.append("context_precision")
    return tuple(out)
