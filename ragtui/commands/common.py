"""What the command modules share: which folder to open, opening it, user errors."""

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
from ragtui.workspace import open_folder

DEFAULT_FOLDER = Path("runs")


def bundled_samples() -> Path:
    """The demo history: inside the package when installed from a wheel, else beside it."""
    here = Path(__file__).resolve().parents[1]  # the ragtui package
    for candidate in (here / "_sample_runs", here.parent / "sample_runs"):
        if candidate.is_dir():
            return candidate
    raise RagtuiError("the bundled sample_runs/ folder is missing from this installation")


def resolve_folder(path: str | Path | None) -> tuple[Path, str | None]:
    """The folder to open and a notice when it is not the one the user named.

    No path: ./runs when it holds run files (or foreign result files), else the bundled samples.
    """
    if path is not None:
        folder = Path(path)
        if not folder.is_dir():
            raise RagtuiError(f"{folder}: no such folder")
        return folder, None
    if DEFAULT_FOLDER.is_dir() and any(
        p.is_file() and not p.name.startswith(".") for p in DEFAULT_FOLDER.rglob("*")
    ):
        return DEFAULT_FOLDER, None
    samples = bundled_samples()
    return samples, f"no run files in ./runs: showing the bundled demo history in {samples}"


def open_store(path: str | Path | None, *, announce: bool = True) -> Store:
    """Open (and refresh) the index of a folder, printing notices and bad files on stderr."""
    folder, notice = resolve_folder(path)
    if notice and announce:
        click.echo(one_line(notice), err=True)
    store = open_folder(folder)
    if announce:
        for line in store.notices:
            click.echo(f"notice: {one_line(line)}", err=True)
        for problem in store.problems:
            click.echo(f"skipped: {one_line(problem)}", err=True)
    return store


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
