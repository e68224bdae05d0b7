"""How `ragtui compare` (and `noise --against`) print a comparison: the table of verdicts, or,
on a terminal too narrow for it, one block per metric; then the lines under it. Several
candidates against one base print as one table of candidates × metrics.

Nothing is ever cut: ids and metric names are shown whole (headers use unique abbreviations
with a legend), piped output is never wrapped, and a table that does not fit the terminal is
printed in a stacked form instead of squeezed. Words and figures come from `ragtui.format`.
"""

from __future__ import annotations

from typing import Any

import click

from ragtui import format as fmt
from ragtui.commands.common import print_table
from ragtui.core.compare import Comparison
from ragtui.core.multi_compare import MultiComparison
from ragtui.format import interval, one_line, p_value, pts, short_metrics, signed_pts

_STYLE = {"improved": "green", "regressed": "red"}


def detail_lines(c: Comparison) -> list[str]:
    """The lines under the table: why each verdict, McNemar counts, worst cases, agreement,
    other judges, human-corrected estimates, the noise budget."""
    out = [
        f"{m.metric}: {fmt.verdict_label(m)} — {fmt.verdict_reason(m, c.margin)}" for m in c.metrics
    ]
    out += [line for m in c.metrics for line in fmt.metric_details(m)]
    out += [fmt.agreement_text(g) for g in [*c.agreement, *c.human]]
    out += [fmt.judge_verdict_text(j) for j in c.judges]
    out += [fmt.ppi_text(p) for p in c.ppi]
    out += [fmt.budget_text(b) for b in c.budget]
    return out


def comparison_lines(c: Comparison) -> list[str]:
    """Everything under the table, in order: noise, details, warnings ("! ...")."""
    return [
        *(fmt.note_text(n) for n in c.noise),
        *detail_lines(c),
        *("! " + fmt.note_text(w) for w in c.warnings),
    ]


def title(c: Comparison) -> str:
    return (
        f"A {c.run_a.name} ({c.a})"
        + (f", mean of {len(c.reruns_a)} reruns" if len(c.reruns_a) > 1 else "")
        + f"  vs  B {c.run_b.name} ({c.b})"
        + (f", mean of {len(c.reruns_b)} reruns" if len(c.reruns_b) > 1 else "")
        + f"  · margin ±{fmt.margin_pts(c.margin)} points"
    )


def _text(value: str, style: str = "") -> Any:
    from rich.text import Text

    return Text(one_line(value), style=style)


def _pair_table(c: Comparison) -> Any:  # a rich Table: rich is imported only here
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in fmt.COMPARE_COLUMNS:
        left = col in ("metric", "method", "verdict")
        table.add_column(col, justify="left" if left else "right", no_wrap=True)
    for m in c.metrics:
        cells = fmt.metric_cells(m)
        table.add_row(*(_text(x) for x in cells[:-1]), _text(cells[-1], _STYLE.get(m.verdict, "")))
    return table


def stacked_lines(c: Comparison) -> list[str]:
    """The table as one block per metric, for a terminal narrower than the table."""
    out = []
    for m in c.metrics:
        out += [
            f"{m.metric}: {fmt.verdict_label(m)}",
            f"  A {pts(m.mean_a)} → B {pts(m.mean_b)}  Δ {signed_pts(m.delta)} pts  "
            f"95% CI {interval(m.ci_low, m.ci_high)} ({fmt.short_method(m)})",
            f"  p adj {p_value(m.p_adj)} · noise ±{pts(m.noise_floor)} · MDE {pts(m.mde)} · "
            f"N {m.n} · err A/B {fmt.errors_pair(m)}",
        ]
    return out


def print_comparison(c: Comparison) -> None:
    click.echo(one_line(title(c)))
    print_table(_pair_table(c), stacked_lines(c))
    for line in comparison_lines(c):
        click.echo(one_line(line))


# ---------------------------------------------------------------- several candidates


def _multi_table(mc: MultiComparison, order: list[str], headers: dict[str, str]) -> Any:
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("candidate", no_wrap=True)
    for m in mc.metrics:
        table.add_column(_text(headers[m]), justify="right", no_wrap=True)
    names = dict(zip(mc.candidates, mc.names, strict=True))
    for cand in order:
        rows: list[Any] = [_text(names[cand]) + "\n" + _text(cand)]
        for m in mc.metrics:
            cell = mc.cell(cand, m)
            if cell is None:
                rows.append(_text("—"))
                continue
            rows.append(
                _text(f"{signed_pts(cell.delta)}  p {p_value(cell.p_adj)}", "")
                + "\n"
                + _text(interval(cell.ci_low, cell.ci_high))
                + "\n"
                + _text(cell.verdict, _STYLE.get(cell.verdict, ""))
            )
        table.add_row(*rows)
    return table


def print_several(mc: MultiComparison, sort_metric: str | None) -> None:
    """Candidates × metrics: Δ and adjusted p, 95% CI, verdict per cell; a legend for the
    abbreviated metric headers."""
    tests = sum(c.p is not None for c in mc.cells)
    headers = short_metrics(mc.metrics)
    order = mc.ranked(sort_metric) if sort_metric else list(mc.candidates)
    click.echo(
        one_line(
            f"base {mc.base_name} ({mc.base}) · margin ±{fmt.margin_pts(mc.margin)} points"
            f" · Holm over {tests} tests"
        )
    )
    print_table(_multi_table(mc, order, headers))
    legend = ", ".join(f"{headers[m]} = {m}" for m in mc.metrics if headers[m] != m)
    click.echo(
        one_line(
            f"each cell: Δ points and adjusted p, 95% CI, verdict; {fmt.HOLM_ACROSS_TABLE}"
            + (f"; {legend}" if legend else "")
        )
    )
    for w in fmt.many_notes(mc):
        click.echo("! " + one_line(w))
