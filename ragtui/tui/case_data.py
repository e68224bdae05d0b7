"""One case as the Case screen shows it, read in worker threads, and the same case as Markdown
(copied with `y`, paged with `o`).

Every string from a run file is made printable (`ragtui.format.printable`) before it is
written into the Markdown, and Markdown's own characters are escaped, so a pasted case shows
what the file holds and never renders as links, images or HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragtui.core.compare import CaseValues, Comparison
from ragtui.core.diagnosis import CaseDiagnosis
from ragtui.core.model import Case, Chunk, Run
from ragtui.core.retrieval_diff import side_marks
from ragtui.core.store import Store
from ragtui.format import (
    CLAIM_CHANGE_WORDS,
    attribution_text,
    chunk_mark,
    claim_change_detail,
    md_inline,
    printable,
    short_pts,
    signed_pts,
)
from ragtui.format.text import MD_SPECIAL  # the one Markdown escape, as md_inline's


@dataclass(frozen=True)
class CaseData:
    case_id: str
    run: Run
    case: Case | None
    other_run: Run | None
    other: Case | None
    history: list[dict[str, Any]]
    # metric -> the case as the comparison saw it (A's and B's rerun means, each rerun's value)
    figures: Mapping[str, CaseValues] = field(default_factory=dict)


def load_case(
    store: Store,
    run_id: str,
    case_id: str,
    other_run_id: str | None,
    comparison: Comparison | None = None,
) -> CaseData:
    """Everything the screen shows for one case (a worker thread calls this)."""
    other_run = None if other_run_id is None else store.run(other_run_id)
    return CaseData(
        case_id=case_id,
        run=store.run(run_id),
        case=store.case(run_id, case_id),
        other_run=other_run,
        other=None if other_run_id is None else store.case(other_run_id, case_id),
        history=store.case_history(case_id).to_pylist(),
        figures=case_figures(comparison, case_id),
    )


def case_figures(comparison: Comparison | None, case_id: str) -> dict[str, CaseValues]:
    if comparison is None:
        return {}
    out = {}
    for m in comparison.metrics:
        cv = comparison.case_values(m.metric, case_id)
        if cv is not None:
            out[m.metric] = cv
    return out


def raw_value(case: Case | None, metric: str) -> str:
    """One run's value of a case as shown: points, "error", "—" (not scored), "absent"."""
    if case is None:
        return "absent"
    if metric in case.errors:
        return "error"
    score = case.scores.get(metric)
    return "—" if score is None else short_pts(score.value)


def rerun_values(runs: Sequence[tuple[str, float | None]]) -> str:
    """Each rerun's value: "100 · 100 · 75" (— where a rerun did not score the case)."""
    return " · ".join(short_pts(v) for _, v in runs)


def metrics_of(data: CaseData) -> list[str]:
    names: dict[str, None] = {}
    for c in (data.case, data.other):
        if c is not None:
            names.update(dict.fromkeys([*c.scores, *c.errors]))
    return sorted(names)


# ---------------------------------------------------------------- Markdown


def _md(text: object, markdown: bool) -> str:
    """A one-line value: printable, whitespace runs as one space, Markdown escaped."""
    return md_inline(text) if markdown else " ".join(printable(text).split())


def _block(text: object, markdown: bool) -> list[str]:
    """A multi-line value as a quote (Markdown) or indented lines (plain text)."""
    lines = printable(None if text is None else str(text)).splitlines() or [""]
    if not markdown:
        return [f"    {line}" for line in lines]
    return ["> " + MD_SPECIAL.sub(r"\\\1", line) for line in lines]


