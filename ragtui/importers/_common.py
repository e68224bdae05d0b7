"""Helpers every importer shares: file hashing, run ids, run headers, value normalisation."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
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


def _limit_mb(env: str, default: int) -> int:
    try:
        value = int(os.environ.get(env, default))
    except ValueError:
        return default
    return value if value > 0 else default


# Bounds on what one foreign file may make ragtui hold in memory (issue 16): a file read whole,
# one JSON document, one archive member inflated. Environment variables lower them for tests.
MAX_FILE_BYTES = _limit_mb("RAGTUI_MAX_FILE_MB", 256) << 20
MAX_MEMBER_BYTES = _limit_mb("RAGTUI_MAX_MEMBER_MB", 256) << 20
MAX_EXACT_INT = 2**53  # run files and the index keep integers exactly only up to here


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The whole file, refused past `limit` bytes (MAX_FILE_BYTES) before it is read."""
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise fail(path, f"cannot be read ({exc.strerror})") from None
    if len(data) > limit:
        raise fail(
            path,
            f"larger than {limit >> 20} MiB, the most ragtui reads of one result file "
            "(set RAGTUI_MAX_FILE_MB to raise it)",
        )
    return data


class _BigInt(ValueError):
    pass


def _parse_int(text: str) -> int:
    # Python refuses ints past 4300 digits with a bare ValueError; run files refuse past 2**53
    if len(text) > 17 or abs(int(text)) > MAX_EXACT_INT:
        raise _BigInt(text)
    return int(text)


def load_json(
    path: Path, data: bytes | str, where: str = "", first_line: int = 1, *, last: bool = True
) -> Any:
    """One JSON document, or one clear error: `path:line:column: invalid JSON (...)` first (a
    truncated file says so), integers ragtui cannot keep exactly, lone surrogates.

    `last`: the document ends where the file ends (not so for a JSONL line with more after
    it); `where` names a part of the file (a database cell, an archive member), which a cut
    file does not cut short alone: only a whole file, last, is said to be perhaps truncated."""
    prefix = f"{where}: " if where else ""
    if isinstance(data, bytes | bytearray):
        if len(data) > MAX_FILE_BYTES:
            raise fail(path, f"{prefix}a JSON document over {MAX_FILE_BYTES >> 20} MiB")
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise fail(
                path, f"{prefix}expected UTF-8 JSON, found invalid bytes at byte {exc.start}"
            ) from None
    else:
        text = data.removeprefix("\ufeff")
    try:
        value = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        # the parser ran out of text: past the end, or inside a string (json reports an
        # unterminated string only when the text ends in it; escaped quotes can follow)
        at_end = not text[exc.pos :].strip() or exc.msg.startswith("Unterminated string")
        hint = "; the file ends there: truncated? import a whole copy (one its tool finished)"
        hint = hint if at_end and last and not where else ""
        name = f"{path}: {where}" if where else str(path)
        raise ImportFormatError(
            f"{name}:{exc.lineno + first_line - 1}:{exc.colno}: invalid JSON ({exc.msg}){hint}"
        ) from None
    except _BigInt as exc:
        digits = str(exc)
        shown = digits if len(digits) <= 24 else digits[:20] + f"… ({len(digits)} digits)"
        raise fail(
            path,
            f"{prefix}holds the integer {shown}, beyond 2^53: ragtui cannot keep it exactly",
        ) from None
    except RecursionError:
        raise fail(path, f"{prefix}JSON nested too deeply") from None
    except (ValueError, MemoryError) as exc:
        raise fail(path, f"{prefix}not valid JSON ({exc})") from None
    if "\\ud" in text or "\\uD" in text:  # escapes of surrogates: check they pair up
        bad = lone_surrogate(value)
        if bad is not None:
            raise fail(
                path,
                f"{prefix}field {bad}: a lone UTF-16 surrogate (\\ud800-\\udfff), "
                "text that cannot be stored",
            )
    return value


def lone_surrogate(value: Any, where: str = "$") -> str | None:
    """The JSON path of the first string holding an unpaired surrogate, else None."""
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return at
        elif isinstance(item, dict):
            for k, v in item.items():
                stack.append((k, at))
                stack.append((v, f"{at}.{k}" if len(at) < 200 else at))
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]" if len(at) < 200 else at) for i, v in enumerate(item))
    return None


