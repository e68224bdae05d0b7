"""The `ragtui` command: a thin shell over core/, importers/ and judge/."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from typing import Any

import click

from ragtui.commands.common import open_store, resolve_folder
from ragtui.core.errors import RagtuiError
from ragtui.core.views import case_lines, run_rows
from ragtui.format import json_text, one_line, printable, short_metrics

# Command modules under ragtui/commands/, each exposing COMMANDS.
COMMAND_MODULES = ("compare", "importing", "judge", "bench", "trust")


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagtuiError as err:
            click.echo(f"Error: {one_line(err)}", err=True)
            ctx.exit(2)


@click.group(cls=_Group, invoke_without_command=True)
@click.version_option(package_name="ragtui")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Compare RAG evaluation runs: noise-aware verdicts, case drill-down, re-judging.

    With no command, opens the dashboard on ./runs (or the bundled demo history).
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_tui, path=None)


@cli.command("open")
@click.argument("path", required=False, type=click.Path(file_okay=False))
def open_tui(path: str | None) -> None:
    """Open the dashboard on PATH (default ./runs, else the bundled sample history)."""
    folder, notice = resolve_folder(path)
    try:
        app_module = importlib.import_module("ragtui.tui.app")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ragtui.tui"):
            raise RagtuiError(
                "the terminal UI is not built yet; use `ragtui runs` meanwhile"
            ) from None
        raise
    app_module.run_app(folder, notice=notice)


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def runs(path: str | None, as_json: bool) -> None:
    """List the runs in PATH with their per-metric means."""
    with open_store(path, announce=not as_json) as store:
        rows, metrics = run_rows(store)
    if as_json:
        click.echo(json_text({"metrics": metrics, "runs": rows}, indent=2, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "date", "name", "kind", "config key", "judge", "N"):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    shorts = short_metrics(metrics)
    for metric in metrics:
        table.add_column(_literal(shorts[metric]), justify="right", no_wrap=True)
    for row in rows:
        means = [
            "—" if row["means"].get(m) is None else f"{100 * row['means'][m]:.1f}" for m in metrics
        ]
        cells = (
            row["id"],
            row["created_at"][:10],
            row["name"],
            row["kind"],
            row["config_key"],
            row["judge"] or "—",
            str(row["n_cases"]),
            *means,
        )
        table.add_row(*(_literal(v) for v in cells))
    Console(highlight=False, width=max(shutil.get_terminal_size().columns, 240)).print(table)
    legend = ", ".join(f"{shorts[m]} = {m}" for m in metrics)
    click.echo(one_line(f"means in points (0-100), — = no scores; {legend}"))


@cli.command()
@click.argument("run")
@click.argument("case", required=False)
@click.option("--path", "path", type=click.Path(file_okay=False), help="Runs folder.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(run: str, case: str | None, path: str | None, as_json: bool) -> None:
    """Print a run (its header and cases) or one CASE of it in full."""
    with open_store(path, announce=not as_json) as store:
        run_id = store.resolve_run(run)
        header = store.run(run_id)
        if case is None:
            cases = store.cases(run_id).to_pylist()
            if as_json:
                from ragtui.core.runfile import header_to_json

                click.echo(
                    json_text(
                        {"run": header_to_json(header), "cases": cases}, indent=2, default=str
                    )
                )
                return
            h = header
            lines = [
                f"run {h.id}  name {h.name}  kind {h.kind}  created {h.created_at}",
                f"config {json.dumps(dict(h.config), sort_keys=True)}  key {h.config_key}",
                f"judge {h.judge.model} ({h.judge.provider}) prompt {h.judge.prompt_hash}",
                f"{len(cases)} cases",
            ]
            for line in lines:
                click.echo(one_line(line))
            for row in cases:
                click.echo(f"  {one_line(row['case_id'])}  {_one_line(row['question'], 90)}")
            return
        found = store.case(run_id, case)
        if found is None:
            raise RagtuiError(f"run {run_id} has no case {case!r}")
    if as_json:
        from ragtui.core.runfile import case_to_json

        click.echo(json_text(case_to_json(found), indent=2))
        return
    for line in case_lines(found):
        click.echo(printable(line))  # case_lines made it printable; tab and newline stay


def _one_line(text: str, width: int) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _literal(value: str) -> Any:
    from rich.text import Text

    return Text(one_line(value))


def _add_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"ragtui.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ragtui.commands.{name}":
                continue  # that area is not built yet
            raise
        for command in getattr(module, "COMMANDS", []):
            cli.add_command(command)


_add_commands()


def main() -> None:
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
