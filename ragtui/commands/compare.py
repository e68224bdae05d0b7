"""`ragtui compare`, `ragtui gate` and `ragtui report`: thin shells over core.compare/core.gate.

Figures are fractions in the core and in --json; everything typed or shown is in points
(`--margin 5`, `--min faithfulness=80`). Sentences come from `ragtui.format`.
Exit codes: 0 ok / gate passed, 1 gate failed, 2 usage or input error, 3 gate undecided.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ragtui import format as fmt
from ragtui.commands.common import open_store, resolve_folder
from ragtui.commands.compare_report import render_report
from ragtui.core.compare import Comparison, MetricResult, compare_runs
from ragtui.core.errors import RagtuiError
from ragtui.core.stats import DEFAULT_SEED
from ragtui.core.store import Store
from ragtui.format import interval, json_text, one_line, p_value, pts, signed_pts

__all__ = ["COMMANDS", "comparison_lines", "print_comparison", "render_report"]

_path_argument = click.argument("path", required=False, type=click.Path(file_okay=False))
_metric_option = click.option(
    "--metric", "-m", "metrics", multiple=True, help="Compare only this metric (repeatable)."
)
_margin_option = click.option(
    "--margin",
    type=click.FloatRange(0, 100, min_open=True, max_open=True),
    default=None,
    metavar="POINTS",
    help="Practical margin in points (default: [compare] margin in ragtui.toml, else 5).",
)
_seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Seed for random sign-flips (clustered metrics with many clusters).",
)


def _compare(
    path: str | None,
    a: str,
    b: str,
    metrics: tuple[str, ...],
    margin_points: float | None,
    seed: int,
    *,
    announce: bool = True,
) -> tuple[Comparison, Store]:
    folder, _ = resolve_folder(path)
    if margin_points is None:
        from ragtui.config import load_config

        margin = load_config(folder).margin
    else:
        margin = margin_points / 100
    store = open_store(path, announce=announce)
    try:
        return compare_runs(
            store, a, b, metrics=list(metrics) or None, margin=margin, seed=seed
        ), store
    except BaseException:
        store.close()
        raise


# ---------------------------------------------------------------- text


def ci_text(m: MetricResult) -> str:
    return interval(m.ci_low, m.ci_high)


def detail_lines(c: Comparison) -> list[str]:
    """The lines under the table: why each verdict, McNemar counts, worst cases, agreement,
    other judges, human-corrected estimates, the noise budget."""
    out = [
        f"{m.metric}: {fmt.verdict_label(m)} — {fmt.verdict_reason(m, c.margin)}" for m in c.metrics
    ]
    for m in c.metrics:
        if m.fixed is not None:
            out.append(
                f"{m.metric}: B fixed {m.fixed} cases, broke {m.broke} "
                f"(McNemar p {p_value(m.p)}, the verdict's own test)"
            )
        if m.bottom_a is not None or m.bottom_b is not None:
            out.append(
                f"{m.metric}: worst 10% of cases average {pts(m.bottom_a)} in A, "
                f"{pts(m.bottom_b)} in B"
            )
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


COLUMNS = (
    "metric",
    "N",
    "A",
    "B",
    "err A/B",
    "Δ pts",
    "95% CI",
    "method",
    "p adj",
    "noise ±",
    "MDE",
    "verdict",
)


def table_cells(m: MetricResult) -> tuple[str, ...]:
    return (
        m.metric,
        str(m.n),
        pts(m.mean_a),
        pts(m.mean_b),
        fmt.errors_pair(m),
        signed_pts(m.delta),
        ci_text(m),
        fmt.short_method(m),
        p_value(m.p_adj),
        pts(m.noise_floor),
        pts(m.mde),
        fmt.verdict_label(m),
    )


def _table(c: Comparison):  # -> rich Table; rich is imported only by the CLI
    from rich.table import Table
    from rich.text import Text

    title = (
        f"A {c.run_a.name} ({c.a})"
        + (f", mean of {len(c.reruns_a)} reruns" if len(c.reruns_a) > 1 else "")
        + f"  vs  B {c.run_b.name} ({c.b})"
        + (f", mean of {len(c.reruns_b)} reruns" if len(c.reruns_b) > 1 else "")
        + f"  · margin ±{fmt.margin_pts(c.margin)} points"
    )
    table = Table(title=Text(one_line(title)), box=None, header_style="bold")
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("metric", "method", "verdict") else "right")
    for m in c.metrics:
        style = {"improved": "green", "regressed": "red"}.get(m.verdict, "")
        cells = table_cells(m)
        table.add_row(
            *(Text(one_line(x)) for x in cells[:-1]), Text(one_line(cells[-1]), style=style)
        )
    return table


def print_comparison(c: Comparison) -> None:
    from rich.console import Console

    # piped output is read by scripts and diffs: one row per line, never wrapped at 80
    width = None if sys.stdout.isatty() else 200
    Console(highlight=False, width=width).print(_table(c))
    for line in comparison_lines(c):
        click.echo(one_line(line))


def dump_json(data: object) -> str:
    """Strict JSON: a NaN or infinity anywhere is a bug, never output."""
    return json_text(data, allow_nan=False)


@click.command("compare")
@click.argument("a")
@click.argument("b")
@_path_argument
@_metric_option
@_margin_option
@_seed_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--rerun-values", is_flag=True, help="With --json: every rerun's value of each case too."
)
def compare_command(
    a: str,
    b: str,
    path: str | None,
    metrics: tuple[str, ...],
    margin: float | None,
    seed: int,
    as_json: bool,
    rerun_values: bool,
) -> None:
    """Is B better than A, or is it noise? Paired per-metric verdicts with the noise floor."""
    c, store = _compare(path, a, b, metrics, margin, seed, announce=not as_json)
    store.close()
    if as_json:
        click.echo(dump_json(c.to_json(rerun_values=rerun_values)))
        return
    print_comparison(c)


# ---------------------------------------------------------------- gate


def _floors(specs: tuple[str, ...]) -> dict[str, float]:
    """METRIC=POINTS pairs as fractions."""
    floors = {}
    for spec in specs:
        metric, sep, value = spec.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not metric.strip() or not 0.0 <= number <= 100.0:
            raise click.BadParameter(
                f"{spec!r}: expected METRIC=POINTS with POINTS in [0, 100] (80 = a mean of 0.8)",
                param_hint="--min",
            )
        floors[metric.strip()] = number / 100
    return floors


@click.command("gate")
@click.argument("base")
@click.argument("candidate")
@_path_argument
@click.option(
    "--min",
    "minimums",
    multiple=True,
    metavar="METRIC=POINTS",
    help="Floor for the candidate's mean, in points (repeatable): --min faithfulness=80.",
)
@_metric_option
@_margin_option
@_seed_option
@click.option(
    "--min-cases",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Fail when a metric has fewer cases shared by both runs.",
)
@click.option(
    "--undecided-passes",
    is_flag=True,
    help="Exit 0 instead of 3 when the data cannot tell (B neither shown non-inferior nor worse).",
)
def gate_command(
    base: str,
    candidate: str,
    path: str | None,
    minimums: tuple[str, ...],
    metrics: tuple[str, ...],
    margin: float | None,
    seed: int,
    min_cases: int,
    undecided_passes: bool,
) -> None:
    """CI gate: passes only when the candidate is shown non-inferior (95% CI lower bound above
    -margin) on every metric and every floor holds. Exit 0 passed, 1 failed (reasons printed),
    3 undecided (with the cases needed; --undecided-passes makes it 0), 2 usage or input errors.
    """
    from ragtui.core.gate import decide_gate

    floors = _floors(minimums)
    c, store = _compare(path, base, candidate, metrics, margin, seed)
    try:
        known = sorted(set(store.metrics([c.a])) | set(store.metrics([c.b])))
        unknown = [m for m in floors if m not in known]
        if unknown:
            raise click.BadParameter(
                f"{unknown[0]!r} is in neither run (they have: {', '.join(known) or 'none'})",
                param_hint="--min",
            )
        means = {
            r["metric"]: r["mean"] for r in store.run_means().to_pylist() if r["run_id"] == c.b
        }
    finally:
        store.close()
    result = decide_gate(c, floors, means, min_cases=min_cases)
    for m in c.metrics:
        click.echo("     " + one_line(fmt.gate_metric_line(m, c.margin)))
    for w in c.warnings:
        click.echo("!    " + one_line(fmt.note_text(w)))
    for check in result.checks:
        click.echo(one_line(fmt.gate_check_text(check, c.margin)))
    click.echo(fmt.gate_summary(result, undecided_passes))
    sys.exit(result.exit_code(undecided_passes))


# ---------------------------------------------------------------- report


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
    margin: float | None,
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
