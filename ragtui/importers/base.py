"""What every importer provides, and the registry the sniffer walks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ragtui.core.errors import RagtuiError
from ragtui.core.model import RunFile

HEAD_BYTES = 64 * 1024


class ImportFormatError(RagtuiError):
    """A foreign file that cannot be imported; the message names the file and what is wrong."""


class UnknownFormatError(ImportFormatError):
    """No importer recognises the file: most likely not a result file at all (a README, some
    other data). The message lists what each format's sniffer found, a line each."""

    multiline = True


@dataclass(frozen=True)
class Sniff:
    """An importer's answer to "is this file yours?"; `reason` explains a no (shown to users)."""

    matches: bool
    reason: str = ""


@dataclass(frozen=True)
class ImportOptions:
    name: str | None = (
        None  # --name: the run name (a suffix is added when a file holds several runs)
    )
    overrides: Mapping[str, str] = field(default_factory=dict)  # --set key=value, into config
    mapping: Mapping[str, str] = field(default_factory=dict)  # --map field=COLUMN
    traces: str | None = None  # --traces FILE: a RAGAS traces JSON that goes with the results
    # --scale NAME=LOW:HIGH and [metrics.NAME] scale: metrics whose scale the tool does not define
    scales: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    date: str | None = None  # --date: the run's date (ISO 8601), over the file's own
    # filled in by build_run: the runs dated by the file's modification time, the file holding
    # no date of its own (load_file says so in a notice)
    undated: list[str] = field(default_factory=list)


class Importer(Protocol):
    name: str  # the --format name
    description: str
    # detect() asks lower numbers first: specific formats before generic tables (default 50)
    priority: int

    def sniff(self, path: Path, head: bytes) -> Sniff: ...

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        """Every run the file holds, as native runs (source.format/path/sha256 filled in).

        Raises ImportFormatError naming the file and what is wrong; never returns a partial run.
        """
        ...


REGISTRY: dict[str, Importer] = {}


def register(importer: Importer) -> Importer:
    REGISTRY[importer.name] = importer
    return importer
