"""What the command modules share: opening the folder (through the services layer), printing its
notices and skipped files, and user errors."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from ragtui import config as config_module
from ragtui.core.errors import RagtuiError
from ragtui.core.store import Store
from ragtui.format import one_line
from ragtui.services.workspace import Workspace, open_workspace, resolve_folder, writable_folder

__all__ = [
    "announce",
    "folder_json",
    "folder_option",
    "load_config",
    "open_store",
    "open_ws",
    "pick_folder",
    "resolve_folder",
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


def announce(workspace: Workspace) -> None:
    """The folder's notices and skipped files, one line each on stderr."""
    for line in workspace.notices:
        click.echo(f"notice: {one_line(line)}", err=True)
    for problem in workspace.store.problems:
        click.echo(f"skipped: {one_line(problem)}", err=True)


def open_ws(path: str | Path | None, *, quiet: bool = False) -> Workspace:
    """Open a folder for a command; notices go to stderr unless `quiet`."""
    workspace = open_workspace(path)
    if not quiet:
        announce(workspace)
    return workspace


def open_store(path: str | Path | None, *, announce: bool = True) -> Store:
    """Open (and refresh) the index of a folder, printing notices and bad files on stderr."""
    return open_ws(path, quiet=not announce).store


def load_config(folder: str | Path | None) -> config_module.Config:
    """The settings for this folder (see ragtui.config), its notices (sections of a folder's
    ragtui.toml that were ignored) printed on stderr."""
    config = config_module.load_config(folder)
    for line in config.notices:
        click.echo(f"notice: {one_line(line)}", err=True)
    return config


def user_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's own errors into one line on stderr (click's "Error: ...", exit 1)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RagtuiError as err:
            raise click.ClickException(one_line(err)) from None

    return wrapper
