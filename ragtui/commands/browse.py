"""`ragtui open`, `ragtui runs`, `ragtui show`: browsing a runs folder."""

from __future__ import annotations

import json
import shutil
from typing import Any

import click

from ragtui.commands.common import open_store, resolve_folder
from ragtui.core.errors import RagtuiError
from ragtui.core.views import case_lines, run_rows
from ragtui.format import short_metrics


@click.command("open")
@click.argument("path", required=False, type=click.Path(file_okay=False))
def open_command(path: str | None) -> None:
    """Open the dashboard on PATH (default ./runs, else the bundled sample history)."""
    from ragtui.tui.app import run_app

    folder, notice = resolve_folder(path)
    run_app(folder, notice=notice)


@click.command("runs")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def runs_command(path: str | None, as_json: bool) -> None:
    """List the runs in PATH with their per-metric means."""
    with open_store(path, announce=not as_json) as store:
        rows, metrics = run_rows(store)
    if as_json:
        click.echo(json.dumps({"metrics": metrics, "runs": rows}, indent=2, default=str))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("id", "date", "name", "kind", "config key", "judge", "N"):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    shorts = short_metrics(metrics)
    for metric in metrics:
        table.add_column(shorts[metric], justify="right", no_wrap=True)
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
    click.echo(f"means in points (0-100), — = no scores; {legend}")


@click.command("show")
@click.argument("run")
@click.argument("case", required=False)
@click.option("--path", "path", type=click.Path(file_okay=False), help="Runs folder.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show_command(run: str, case: str | None, path: str | None, as_json: bool) -> None:
    """Print a run (its header and cases) or one CASE of it in full."""
    with open_store(path, announce=not as_json) as store:
        run_id = store.resolve_run(run)
        header = store.run(run_id)
        if case is None:
            cases = store.cases(run_id).to_pylist()
            if as_json:
                from ragtui.core.runfile import header_to_json

                click.echo(
                    json.dumps(
                        {"run": header_to_json(header), "cases": cases}, indent=2, default=str
                    )
                )
                return
            click.echo(
                f"run {header.id}  name {header.name}  kind {header.kind}  created {header.created_at}"
            )
            click.echo(
                f"config {json.dumps(dict(header.config), sort_keys=True)}  key {header.config_key}"
            )
            click.echo(
                f"judge {header.judge.model} ({header.judge.provider}) prompt {header.judge.prompt_hash}"
            )
            click.echo(f"{len(cases)} cases")
            for row in cases:
                click.echo(f"  {row['case_id']}  {_one_line(row['question'], 90)}")
            return
        found = store.case(run_id, case)
        if found is None:
            raise RagtuiError(f"run {run_id} has no case {case!r}")
    if as_json:
        from ragtui.core.runfile import case_to_json

        click.echo(json.dumps(case_to_json(found), indent=2, ensure_ascii=False))
        return
    for line in case_lines(found):
        click.echo(line)


def _one_line(text: str, width: int) -> str:
    from ragtui.format import printable

    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _literal(value: str) -> Any:
    from rich.text import Text

    from ragtui.format import printable

    return Text(printable(value))
