"""Opening a folder of foreign result files: convert each one once into `imported/`.

`ragtui` opened on a folder calls `import_foreign_files(folder)` before indexing it: every
CSV/JSON/JSONL/.eval/Markdown file that is not a native run file is converted into
`folder/imported/`, unless a native file already records its sha256 (`source.sha256`; a
native-looking `.jsonl` gets it too, so it is converted once, not on every open).

The folder is untrusted: file names come from `ragtui.core.paths` (never from a run id), no
existing file is overwritten, and a run whose id another run of the folder already has is
imported under a suffixed id (`id-2`) with a notice, so both survive.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ragtui.core.errors import RagtuiError
from ragtui.core.model import Run, RunFile, SourceInfo
from ragtui.core.paths import free_run_id, new_run_path, read_header
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.importers import UnknownFormatError, load_file
from ragtui.importers._common import file_sha256
from ragtui.importers._tabular import is_markdown_table

IMPORTED = "imported"
# A foreign file changed less than this long ago may still be being written (a tool saving
# its results as the live watch looks): it waits, or its first rows became a run of their own.
SETTLE_SECONDS = 1.0
EXTENSIONS = (".csv", ".tsv", ".json", ".jsonl", ".eval", ".md", ".sqlite")  # .sqlite: TruLens
# Hidden folders where a known tool keeps its results by default, and the one file in each that
# holds them: DeepEval writes `.deepeval/.latest_test_run.json` (its cache, telemetry and key
# files beside it are not results and are never read).
TOOL_DOT_FOLDERS = {".deepeval": (".latest_test_run.json",)}


def foreign_files(folder: Path) -> list[Path]:
    """Candidate result files: not native, not hidden (except the result files of known tools'
    dot-folders), not under imported/, not companions."""
    found = []
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        for dot in sorted(d for d in dirs if d in TOOL_DOT_FOLDERS):
            for name in TOOL_DOT_FOLDERS[dot]:
                candidate = here / dot / name
                if candidate.is_file() and not candidate.is_symlink():
                    found.append(candidate)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not (here == folder and d == IMPORTED)
        )
        for name in sorted(files):
            lowered = name.lower()
            if name.startswith(".") or lowered.endswith(SUFFIX) or not lowered.endswith(EXTENSIONS):
                continue
            # a RAGAS traces file travels with its results file; it is not a run of its own
            if "traces" in lowered and lowered.endswith(".json"):
                continue
            if lowered.endswith(".md") and not _is_report_markdown(here / name):
                continue
            found.append(here / name)
    return found


def _native_headers(folder: Path) -> tuple[set[str], set[str]]:
    """(source sha256s, run ids) of the folder's native run files, from their header lines."""
    shas: set[str] = set()
    ids: set[str] = set()
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(SUFFIX) or name.startswith("."):
                continue
            header = read_header(Path(root) / name)
            source = header.get("source")
            sha = source.get("sha256") if isinstance(source, dict) else None
            if isinstance(sha, str):
                shas.add(sha)
            if isinstance(header.get("id"), str):
                ids.add(header["id"])
    return shas, ids


def _one_line(err: RagtuiError) -> str:
    return " ".join(line.strip() for line in str(err).splitlines())


