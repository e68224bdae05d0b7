"""`ragtui compare`, `ragtui gate` and `ragtui report`: thin shells over core.compare.

Figures are fractions in the core and in --json; text says points (x 100), never percent.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from ragtui.commands.common import open_store
from ragtui.core.compare import Comparison, MetricResult, compare_runs
from ragtui.core.errors import RagtuiError
from ragtui.core.stats import DEFAULT_SEED
from ragtui.core.store import Store
from ragtui.format import interval, json_text, one_line, p_value, printable, pts, signed_pts

WORST_CASES = 10
EXCERPT = 300

_path_argument = click.argument("path", required=False, type=click.Path(file_okay=False))
_metric_option = click.option(
    "--metric", "-m", "metrics", multiple=True, help="Compare only this metric (repeatable)."
)
_margin_option = click.option(
    "--margin",
    type=float,
    default=0.05,
    show_default=True,
    help="Practical margin as a fraction (0.05 = 5 points).",
)
_seed_option = click.option(
    "--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Bootstrap seed."
)


def _compare(
    path: str | None,
    a: str,
    b: str,
    metrics: tuple[str, ...],
    margin: float,
    seed: int,
    *,
    announce: bool = True,
) -> tuple[Comparison, Store]:
    store = open_store(path, announce=announce)
    try:
        return compare_runs(
            store, a, b, metrics=list(metrics) or None, margin=margin, seed=seed
        ), store
    except BaseException:
        store.close()
        raise


# ---------------------------------------------------------------- formatting


def ci_text(m: MetricResult) -> str:
    return interval(m.ci_low, m.ci_high)


def verdict_text(m: MetricResult) -> str:
    return m.reason if m.verdict == "within noise" else m.verdict


def detail_lines(c: Comparison) -> list[str]:
    """McNemar counts, bottom deciles, agreement: the lines under the table."""
    out = []
    for m in c.metrics:
        if m.fixed is not None:
            out.append(
                f"{m.metric}: B fixed {m.fixed} cases, broke {m.broke} "
                f"(McNemar p {p_value(m.mcnemar_p)})"
            )
        if m.bottom_a is not None or m.bottom_b is not None:
            out.append(
                f"{m.metric}: worst 10% of cases average {pts(m.bottom_a)} in A, "
                f"{pts(m.bottom_b)} in B"
            )
    for g in [*c.agreement, *c.human]:
        figures = (
            ", ".join(f"{k} {v:.2f}" for k, v in (("κ", g.kappa), ("ρ", g.rho)) if v is not None)
            or "no figures"
        )
        flips = ", ".join(g.flipped[:8]) + (", …" if len(g.flipped) > 8 else "")
        out.append(
            f"agreement {g.metric}, {g.between}: {figures} on {g.n} cases; "
            f"{len(g.flipped)} flipped"
            + (f" ({flips})" if flips else "")
            + (" — LOW" if g.flagged else "")
        )
    return out


def _table(c: Comparison):  # -> rich Table; rich is imported only by the CLI
    from rich.table import Table
    from rich.text import Text

    title = (
        f"A {c.run_a.name} ({c.a})"
        + (f", {len(c.reruns_a)} reruns" if len(c.reruns_a) > 1 else "")
        + f"  vs  B {c.run_b.name} ({c.b})"
    )
    table = Table(title=Text(one_line(title)), box=None, header_style="bold")
    for col in ("metric", "N", "A", "B", "Δ pts", "95% CI", "p adj", "noise ±", "MDE", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for m in c.metrics:
        style = {"improved": "green", "regressed": "red"}.get(m.verdict, "")
        cells = (
            m.metric,
            str(m.n),
            pts(m.mean_a),
            pts(m.mean_b),
            signed_pts(m.delta),
            ci_text(m),
            p_value(m.p_adj),
            pts(m.noise_floor),
            pts(m.mde),
            verdict_text(m),
        )
        table.add_row(
            *(Text(one_line(x)) for x in cells[:-1]), Text(one_line(cells[-1]), style=style)
        )
    return table


@click.command("compare")
@click.argument("a")
@click.argument("b")
@_path_argument
@_metric_option
@_margin_option
@_seed_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def compare_command(
    a: str,
    b: str,
    path: str | None,
    metrics: tuple[str, ...],
    margin: float,
    seed: int,
    as_json: bool,
) -> None:
    """Is B better than A, or is it noise? Paired per-metric verdicts with the noise floor."""
    c, store = _compare(path, a, b, metrics, margin, seed, announce=not as_json)
    store.close()
    if as_json:
        click.echo(json_text(c.to_json()))
        return
    from rich.console import Console

    Console(highlight=False).print(_table(c))
    for line in [*c.noise_lines, *detail_lines(c)]:
        click.echo(one_line(line))
    for w in c.warnings:
        click.echo("! " + one_line(w))


# ---------------------------------------------------------------- gate


def _floors(specs: tuple[str, ...]) -> dict[str, float]:
    floors = {}
    for spec in specs:
        metric, sep, value = spec.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not metric or not 0.0 <= number <= 1.0:
            raise click.BadParameter(
                f"{spec!r}: expected METRIC=VALUE with VALUE a fraction in [0, 1] (0.8 = 80 points)",
                param_hint="--min",
            )
        floors[metric.strip()] = number
    return floors


@click.command("gate")
@click.argument("base")
@click.argument("candidate")
@_path_argument
@click.option(
    "--min",
    "minimums",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Floor for the candidate's mean, a fraction (repeatable).",
)
@_metric_option
@_margin_option
@_seed_option
def gate_command(
    base: str,
    candidate: str,
    path: str | None,
    minimums: tuple[str, ...],
    metrics: tuple[str, ...],
    margin: float,
    seed: int,
) -> None:
    """CI gate: exit 0 when no metric regressed beyond noise and every floor holds, else 1
    (reasons printed); 2 on usage or input errors."""
    floors = _floors(minimums)
    c, store = _compare(path, base, candidate, metrics, margin, seed)
    try:
        means = {
            r["metric"]: r["mean"] for r in store.run_means().to_pylist() if r["run_id"] == c.b
        }
    finally:
        store.close()
    failures = []
    for m in c.metrics:
        line = f"{m.metric}: {signed_pts(m.delta)} points {ci_text(m)}, {verdict_text(m)}"
        if m.n == 0:
            line = f"{m.metric}: {m.verdict} ({m.reason})"
        if m.verdict == "regressed":
            failures.append(
                f"{m.metric} regressed by {pts(abs(m.delta or 0.0))} points "
                f"(95% CI {ci_text(m)}, adjusted p {p_value(m.p_adj)})"
            )
        click.echo(("FAIL " if m.verdict == "regressed" else "ok   ") + one_line(line))
    for metric, floor in floors.items():
        mean = means.get(metric)
        if mean is None:
            failures.append(
                f"{metric}: the candidate has no {metric} scores for the floor {pts(floor)}"
            )
        elif mean < floor:
            failures.append(f"{metric}: candidate mean {pts(mean)} is below the floor {pts(floor)}")
        else:
            click.echo(f"ok   {one_line(metric)}: mean {pts(mean)} ≥ floor {pts(floor)}")
    for w in c.warnings:
        click.echo("! " + one_line(w))
    if failures:
        for reason in failures:
            click.echo("FAIL " + one_line(reason))
        click.echo(f"gate: failed ({len(failures)} reason{'s' if len(failures) > 1 else ''})")
        sys.exit(1)
    click.echo("gate: passed (no regression beyond noise, every floor holds)")


# ---------------------------------------------------------------- report

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def md(text: str | None, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown: one line, controls made visible, markup escaped."""
    flat = " ".join(printable(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", flat)


def render_report(c: Comparison, store: Store) -> str:
    a, b = c.run_a, c.run_b
    out = [
        f"# ragtui report: {md(a.name)} vs {md(b.name)}",
        "",
        f"- **A** `{md(a.id)}` ({md(a.created_at)}), judge {md(a.judge.model or 'unknown')}"
        + (f", baseline = mean of {len(c.reruns_a)} reruns" if len(c.reruns_a) > 1 else ""),
        f"- **B** `{md(b.id)}` ({md(b.created_at)}), judge {md(b.judge.model or 'unknown')}",
        f"- margin ±{c.margin * 100:g} points · seed {c.seed} · figures in points (0–100)",
        "",
        "## Verdicts",
        "",
        "| metric | N | A | B | Δ pts | 95% CI | p adj | noise ± | MDE | verdict |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for m in c.metrics:
        out.append(
            f"| {md(m.metric)} | {m.n} | {pts(m.mean_a)} | {pts(m.mean_b)} | "
            f"{signed_pts(m.delta)} | {ci_text(m)} | {p_value(m.p_adj)} | "
            f"{pts(m.noise_floor)} | {pts(m.mde)} | **{md(verdict_text(m))}** |"
        )
    out += ["", "## Noise", "", *(f"- {md(line)}" for line in c.noise_lines)]
    details = detail_lines(c)
    if details:
        out += ["", "## Details", "", *(f"- {md(line)}" for line in details)]
    out += ["", "## Warnings", ""]
    out += [f"- ⚠ {md(w)}" for w in c.warnings] or ["- none"]
    out += ["", f"## The {WORST_CASES} worst cases", ""]
    worst = c.cases[:WORST_CASES]
    if not worst:
        out.append("No paired cases.")
    for k, d in enumerate(worst, start=1):
        case = store.case(c.b, d.case_id) or store.case(c.a, d.case_id)
        out += [
            f"### {k}. {md(d.case_id)} — {md(d.metric)} {pts(d.a)} → {pts(d.b)} "
            f"({signed_pts(d.delta)})",
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


@click.command("report")
@click.argument("a")
@click.argument("b")
@_path_argument
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="Markdown file to write (- for stdout).",
)
@_metric_option
@_margin_option
@_seed_option
def report_command(
    a: str,
    b: str,
    path: str | None,
    output: str,
    metrics: tuple[str, ...],
    margin: float,
    seed: int,
) -> None:
    """Write a Markdown report of the comparison: verdicts, warnings, the worst cases."""
    c, store = _compare(path, a, b, metrics, margin, seed, announce=output != "-")
    try:
        text = render_report(c, store)
    finally:
        store.close()
    if output == "-":
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise RagtuiError(f"{output}: cannot be written ({exc.strerror})") from None
    click.echo(f"wrote {one_line(output)}")


COMMANDS: list[click.Command] = [compare_command, gate_command, report_command]
