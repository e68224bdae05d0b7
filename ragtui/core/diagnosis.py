"""Diagnosis of a comparison: which stage made each worse case worse, what changed in the
retrieval, the answers and the claims, the case classes, and cost and latency beside quality.

`diagnose` summarises A vs B; `diagnose_case` gives one case in full. The rules of stage
attribution are in attribution.py; the inputs from the comparison engine come through
diagnosis_input.py.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ragtui.core import case_texts, stats
from ragtui.core.answer_diff import AnswerDiff, diff_answers
from ragtui.core.attribution import (
    CAUSES,
    DEFAULT_MIN_DROP,
    STAGES,
    Attribution,
    Move,
    Roles,
    Ungraded,
    attribute,
    fell,
    find_roles,
)
from ragtui.core.case_history import CaseClass, History, case_classes
from ragtui.core.claim_diff import ClaimDiff, ClaimSummary, diff_claims, summarise_claims
from ragtui.core.compare import Comparison
from ragtui.core.costs import CostDelta, cost_deltas, run_costs
from ragtui.core.diagnosis_input import PairedScores, paired_scores, require_metrics
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Case, Chunk, Claim
from ragtui.core.retrieval_diff import (
    RetrievalDiff,
    RetrievalSummary,
    diff_retrieval,
    summarise_retrieval,
)
from ragtui.core.store import Store
from ragtui.core.text_match import same_text

WORST = 10


@dataclass(frozen=True)
class CaseAttribution:
    case_id: str
    metric: str
    a: float  # A's value: the mean of its reruns
    b: float
    cause: str
    stage: str
    basis: str
    missing: tuple[str, ...] = ()
    ungraded: tuple[Ungraded, ...] = ()  # a role's metric with no grade for this case
    held: tuple[str, ...] = ()  # off-intent: the roles whose metric held

    @property
    def delta(self) -> float:
        return self.b - self.a

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "cause": self.cause,
            "stage": self.stage,
            "basis": self.basis,
            "missing": list(self.missing),
            "ungraded": [u.to_json() for u in self.ungraded],
            "held": list(self.held),
        }


@dataclass(frozen=True)
class MetricAttribution:
    metric: str
    delta: float | None  # the comparison's Δ (mean of the paired deltas)
    verdict: str
    reason: str
    n_paired: int
    cases: tuple[CaseAttribution, ...]  # the cases that fell, worst first
    a_reruns_used: int = 1  # A's runs whose values set the per-case noise on this metric
    a_reruns_identical: int = 0  # A's reruns left out of it: identical to another (cache hit)

    @property
    def noise_rule(self) -> str:
        """How a case fell on this metric: "reruns" (below every one of A's reruns kept for
        it) or "min_drop" (no reruns, or A's reruns identical on it)."""
        return "reruns" if self.a_reruns_used >= 2 else "min_drop"

    def by_stage(self) -> dict[str, int]:
        return {s: sum(c.stage == s for c in self.cases) for s in STAGES}

    def by_cause(self) -> dict[str, int]:
        return {k: sum(c.cause == k for c in self.cases) for k in CAUSES}

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "delta": self.delta,
            "verdict": self.verdict,
            "reason": self.reason,
            "n_paired": self.n_paired,
            "n_fell": len(self.cases),
            "noise_rule": self.noise_rule,
            "a_reruns_used": self.a_reruns_used,
            "a_reruns_identical": self.a_reruns_identical,
            "by_stage": self.by_stage(),
            "by_cause": self.by_cause(),
            "cases": [c.to_json() for c in self.cases],
        }


