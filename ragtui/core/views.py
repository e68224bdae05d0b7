"""Plain-data views shared by the CLI and the TUI (no rich, no textual here)."""

from __future__ import annotations

import json

from ragtui.core.model import Case
from ragtui.core.store import RunRow, Store
from ragtui.format import printable


def run_rows(store: Store) -> tuple[list[RunRow], list[str]]:
    """Every run (oldest first) as a typed row with its per-metric means, and the metrics
    (those scored per case, and those only stated by summary-only runs)."""
    rows = store.run_rows()
    metrics = set(store.metrics())
    for row in rows:
        metrics.update(row.listed_means)
    return rows, sorted(metrics)


def case_lines(case: Case) -> list[str]:
    """A case as plain text lines: question, reference, answer, chunks, scores, claims."""
    out = [f"case {printable(case.case_id)}", "", "Question", f"  {printable(case.question)}"]
    if case.reference is not None:
        out += ["Reference", f"  {printable(case.reference)}"]
    out += ["Answer", f"  {printable(case.answer)}", "", "Chunks"]
    for chunk in case.contexts:
        score = "" if chunk.score is None else f"{chunk.score:.2f}"
        rank = "" if chunk.rank is None else f"#{chunk.rank}"
        out.append(
            f"  [{printable(chunk.id)}] {rank} {printable(chunk.source or '')} {score}".rstrip()
        )
        out.append(f"      {printable(chunk.text)}")
    out += ["", "Scores"]
    for metric, score in case.scores.items():
        label = f" {printable(score.label)}" if score.label else ""
        raw = (
            ""
            if score.raw is None
            else f"  raw {printable(json.dumps(score.raw, ensure_ascii=False))}"
        )
        out.append(f"  {printable(metric)}: {100 * score.value:.1f}{label}{raw}")
    for metric, message in case.errors.items():
        out.append(f"  {printable(metric)}: ERROR {printable(message)}")
    for metric, value in case.human.items():
        out.append(f"  human {printable(metric)}: {100 * value:.1f}")
    if case.claims:
        out += ["", "Claims"]
        mark = {"SUPPORTED": "✓", "PARTIAL": "~", "UNSUPPORTED": "✗"}
        for claim in case.claims:
            chunks = ", ".join(printable(c) for c in claim.chunks) or "—"
            out.append(
                f"  {mark.get(claim.verdict, '?')} {claim.verdict:<11} {printable(claim.text)}  [{chunks}]"
            )
            if claim.reason:
                out.append(f"      {printable(claim.reason)}")
    return out
