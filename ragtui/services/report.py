"""The Markdown report of a comparison (`ragtui report`): the same figures and sentences as
`ragtui compare` (from `ragtui.format`), with untrusted text made inert."""

from __future__ import annotations

from typing import Any

from ragtui import format as fmt
from ragtui.core.compare import Comparison
from ragtui.core.store import Store
from ragtui.format import md_code, pts, signed_pts
from ragtui.format import md_inline as md  # the one Markdown escaper

WORST_CASES = 10
EXCERPT = 300

_ALIGN = {
    col: "---" if col in ("metric", "method", "verdict") else "--:" for col in fmt.COMPARE_COLUMNS
}


def _a_values(c: Comparison, metric: str, case_id: str) -> str:
    """A's reruns for one case, when there are several: "(reruns 100 / 50 / 100)"."""
    cv = c.case_values(metric, case_id)
    if cv is None or len(cv.a_runs) < 2:
        return ""
    return " (A's reruns " + " / ".join(fmt.short_pts(v) for _, v in cv.a_runs) + ")"


def render_report(c: Comparison, store: Store, diagnosis: Any | None = None) -> str:
    """The report; `diagnosis` (core.diagnosis.Diagnosis of the same A and B) adds which stage
    broke each case that fell, the retrieval and claim changes and the case classes."""
    a, b = c.run_a, c.run_b
    out = [
        f"# ragtui report: {md(a.name)} vs {md(b.name)}",
        "",
        f"- **A** {md_code(a.id)} ({md(a.created_at)}), judge {md(a.judge.model or 'unknown')}"
        + (f", per case the mean of {len(c.reruns_a)} reruns" if len(c.reruns_a) > 1 else ""),
        f"- **B** {md_code(b.id)} ({md(b.created_at)}), judge {md(b.judge.model or 'unknown')}"
        + (f", per case the mean of {len(c.reruns_b)} reruns" if len(c.reruns_b) > 1 else ""),
        f"- margin ±{fmt.margin_pts(c.margin)} points · seed {c.seed} · figures in points (0–100)",
        "",
        "## Verdicts",
        "",
        "| " + " | ".join(fmt.COMPARE_COLUMNS) + " |",
        "|" + "|".join(_ALIGN[col] for col in fmt.COMPARE_COLUMNS) + "|",
    ]
    for m in c.metrics:
        *cells, verdict = (md(x) for x in fmt.metric_cells(m, full_method=True))
        out.append("| " + " | ".join([*cells, f"**{verdict}**"]) + " |")
    out += [
        "",
        *(f"- **{md(m.metric)}**: {md(fmt.verdict_reason(m, c.margin))}" for m in c.metrics),
    ]
    out += ["", "## Noise", "", *(f"- {md(fmt.note_text(n))}" for n in c.noise)]
    out += [f"- {md(fmt.budget_text(x))}" for x in c.budget]
    details = [line for m in c.metrics for line in fmt.metric_details(m)]
    details += [fmt.agreement_text(g) for g in [*c.agreement, *c.human]]
    details += [fmt.ppi_text(p) for p in c.ppi]
    if details:
        out += ["", "## Details", "", *(f"- {md(line)}" for line in details)]
    if c.judges:
        out += ["", "## The verdict under each judge", ""]
        out += [f"- {md(fmt.judge_verdict_text(j))}" for j in c.judges]
    warned = {fmt.note_text(w) for w in c.warnings}  # listed once, in their own section
    if diagnosis is not None:
        lines = [
            x for x in fmt.diagnosis_summary_lines(diagnosis, WORST_CASES, said=warned) if x.strip()
        ]
        out += ["", "## Diagnosis", "", *(f"- {md(line)}" for line in lines)]
    out += ["", "## Warnings", ""]
    out += [f"- ⚠ {md(fmt.note_text(w))}" for w in c.warnings] or ["- none"]
    out += ["", f"## The {WORST_CASES} worst cases", ""]
    worst = c.cases[:WORST_CASES]
    if not worst:
        out.append("No paired cases.")
    for k, d in enumerate(worst, start=1):
        case = store.case(c.b, d.case_id) or store.case(c.a, d.case_id)
        out += [
            f"### {k}. {md(d.case_id)} — {md(d.metric)} {pts(d.a)} → {pts(d.b)} "
            # outside md(), which folds the space that leads the reruns away
            f"({signed_pts(d.delta)}){_a_values(c, d.metric, d.case_id)}",
            "",
        ]
        if case is None:
            out += ["(case text not in the index)", ""]
            continue
        out += [
            f"- **Question:** {md(case.question, EXCERPT)}",
            f"- **Answer (B):** {md(case.answer, EXCERPT)}",
        ]
        unsupported = [cl for cl in case.claims if cl.verdict == "UNSUPPORTED"]
        if unsupported:
            out.append("- **Unsupported claims (B):**")
            out += [
                f"  - {md(cl.text, EXCERPT)}"
                + (f" — {md(cl.reason, EXCERPT)}" if cl.reason else "")
                for cl in unsupported
            ]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