@dataclass(frozen=True)
class Diagnosis:
    a: str
    b: str
    a_name: str
    b_name: str
    a_runs: tuple[str, ...]  # A and its reruns: with 2 or more, a case falls below all of them
    min_drop: float  # the fall that counts when A has no reruns
    roles: Roles
    metrics: tuple[MetricAttribution, ...]
    n_cases: int
    answers_changed: int
    retrieval: RetrievalSummary
    claims: ClaimSummary
    classes: Mapping[str, Mapping[str, int]]  # metric -> class -> cases (B against A's config)
    costs: tuple[CostDelta, ...]
    warnings: tuple[str, ...]
    # every paired case has the same (non-empty) answer and the same chunks in A and B (a
    # re-judge against its parent): whatever fell, the judge did it, not a pipeline stage
    same_output: bool = False
    b_runs: tuple[str, ...] = ()  # B and its reruns: B's value is their mean, as in compare
    thresholds: Mapping[str, float] = field(default_factory=dict)  # --pass, per metric
    # every case's class (the screens list them; --json carries only the counts above)
    history: History | None = field(default=None, repr=False, compare=False)

    @property
    def noise_rule(self) -> str:
        return "reruns" if len(self.a_runs) >= 2 else "min_drop"

    def worst(self, n: int = WORST) -> list[CaseAttribution]:
        every = [c for m in self.metrics for c in m.cases]
        return sorted(every, key=lambda c: (c.delta, c.metric, c.case_id))[:n]

    def to_json(self, worst: int = WORST) -> dict[str, Any]:
        """`worst`: how many of the worst cases to list (`diagnose --worst`)."""
        return {
            "a": self.a,
            "b": self.b,
            "a_name": self.a_name,
            "b_name": self.b_name,
            "a_runs": list(self.a_runs),
            "b_runs": list(self.b_runs),
            "noise_rule": self.noise_rule,
            "min_drop": self.min_drop,
            "roles": self.roles.to_json(),
            "metrics": [m.to_json() for m in self.metrics],
            "n_cases": self.n_cases,
            "answers_changed": self.answers_changed,
            "same_output": self.same_output,
            "retrieval": self.retrieval.to_json(),
            "claims": self.claims.to_json(),
            "classes": {m: dict(c) for m, c in self.classes.items()},
            "pass_thresholds": dict(self.thresholds),
            "costs": [c.__dict__ for c in self.costs],
            "worst": [c.to_json() for c in self.worst(worst)],
            "warnings": list(self.warnings),
        }


# ---------------------------------------------------------------- loading


def _columns(table: pa.Table, names: Sequence[str]) -> Iterable[tuple[Any, ...]]:
    return zip(*(table[n].to_pylist() for n in names), strict=True)


def _chunks_by_case(table: pa.Table) -> dict[tuple[str, str], list[Chunk]]:
    out: dict[tuple[str, str], list[Chunk]] = {}
    names = ("run_id", "case_id", "chunk_id", "text", "source", "rank", "score")
    for run, case_id, cid, text, source, rank, score in _columns(table, names):
        out.setdefault((run, case_id), []).append(Chunk(cid, text or "", source, rank, score))
    return out


def _claims_by_case(table: pa.Table) -> dict[tuple[str, str], list[Claim]]:
    out: dict[tuple[str, str], list[Claim]] = {}
    names = ("run_id", "case_id", "metric", "text", "verdict", "chunks", "reason")
    for run, case_id, metric, text, verdict, chunks, reason in _columns(table, names):
        out.setdefault((run, case_id), []).append(
            Claim(metric, text or "", verdict or "", tuple(chunks or ()), reason)
        )
    return out


@dataclass(frozen=True)
class _Facts:
    retrieval: RetrievalDiff | None
    claims: ClaimDiff | None
    moves: dict[str, Move]
    # metric -> (the side with no grade for this case: "A", "B" or "A and B", whether it failed)
    ungraded: dict[str, tuple[str, bool]] = field(default_factory=dict)


def _facts(
    paired: PairedScores,
    ci: int,
    chunks: Mapping[tuple[str, str], list[Chunk]],
    claims: Mapping[tuple[str, str], list[Claim]],
    min_drop: float,
    grades: Mapping[tuple[str, str, str], bool] | None = None,
) -> _Facts:
    """`grades`: (run, case, metric) -> True where A's or B's own run graded it, False where
    the grade failed (see `_grades`)."""
    case_id = paired.case_ids[ci]
    ca, cb = chunks.get((paired.a, case_id), []), chunks.get((paired.b, case_id), [])
    retrieval = diff_retrieval(case_id, ca, cb) if ca or cb else None
    la, lb = claims.get((paired.a, case_id), []), claims.get((paired.b, case_id), [])
    claim_diff = diff_claims(case_id, la, lb, retrieval) if la or lb else None
    moves = {}
    ungraded = {}
    sides = (("A", paired.a), ("B", paired.b))
    for mi, metric in enumerate(paired.metric_names()):
        b = paired.b_value(mi, ci)
        a_runs = paired.a_values(mi, ci)
        if b is None or not a_runs:
            # not paired here: the side(s) whose own run has no grade of it (a failed one, or
            # none); the paired values cannot tell, they leave out both sides of such a case
            got = [(side, (grades or {}).get((run, case_id, metric))) for side, run in sides]
            gone = [side for side, g in got if not g] or ["A" if not a_runs else "B"]
            ungraded[metric] = (" and ".join(gone), any(g is False for _, g in got))
            continue
        moves[metric] = Move(sum(a_runs) / len(a_runs), b, fell(a_runs, b, min_drop))
    return _Facts(retrieval, claim_diff, moves, ungraded)


