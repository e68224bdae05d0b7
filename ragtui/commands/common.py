"""What the command modules share: opening the folder (through the services layer), printing its
notices and skipped files, and user errors."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from ragtui import config as config_module
from ragtui.config_values import ConfigError, margin_points
from ragtui.core.errors import InputError, RagtuiError
from ragtui.core.stats import DEFAULT_SEED
from ragtui.format import error_text, json_text, one_line
from ragtui.services.workspace import Workspace, open_workspace, resolve_folder, writable_folder

__all__ = [
    "announce",
    "emit_json",
    "folder_json",
    "folder_option",
    "json_option",
    "load_config",
    "margin_option",
    "metric_option",
    "open_ws",
    "pass_option",
    "pick_folder",
    "point_pairs",
    "points",
    "resolve_folder",
    "seed_option",
    "user_errors",
    "writable_folder",
]

# Every command names its runs folder the same way: -p/--path DIR. Commands that took the folder
# as a last positional argument still accept it there.
folder_option = click.option(
    "-p",
    "--path",
    "path_option",
    type=click.Path(file_okay=False),
    help="Runs folder (default ./runs, else the bundled demo history).",
)


def _margin_points(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """The rule ragtui.toml's [compare] margin follows (config_values.margin_points)."""
    if value is None:
        return None
    try:
        return margin_points(value, "--margin")
    except ConfigError as err:
        raise click.BadParameter(str(err).removeprefix("--margin: ")) from None


# Options several commands share; everything typed is in points (x100), like everything shown.
margin_option = click.option(
    "--margin",
    type=float,
    callback=_margin_points,
    default=None,
    metavar="POINTS",
    help="Practical margin in points, 1 to 50 (default: [compare] margin in ragtui.toml, else 5).",
)
seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Seed for random sign-flips (clustered metrics with many clusters).",
)
metric_option = click.option(
    "--metric", "-m", "metrics", multiple=True, help="Only this metric (repeatable)."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
pass_option = click.option(
    "--pass",
    "passes",
    multiple=True,
    metavar="METRIC=POINTS",
    help="Pass threshold of a metric's cases, in points (default: the source's, else 50).",
)


def points(value: float | None) -> float | None:
    """A figure typed in points as the fraction the core works in."""
    return None if value is None else value / 100


def point_pairs(specs: tuple[str, ...], option: str) -> dict[str, float]:
    """METRIC=POINTS pairs (POINTS in [0, 100]) as fractions: faithfulness=80 -> 0.8."""
    out = {}
    for spec in specs:
        metric, sep, value = spec.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not metric.strip() or not 0.0 <= number <= 100.0:
            raise click.BadParameter(
                f"{spec!r}: expected METRIC=POINTS with POINTS in [0, 100] (80 = a mean of 0.8)",
                param_hint=option,
            )
        if 0.0 < number < 1.0:  # a fraction, as --json and the run files write them
            raise click.BadParameter(
                f"{spec!r}: figures are in points, from 0 to 100 ({one_line(metric.strip())}="
                f"{number * 100:g} for a mean of {number:g}); below 1 point is refused as "
                "what it most likely is, a fraction",
                param_hint=option,
            )
        out[metric.strip()] = number / 100
    return out


def pick_folder(positional: str | None, option: str | None) -> str | None:
    """The folder from --path or the positional PATH; both given and different is an error."""
    if positional and option and Path(positional).resolve() != Path(option).resolve():
        raise click.UsageError(f"two folders given: {positional} and --path {option}")
    return option or positional


def folder_json(workspace: Workspace) -> dict[str, Any]:
    """What --json outputs say about the folder: its notices and the files it skipped."""
    return {
        "folder": str(workspace.folder),
        "notices": list(workspace.notices),
        "skipped": [str(p) for p in workspace.store.problems],
    }


def emit_json(data: dict[str, Any], workspace: Workspace | None = None, **options: Any) -> None:
    """Strict JSON on stdout (a NaN or infinity is a bug, never output), through the one
    neutraliser; with a workspace, its notices and skipped files ride along (and went to
    stderr when it opened)."""
    payload = dict(data)
    if workspace is not None:
        folder = folder_json(workspace)
        folder["notices"] = [*folder["notices"], *data.get("notices", ())]
        payload.update(folder)
    click.echo(json_text(payload, allow_nan=False, **options))


def announce(workspace: Workspace) -> None:
    """The folder's notices and skipped files, one line each on stderr."""
    for line in workspace.notices:
        click.echo(f"notice: {one_line(line)}", err=True)
    for problem in workspace.store.problems:
        click.echo(f"skipped: {one_line(problem)}", err=True)


def open_ws(path: str | Path | None) -> Workspace:
    """Open a folder for a command; its notices and skipped files go to stderr."""
    workspace = open_workspace(path)
    announce(workspace)
    return workspace


def load_config(folder: str | Path | None) -> config_module.Config:
    """The settings for this folder (see ragtui.config), its notices (sections of a folder's
    ragtui.toml that were ignored) printed on stderr."""
    config = config_module.load_config(folder)
    for line in config.notices:
        click.echo(f"notice: {one_line(line)}", err=True)
    return config


class _UsageError(click.ClickException):
    exit_code = 2


def user_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's own errors into one line on stderr (click's "Error: ..."): exit 2
    for bad input (a run, case, metric or judge that is not there; core.errors.InputError),
    exit 1 for a failure of what ran (a judge that cannot be reached)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except InputError as err:
            raise _UsageError(error_text(err)) from None
        except RagtuiError as err:
            raise click.ClickException(error_text(err)) from None

    return wrapper


def print_table(table: Any, fallback: list[str] | None = None) -> None:
    """A rich table at its natural width: piped output is never wrapped or cut, and no column
    is dropped to fit; on a terminal too narrow for it, the `fallback` lines instead (without
    one, the terminal wraps the rows)."""
    import shutil
    import sys

    from rich.console import Console

    natural = Console(width=100_000).measure(table).maximum
    narrow = sys.stdout.isatty() and natural > shutil.get_terminal_size().columns
    if narrow and fallback is not None:
        for line in fallback:
            click.echo(one_line(line))
        return
    Console(highlight=False, width=natural).print(table)
