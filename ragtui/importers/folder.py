"""Opening a folder of foreign result files: convert each one once into `imported/`.

`ragtui` opened on a folder calls `import_foreign_files(folder)` before indexing it: every
CSV/JSON/JSONL/.eval/Markdown file that is not a native run file is converted into
`folder/imported/<run_id>.ragtui.jsonl`, unless a native file already records its sha256.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ragtui.core.errors import RagtuiError
from ragtui.core.runfile import SUFFIX, write_run_file
from ragtui.importers import load_file
from ragtui.importers._common import file_sha256
from ragtui.importers._tabular import is_markdown_table

IMPORTED = "imported"
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


def converted_shas(folder: Path) -> set[str]:
    """sha256 of every source file some native run file in the folder was imported from."""
    shas = set()
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(SUFFIX) or name.startswith("."):
                continue
            sha = _source_sha(Path(root) / name)
            if sha:
                shas.add(sha)
    return shas


def _source_sha(path: Path) -> str | None:
    # only the header line is needed; the index reports broken run files, here they mean "no sha"
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError, RecursionError):
        return None
    source = header.get("source") if isinstance(header, dict) else None
    sha = source.get("sha256") if isinstance(source, dict) else None
    return sha if isinstance(sha, str) else None


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
    folder: Path, scales: Mapping[str, tuple[float, float]] | None = None
) -> tuple[list[Path], list[str]]:
    """Convert the folder's not-yet-converted foreign files; (written paths, one line per notice).
    `scales`: declared metric scales (`[metrics.NAME] scale` in ragtui.toml)."""
    folder = Path(folder)
    candidates = [
        p for p in foreign_files(folder) if p.suffix.lower() != ".md" or _is_report_markdown(p)
    ]
    if not candidates:
        return [], []
    done = converted_shas(folder)
    pending: list[tuple[Path, str]] = []
    notices: list[str] = []
    for path in candidates:
        try:
            sha = file_sha256(path)
        except RagtuiError as err:
            notices.append(f"not imported: {err}")
            continue
        if sha not in done:
            pending.append((path, sha))
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
        except RagtuiError as err:
            notices.append(f"not imported: {_one_line(err)}")
            continue
        paths = []
        try:
            for run_file in run_files:
                target = folder / IMPORTED / f"{run_file.run.id}{SUFFIX}"
                paths.append(write_run_file(target, run_file.run, run_file.cases))
        except OSError as exc:
            for p in paths:  # all runs of a file or none
                p.unlink(missing_ok=True)
            notices.append(
                f"not imported: {path}: cannot write {folder / IMPORTED} ({exc.strerror})"
            )
            continue
        done.add(sha)
        written.extend(paths)
        cases = sum(len(r.cases) for r in run_files)
        source = run_files[0].run.source
        fmt = source.format if source else "?"
        notices.append(f"imported {path} ({fmt}): {len(run_files)} run(s), {cases} cases")
    return written, notices