def _grades(store: Store, paired: PairedScores) -> dict[tuple[str, str, str], bool]:
    """(run, case, metric) -> True for a grade A's or B's own run gave, False for one that
    failed (an error); a grade never asked for is absent."""
    table = store.scores([paired.a, paired.b], paired.metric_names(), ordered=False)
    names = ("run_id", "case_id", "metric", "error")
    return {(r, c, m): e is None for r, c, m, e in _columns(table, names)}


def _answers(store: Store, paired: PairedScores) -> dict[str, dict[str, str | None]]:
    """run -> case id -> answer, for A and B."""
    return {
        run: dict(zip(t["case_id"].to_pylist(), t["answer"].to_pylist(), strict=True))
        for run in (paired.a, paired.b)
        for t in [store.cases(run)]
    }


def _same_output(
    paired: PairedScores,
    answers: Mapping[str, Mapping[str, str | None]],
    retrievals: Sequence[RetrievalDiff | None],
) -> bool:
    """Every paired case has the same answer in A and B (`same_text`: equal outputs are equal,
    empty ones included) and the same chunks in the same order (`None`: neither run recorded
    chunks for it). A case where one side retrieved nothing counts as changed. When neither
    run recorded any output at all (every answer empty, no chunks) nothing shows the outputs
    were the same: not a re-judge."""
    if not paired.case_ids:
        return False
    recorded = False
    for case_id, diff in zip(paired.case_ids, retrievals, strict=True):
        a, b = answers[paired.a].get(case_id), answers[paired.b].get(case_id)
        if not same_text(a, b):
            return False
        if diff is not None and any(c.mark != "kept" for c in diff.chunks):
            return False
        recorded = recorded or bool((a or "").strip()) or diff is not None
    return recorded


def output_unchanged(store: Store, paired: PairedScores) -> bool:
    """Whether A and B gave the same answers and chunks on every paired case (a re-judge): the
    condition of the *regraded* rule, for one case as for the whole diagnosis. A screen stepping
    through cases computes it once and passes it to `diagnose_case`."""
    answers = _answers(store, paired)
    chunks = _chunks_by_case(case_texts.chunks(store, [paired.a, paired.b]))
    retrievals = []
    for case_id in paired.case_ids:
        ca, cb = chunks.get((paired.a, case_id), []), chunks.get((paired.b, case_id), [])
        retrievals.append(diff_retrieval(case_id, ca, cb) if ca or cb else None)
    return _same_output(paired, answers, retrievals)


def _check_min_drop(min_drop: float) -> None:
    if not 0.0 < min_drop <= 1.0:
        raise RagtuiError(
            f"min drop must be a fraction in (0, 1] (0.1 = 10 points), got {min_drop}"
        )


# ---------------------------------------------------------------- A vs B


