"""Importing result files of other tools into a runs folder (the `ragtui import` workflow).

Each file succeeds or fails alone; a file's runs are all written or none; importing the same
content twice is a no-op with a notice (matched by the source file's sha256, which every
written run records). File names come from `ragtui.core.paths`, never from a run id; a run
whose id is taken gets a suffixed id (`id-2`) and a notice, so both runs survive. A folder the
dashboard has open takes imports too: the files land, and the dashboard's watch indexes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ragtui.core.errors import InputError, RagtuiError
from ragtui.core.model import RunFile
from ragtui.core.paths import new_run_path
from ragtui.core.runfile import write_run_file
from ragtui.core.store import Store
from ragtui.importers import ImportFormatError, ImportOptions, detect, load_file
from ragtui.importers._common import file_sha256
from ragtui.importers.folder import recorded_run
from ragtui.services.workspace import demo_refusal, read_config


def open_into(into: Path) -> Store:
    """The folder to import into, created when missing, with its index open for writing."""
    refusal = demo_refusal(into)
    if refusal is not None:
        raise InputError(refusal)
    try:
        into.mkdir(parents=True, exist_ok=True)
        store = Store.open(into)
    except (OSError, RagtuiError) as exc:
        raise RagtuiError(f"{into}: cannot open the runs folder ({exc})") from None
    try:
        store.require_writable("import")  # read-only, or its disk full: each says which
    except RagtuiError as exc:
        store.close()
        raise type(exc)(f"{exc}: nothing imported") from None  # (a full disk stays exit 1)
    return store


def declared_scales(into: Path) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """The metric scales declared for the folder imported into ([metrics.NAME] scale in its
    ragtui.toml, the user's or the working directory's), and notices about that config."""
    config, problem = read_config(into)
    return dict(config.scales), [n for n in (problem, *config.notices) if n]


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
    store: Store,
    into: Path,
    path: Path,
    fmt: str | None,
    options: ImportOptions,
    declared: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[list[str], list[str]]:
    """Import one file: (lines for written runs, notices). Raises RagtuiError on failure.
    `declared`: the folder's configured metric scales; a `--scale` in `options` wins."""
    if not path.is_file():
        raise ImportFormatError(f"{path}: no such file")
    runs = store.runs().to_pylist()
    known_ids = {r["run_id"] for r in runs}
    sha = file_sha256(path)
    by_sha = [r["run_id"] for r in runs if r.get("source_sha256") == sha]
    files = {row.id: row.file for row in store.run_rows()}
    if by_sha:
        return [], [
            f"{path}: already imported (same content) as {', '.join(sorted(by_sha))}; nothing to do"
        ]
    here = [rid for rid, file in files.items() if file.resolve() == path.resolve()]
    if here:
        return [], [f"{path}: run {', '.join(here)} is already in {into}; nothing to do"]
    if fmt is None and options.mapping:
        try:
            fmt = detect(path).name
        except ImportFormatError:
            fmt = "generic"  # --map names the columns of a table no sniffer knows
    lines: list[str] = []
    notices: list[str] = []
    run_files = load_file(path, fmt, options, notices, scales=declared)
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
