"""`ragtui rejudge`, `ragtui judges`, `ragtui noise`: thin shells over ragtui.judge.

A judge is `--judge NAME` (a [judges.NAME] table in ragtui.toml) or ad hoc with
`--provider P --url U --model M`. A judge server that is not there ends the command with one
line on stderr and a non-zero exit; finished cases stay in the run file for the next attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ragtui.commands.common import load_config, open_store, resolve_folder, user_errors
from ragtui.config import Config, JudgeConfig, adhoc_judge
from ragtui.config_values import number
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Run
from ragtui.core.store import Store
from ragtui.format import json_text, one_line
from ragtui.judge.client import JudgeClient
from ragtui.judge.runner import BatchResult, Progress, judge_run, noise_reruns
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


def _folder(path: str | None) -> Path:
    """The runs folder to write into; never the bundled demo history."""
    folder, notice = resolve_folder(path)
    if notice:
        raise RagtuiError("no run files in ./runs: name the runs folder (PATH) to write into")
    return folder


def pick_judge(
    config: Config,
    name: str | None,
    provider: str | None,
    url: str | None,
    model: str | None,
    timeout: float | None,
    concurrency: int | None,
) -> JudgeConfig:
    adhoc = (provider, url, model)
    if name and any(adhoc):
        raise RagtuiError("give either --judge NAME or --provider/--url/--model, not both")
    if name:
        judge = config.judge(name)
    elif all(adhoc):
        assert provider and url and model
        judge = adhoc_judge(provider, url, model)
    elif any(adhoc):
        missing = [
            f"--{k}" for k, v in zip(("provider", "url", "model"), adhoc, strict=True) if not v
        ]
        raise RagtuiError(
            f"an ad-hoc judge needs --provider, --url and --model (missing {', '.join(missing)})"
        )
    else:
        known = ", ".join(sorted(config.judges)) or f"none configured in {user_config_path()}"
        raise RagtuiError(f"name a judge: --judge NAME ({known}) or --provider/--url/--model")
    overrides = {"timeout": timeout, "concurrency": concurrency}
    overrides = {k: number(v, f"--{k}", k) for k, v in overrides.items() if v is not None}
    return replace(judge, **overrides)


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


def _report(result: BatchResult) -> None:
    click.echo(one_line(result.summary()))
    for sample in result.error_samples:
        click.echo(f"  {one_line(sample)}")
    click.echo(f"wrote {one_line(result.path)}")


@click.command("rejudge")
@click.argument("run")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--case", "case_ids", multiple=True, help="Only this case (repeatable).")
@click.option("--metric", "-m", "metrics", multiple=True, help="Judge this metric (repeatable).")
@_judge_options
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@user_errors
def rejudge_command(
    run: str,
    path: str | None,
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
    """Re-judge RUN with another judge; writes a new `rejudge` run and resumes if interrupted."""
    folder = _folder(path)
    judge = pick_judge(load_config(folder), judge_name, provider, url, model, timeout, concurrency)
    with open_store(folder) as store:
        bar = _Bar(f"judging with {judge.name}")
        with bar:
            result = asyncio.run(
                judge_run(
                    store,
                    run,
                    judge,
                    metrics=list(metrics) or None,
                    case_ids=list(case_ids) or None,
                    progress=bar.update,
                )
            )
    if as_json:
        p = result.progress
        click.echo(
            json_text(
                {
                    "run_id": result.run_id,
                    "path": str(result.path),
                    "cases": p.total,
                    "resumed": p.resumed,
                    "scored": p.scored,
                    "parse_failures": p.parse_failures,
                    "errors": p.errors,
                    "cached": p.cached,
                    "seconds": round(result.seconds, 3),
                }
            )
        )
        return
    _report(result)


@click.command("judges")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@user_errors
def judges_command(path: str | None) -> None:
    """List the judges in ragtui.toml and check each is reachable and has its model."""
    config = load_config(Path(path) if path else None)
    if not config.judges:
        raise RagtuiError(
            f"no judges configured (add [judges.NAME] tables to {user_config_path()})"
        )

    async def check_all() -> list[str | None]:
        async def one(judge: JudgeConfig) -> str | None:
            try:
                async with JudgeClient(judge) as client:
                    return await client.check()
            except RagtuiError as err:  # e.g. the key's environment variable is unset
                return str(err)

        return await asyncio.gather(*(one(j) for j in config.judges.values()))

    problems = asyncio.run(check_all())
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
@click.option("--times", "-k", type=int, default=3, show_default=True, help="Reruns.")
@click.option("--against", help="Then compare RUN with this run, using the noise floor.")
@click.option("--metric", "-m", "metrics", multiple=True, help="Judge this metric (repeatable).")
@click.option("--full", is_flag=True, help="Rerun the whole pipeline ([rerun] command).")
@_judge_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
@user_errors
def noise_command(
    run: str,
    path: str | None,
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
    from ragtui.judge.noise import noise_lines, rerun_noise

    folder = _folder(path)
    config = load_config(folder)
    with open_store(folder) as store:
        parent_id = store.resolve_run(run)
        if full:
            rerun_ids = _full_reruns(store, config, parent_id, times)
            group = [parent_id, *rerun_ids]
            a_ref = parent_id
        else:
            judge = pick_judge(config, judge_name, provider, url, model, timeout, concurrency)
            with _Bar("") as bar:
                results = asyncio.run(
                    noise_reruns(
                        store,
                        parent_id,
                        judge,
                        times=times,
                        metrics=list(metrics) or None,
                        progress=lambda i, p: bar.update(p, i, f"rerun {i}/{times}"),
                    )
                )
            for result in results:
                if not as_json:
                    click.echo(one_line(result.summary()))
            group = [r.run_id for r in results]
            a_ref = _same_judge_a(store, parent_id, group)
        names = store.metrics(group) if not metrics else list(metrics)
        noise = rerun_noise(store, group, names)
        if not as_json:
            for line in noise_lines(noise, config.margin):
                click.echo(one_line(line))
        comparison = None
        if against:
            b_ref = against
            if not full:
                b_ref = _like_for_like(store, against, judge, names, store.run(group[0]), as_json)
            comparison = _verdict(store, a_ref, b_ref, names, config.margin, as_json)
    if as_json:
        click.echo(
            json_text(
                {
                    "run": parent_id,
                    "reruns": group,
                    "noise": [_noise_json(m) for m in noise],
                    "comparison": comparison,
                },
            )
        )


def _noise_json(m: Any) -> dict[str, Any]:
    f = m.floor
    return {
        "metric": m.metric,
        "n": m.n,
        "means": list(m.means),
        "errors": list(m.errors),
        "noise_floor": None if f is None else f.noise_floor,
        "rerun_delta": None if f is None else f.rerun_delta,
        "sigma2_within": None if f is None else f.sigma2_within,
        "icc": None if f is None else f.icc,
    }


def _like_for_like(
    store: Store, b_ref: str, judge: JudgeConfig, metrics: list[str], rerun: Run, quiet: bool
) -> str:
    """B as graded by the noise judge: B itself when the same judge and prompts graded it,
    else a re-judge of B (cached), so the verdict does not mix two judges' scales."""
    b_id = store.resolve_run(b_ref)
    b = store.run(b_id)
    if (b.judge.model, b.judge.prompt_hash) == (rerun.judge.model, rerun.judge.prompt_hash):
        return b_id
    with _Bar(f"re-judging {b_id} with {judge.name}") as bar:
        result = asyncio.run(judge_run(store, b_id, judge, metrics=metrics, progress=bar.update))
    if not quiet:
        click.echo(
            one_line(f"B re-judged by {judge.name} for a like-for-like verdict: {result.summary()}")
        )
    return result.run_id