def diagnose(
    store: Store,
    a_ref: str,
    b_ref: str,
    *,
    metrics: Sequence[str] | None = None,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
    min_drop: float = DEFAULT_MIN_DROP,
    roles: Mapping[str, str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    cluster_field: str | None = None,
    comparison: Comparison | None = None,
) -> Diagnosis:
    """`comparison`: A vs B as the caller already computed it (the Compare screen), reused."""
    _check_min_drop(min_drop)
    paired = paired_scores(
        store,
        a_ref,
        b_ref,
        margin=margin,
        seed=seed,
        cluster_field=cluster_field,
        comparison=comparison,
    )
    chosen = require_metrics(paired, metrics)
    found = find_roles(paired.metric_names(), roles)
    chunks = _chunks_by_case(case_texts.chunks(store, [paired.a, paired.b]))
    claims = _claims_by_case(case_texts.claims(store, [paired.a, paired.b]))
    grades = _grades(store, paired)
    facts = [
        _facts(paired, ci, chunks, claims, min_drop, grades) for ci in range(len(paired.case_ids))
    ]
    answers = _answers(store, paired)
    changed = sum(
        not same_text(answers[paired.a].get(c), answers[paired.b].get(c)) for c in paired.case_ids
    )
    retrieval = summarise_retrieval(
        [f.retrieval for f in facts if f.retrieval is not None], len(facts)
    )
    same_output = _same_output(paired, answers, [f.retrieval for f in facts])
    results = []
    for metric in chosen:
        fallen = []
        for f, case_id in zip(facts, paired.case_ids, strict=True):
            move = f.moves.get(metric)
            if move is None or not move.fell:
                continue
            why = attribute(f.moves, found, f.claims, f.retrieval, same_output, metric, f.ungraded)
            fallen.append(_case_attribution(case_id, metric, move, why))
        fallen.sort(key=lambda c: (c.delta, c.case_id))
        mi = paired.metric_names().index(metric)
        md = paired.metrics[mi]
        used = len(paired.metric_a_runs[mi]) if paired.metric_a_runs else len(paired.a_runs)
        results.append(
            MetricAttribution(
                metric,
                md.delta,
                md.verdict,
                md.reason,
                md.n,
                tuple(fallen),
                used,
                len(paired.a_runs) - used,
            )
        )
    classes = case_classes(store, paired.b, base=paired.a, metrics=chosen, thresholds=thresholds)
    # over the paired cases: a case only one run has would move cost but not quality
    cost_a, cost_b = run_costs(store, [paired.a, paired.b], case_ids=paired.case_ids)
    return Diagnosis(
        a=paired.a,
        b=paired.b,
        a_name=paired.a_name,
        b_name=paired.b_name,
        a_runs=paired.a_runs,
        min_drop=min_drop,
        roles=found,
        metrics=tuple(results),
        n_cases=len(paired.case_ids),
        answers_changed=changed,
        retrieval=retrieval,
        claims=summarise_claims([f.claims for f in facts if f.claims is not None]),
        classes=classes.counts(),
        costs=tuple(cost_deltas(cost_a, cost_b)),
        warnings=tuple([*paired.warnings, *found.notes, *classes.notes]),
        same_output=same_output,
        b_runs=paired.b_runs,
        thresholds=dict(thresholds or {}),
        history=classes,
    )


def _case_attribution(case_id: str, metric: str, move: Move, why: Attribution) -> CaseAttribution:
    return CaseAttribution(
        case_id,
        metric,
        move.a,
        move.b,
        why.cause,
        why.stage,
        why.basis,
        why.missing,
        why.ungraded,
        why.held,
    )


# ---------------------------------------------------------------- one case


@dataclass(frozen=True)
class MetricMove:
    metric: str
    a: float
    a_runs: tuple[float, ...]
    b: float  # the mean of B's reruns
    fell: bool
    b_runs: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "a": self.a,
            "a_runs": list(self.a_runs),
            "b": self.b,
            "b_runs": list(self.b_runs),
            "delta": self.b - self.a,
            "fell": self.fell,
        }


@dataclass(frozen=True)
class MetricGap:
    """A metric both runs score that this case has no pair of grades for: a side failed (an
    error) or did not grade it, so it is not compared."""

    metric: str
    a: float | None  # A's own grade of the case (None: none)
    b: float | None
    error_a: str | None  # why A's grade failed
    error_b: str | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _shared_metrics(store: Store, paired: PairedScores) -> list[str]:
    """Every metric both runs grade (or tried to: a metric whose every grade failed on one
    side too), not only those with a paired case."""
    have_b = set(store.metrics([paired.b]))
    return [m for m in store.metrics([paired.a]) if m in have_b]


def _gaps(
    names: Sequence[str], compared: Collection[str], case_a: Case, case_b: Case
) -> list[MetricGap]:
    out = []
    for metric in names:
        if metric in compared:
            continue
        got = [
            (None if (s := c.scores.get(metric)) is None else s.value, c.errors.get(metric))
            for c in (case_a, case_b)
        ]
        if any(v is not None or e is not None for v, e in got):
            (a, ea), (b, eb) = got
            out.append(MetricGap(metric, a, b, ea, eb))
    return out


