"""The names of the files ragtui writes: built by ragtui, never taken from data.

A run id comes from a file someone else wrote (`"id": "../baseline"`, an absolute path, a
name with control characters), so it never becomes a path. Every run file ragtui writes is
named `<slug of the id>-<8 hex of its sha256>.ragtui.jsonl`: readable, unique per id (ids
that slug alike still differ), one plain path component. The target is checked to stay inside
the runs folder after symlinks are resolved, and an entry already there (a run file, a
planted symlink) is never overwritten: the next free `-2`, `-3` ... name is taken instead.
The id itself keeps its original text inside the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ragtui.core.errors import RagtuiError
from ragtui.core.runfile import SUFFIX

SLUG_CHARS = 60
MAX_TRIES = 1000
HEADER_BYTES = 1 << 20  # a run header longer than this is not one ragtui could resume


class UnsafePathError(RagtuiError):
    """A path ragtui was about to write would leave the runs folder."""


def run_file_name(run_id: str, n: int = 1) -> str:
    """`baseline-2026-11-02-1a2b3c4d.ragtui.jsonl`; `n` > 1 adds `-n` for a taken name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", run_id).strip(".-_")[:SLUG_CHARS].strip(".-_")
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    tail = f"-{n}" if n > 1 else ""
    return f"{slug or 'run'}-{digest}{tail}{SUFFIX}"


def checked(folder: Path, name: str, root: Path | None = None) -> Path:
    """`folder / name` once it is known to stay inside `root` (default `folder`): `name` is one
    plain component and `folder`, with symlinks resolved, lies inside the resolved `root`."""
    if not name or name in (".", "..") or "/" in name or os.sep in name or "\0" in name:
        raise UnsafePathError(f"{name!r} is not a plain file name")
    base = Path(root if root is not None else folder).resolve()
    parent = Path(folder).resolve()
    if not parent.is_relative_to(base):
        raise UnsafePathError(f"{folder} leads outside {root or folder} (to {parent})")
    return Path(folder) / name


def new_run_path(folder: Path, run_id: str, *, root: Path | None = None) -> Path:
    """Where a new run file for `run_id` goes: the first of its names with nothing there
    (not even a dangling symlink), checked to stay inside `root` (default `folder`)."""
    for n in range(1, MAX_TRIES + 1):
        target = checked(folder, run_file_name(run_id, n), root)
        if not os.path.lexists(target):
            return target
    raise UnsafePathError(f"{folder}: no free file name for run {run_id!r}")


def resumable_run_path(folder: Path, run_id: str, *, root: Path | None = None) -> Path:
    """Where a batch that appends run `run_id` writes: the file of that name already holding
    this run (to resume it), else one a crash left without a header (the batch replaces it,
    with a notice), else the first free name. A file that holds another run, or a symlink,
    is someone else's and is skipped, never appended to."""
    for n in range(1, MAX_TRIES + 1):
        target = checked(folder, run_file_name(run_id, n), root)
        if not os.path.lexists(target):
            return target
        if target.is_symlink() or not target.is_file():  # never read through a link or a FIFO
            continue
        if header_id(target) == run_id or _headerless(target):
            return target
    raise UnsafePathError(f"{folder}: no free file name for run {run_id!r}")


def _headerless(path: Path) -> bool:
    """A file of ragtui's own naming that an interrupted batch left empty or without a whole
    header line: no run is in it, so the resume may start it again."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEADER_BYTES + 1)
    except OSError:
        return False
    return not head.strip() or (b"\n" not in head and len(head) <= HEADER_BYTES)


def header_id(path: Path) -> str | None:
    """The run id on line 1 of a run file, None when there is no readable header."""
    run_id = read_header(path).get("id")
    return run_id if isinstance(run_id, str) else None


def read_header(path: Path) -> dict[str, Any]:
    """Line 1 of a run file as a JSON object; {} when it cannot be read (the index reports
    broken run files; here they only mean "no header")."""
    try:
        with path.open("rb") as handle:
            header = json.loads(handle.readline(HEADER_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    return header if isinstance(header, dict) else {}


def move_planted_links(folder: Path, names: Collection[str]) -> list[str]:
    """Files ragtui opens for writing under fixed names (the index and its WAL): a symlink
    there would make ragtui write wherever it points, so it is renamed aside (the link itself,
    not its target). One notice per link; a link that cannot be moved stays, and the caller
    must not open it (see `planted`)."""
    notices = []
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for name in names:
        path = Path(folder) / name
        if not path.is_symlink():
            continue
        aside = path.with_name(f"{name}.symlink-{stamp}-{os.getpid()}")
        try:
            os.rename(path, aside)
        except OSError as exc:
            notices.append(f"{path} is a symlink and cannot be moved aside ({exc.strerror})")
            continue
        notices.append(f"{path} was a symlink; moved aside to {aside.name}, not written through")
    return notices


def planted(folder: Path, names: Collection[str]) -> bool:
    """Whether a symlink still sits at one of these names."""
    return any((Path(folder) / name).is_symlink() for name in names)


def free_run_id(run_id: str, taken: Collection[str]) -> str:
    """`run_id`, or `run_id-2`, `run_id-3` ... when another run already has it."""
    if run_id not in taken:
        return run_id
    n = 2
    while f"{run_id}-{n}" in taken:
        n += 1
    return f"{run_id}-{n}"
