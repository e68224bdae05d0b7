"""`ragtui compare`, `ragtui gate` and `ragtui report`: thin shells over services.comparing.

Figures are fractions in the core and in --json; everything typed or shown is in points
(`--margin 5`, `--min faithfulness=80`). Sentences come from `ragtui.format`.
Exit codes: 0 ok / gate passed, 1 gate failed, 2 usage or input error, 3 gate undecided.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ragtui import format as fmt
from ragtui.commands.common import (
    emit_json,
    folder_option,
    json_option,
    margin_option,
    metric_option,
    open_ws,
    pass_option,
    pick_folder,
    point_pairs,
    points,
    seed_option,
)
from ragtui.commands.compare_view import print_comparison, print_several
from ragtui.core.errors import WriteError
from ragtui.format import one_line
from ragtui.services import comparing

__all__ = ["COMMANDS", "compare_command", "compare_many_command", "gate_command"]

_path_argument = click.argument("path", required=False, type=click.Path(file_okay=False))


def _split_runs(
    refs: tuple[str, ...], path_option: str | None, all_configs: bool = False
) -> tuple[list[str], str | None]:
    """Run references and the folder: a last argument after two runs (after the base alone,
    with --all-configs) that is a folder is the runs folder (as `compare A B PATH` took it)."""
    runs = list(refs)
    fewest = 1 if all_configs else 2
    positional = runs.pop() if len(runs) > fewest and Path(runs[-1]).is_dir() else None
    if all_configs and len(runs) != 1:
        raise click.UsageError("--all-configs finds the candidates: give the base run only")
    if len(runs) < fewest:
        raise click.UsageError("give a base run and at least one candidate: BASE C1 [C2 ...]")
    return runs, pick_folder(positional, path_option)


def _compare(
    runs: tuple[str, ...],
    path_option: str | None,
    metrics: tuple[str, ...],
    margin: float | None,
    seed: int,
    as_json: bool,
    rerun_values: bool,
    sort_metric: str | None,
    all_configs: bool,
    several: bool,
) -> None:
    refs, folder = _split_runs(runs, path_option, all_configs)
    several = several or all_configs or len(refs) > 2
    if rerun_values and several:
        raise click.UsageError("--rerun-values is for two runs (A and B)")
    if rerun_values and not as_json:
        raise click.UsageError("--rerun-values adds to the JSON: give --json too")
    if sort_metric is not None and not several:
        raise click.UsageError("--sort ranks several candidates: give BASE C1 C2 ...")
    with open_ws(folder) as workspace:
        if not several:
            c = comparing.compare(
                workspace, refs[0], refs[1], metrics=metrics, margin=points(margin), seed=seed
            )
            if as_json:
                emit_json(c.to_json(rerun_values=rerun_values), workspace)
            else:
                print_comparison(c)
            return
        candidates = comparing.other_configs(workspace, refs[0]) if all_configs else refs[1:]
        if not candidates:
            raise click.ClickException(
                f"no other config of {refs[0]}'s dataset has a run with cases to compare"
            )
        mc = comparing.compare_several(
            workspace, refs[0], candidates, metrics=metrics, margin=points(margin), seed=seed
        )
        if sort_metric is not None and sort_metric not in mc.metrics:
            raise click.BadParameter(
                f"{sort_metric!r} is not compared (metrics: {', '.join(mc.metrics)})",
                param_hint="--sort",
            )
        if as_json:
            payload = mc.to_json()
            if sort_metric:
                payload["order"] = mc.ranked(sort_metric)
            emit_json(payload, workspace)
            return
        print_several(mc, sort_metric)


def _compare_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        [
            click.argument("runs", nargs=-1, required=True, metavar="BASE CANDIDATE... [PATH]"),
            folder_option,
            metric_option,
            margin_option,
            seed_option,
            json_option,
            click.option(
                "--rerun-values",
                is_flag=True,
                help="With --json and two runs: every rerun's value of each case too.",
            ),
            click.option(
                "--sort", "sort_metric", help="Several candidates: rank them by their Δ on this."
            ),
            click.option(
                "--all-configs",
                is_flag=True,
                help="BASE against every other config of its dataset (its first run with "
                "cases; re-judges left out), as `v` on the Compare screen.",
            ),
        ]
    ):
        func = option(func)
    return func


def _compare_command(name: str, several: bool, doc: str) -> click.Command:
    """`compare` and its alias `compare-many` (which always prints the several-candidates
    table, even for one candidate): the same options, one body."""

    def command(**options: Any) -> None:
        _compare(**options, several=several)

    command.__doc__ = doc
    return click.command(name)(_compare_options(command))


compare_command = _compare_command(
    "compare",
    False,
    """Is B better than A, or is it noise? `compare A B [PATH]`: paired per-metric verdicts
    with the noise floor. `compare BASE C1 C2 ... [PATH]`: one table of candidates × metrics
    (Δ, 95% CI, verdict), Holm-adjusted over every cell.""",
)
compare_many_command = _compare_command(
    "compare-many",
    True,
    """Same as `compare BASE C1 C2 ... [PATH]`, kept for scripts: always the table of
    candidates × metrics, even for one candidate.""",
)


# ---------------------------------------------------------------- gate


@click.command("gate")
@click.argument("base")
@click.argument("candidate")
@_path_argument
@folder_option
@click.option(
    "--min",
    "minimums",
    multiple=True,
    metavar="METRIC=POINTS",
    help="Floor for the candidate's mean, in points (repeatable): --min faithfulness=80.",
)
@click.option(
    "--no-new-failures",
    is_flag=True,
    help="Fail when a case that passed in every baseline rerun fails in the candidate.",
)
@pass_option
@metric_option
@margin_option
@seed_option
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
@json_option
def gate_command(
    base: str,
    candidate: str,
    path: str | None,
    path_option: str | None,
    minimums: tuple[str, ...],
    no_new_failures: bool,
    passes: tuple[str, ...],
    metrics: tuple[str, ...],
    margin: float | None,
    seed: int,
    min_cases: int,
    undecided_passes: bool,
    as_json: bool,
) -> None:
    """CI gate: passes only when the candidate is shown non-inferior (95% CI lower bound above
    -margin) on every metric and every floor holds. Exit 0 passed, 1 failed (reasons printed),
    3 undecided (with the cases needed; --undecided-passes makes it 0), 2 usage or input
    errors, 130 interrupted (Ctrl-C).
    """
    floors = point_pairs(minimums, "--min")
    thresholds = point_pairs(passes, "--pass")
    with open_ws(pick_folder(path, path_option)) as workspace:
        g = comparing.gate(
            workspace,
            base,
            candidate,
            floors=floors,
            metrics=metrics,
            margin=points(margin),
            seed=seed,
            min_cases=min_cases,
            no_new_failures=no_new_failures,
            thresholds=thresholds,
        )
        if as_json:
            emit_json(g.to_json() | {"exit_code": g.exit_code(undecided_passes)}, workspace)
            sys.exit(g.exit_code(undecided_passes))
    c = g.comparison
    for m in c.metrics:
        click.echo("     " + one_line(fmt.gate_metric_line(m, c.margin)))
    for w in c.warnings:
        click.echo("!    " + one_line(fmt.note_text(w)))
    for check in g.result.checks:
        click.echo(one_line(fmt.gate_check_text(check, c.margin)))
    for case in g.new_failures or ():
        baseline = [o.value for o in case.history if o.baseline]
        click.echo(
            "     "
            + fmt.new_failure_line(
                case.case_id, case.metric, baseline, case.candidate.value, case.threshold
            )
        )
    click.echo(fmt.gate_summary(g.result, undecided_passes))
    sys.exit(g.exit_code(undecided_passes))


# ---------------------------------------------------------------- report


@click.command("report")
@click.argument("a")
@click.argument("b")
@_path_argument
@folder_option
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="-",
    show_default=True,
    help="Markdown file to write (- for stdout).",
)
@metric_option
@margin_option
@seed_option
def report_command(
    a: str,
    b: str,
    path: str | None,
    path_option: str | None,
    output: str,
    metrics: tuple[str, ...],
    margin: float | None,
    seed: int,
) -> None:
    """Write a Markdown report of the comparison: verdicts, warnings, the worst cases."""
    with open_ws(pick_folder(path, path_option)) as workspace:
        text = comparing.report(workspace, a, b, metrics=metrics, margin=points(margin), seed=seed)
    if output == "-":
        click.echo(text, nl=False)
        return
    # `-o report.md` again is the usual way to refresh a report: replaced, but said so
    replaced = Path(output).is_file()
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise WriteError(f"{output}: cannot be written ({exc.strerror})") from None
    said = " (replaced the file that was there)" if replaced else ""
    click.echo(f"wrote {one_line(output)}{said}")


COMMANDS: list[click.Command] = [compare_command, gate_command, report_command]
