"""Helpers every importer shares: file hashing, run ids, run headers, value normalisation."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, DatasetInfo, JudgeInfo, Run, SourceInfo, derive_config_key
from ragtui.importers.base import ImportFormatError, ImportOptions

_KNOWN_SUFFIXES = (".ragtui.jsonl", ".jsonl", ".json", ".csv", ".tsv", ".md", ".eval", ".txt")


def fail(path: Path, message: str) -> ImportFormatError:
    """The one-line error every importer raises: file first, then what is wrong."""
    return ImportFormatError(f"{path}: {message}")


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise fail(path, f"cannot be read ({exc.strerror})") from None


def decode_text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(path, f"expected UTF-8 text, found binary data at byte {exc.start}") from None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    return sha256_bytes(read_bytes(path))


def slug(text: str, limit: int = 40) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return cleaned[:limit].strip("-") or "run"


def file_stem(path: Path) -> str:
    name = path.name
    for suffix in _KNOWN_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or name
    return path.stem or name


def mtime_iso(path: Path) -> str:
    """The file's modification time: the best creation date a format without one offers."""
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_from_any(value: Any) -> str | None:
    """An ISO 8601 string from an ISO string or an epoch in seconds/milliseconds; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def clamp01(value: float) -> float:
    """Float artefacts such as 1.0000000002 are clamped; `raw` keeps the original."""
    return min(1.0, max(0.0, value))


def is_missing(value: Any) -> bool:
    """NaN, None, empty cells and their spelled-out forms: a metric that did not produce a score."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return value.strip().lower() in {"", "nan", "none", "null", "na", "n/a"}
    return False


def as_number(value: Any) -> float | None:
    """A finite float from a number or numeric text; None when it is not one."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in {"true", "false"}:
            return 1.0 if text.lower() == "true" else 0.0
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _parse_override(value: str) -> Any:
    # `--set top_k=3` should store the number 3, `--set prompt=v2` the string "v2".
    try:
        return json.loads(value)
    except ValueError:
        return value


def unrecorded_config(path: Path, options: ImportOptions, **known: Any) -> dict[str, Any]:
    """Config for a format that records none (RAGAS, generic tables).

    Without `--set` the file's name goes in, so unrelated files never pass for reruns of one
    config; with `--set` (e.g. `--set config=baseline`) the user says what the config is, and
    files imported with the same settings group as reruns.
    """
    config = dict(known)
    if not options.overrides:
        config["source_file"] = file_stem(path)
    return config


def build_run(
    path: Path,
    sha: str,
    fmt: str,
    options: ImportOptions,
    *,
    default_name: str | None = None,
    config: Mapping[str, Any] | None = None,
    judge: JudgeInfo | None = None,
    dataset: DatasetInfo | None = None,
    created_at: str | None = None,
    part: str | None = None,
) -> Run:
    """A run header for an imported file.

    The id is derived from the file's content (and `part`, when one file holds several runs),
    so importing the same file again gives the same id. `--set judge.model=...` and
    `--set dataset.name=...` fill the header; every other `--set` key goes into config.
    """
    config = dict(config or {})
    judge = judge or JudgeInfo()
    dataset = dataset or DatasetInfo()
    judge_fields = {
        "model": judge.model,
        "provider": judge.provider,
        "prompt_hash": judge.prompt_hash,
    }
    dataset_fields = {"name": dataset.name, "version": dataset.version}
    for key, raw_value in options.overrides.items():
        head, _, tail = key.partition(".")
        if head == "judge" and tail in judge_fields:
            judge_fields[tail] = raw_value
        elif head == "dataset" and tail in dataset_fields:
            dataset_fields[tail] = raw_value
        else:
            config[key] = _parse_override(raw_value)
    judge = JudgeInfo(**judge_fields)
    dataset = DatasetInfo(**dataset_fields)
    base = options.name or default_name or file_stem(path)
    name = f"{base} [{part}]" if part else base
    run_id = f"{slug(file_stem(path))}-{sha[:8]}"
    if part:
        run_id += "-" + slug(part, 30) + "-" + sha256_bytes(part.encode())[:4]
    return Run(
        id=run_id,
        name=name,
        created_at=created_at or mtime_iso(path),
        config=config,
        config_key=derive_config_key(config, judge),
        judge=judge,
        dataset=dataset,
        kind="eval",
        source=SourceInfo(format=fmt, path=str(path), sha256=sha),
    )


def unique_case_ids(cases: Sequence[Case]) -> list[Case]:
    """The same question twice in one run: keep both, the later ones with a stable suffix."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        n = seen.get(case.case_id, 0) + 1
        seen[case.case_id] = n
        out.append(replace(case, case_id=f"{case.case_id}-{n}") if n > 1 else case)
    return out
