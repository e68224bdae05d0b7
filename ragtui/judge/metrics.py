"""The judge metrics: how a case becomes a prompt, and how the reply becomes a grade.

Each metric makes one judge call per case. The outcome is exactly one of: a Score, or an error
(recorded under `Case.errors`, never a fake score). One exception, on purpose: faithfulness in
label mode scores 0 when the reply has no recognisable label (the convention of the common
harnesses, so means stay comparable with theirs); that score is still flagged as a parse failure
so it is counted and can be shown as such.

Outcome classes, disjoint, used for every count ragtui prints:
- scored: a Score from a reply that parsed;
- parse failure: the judge answered but not in the asked form (label mode: a 0 score with
  `label=None` and reason "parse failure: ..."; JSON metrics: an error "parse failure: ...");
- error: no usable reply (transport, HTTP) or the case cannot be graded ("needs a reference").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ragtui.core.errors import UnknownMetricError
from ragtui.core.model import Case, Claim, Score
from ragtui.judge import parse
from ragtui.judge.parse import ParseFailure
from ragtui.judge.prompts import (
    ANSWER_RELEVANCE,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    FAITH_CLAIMS,
    FAITH_LABEL,
    Prompt,
    block,
    chunks_block,
)

PARSE_FAILURE = "parse failure: "
LABEL_VALUES: Mapping[str, float] = {"YES": 1.0, "PARTIAL": 0.5, "NO": 0.0}
VERDICT_VALUES: Mapping[str, float] = {"SUPPORTED": 1.0, "PARTIAL": 0.5, "UNSUPPORTED": 0.0}


@dataclass(frozen=True)
class Outcome:
    metric: str
    score: Score | None = None
    claims: tuple[Claim, ...] = ()
    error: str | None = None
    parse_failure: bool = False
    judge_failed: bool = False  # the judge call failed (a case that cannot be graded is not)

    @property
    def kind(self) -> str:
        """ "scored", "parse_failure" or "error" (see the module docstring)."""
        if self.parse_failure:
            return "parse_failure"
        return "scored" if self.score is not None else "error"


class NotGradable(Exception):
    """The case lacks what the metric needs; the message becomes `errors[metric]`."""


@dataclass(frozen=True)
class Metric:
    name: str
    prompt: Prompt
    json_reply: bool
    build: Callable[[Case], dict[str, str]] = field(repr=False)  # raises NotGradable
    grade: Callable[[Metric, Case, str], Outcome] = field(repr=False)  # raises ParseFailure
    zero_on_parse_failure: bool = False  # label mode: an unreadable reply scores 0 (counted)

    def messages(self, case: Case) -> list[dict[str, str]]:
        return self.prompt.render(**self.build(case))

    def outcome(self, case: Case, reply: str) -> Outcome:
        try:
            return self.grade(self, case, reply)
        except ParseFailure as exc:
            if self.zero_on_parse_failure:
                score = Score(
                    value=0.0,
                    label=None,
                    reason=PARSE_FAILURE + str(exc),
                    reply=reply,
                    prompt_hash=self.prompt.hash,
                )
                return Outcome(self.name, score=score, parse_failure=True)
            return Outcome(self.name, error=PARSE_FAILURE + str(exc), parse_failure=True)


# ---------------------------------------------------------------- prompt inputs


def _faith_inputs(case: Case) -> dict[str, str]:
    return {"chunks": chunks_block(case.contexts), "answer": block("answer", case.answer)}


def _relevance_inputs(case: Case) -> dict[str, str]:
    return {"question": block("question", case.question), "answer": block("answer", case.answer)}


def _precision_inputs(case: Case) -> dict[str, str]:
    if not case.contexts:
        raise NotGradable("no retrieved chunks to rate")
    # Usefulness is judged against the reference when there is one, else against the answer.
    expected = (
        block("reference", case.reference) if case.reference else block("answer", case.answer)
    )
    return {
        "question": block("question", case.question),
        "expected": expected,
        "chunks": chunks_block(case.contexts),
    }


def _recall_inputs(case: Case) -> dict[str, str]:
    if not case.reference or not case.reference.strip():
        raise NotGradable("needs a reference")
    return {
        "question": block("question", case.question),
        "reference": block("reference", case.reference),
        "chunks": chunks_block(case.contexts),
    }


# ---------------------------------------------------------------- grading


def _grade_label(metric: Metric, case: Case, reply: str) -> Outcome:
    label = parse.parse_label(reply)
    score = Score(
        value=LABEL_VALUES[label],
        raw=label,
        label=label,
        reply=reply,
        prompt_hash=metric.prompt.hash,
    )
    return Outcome(metric.name, score=score)


def _grade_relevance(metric: Metric, case: Case, reply: str) -> Outcome:
    rating = parse.parse_rating(reply, 1, 5)
    score = Score(
        value=(rating - 1) / 4,
        raw=rating,
        scale=(1, 5),
        reply=reply,
        prompt_hash=metric.prompt.hash,
    )
    return Outcome(metric.name, score=score)


def _chunk_ids(case: Case, number: int | None) -> tuple[str, ...]:
    if number is None:
        return ()
    return (case.contexts[number - 1].id or str(number),)  # a source without ids: the rank


def _grade_claims(metric: Metric, case: Case, reply: str) -> Outcome:
    items = parse.json_list(parse.parse_json_object(reply), "claims")
    claims = []
    for i, item in enumerate(items, 1):
        text = item.get("claim", item.get("text"))
        verdict = str(item.get("verdict", "")).strip().upper()
        if not isinstance(text, str) or not text.strip():
            raise ParseFailure(f"claim {i} has no text")
        if verdict not in VERDICT_VALUES:
            raise ParseFailure(
                f"claim {i} verdict {item.get('verdict')!r} is not one of "
                "SUPPORTED, PARTIAL, UNSUPPORTED"
            )
        number = parse.chunk_number(item.get("chunk"), len(case.contexts))
        reason = item.get("reason")
        claims.append(
            Claim(
                metric=metric.name,
                text=text.strip(),
                verdict=verdict,
                chunks=_chunk_ids(case, number),
                reason=reason if isinstance(reason, str) else None,
            )
        )
    if not claims:
        return Outcome(metric.name, error="judge found no claims in the answer")
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICT_VALUES}
    value = sum(VERDICT_VALUES[c.verdict] for c in claims) / len(claims)
    score = Score(
        value=value,
        raw={k.lower(): n for k, n in counts.items()},
        reply=reply,
        prompt_hash=metric.prompt.hash,
        reason=f"{counts['SUPPORTED']} of {len(claims)} claims supported, "
        f"{counts['PARTIAL']} partly",
    )
    return Outcome(metric.name, score=score, claims=tuple(claims))


def average_precision(useful: Sequence[bool]) -> float:
    """Rank-weighted precision: mean of precision@k over the ranks k holding a useful chunk."""
    hits, total = 0, 0.0
    for k, flag in enumerate(useful, 1):
        if flag:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def _grade_precision(metric: Metric, case: Case, reply: str) -> Outcome:
    items = parse.json_list(parse.parse_json_object(reply), "chunks")
    n = len(case.contexts)
    flags: dict[int, bool] = {}
    for item in items:
        number = parse.chunk_number(item.get("chunk"), n)
        useful = item.get("useful")
        if number is None or not isinstance(useful, bool):
            raise ParseFailure('every entry needs "chunk": a number and "useful": true/false')
        flags[number] = useful
    missing = [i for i in range(1, n + 1) if i not in flags]
    if missing:
        raise ParseFailure(f"no verdict for chunk {', '.join(map(str, missing))}")
    useful = [flags[i] for i in range(1, n + 1)]
    score = Score(
        value=average_precision(useful),
        raw="".join("1" if u else "0" for u in useful),
        reply=reply,
        prompt_hash=metric.prompt.hash,
        reason=f"{sum(useful)} of {n} chunks useful",
    )
    return Outcome(metric.name, score=score)


def _grade_recall(metric: Metric, case: Case, reply: str) -> Outcome:
    items = parse.json_list(parse.parse_json_object(reply), "statements")
    if not items:
        raise ParseFailure("judge listed no statements of the reference")
    attributed = 0
    for i, item in enumerate(items, 1):
        flag = item.get("attributed")
        if not isinstance(flag, bool):
            raise ParseFailure(f'statement {i} lacks "attributed": true/false')
        parse.chunk_number(item.get("chunk"), len(case.contexts))  # validates the number
        attributed += flag
    score = Score(
        value=attributed / len(items),
        raw={"attributed": attributed, "statements": len(items)},
        reply=reply,
        prompt_hash=metric.prompt.hash,
        reason=f"{attributed} of {len(items)} reference statements found in the chunks",
    )
    return Outcome(metric.name, score=score)


FAITHFULNESS = Metric(
    "faithfulness", FAITH_LABEL, False, _faith_inputs, _grade_label, zero_on_parse_failure=True
)
FAITHFULNESS_CLAIMS = Metric(
    "faithfulness_claims", FAITH_CLAIMS, True, _faith_inputs, _grade_claims
)
ANSWER_RELEVANCE_METRIC = Metric(
    "answer_relevance", ANSWER_RELEVANCE, False, _relevance_inputs, _grade_relevance
)
CONTEXT_PRECISION_METRIC = Metric(
    "context_precision", CONTEXT_PRECISION, True, _precision_inputs, _grade_precision
)
CONTEXT_RECALL_METRIC = Metric(
    "context_recall", CONTEXT_RECALL, True, _recall_inputs, _grade_recall
)

METRICS: Mapping[str, Metric] = {
    m.name: m
    for m in (
        FAITHFULNESS,
        FAITHFULNESS_CLAIMS,
        ANSWER_RELEVANCE_METRIC,
        CONTEXT_PRECISION_METRIC,
        CONTEXT_RECALL_METRIC,
    )
}
DEFAULT_METRICS = ("faithfulness", "answer_relevance")


def get_metrics(names: Sequence[str] | None) -> list[Metric]:
    chosen = list(names) if names else list(DEFAULT_METRICS)
    unknown = [n for n in chosen if n not in METRICS]
    if unknown:
        raise UnknownMetricError(
            f"unknown metric {', '.join(map(repr, unknown))} (judge metrics: {', '.join(METRICS)})"
        )
    return [METRICS[n] for n in dict.fromkeys(chosen)]
