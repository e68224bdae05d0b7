"""`ragtui import FILE...`: foreign result files -> native run files in runs/ (or --into DIR).

Each file succeeds or fails alone; a file's runs are all written or none; importing the same
content twice is a no-op with a notice (matched by the source file's sha256, which every
written run records). File names come from `ragtui.core.paths`, never from a run id; a run
whose id is taken gets a suffixed id (`id-2`) and a notice, so both runs survive.
"""

from __future__ import annotations

from pathlib import Path

import click

from ragtui.core.errors import RagtuiError
from ragtui.core.model import RunFile
from ragtui.core.paths import new_run_path
from ragtui.core.runfile import write_run_file
from ragtui.core.store import Store
from ragtui.format import one_line
from ragtui.importers import REGISTRY, ImportFormatError, ImportOptions, detect, load_file
from ragtui.importers._common import file_sha256
from ragtui.importers.folder import foreign_files, recorded_run
from ragtui.importers.generic import FIELDS

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


def _summary(run_file: RunFile) -> str:
    metrics: list[str] = []
    errors = 0
    for case in run_file.cases:
        metrics.extend(m for m in (*case.scores, *case.errors) if m not in metrics)
        errors += len(case.errors)
    run = run_file.run
    tail = f", {errors} failed scores" if errors else ""
    return f"{run.id}  {run.name!r}  {len(run_file.cases)} cases  metrics: {', '.join(metrics) or '-'}{tail}"


def import_file(
    store: Store, into: Path, path: Path, fmt: str | None, options: ImportOptions
) -> tuple[list[str], list[str]]:
    """Import one file: (lines for written runs, notices). Raises RagtuiError on failure."""
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    runs = store.runs().to_pylist()
    known_ids = {r["run_id"] for r in runs}
    sha = file_sha256(path)
    by_sha = [r["run_id"] for r in runs if r.get("source_sha256") == sha]
    if by_sha:
        return [], [
            f"{path}: already imported (same content) as {', '.join(sorted(by_sha))}; nothing to do"
        ]
    here = [r["run_id"] for r in runs if Path(r["file_path"]).resolve() == path.resolve()]
    if here:
        return [], [f"{path}: run {', '.join(here)} is already in {into}; nothing to do"]
    if fmt is None and options.mapping:
        try:
            fmt = detect(path).name
        except ImportFormatError:
            fmt = "generic"  # --map names the columns of a table no sniffer knows
    lines: list[str] = []
    notices: list[str] = []
    run_files = load_file(path, fmt, options, notices)
    ids = set(known_ids)
    fresh = [RunFile(recorded_run(rf, path, sha, ids, notices), rf.cases) for rf in run_files]
    written: list[tuple[Path, RunFile]] = []
    try:
        for run_file in fresh:
            target = new_run_path(into, run_file.run.id)
            written.append((write_run_file(target, run_file.run, run_file.cases), run_file))
        for target, run_file in written:
            store.index_file(target)
            lines.append(_summary(run_file))
    except (OSError, RagtuiError) as exc:
        for target, _ in written:  # all of a file's runs or none
            target.unlink(missing_ok=True)
        store.refresh()
        detail = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise ImportFormatError(
            f"{path}: not imported: cannot write into {into} ({detail})"
        ) from None
    return lines, notices


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
    "--into",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_INTO,
    show_default=True,
    help="Folder of run files.",
)
def import_command(
    files: tuple[str, ...],
    fmt: str | None,
    name: str | None,
    sets: tuple[str, ...],
    maps: tuple[str, ...],
    traces: str | None,
    into: Path,
) -> None:
    """Import result files of RAGAS, DeepEval, promptfoo, Inspect AI or your own harness."""
    paths, extra_maps = _split_args(files)
    if not paths:
        raise click.UsageError("no FILE given")
    paths = _expand_folders(paths)
    options = ImportOptions(
        name=name,
        overrides=_pairs(sets, "--set", several=False),
        mapping=_pairs((*maps, *extra_maps), "--map", several=True),
        traces=traces,
    )
    try:
        into.mkdir(parents=True, exist_ok=True)
        store = Store.open(into)
    except (OSError, RagtuiError) as exc:
        raise click.ClickException(
            one_line(f"{into}: cannot open the runs folder ({exc})")
        ) from None
    failed = 0
    try:
        if store.read_only:
            raise click.ClickException(
                f"{into} is read-only (or held by another ragtui): nothing imported"
            )
        for path in paths:
            try:
                lines, notices = import_file(store, into, path, fmt, options)
            except RagtuiError as err:
                failed += 1
                click.echo(f"error: {one_line(err)}", err=True)
                continue
            for line in notices:
                click.echo(f"notice: {one_line(line)}", err=True)
            for line in lines:
                click.echo(one_line(line))
    finally:
        store.close()
    if failed:
        raise click.ClickException(f"{failed} of {len(paths)} file(s) not imported")


COMMANDS: list[click.Command] = [import_command]
