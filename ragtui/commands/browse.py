"""`ragtui open`, `ragtui runs`, `ragtui show`: browsing a runs folder."""

from __future__ import annotations

import json
from typing import Any

import click

from ragtui.commands.common import (
    emit_json,
    folder_option,
    open_ws,
    pick_folder,
    print_table,
    resolve_folder,
)
from ragtui.core.errors import RagtuiError
from ragtui.core.queries import RunRow
from ragtui.core.views import case_lines, run_rows
from ragtui.format import (
    case_count,
    one_line,
    printable,
    pts,
    run_kind,
    short_metrics,
    stated_figure,
)


@click.command("open")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@folder_option
def open_command(path: str | None, path_option: str | None = None) -> None:
    """Open the dashboard on PATH (default ./runs, else the bundled sample history)."""
    from ragtui.tui.app import run_app

    folder, notice = resolve_folder(pick_folder(path, path_option))
    status = run_app(folder, notice=notice)
    if status:
        raise SystemExit(status)


@click.command("runs")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@folder_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def runs_command(path: str | None, path_option: str | None, as_json: bool) -> None:
    """List the runs with their per-metric means (and error counts)."""
    # notices and skipped files go to stderr in both modes, and into the JSON too
    with open_ws(pick_folder(path, path_option)) as workspace:
        rows, metrics = run_rows(workspace.store)
        if as_json:
            out = {"metrics": metrics, "runs": [r.to_json() for r in rows]}
            emit_json(out, workspace, indent=2, default=str)
            return
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("id", no_wrap=True)  # ids are what commands take: never cut
    for column in ("date", "name", "kind", "config key", "judge"):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    table.add_column("N", justify="right", no_wrap=True)
    shorts = short_metrics(metrics)
    for metric in metrics:
        table.add_column(_literal(shorts[metric]), justify="right", no_wrap=True)
    for row in rows:
        cells = (
            row.id,
            row.created_at[:10],
            row.name,
            run_kind(row.kind, in_progress=row.in_progress, summary_only=row.summary_only),
            row.config_key,
            row.judge or "—",
            case_count(row.n_cases, summary_only=row.summary_only),
            *(_mean_cell(row, m) for m in metrics),
        )
        table.add_row(*(_literal(v) for v in cells))
    print_table(table)  # at its natural width: no column dropped, no figure cut
    legend = ", ".join(f"{shorts[m]} = {m}" for m in metrics if shorts[m] != m)
    legend = f"; {legend}" if legend else ""
    click.echo(
        one_line(
            "means in points (0-100); — = no scores; !n = n unreadable judge replies (a label "
            "metric scores them 0, other metrics record errors); (n err) = n scores failed, "
            f"left out of the mean{legend}"
        )
    )


def _mean_cell(row: RunRow, metric: str) -> str:
    """The mean in points, with the parse failures it counts as 0 (`!n`, as on the Runs
    screen), and beside it how many scores failed (never averaged in as 0)."""
    mean = row.listed_means.get(metric)
    errors = row.errors.get(metric, 0)
    failures = row.parse_failures.get(metric, 0)
    text = "—" if mean is None else pts(mean)
    text += f" !{failures}" if failures else ""
    return f"{text} ({errors} err)" if errors else text


@click.command("show")
@click.argument("run")
@click.argument("case", required=False)
@folder_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show_command(run: str, case: str | None, path_option: str | None, as_json: bool) -> None:
    """Print a run (its header and cases) or one CASE of it in full."""
    with open_ws(path_option) as workspace:
        store = workspace.store
        run_id = store.resolve_run(run)
        header = store.run(run_id)
        if case is None:
            cases = store.cases(run_id).to_pylist()
            if as_json:
                from ragtui.core.runfile import header_to_json

                out = {"run": header_to_json(header), "cases": cases}
                emit_json(out, workspace, indent=2, default=str)
                return
            h = header
            lines = [
                f"run {h.id}  name {h.name}  kind {h.kind}  created {h.created_at}",
                f"config {json.dumps(dict(h.config), sort_keys=True)}  key {h.config_key}",
                # an imported run may name no judge: "unknown", not Python's None
                f"judge {h.judge.model or 'unknown'}"
                + (f" ({h.judge.provider})" if h.judge.provider else "")
                + f" prompt {h.judge.prompt_hash or 'unknown'}",
                f"{len(cases)} cases",
            ]
            lines += ["stated " + stated_figure(f) for f in h.stated]
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

            emit_json(case_to_json(found), workspace, indent=2)
            return
    for line in case_lines(found):
        click.echo(printable(line))  # case_lines made it printable; tab and newline stay


def _one_line(text: str, width: int) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _literal(value: str) -> Any:
    from rich.text import Text

    return Text(one_line(value))
