"""ragtui's own run files (`*.ragtui.jsonl`): validated line by line, then taken as they are."""

from __future__ import annotations

import json
from pathlib import Path

from ragtui.core.errors import RunFileError
from ragtui.core.model import RunFile
from ragtui.core.runfile import read_run_file
from ragtui.importers.base import ImportFormatError, ImportOptions, Sniff, register


class NativeImporter:
    name = "native"
    description = "a ragtui run file (*.ragtui.jsonl)"
    priority = 0

    def sniff(self, path: Path, head: bytes) -> Sniff:
        first = head.split(b"\n", 1)[0].strip()
        if not first.startswith(b"{") or b'"ragtui_run"' not in first[:200]:
            return Sniff(False, 'line 1 is not a ragtui run header ({"ragtui_run": 1, ...})')
        try:
            json.loads(first)
        except (ValueError, RecursionError):
            # a header cut off by the head limit, or broken: load() names the problem
            return Sniff(True)
        return Sniff(True)

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        try:
            run_file = read_run_file(path, whole=True)  # a cut last line is an error here
        except RunFileError as exc:
            raise ImportFormatError(str(exc)) from None
        # --name/--set do not rewrite a native run: its id and config are its identity
        return [run_file]


register(NativeImporter())