@dataclass(frozen=True)
class CaseDiagnosis:
    a: str
    b: str
    case_id: str
    question: str
    reference: str | None
    answer_a: str
    answer_b: str
    moves: tuple[MetricMove, ...]
    attributions: tuple[CaseAttribution, ...]  # one per metric that fell
    retrieval: RetrievalDiff
    answer: AnswerDiff
    claims: ClaimDiff
    classes: tuple[CaseClass, ...]
    gaps: tuple[MetricGap, ...] = ()  # metrics not compared here: a side failed or lacks it

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "case_id": self.case_id,
            "question": self.question,
            "reference": self.reference,
            "answer_a": self.answer_a,
            "answer_b": self.answer_b,
            "metrics": [m.to_json() for m in self.moves],
            "not_compared": [g.to_json() for g in self.gaps],
            "attributions": [c.to_json() for c in self.attributions],
            "retrieval": self.retrieval.to_json(),
            "answer_diff": self.answer.to_json(),
            "claims": self.claims.to_json(),
            "classes": [c.to_json() for c in self.classes],
        }


def diagnose_case(
    store: Store,
    a_ref: str,
    b_ref: str,
    case_id: str,
    *,
    margin: float = 0.05,
    seed: int = stats.DEFAULT_SEED,
    min_drop: float = DEFAULT_MIN_DROP,
    roles: Mapping[str, str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    paired: PairedScores | None = None,
    cluster_field: str | None = None,
    same_output: bool | None = None,
) -> CaseDiagnosis:
    """One case in full. A screen stepping through cases passes the comparison's `paired`
    (from `paired_scores`, computed once) and `same_output` (from `output_unchanged`, once) so
    each case costs only its own reads; without them they are computed here, as `diagnose`
    computes them, so one case is attributed by the very rules of the summary."""
    _check_min_drop(min_drop)
    if paired is None:
        paired = paired_scores(
            store, a_ref, b_ref, margin=margin, seed=seed, cluster_field=cluster_field
        )
    elif (store.resolve_run(a_ref), store.resolve_run(b_ref)) != (paired.a, paired.b):
        raise RagtuiError(f"the paired scores given are of {paired.a} vs {paired.b}")
    case_a, case_b = store.case(paired.a, case_id), store.case(paired.b, case_id)
    if case_a is None or case_b is None:
        side = paired.a if case_a is None else paired.b
        raise RagtuiError(f"no case {case_id!r} in run {side}")
    found = find_roles(paired.metric_names(), roles)
    if same_output is None:
        same_output = output_unchanged(store, paired)
    retrieval = diff_retrieval(case_id, case_a.contexts, case_b.contexts)
    claims = diff_claims(case_id, case_a.claims, case_b.claims, retrieval)
    moves: list[MetricMove] = []
    attributions: list[CaseAttribution] = []
    if case_id in paired.case_ids:
        ci = paired.case_ids.index(case_id)
        facts = _facts(
            paired,
            ci,
            {
                (paired.a, case_id): list(case_a.contexts),
                (paired.b, case_id): list(case_b.contexts),
            },
            {(paired.a, case_id): list(case_a.claims), (paired.b, case_id): list(case_b.claims)},
            min_drop,
            {
                (run, case_id, m): m not in c.errors
                for run, c in ((paired.a, case_a), (paired.b, case_b))
                for m in (*c.scores, *c.errors)
            },
        )
        for mi, metric in enumerate(paired.metric_names()):
            move = facts.moves.get(metric)
            if move is None:
                continue
            a_runs, b_runs = paired.a_values(mi, ci), paired.b_values(mi, ci)
            moves.append(
                MetricMove(metric, move.a, tuple(a_runs), move.b, move.fell, tuple(b_runs))
            )
            if move.fell:
                why = attribute(
                    facts.moves,
                    found,
                    facts.claims,
                    facts.retrieval,
                    same_output,
                    metric,
                    facts.ungraded,
                )
                attributions.append(_case_attribution(case_id, metric, move, why))
    history = case_classes(
        store, paired.b, base=paired.a, thresholds=thresholds, case_ids={case_id}
    )
    return CaseDiagnosis(
        a=paired.a,
        b=paired.b,
        case_id=case_id,
        question=case_b.question,
        reference=case_b.reference if case_b.reference is not None else case_a.reference,
        answer_a=case_a.answer,
        answer_b=case_b.answer,
        moves=tuple(moves),
        attributions=tuple(attributions),
        retrieval=retrieval,
        answer=diff_answers(case_a.answer, case_b.answer),
        claims=claims,
        classes=history.cases,
        gaps=tuple(
            _gaps(_shared_metrics(store, paired), {m.metric for m in moves}, case_a, case_b)
        ),
    )