def _same_judge_a(store: Store, parent_id: str, group: list[str]) -> str:
    """A for the comparison: the parent when the reruns replicate it, else the first rerun."""
    return parent_id if parent_id in store.reruns(group[0]) else group[0]


def _verdict(
    store: Store, a: str, b: str, metrics: list[str], margin: float, as_json: bool
) -> dict[str, Any] | None:
    from rich.console import Console

    from ragtui.commands.compare import _table, detail_lines
    from ragtui.core.compare import compare_runs

    have_b = set(store.metrics([store.resolve_run(b)]))
    c = compare_runs(
        store, a, b, metrics=[m for m in metrics if m in have_b] or None, margin=margin
    )
    if as_json:
        return c.to_json()
    Console(highlight=False).print(_table(c))
    for line in [*c.noise_lines, *detail_lines(c)]:
        click.echo(one_line(line))
    for w in c.warnings:
        click.echo("! " + one_line(w))
    return None


def _full_reruns(store: Store, config: Config, parent_id: str, times: int) -> list[str]:
    from ragtui.judge.noise import pipeline_rerun

    if not config.rerun_command:
        where = user_config_path()
        raise RagtuiError(f'--full needs [rerun] command = "..." in {where}')
    parent = store.run(parent_id)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    ids = []
    for i in range(1, times + 1):
        run_id = f"{parent.id}--full-{stamp}-{i}"
        click.echo(f"rerun {i}/{times}: {one_line(config.rerun_command)}", err=True)
        paths = asyncio.run(
            pipeline_rerun(
                store,
                parent,
                config.rerun_command,
                run_id,
                on_line=lambda line: click.echo(f"  | {one_line(line)}", err=True),
                timeout=config.rerun_timeout,
            )
        )
        ids += [store.index_file(p) for p in paths]
    return ids


COMMANDS: list[click.Command] = [rejudge_command, judges_command, noise_command]