def _is_report_markdown(path: Path) -> bool:
    # a README without a table is documentation, not a result file: skip it quietly
    try:
        return is_markdown_table(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def _writable(folder: Path) -> bool:
    target = folder / IMPORTED
    if target.exists():
        return os.access(target, os.W_OK | os.X_OK)
    return os.access(folder, os.W_OK | os.X_OK)


def import_foreign_files(
    folder: Path,
    scales: Mapping[str, tuple[float, float]] | None = None,
    *,
    not_results: set[str] | None = None,
    waiting: list[Path] | None = None,
    settle: float = 0.0,
) -> tuple[list[Path], list[str]]:
    """Convert the folder's not-yet-converted foreign files; (written paths, one line per notice).
    `scales`: declared metric scales (`[metrics.NAME] scale` in ragtui.toml).

    `settle` (the live watch: SETTLE_SECONDS): a file changed less than this long ago is not
    converted yet (its writer may be mid-way); it goes into `waiting`, to look again later.

    `not_results`: sha256s of files already found to be in no known format; they are passed
    over in silence, and files newly found so are added to it (with one short notice, so a
    README.csv beside the runs is mentioned once, not on every command)."""
    not_results = set() if not_results is None else not_results
    folder = Path(folder)
    candidates = [
        p for p in foreign_files(folder) if p.suffix.lower() != ".md" or _is_report_markdown(p)
    ]
    if not candidates:
        not_results.clear()
        return [], []
    done, ids = _native_headers(folder)
    pending: list[tuple[Path, str]] = []
    notices: list[str] = []
    present: set[str] = set()
    for path in candidates:
        try:
            sha = file_sha256(path)
        except RagtuiError as err:
            notices.append(f"not imported: {err}")
            continue
        present.add(sha)
        if sha in done or sha in not_results:
            continue
        if _changed_lately(path, settle):
            if waiting is not None:
                waiting.append(path)
            continue
        pending.append((path, sha))
    not_results.intersection_update(present)  # forget files that are gone or changed
    if not pending:
        return [], notices
    if not _writable(folder):
        names = ", ".join(p.name for p, _ in pending[:3]) + (" …" if len(pending) > 3 else "")
        notices.append(
            f"{folder} is read-only: {len(pending)} foreign result file(s) not imported ({names}); "
            f"use `ragtui import FILE --into DIR`"
        )
        return [], notices
    written: list[Path] = []
    for path, sha in pending:
        try:
            run_files = load_file(path, notices=notices, scales=scales)
        except UnknownFormatError:
            not_results.add(sha)
            notices.append(
                f"{path}: not a result file of a known format, skipped "
                f"(`ragtui import {path.name}` says what each format needs)"
            )
            continue
        except RagtuiError as err:
            notices.append(f"not imported: {_one_line(err)}")
            continue
        paths = []
        fresh = set(ids)
        try:
            for run_file in run_files:
                run = recorded_run(run_file, path, sha, fresh, notices)
                target = new_run_path(folder / IMPORTED, run.id, root=folder)
                paths.append(write_run_file(target, run, run_file.cases))
        except (OSError, RagtuiError) as exc:
            for p in paths:  # all runs of a file or none
                p.unlink(missing_ok=True)
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            notices.append(f"not imported: {path}: cannot write {folder / IMPORTED} ({why})")
            continue
        done.add(sha)
        ids = fresh
        written.extend(paths)
        cases = sum(len(r.cases) for r in run_files)
        source = run_files[0].run.source
        fmt = source.format if source else "native"
        notices.append(f"imported {path} ({fmt}): {len(run_files)} run(s), {cases} cases")
    return written, notices


def _changed_lately(path: Path, settle: float) -> bool:
    """Changed less than `settle` seconds ago (or stamped in the future by less: a clock a
    little ahead is no reason to wait forever)."""
    try:
        age = time.time() - path.stat().st_mtime
    except OSError:
        return False  # the read that follows says what is wrong with it
    return abs(age) < settle


def recorded_run(run_file: RunFile, path: Path, sha: str, ids: set[str], notices: list[str]) -> Run:
    """The run header to write: the source file's sha256 recorded (so the file is converted
    once), and an id no other run of the folder has (`ids` gains it)."""
    run = run_file.run
    source = run.source
    if source is None or source.sha256 != sha:  # a native-looking .jsonl names no source
        source = SourceInfo(format="native", path=str(path), sha256=sha)
    run_id = free_run_id(run.id, ids)
    if run_id != run.id:
        notices.append(
            f"{path}: run id {run.id!r} is already used in this folder; imported as {run_id!r}"
        )
    ids.add(run_id)
    return replace(run, id=run_id, source=source)
