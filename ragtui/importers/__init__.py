"""Importers: one module per format, a registry, and a sniffer that picks the format by content."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ragtui.core.model import RunFile
from ragtui.format import one_line
from ragtui.importers import (  # noqa: F401  (they register)
    deepeval,
    generic,
    inspect,
    mlflow_table,
    native,
    promptfoo,
    ragas,
    trulens,
)
from ragtui.importers._common import load_json, mtime_iso, read_bytes, unreadable_encoding
from ragtui.importers._finite import finite_runs
from ragtui.importers.base import (
    HEAD_BYTES,
    REGISTRY,
    Importer,
    ImportFormatError,
    ImportOptions,
    Sniff,
    UnknownFormatError,
)

__all__ = [
    "REGISTRY",
    "ImportFormatError",
    "ImportOptions",
    "Importer",
    "Sniff",
    "UnknownFormatError",
    "detect",
    "load_file",
]


def _ordered() -> list[Importer]:
    """Most specific formats first, generic tables last (priority, else registration order)."""
    return sorted(REGISTRY.values(), key=lambda imp: getattr(imp, "priority", 50))


def detect(path: Path) -> Importer:
    """The importer whose sniffer accepts the file; else an error listing every format tried."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot be read ({exc.strerror})") from None
    if not head.strip():
        raise ImportFormatError(f"{path}: the file is empty")
    known = unreadable_encoding(path, head)
    if known:  # every sniffer would refuse it with a reason beside the point
        raise ImportFormatError(known)
    reasons = []
    for importer in _ordered():
        answer = importer.sniff(path, head)
        if answer.matches:
            return importer
        reasons.append(f"  {importer.name}: {one_line(answer.reason)}")
    _check_json(path, head)  # a JSON file that does not parse says so first, not "unknown format"
    raise UnknownFormatError(f"{one_line(path)}: unknown format; tried:\n" + "\n".join(reasons))


def _check_json(path: Path, head: bytes) -> None:
    """Raise the parse error of a JSON (or JSONL) file that no sniffer recognised."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:1] not in (b"{", b"["):
        return
    data = read_bytes(path)
    first = data.split(b"\n", 1)[0]
    try:
        json.loads(first)
        several = bool(data[len(first) :].strip())
    except ValueError:
        several = False
    if not several:
        load_json(path, data)
        return
    lines = data.split(b"\n")
    filled = [n for n, line in enumerate(lines, start=1) if line.strip()]
    for number in filled:  # JSONL: each line alone
        load_json(path, lines[number - 1], first_line=number, last=number == filled[-1])


def load_file(
    path: Path,
    fmt: str | None = None,
    options: ImportOptions | None = None,
    notices: list[str] | None = None,
    *,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> list[RunFile]:
    """Every run in a foreign file. What the importer noticed on the way (a cancelled log, an
    interrupted run, rescaled values) is appended to `notices`, one line each, naming the file.

    `scales` are declared metric scales (ragtui.toml); those in `options.scales` (`--scale`)
    win over them."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # a name of bytes that are not UTF-8 cannot go into a run file
        shown = str(path).encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise ImportFormatError(
            f"{shown}: the file name is not UTF-8, so ragtui cannot record where the run came "
            "from; rename the file"
        ) from None
    options = options or ImportOptions()
    typed = set(options.scales)  # --scale: the folder's declared scales are for any file
    if scales:
        options = replace(options, scales={**scales, **options.scales})
    if fmt is None:
        importer = detect(path)
    elif fmt in REGISTRY:
        importer = REGISTRY[fmt]
    else:
        raise ImportFormatError(f"unknown --format {fmt!r}; known: {', '.join(REGISTRY)}")
    options = replace(options, undated=[])  # this file's own
    runs = finite_runs(importer.load(path, options))  # NaN in metadata: see _finite
    if notices is not None:
        notices.extend(getattr(importer, "last_notices", ()))
        notices.extend(_unused_scales(path, typed, runs))
        if options.undated:
            notices.append(
                f"{path}: no run date in the file: its modification time "
                f"({mtime_iso(path)[:10]}) dates {_runs(len(options.undated))}; "
                "give the real date with ragtui import --date YYYY-MM-DD"
            )
    return runs


def _runs(n: int) -> str:
    return "its run" if n == 1 else f"its {n} runs"


def _unused_scales(path: Path, typed: set[str], runs: list[RunFile]) -> list[str]:
    """A --scale naming no metric of the file (a typo) did nothing: say so, with its metrics."""
    if not typed:
        return []
    seen = {m for rf in runs for c in rf.cases for m in (*c.scores, *c.errors)}
    seen |= {f.metric for rf in runs for f in rf.run.stated}
    return [
        f"{path}: --scale {name}: no metric of that name in this file "
        f"(its metrics: {', '.join(sorted(seen)) or 'none'}); it did nothing here"
        for name in sorted(typed - seen)
    ]
