"""`ragtui rejudge`, `ragtui judges`, `ragtui noise`: thin shells over ragtui.judge.

A judge is `--judge NAME` (a [judges.NAME] table in ragtui.toml) or ad hoc with
`--provider P --url U --model M`. A judge server that is not there ends the command with one
line on stderr and a non-zero exit; finished cases stay in the run file for the next attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ragtui.commands.common import (
    emit_json,
    folder_option,
    json_option,
    load_config,
    open_ws,
    pick_folder,
    user_errors,
    writable_folder,
)
from ragtui.core.errors import RagtuiError
from ragtui.format import one_line, plural, verdict_moves
from ragtui.judge.runner import BatchResult, Progress
from ragtui.services.judging import (
    NoiseCheck,
    check_judges,
    full_noise_check,
    noise_check,
    pick_judge,
    rejudge,
)
from ragtui.trust import user_config_path


def _judge_options(func: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--judge", "judge_name", help="A judge named in ragtui.toml ([judges.NAME])."),
        click.option("--provider", type=click.Choice(["ollama", "openai"]), help="Ad-hoc judge."),
        click.option("--url", help="Ad-hoc judge: base URL of the server."),
        click.option("--model", help="Ad-hoc judge: model name."),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.001),
            help="Seconds per request (overrides the config).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            help="Requests in flight (overrides the config).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class _Bar:
    """A rich progress bar on stderr (rich lives here, never in ragtui.judge)."""

    def __init__(self, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeRemainingColumn(),
            console=Console(stderr=True, highlight=False),
            transient=True,
        )
        self._label = label
        self._tasks: dict[Any, Any] = {}

    def __enter__(self) -> _Bar:
        # Only on a terminal: piped stderr gets the summary lines and nothing else.
        self._live = self._progress.console.is_terminal
        if self._live:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live:
            self._progress.stop()

    def update(self, p: Progress, key: Any = 0, label: str | None = None) -> None:
        from rich.markup import escape

        counts = f"{p.scored} scored · {p.parse_failures} parse failures · {p.errors} errors"
        if key not in self._tasks:
            self._tasks[key] = self._progress.add_task(
                escape(one_line(label or self._label)), total=p.total, counts=counts
            )
        self._progress.update(self._tasks[key], completed=p.done, counts=counts)


def _notices(results: list[BatchResult]) -> list[str]:
    """What the batches repaired (a run file left empty by a crash, replaced), on stderr."""
    lines = [line for result in results for line in result.notices]
    for line in lines:
        click.echo(f"notice: {one_line(line)}", err=True)
    return lines


def _report(result: BatchResult) -> None:
    click.echo(one_line(result.summary()))
    for sample in result.error_samples:
        click.echo(f"  {one_line(sample)}")
    p = result.progress
    if result.path.exists() and p.done - p.resumed - p.left_out == 0:  # nothing appended
        click.echo(f"nothing new written to {one_line(str(result.path))}")
    elif result.path.exists():
        click.echo(f"wrote {one_line(str(result.path))}")
    else:
        click.echo("nothing judged: no run written")


@click.command("rejudge")
@click.argument("run")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@folder_option
@click.option("--case", "case_ids", multiple=True, help="Only this case (repeatable).")
@click.option("--metric", "-m", "metrics", multiple=True, help="Judge this metric (repeatable).")
@_judge_options
@json_option
@user_errors
def rejudge_command(
    run: str,
    path: str | None,
    path_option: str | None,
    case_ids: tuple[str, ...],
    metrics: tuple[str, ...],
    judge_name: str | None,
    provider: str | None,
    url: str | None,
    model: str | None,
    timeout: float | None,
    concurrency: int | None,
    as_json: bool,
) -> None:
    """Re-judge RUN with another judge; writes a new `rejudge` run and resumes if interrupted
    (grades the judge failed are asked again)."""
    with open_ws(writable_folder(pick_folder(path, path_option))) as workspace:
        config = workspace.require_config()
        judge = pick_judge(config, judge_name, provider, url, model, timeout, concurrency)
        with _Bar(f"judging with {judge.name}") as bar:
            result = asyncio.run(
                rejudge(
                    workspace.store,
                    run,
                    judge,
                    metrics=list(metrics) or None,
                    case_ids=list(case_ids) or None,
                    progress=bar.update,
                )
            )
        notices = _notices([result])
        if as_json:
            emit_json(_batch_json(result) | {"notices": notices}, workspace)
        else:
            _report(result)
        _fail_if_nothing_graded(result)


def _fail_if_nothing_graded(result: BatchResult) -> None:
    """Exit 1 when this call graded nothing and left cases out because the judge failed
    every grade of them (a batch too small for the runner's stop rule, e.g. `--case X`):
    nothing came of it, which is not a success, whether or not an earlier call began the run
    file. A resume whose retried cases fail again leaves none out: not this."""
    p = result.progress
    if p.left_out and not (p.scored or p.parse_failures):
        written = "" if result.path.exists() else ", no run written"
        raise click.ClickException(
            f"the judge failed every grade of the {plural(p.left_out, 'case')} asked: nothing "
            f"judged{written} (running it again retries them)"
        )


@click.command("judges")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@folder_option
@user_errors
def judges_command(path: str | None, path_option: str | None) -> None:
    """List the judges in ragtui.toml and check each is reachable and has its model."""
    folder = pick_folder(path, path_option)
    config = load_config(Path(folder) if folder else None)
    if not config.judges:
        raise RagtuiError(
            f"no judges configured (add [judges.NAME] tables to {user_config_path()})"
        )

    problems = asyncio.run(check_judges(list(config.judges.values())))
    click.echo(f"judges in {one_line(', '.join(map(str, config.paths)))}")
    for judge, problem in zip(config.judges.values(), problems, strict=True):
        key = f" key ${judge.api_key_env}" if judge.api_key_env else ""
        status = "ok" if problem is None else f"FAILED: {problem}"
        line = f"  {judge.name}: {judge.provider} {judge.model} at {judge.url}{key} — {status}"
        click.echo(one_line(line))  # the URL never holds a password (see JudgeConfig)
    failed = sum(p is not None for p in problems)
    if failed:
        raise click.ClickException(f"{failed} of {len(problems)} judges not usable")


@click.command("noise")
@click.argument("run")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@folder_option
@click.option(
    "--times", "-k", type=click.IntRange(min=2), default=3, show_default=True, help="Reruns."
)
@click.option("--against", help="Then compare RUN with this run, using the noise floor.")
@click.option("--metric", "-m", "metrics", multiple=True, help="Judge this metric (repeatable).")
@click.option("--full", is_flag=True, help="Rerun the whole pipeline ([rerun] command).")
@_judge_options
@json_option
@user_errors
def noise_command(
    run: str,
    path: str | None,
    path_option: str | None,
    times: int,
    against: str | None,
    metrics: tuple[str, ...],
    full: bool,
    judge_name: str | None,
    provider: str | None,
    url: str | None,
    model: str | None,
    timeout: float | None,
    concurrency: int | None,
    as_json: bool,
) -> None:
    """Measure noise: re-judge RUN's answers K times (cache bypassed), or rerun the pipeline."""
    from ragtui.judge.noise import noise_lines

    with open_ws(writable_folder(pick_folder(path, path_option))) as workspace:
        if full:
            check = asyncio.run(
                full_noise_check(
                    workspace,
                    run,
                    times=times,
                    metrics=list(metrics) or None,
                    against=against,
                    on_line=lambda line: click.echo(one_line(line), err=True),
                )
            )
        else:
            config = workspace.require_config()
            judge = pick_judge(config, judge_name, provider, url, model, timeout, concurrency)
            with _Bar("") as bar:
                check = asyncio.run(
                    noise_check(
                        workspace,
                        run,
                        judge,
                        times=times,
                        metrics=list(metrics) or None,
                        against=against,
                        progress=lambda label, p: bar.update(p, label, label),
                    )
                )
        notices = _notices(check.batches)
        if as_json:
            emit_json(_noise_json(check) | {"notices": notices}, workspace)
            return
        for result in check.batches:
            click.echo(one_line(result.summary()))
        for line in noise_lines(check.noise, workspace.margin):
            click.echo(one_line(line))
        if check.note:
            click.echo(one_line(check.note))
        if check.comparison is not None:
            _print_comparison(check)


def _print_comparison(check: NoiseCheck) -> None:
    from ragtui.commands.compare_view import print_comparison

    assert check.comparison is not None
    if check.before is not None:  # as the Noise screen says it: before → with the noise
        for line in verdict_moves(check.before, check.comparison).lines():
            click.echo(one_line(line))
    print_comparison(check.comparison)


def _batch_json(result: BatchResult) -> dict[str, Any]:
    """A batch's counts: grades (case x metric) scored, parse failures and errors, which add up
    to every grade asked, left-out cases' included."""
    p = result.progress
    return {
        "run_id": result.run_id,
        "path": str(result.path) if result.path.exists() else None,
        "cases": p.total,
        "resumed": p.resumed,
        "scored": p.scored,
        "parse_failures": p.parse_failures,
        "errors": p.errors,
        "left_out": p.left_out,  # cases whose every grade failed: not in the file
        "partial": p.partial,  # cases in the file with grades the judge failed
        "retried": p.retried,
        "cached": p.cached,
        "seconds": round(result.seconds, 3),
        # per kind of error: the cases and metrics that failed with it, then the error
        "error_samples": list(result.error_samples),
    }


def _noise_json(check: NoiseCheck) -> dict[str, Any]:
    def metric(m: Any) -> dict[str, Any]:
        f = m.floor
        return {
            "metric": m.metric,
            "n": m.n,
            "runs": list(m.runs),
            "means": list(m.means),
            "errors": list(m.errors),
            "noise_floor": None if f is None else f.noise_floor,
            "rerun_delta": None if f is None else f.rerun_delta,
            "sigma2_within": None if f is None else f.sigma2_within,
            "icc": None if f is None else f.icc,
        }

    return {
        "run": check.run_id,
        "reruns": check.reruns,
        "batches": [_batch_json(b) for b in check.batches],  # the reruns this check asked
        "noise": [metric(m) for m in check.noise],
        "comparison": None if check.comparison is None else check.comparison.to_json(),
        # the pending comparison as it stood before the reruns (judge-only check, --against)
        "before": None if check.before is None else check.before.to_json(),
        "note": check.note,  # which judge the floor is, how B was made like-for-like
    }