def case_document(
    data: CaseData, diagnosis: CaseDiagnosis | None = None, *, markdown: bool = True
) -> str:
    """The case in full: question, reference, answers, scores (A's reruns beside their mean),
    chunks with their marks against A, claims, claim changes, stage and class, judge replies."""
    m = lambda text: _md(text, markdown)  # noqa: E731
    block = lambda text: _block(text, markdown)  # noqa: E731
    b_run, b_case = data.run, data.case
    a_run, a_case = data.other_run, data.other
    head = f"# Case {m(data.case_id)}"
    out = [head, ""]
    if a_run is not None:
        out.append(f"A: {m(a_run.name)} ({m(a_run.id)}) · B: {m(b_run.name)} ({m(b_run.id)})")
    else:
        out.append(f"Run: {m(b_run.name)} ({m(b_run.id)})")
    main = b_case or a_case
    out += ["", "## Question", "", *block(main.question if main else "(case not found)")]
    if main is not None and main.reference:
        out += ["", "## Reference", "", *block(main.reference)]
    sides = [("A", a_run, a_case), ("B", b_run, b_case)] if a_run else [("", b_run, b_case)]
    for side, run, case in sides:
        title = f"Answer {side} · {m(run.name)}" if side else "Answer"
        out += ["", f"## {title}", ""]
        out += block(case.answer) if case is not None else [f"(not in run {m(run.name)})"]
    out += ["", "## Scores", "", *_scores_table(data, diagnosis, markdown)]
    for side, _run, case in sides:
        if case is None:
            continue
        label = f" of {side}" if side else ""
        out += ["", f"## Chunks{label}", ""]
        for i, (chunk, mark) in enumerate(_marked_chunks(data, diagnosis, side), start=1):
            where = f" #{chunk.rank}" if chunk.rank is not None else ""
            score = f" {chunk.score:.2f}" if chunk.score is not None else ""
            out.append(
                f"{i}. {mark + ' ' if mark else ''}{m(chunk.id)}{where} "
                f"{m(chunk.source or '(no source)')}{score}: {m(chunk.text)}"
            )
        if not case.contexts:
            out.append("(no retrieved chunks)")
        out += ["", f"## Claims{label}", ""]
        for claim in case.claims:
            cites = ", ".join(m(c) for c in claim.chunks) or "no chunk"
            reason = f" — {m(claim.reason)}" if claim.reason else ""
            out.append(
                f"- {m(claim.verdict)} ({m(claim.metric)}): {m(claim.text)} → {cites}{reason}"
            )
        if not case.claims:
            out.append("(no claims)")
    if diagnosis is not None:
        out += ["", "## Diagnosis", "", *_diagnosis_lines(diagnosis, markdown)]
    out += ["", "## Judge replies", ""]
    for side, _run, case in sides:
        if case is None:
            continue
        for metric, score in sorted(case.scores.items()):
            raw = json.dumps(score.raw, ensure_ascii=False) if score.raw is not None else "—"
            reply = f" · reply {m(score.reply)}" if score.reply else ""
            who = f"{side} " if side else ""
            out.append(f"- {who}{m(metric)}: {short_pts(score.value)} · raw {m(raw)}{reply}")
        for metric, error in sorted(case.errors.items()):
            out.append(f"- {side + ' ' if side else ''}{m(metric)}: error {m(error)}")
    return "\n".join(out) + "\n"


def _scores_table(data: CaseData, diagnosis: CaseDiagnosis | None, markdown: bool) -> list[str]:
    m = lambda text: _md(text, markdown)  # noqa: E731
    classes = {c.metric: c.klass for c in diagnosis.classes} if diagnosis else {}
    stages = {a.metric: a.stage for a in diagnosis.attributions} if diagnosis else {}
    if data.other_run is None:
        rows = ["| metric | value |", "|---|--:|"]
        rows += [f"| {m(n)} | {raw_value(data.case, n)} |" for n in metrics_of(data)]
        return rows
    rows = [
        "| metric | A | A's reruns | B | Δ pts | class | stage |",
        "|---|--:|---|--:|--:|---|---|",
    ]
    for name in metrics_of(data):
        cv = data.figures.get(name)
        if cv is not None:
            a, b = short_pts(cv.a), short_pts(cv.b)
            reruns = rerun_values(cv.a_runs) if len(cv.a_runs) > 1 else ""
            delta = signed_pts(cv.b - cv.a)
        else:
            a, b, reruns, delta = raw_value(data.other, name), raw_value(data.case, name), "", "—"
        rows.append(
            f"| {m(name)} | {a} | {reruns} | {b} | {delta} | {classes.get(name, '')} | "
            f"{stages.get(name, '')} |"
        )
    return rows


def _marked_chunks(
    data: CaseData, diagnosis: CaseDiagnosis | None, side: str
) -> list[tuple[Chunk, str]]:
    """One side's chunks with their marks against A, from the core retrieval diff the CLI
    prints (by position, so repeated ids keep their own marks); unmarked without a diff."""
    case = data.case if side in ("B", "") else data.other
    chunks = () if case is None else case.contexts
    if diagnosis is None or not side or data.case is None or data.other is None:
        return [(c, "") for c in chunks]
    marked = side_marks(diagnosis.retrieval, data.other.contexts, data.case.contexts, side)
    # a move is B's rank against A's
    return [(c, "" if m is None else chunk_mark(m.mark, m.move)) for c, m in marked]


def _diagnosis_lines(d: CaseDiagnosis, markdown: bool) -> list[str]:
    m = lambda text: _md(text, markdown)  # noqa: E731
    out = []
    for a in d.attributions:
        out.append(f"- stage of {m(a.metric)}: {m(attribution_text(a))}")
    for c in d.classes:
        out.append(f"- class of {m(c.metric)}: {c.klass}")
    r = d.retrieval
    out.append(
        f"- retrieval: {r.count('added')} added, {r.count('removed')} removed, "
        f"{r.count('moved')} moved, overlap {short_pts(r.overlap)} pts"
    )
    out.append(f"- answer: +{d.answer.words_added} words, −{d.answer.words_removed} words")
    for ch in d.claims.changes:
        if ch.change == "same":
            continue
        text = ch.text_b if ch.text_b is not None else ch.text_a
        detail = claim_change_detail(
            ch.change, ch.verdict_a, ch.verdict_b, ch.chunks_left, ch.chunks_kept
        )
        out.append(f"- claim {CLAIM_CHANGE_WORDS[ch.change]}: {m(text)} ({m(detail)})")
    return out