# Files that hold results but cannot be read as they are: compressed, or text in a wide
# encoding. Each is known by its magic bytes (or BOM), so the user is told what to do.
_COMPRESSED = (  # magic, kind, extension, command that decompresses to stdout
    (b"\x1f\x8b", "gzip", "gz", "gzip -dc"),
    (b"\xfd7zXZ\x00", "xz", "xz", "xz -dc"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zst", "zstd -dc"),
)
_WIDE_BOMS = (  # UTF-32 first: its little-endian BOM begins with UTF-16's
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def unreadable_encoding(path: Path, head: bytes) -> str | None:
    """One line for a compressed file or UTF-16/32 text, saying how to make it importable;
    None for anything else (the sniffers and loaders judge that)."""
    name = shlex.quote(path.name)  # a command to paste: a name must not run as shell code
    for magic, kind, ext, command in _COMPRESSED:
        if head.startswith(magic):
            plain = path.name[: -len(ext) - 1] if path.name.lower().endswith(f".{ext}") else ""
            plain = shlex.quote(plain) if plain else ""
            then = (
                f"{command} {name} > {plain}, then import {plain}"
                if plain
                else (f"{command} {name} > NEWFILE, then import NEWFILE")
            )
            return f"{path}: {kind}-compressed data: decompress it first ({then})"
    for bom, encoding in _WIDE_BOMS:
        if head.startswith(bom):
            return (
                f"{path}: {encoding} text: save it as UTF-8 "
                f"(iconv -f {encoding} -t UTF-8 {name} > {shlex.quote('utf8-' + path.name)}), "
                "then import that"
            )
    return _not_utf8_text(path, head, name)


def _not_utf8_text(path: Path, head: bytes, name: str) -> str | None:
    """Text in an 8-bit encoding (Excel's "CSV (comma delimited)" writes Windows-1252): the
    byte, its line and how to convert; binary data (NUL bytes) is left to the sniffers."""
    if b"\x00" in head:
        return None
    try:
        head.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:
            return None  # a character cut by the end of the head
        at = exc.start
    line = head.count(b"\n", 0, at) + 1
    return (
        f"{path}:{line}: not UTF-8 text (byte 0x{head[at]:02X} at offset {at}; Excel's "
        "'CSV (comma delimited)' writes Windows-1252): save it as UTF-8 (Excel: 'CSV UTF-8'; "
        f"or iconv -f CP1252 -t UTF-8 {name} > {shlex.quote('utf8-' + path.name)}, if that is "
        "its encoding), then import that"
    )


def json_lines(text: str) -> list[tuple[int, str, bool]]:
    """The non-blank lines of JSONL text: (line number, line, whether it is the last one).
    Split at "\n" only: str.splitlines() also splits at U+2028, U+0085 and other characters
    that JSON writers (JSON.stringify, json.dumps(ensure_ascii=False)) leave raw in strings."""
    found = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    return [(n, line, i == len(found) - 1) for i, (n, line) in enumerate(found)]


def decode_text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        known = unreadable_encoding(path, data[:8])  # --format skips detect(): say it here too
        if known:
            raise ImportFormatError(known) from None
        at = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)  # an offset in the file
        if exc.reason == "unexpected end of data":  # only ever at the very end: a cut file
            raise fail(
                path,
                f"the file ends inside a UTF-8 character (byte {at}): truncated? "
                "import a whole copy (one its tool finished)",
            ) from None
        # past the head detect() looked at: an 8-bit encoding says so there, binary data here
        known = _not_utf8_text(path, data, shlex.quote(path.name))
        if known:
            raise ImportFormatError(known) from None
        raise fail(path, f"expected UTF-8 text, found binary data at byte {at}") from None


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
    created_at = options.date or created_at
    if created_at is None:  # a guess, said in a notice: the file holds no date
        options.undated.append(run_id)
        created_at = mtime_iso(path)
    return Run(
        id=run_id,
        name=name,
        created_at=created_at,
        config=config,
        config_key=derive_config_key(config, judge),
        judge=judge,
        dataset=dataset,
        kind="eval",
        source=SourceInfo(format=fmt, path=str(path), sha256=sha),
    )


def unique_case_ids(
    cases: Sequence[Case],
    notices: list[str] | None = None,
    *,
    path: Path | None = None,
    where: Sequence[str] | None = None,
    repeated: str | None = None,
) -> list[Case]:
    """One id twice in a run (the same question, a repeated id): keep both, the later ones
    suffixed -2, -3, ... with the first suffix no case of the source holds, so a renamed case
    never takes the id of another (ids a, a, a-2 give a, a-3, a-2). With `notices`, each
    renaming is said, naming the source's row (`where[i]`) and the row that first used the id;
    with `repeated` ("question": the ids are the questions' hashes) one notice says how many
    were told apart by their order, which another run's repeats must then share."""
    taken = {c.case_id for c in cases}
    first: dict[str, int] = {}
    out = []
    renamed: list[tuple[int, str, str]] = []  # (row, id, new id)
    for i, case in enumerate(cases):
        cid = case.case_id
        if cid not in first:
            first[cid] = i
            out.append(case)
            continue
        n = 2
        while f"{cid}-{n}" in taken:
            n += 1
        new = f"{cid}-{n}"
        taken.add(new)
        out.append(replace(case, case_id=new))
        renamed.append((i, cid, new))
    if notices is None or not renamed:
        return out
    if repeated is not None:
        n = len(renamed)
        who = "1 case repeats" if n == 1 else f"{n} cases repeat"
        notices.append(
            f"{path}: {who} an earlier {repeated}: told apart by their order (imported as "
            f"{renamed[0][2]!r}{', …' if n > 1 else ''}), so they pair with another run's "
            "repeats only when both list them in the same order"
        )
        return out
    for i, cid, new in renamed:
        at = f"{where[i]}: " if where else ""
        before = f" (first at {where[first[cid]]})" if where else ""
        notices.append(f"{path}: {at}case id {cid!r} is used again{before}; imported as {new!r}")
    return out
