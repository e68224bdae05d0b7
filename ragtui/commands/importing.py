"""`ragtui import FILE...`: foreign result files -> native run files in runs/ (or --into DIR).

Each file succeeds or fails alone; a file's runs are all written or none; importing the same
content twice is a no-op with a notice (matched by the source file's sha256, which every
written run records). File names come from `ragtui.core.paths`, never from a run id; a run
whose id is taken gets a suffixed id (`id-2`) and a notice, so both runs survive.
"""

from __future__ import annotations

from pathlib import Path

import click

from ragtui.commands.common import user_errors
from ragtui.core.errors import InputError, RagtuiError
from ragtui.format import error_text, one_line
from ragtui.importers import REGISTRY, ImportOptions
from ragtui.importers.folder import foreign_files
from ragtui.importers.generic import FIELDS
from ragtui.importers.scales import parse_scale
from ragtui.services.importing import declared_scales, import_file, open_into

DEFAULT_INTO = Path("runs")


def _split_top(text: str, separators: str) -> list[str]:
    """Split at separators outside parentheses: `score:f(mode=f1)=col` stays one piece."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch in separators and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p]


def _pairs(values: tuple[str, ...], option: str, *, several: bool) -> dict[str, str]:
    """KEY=VALUE pairs. With `several` one value may hold many (`question=q answer=a`), when
    every piece is a pair; otherwise the value is one pair and may contain spaces."""
    out: dict[str, str] = {}
    for value in values:
        pieces = _split_top(value, " ,") if several else [value]
        if several and not all(_split_top(p, "=")[1:] for p in pieces):
            pieces = [value]
        for item in pieces:
            key, *rest = _split_top(item, "=")
            if not rest or not key.strip():
                raise click.BadParameter(f"expected KEY=VALUE, found {item!r}", param_hint=option)
            out[key.strip()] = item[len(key) + 1 :]
    return out


def _date(value: str | None) -> str | None:
    """--date as the ISO 8601 UTC stamp run files hold: a date is its midnight UTC."""
    if value is None:
        return None
    from ragtui.importers._common import iso_from_any

    stamp = iso_from_any(value.strip())
    if stamp is None:
        raise click.BadParameter(
            f"expected a date YYYY-MM-DD (or an ISO 8601 time), found {value!r}",
            param_hint="--date",
        )
    return stamp


def _scales(values: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    out = {}
    for metric, text in _pairs(values, "--scale", several=False).items():
        try:
            out[metric] = parse_scale(text)
        except ValueError as exc:
            raise click.BadParameter(f"{metric}={text}: {exc}", param_hint="--scale") from None
    return out


def _is_map_key(key: str) -> bool:
    return key in FIELDS or key.startswith("score:")


def _split_args(args: tuple[str, ...]) -> tuple[list[Path], list[str]]:
    # `--map question=q answer=a`: click hands `answer=a` over as a FILE; take it back as --map
    files, extra = [], []
    for arg in args:
        key = _split_top(arg, "=")[0]
        if "=" in arg and not Path(arg).exists() and _is_map_key(key):
            extra.append(arg)
        else:
            files.append(Path(arg))
    return files, extra


def _expand_folders(paths: list[Path]) -> list[Path]:
    # a folder stands for the foreign result files in it (as when ragtui opens a folder)
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = foreign_files(path)
            if not found:
                click.echo(
                    f"notice: {one_line(path)}: no result files (csv/json/jsonl/eval/md) in it",
                    err=True,
                )
            out.extend(found)
        else:
            out.append(path)
    return out


@click.command("import")
@click.argument("files", nargs=-1, required=True, metavar="FILE_OR_FOLDER...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(REGISTRY)),
    help="Skip detection: read as this format.",
)
@click.option("--name", help="Run name (a file with several runs adds [prompt · provider] etc.).")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Into the run config; judge.model=, dataset.name= set the header.",
)
@click.option(
    "--map",
    "maps",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="question/answer/contexts/reference/case_id=COLUMN, score:METRIC=COLUMN.",
)
@click.option(
    "--traces",
    type=click.Path(dir_okay=False, exists=True),
    help="RAGAS traces JSON for the (single) results file.",
)
@click.option(
    "--scale",
    "scale_args",
    multiple=True,
    metavar="METRIC=LOW:HIGH",
    help="The scale of a metric the tool does not define, e.g. rating=1:5 (normalised to 0-1).",
)
@click.option(
    "--date",
    callback=lambda ctx, param, value: _date(value),
    metavar="YYYY-MM-DD",
    help="The run's date (ISO 8601), e.g. for a CSV that holds none (else the file's mtime).",
)
@click.option(
    "--into",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_INTO,
    show_default=True,
    help="Folder of run files.",
)
@user_errors
def import_command(
    files: tuple[str, ...],
    fmt: str | None,
    name: str | None,
    sets: tuple[str, ...],
    maps: tuple[str, ...],
    traces: str | None,
    scale_args: tuple[str, ...],
    date: str | None,
    into: Path,
) -> None:
    """Import result files of RAGAS, DeepEval, promptfoo, Inspect AI, TruLens, MLflow or your own
    harness (CSV, JSON, JSONL, Markdown)."""
    paths, extra_maps = _split_args(files)
    if not paths:
        raise click.UsageError("no FILE given")
    paths = _expand_folders(paths)
    mapping = _pairs((*maps, *extra_maps), "--map", several=True)
    for key in mapping:
        if not _is_map_key(key):  # bad input for every file: say it once, before any is read
            raise click.BadParameter(
                f"{key}=...: unknown field; use {', '.join(FIELDS)} or score:METRIC",
                param_hint="--map",
            )
    options = ImportOptions(
        name=name,
        overrides=_pairs(sets, "--set", several=False),
        mapping=mapping,
        traces=traces,
        scales=_scales(scale_args),
        date=date,
    )
    try:
        store = open_into(into)
    except InputError:
        raise  # --into names the demo: bad input, exit 2 (as for re-judge and noise)
    except RagtuiError as err:
        raise click.ClickException(error_text(err)) from None
    declared, config_notices = declared_scales(into)
    failed = 0
    with store:
        # e.g. the dashboard has the folder open: it indexes too
        for line in [*config_notices, *store.notices]:
            click.echo(f"notice: {one_line(line)}", err=True)
        for path in paths:
            try:
                lines, notices = import_file(store, into, path, fmt, options, declared)
            except RagtuiError as err:
                failed += 1
                click.echo(f"error: {error_text(err)}", err=True)
                continue
            for line in notices:
                click.echo(f"notice: {one_line(line)}", err=True)
            for line in lines:
                click.echo(one_line(line))
    if failed:
        raise click.ClickException(f"{failed} of {len(paths)} file(s) not imported")
