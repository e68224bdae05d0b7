"""What the Case screen draws, as renderables from data: the scores table (A's reruns beside
their mean, B, Δ, class, stage), the diagnosis lines, the judge's reply, the case's history.
Pure functions (no widget state): the screen decides when, these decide how. Every string
from a run file goes through `lit` (ragtui.format.printable)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ragtui.core.case_history import CaseClass
from ragtui.core.diagnosis import CaseDiagnosis
from ragtui.core.model import Case, Run
from ragtui.format import (
    attribution_text,
    case_class_text,
    case_retrieval_text,
    middle_cut,
    printable,
    short_pts,
    signed_pts,
)
from ragtui.tui.case_data import CaseData, metrics_of, raw_value
from ragtui.tui.widgets.case_diff import claim_changes_text
from ragtui.tui.widgets.literal import join, lit
from ragtui.tui.widgets.title_bar import NAME_MIN, Name

SPARK = "▁▂▃▄▅▆▇█"
CLASS_STYLES = {
    "newly broken": "bold red",
    "newly fixed": "bold green",
    "flaky": "yellow",
    "stable fail": "red",
}


def spark(values: Sequence[float | None]) -> str:
    return "".join("·" if v is None else SPARK[round(max(0.0, min(1.0, v)) * 7)] for v in values)


def class_style(klass: CaseClass | None) -> str:
    return "" if klass is None else CLASS_STYLES.get(klass.klass, "dim")


def scores_table(
    d: CaseData,
    metric: str | None,
    classes: Sequence[CaseClass],
    diagnosis: CaseDiagnosis | None,
    width: int | None = None,
) -> Table:
    """Per metric: A (the comparison's: A's reruns' mean, each rerun beside it), B, Δ, the
    case's class and, where it fell, its stage. Fitted to `width`: long metric names are cut
    in the middle (their distinct ends stay), never a figure (left to the table, every
    column shrank alike: "63…  4…  -20…")."""
    by_class = {c.metric: c for c in classes}
    stages = {a.metric: a for a in diagnosis.attributions} if diagnosis else {}
    paired = d.other_run is not None
    headers = ["A", "A's runs", "B", "Δ pts"] if paired else ["value"]
    headers += ["class", "stage"]
    rows: list[tuple[str, list[Text]]] = []
    for m in metrics_of(d):
        klass = by_class.get(m)
        cls_text = Text(klass.klass if klass else "", style=class_style(klass))
        stage = stages.get(m)
        stage_text = Text(stage.stage if stage else "", style="bold" if stage else "")
        if not paired:
            rows.append((m, [Text(raw_value(d.case, m)), cls_text, stage_text]))
            continue
        cv = d.figures.get(m)
        if cv is None:  # not paired in the comparison: each run's own value
            a, b = raw_value(d.other, m), raw_value(d.case, m)
            rows.append((m, [Text(a), Text(""), Text(b), Text(""), cls_text, stage_text]))
            continue
        reruns = " ".join(short_pts(v) for _, v in cv.a_runs) if len(cv.a_runs) > 1 else ""
        style = "green" if cv.b > cv.a else "red" if cv.b < cv.a else ""
        delta = Text(signed_pts(cv.b - cv.a), style=style)
        cells = [Text(short_pts(cv.a)), Text(reruns, style="dim"), Text(short_pts(cv.b)), delta]
        rows.append((m, [*cells, cls_text, stage_text]))
    if paired and not any(cells[1].plain for _, cells in rows):  # no reruns of A: no column
        headers.remove("A's runs")
        rows = [(m, [cells[0], *cells[2:]]) for m, cells in rows]
    names = {m: printable(m, multiline=False) for m, _ in rows}
    if width is not None and names:
        used = 0  # what the other columns take: each its widest cell and 2 of padding
        for i, header in enumerate(headers):
            cells = [cells[i] for _, cells in rows]
            if header == "A's runs":  # wraps first when narrow: its widest figure
                widest = max((len(w) for c in cells for w in c.plain.split()), default=0)
            else:
                widest = max(c.cell_len for c in cells)
            used += max(widest, len(header)) + 2 if widest else len(header) + 2
        room = max(NAME_MIN, width - used - 2 - 2)  # "▶ " before the name, 2 after
        names = {m: middle_cut(n, room) for m, n in names.items()}
    table = Table(box=None, padding=(0, 2, 0, 0), show_edge=False, expand=False)
    table.add_column("metric", no_wrap=True)
    for header in headers:
        if header in ("A", "B", "Δ pts", "value"):
            table.add_column(header, justify="right", no_wrap=True)
        elif header == "A's runs":
            table.add_column(header, style="dim")  # wraps first when narrow
        else:
            table.add_column(header, no_wrap=True)
    for m, cells in rows:
        name = Text("▶ " if m == metric else "  ")
        name.append(names[m], style="bold" if m == metric else "")
        table.add_row(name, *cells)
    return table


def diagnosis_group(
    d: CaseData | None,
    metric: str | None,
    classes: Sequence[CaseClass],
    diagnosis: CaseDiagnosis | None,
) -> Group:
    """The selected metric's stage and class, the retrieval diff and the claim changes."""
    lines: list[Text | Group] = []
    metric = metric or ""
    if diagnosis is not None:
        for a in diagnosis.attributions:
            if a.metric == metric:
                why = attribution_text(a)
                lines.append(join(("stage  ", "bold"), (metric, ""), ": ") + lit(why))
    for c in classes:
        if c.metric == metric:
            baseline = [o.value for o in c.history if o.baseline]
            text = case_class_text(c.klass, baseline, c.candidate.value, c.threshold)
            lines.append(join(("class  ", "bold"), (metric, ""), ": ") + lit(text))
    if diagnosis is not None:
        r = diagnosis.retrieval
        counts = [r.count(mark) for mark in ("added", "removed", "moved", "kept")]
        lines.append(lit(case_retrieval_text(*counts, r.k, r.overlap, r.top_changed)))
        lines.append(claim_changes_text(diagnosis.claims))
    elif d is not None and d.other_run is not None:
        if d.case is None or d.other is None:
            missing = "A" if d.other is None else "B"
            lines.append(Text(f"not in {missing}: nothing to diff", style="yellow"))
        else:
            lines.append(Text("diagnosing against A…", style="dim"))
    return Group(*lines)


def judge_text(run: Run, case: Case | None, metric: str) -> Text:
    out = join(("judge ", "bold"), (run.judge.model or "unknown", ""))
    if run.judge.provider:
        out.append_text(join(" (", (run.judge.provider, ""), ")"))
    score = None if case is None else case.scores.get(metric)
    prompt = (score.prompt_hash if score else None) or run.judge.prompt_hash
    out.append_text(join(" · prompt ", (prompt or "unknown", ""), " · ", (metric, "bold")))
    if case is not None and metric in case.errors:
        out.append_text(join("\n", ("error: ", "bold red"), (case.errors[metric], "red")))
    elif score is not None:
        label = f" ({score.label})" if score.label else ""
        out.append_text(join(f" {short_pts(score.value)}", (label, "bold")))
        if score.raw is not None:
            out.append_text(join(" · raw ", (json.dumps(score.raw, ensure_ascii=False), "")))
        if score.reason:
            out.append_text(join("\n", ("reason ", "bold"), (score.reason, "")))
        if score.reply:
            out.append_text(join("\n", ("reply  ", "bold"), (score.reply, "")))
    return out


HISTORY_LISTED = 8  # figures listed after a metric's sparkline (it draws every run)


def history_text(history: Sequence[dict[str, Any]], metric: str | None) -> Text:
    """This case's scores across every run of the folder, oldest first, per metric."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in history:
        by_metric.setdefault(str(row["metric"]), []).append(row)
    n_runs = len({r["run_id"] for r in history})
    cut = any(len(rows) > HISTORY_LISTED for rows in by_metric.values())
    listed = f"; figures: the last {HISTORY_LISTED}" if cut else ""
    lines = [Text(f"history · this case in {n_runs} runs (oldest → newest{listed})", style="bold")]
    pad = max((len(printable(m)) for m in by_metric), default=0)
    for m, rows in by_metric.items():
        values = [r["value"] for r in rows]
        tail = " ".join(short_pts(v) for v in values[-HISTORY_LISTED:])
        if len(values) > HISTORY_LISTED:
            tail = f"… {tail}"  # the sparkline has them all, the figures only the last ones
        lines.append(
            join(
                ("  ", ""),
                (m, "bold" if m == metric else ""),
                " " * (pad - len(printable(m)) + 2),
                (spark(values), "cyan"),
                f"  {tail}",
            )
        )
    return Text("\n").join(lines)


def title_parts(
    case_id: str, d: CaseData | None, metric: str | None, index: int, total: int
) -> list[Text | str | tuple[object, str] | Name]:
    """ "ragtui · Case refund-07  faithfulness A 91.7 → B 0 (NO)  3 / 41 in list": A and B as
    the comparison sees them (the reruns' means) when it is known. The case id and the metric
    are Names: on a narrow line they are cut in the middle, never the figures."""
    parts: list[Text | str | tuple[object, str] | Name] = [
        ("ragtui · Case ", "bold"),
        Name(case_id),
    ]
    if d is not None and metric:
        parts += ["  ", Name(metric, ""), " "]
        score = None if d.case is None else d.case.scores.get(metric)
        label = f" ({score.label})" if score is not None and score.label else ""
        if d.other_run is not None:
            cv = d.figures.get(metric)
            a = short_pts(cv.a) if cv else raw_value(d.other, metric)
            b = short_pts(cv.b) if cv else raw_value(d.case, metric)
            if cv is not None and score is not None and abs(cv.b - score.value) > 1e-9:
                label = ""  # B is the mean of reruns that graded it apart: no one label is it
            parts += [f"A {a} → B {b}", (label, "bold")]
        else:
            parts += [raw_value(d.case, metric), (label, "bold")]
    parts.append(f"  {index + 1} / {total} in list")
    return parts
