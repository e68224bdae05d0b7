"""Reading Inspect AI logs fast: the header, and per sample only the fields a case needs.

A sample's JSON is mostly its transcript (`messages`, then `events`). Inspect writes the sample
compactly with `events` after everything a case needs, so only the member's bytes before the
top-level `,"events":` are parsed, closed with `}`. The byte
sequence `,"` cannot occur inside a JSON string (quotes there are escaped), and a marker inside
a nested object leaves the prefix unbalanced, so it fails to parse; any doubt (no marker, a
nested one, attachments, a scorer missing) falls back to reading the whole member.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ragtui.importers._common import MAX_MEMBER_BYTES, fail, load_json, read_bytes

try:  # zstd members (method 93): Python's zipfile reads them only from 3.14 on
    import zstandard
except ImportError:  # then such members get a clear error naming the missing package
    zstandard = None

_CORRUPT: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
)
if zstandard is not None:
    _CORRUPT += (zstandard.ZstdError,)
_ZSTD = 93  # the zip compression method newer Inspect versions write
_EVENTS = b',"events":'
_ATTACHMENT = "attachment://"

Sample = dict[str, Any]


def read_log(path: Path) -> tuple[dict[str, Any], list[Sample]]:
    """(header, thin samples) of a `.eval` archive (read member by member) or a `.json` log."""
    try:
        with path.open("rb") as handle:
            if handle.read(2) == b"PK":
                return _read_archive(path, handle)
    except OSError as exc:
        raise fail(path, f"cannot be read ({exc.strerror})") from None
    data = read_bytes(path)
    if not data.strip():
        raise fail(path, "the file is empty")
    return _read_json_log(path, data)


def _loads(path: Path, member: str, raw: bytes) -> Any:
    if b"\x00" in raw[:4096]:
        raise fail(path, f"{member}: expected UTF-8 JSON, found binary data (NUL bytes)")
    # a BOM, as some editors save, is dropped; the whole .json log names no member
    return load_json(path, raw, "" if member == "log" else member)


def _read_archive(path: Path, handle: BinaryIO) -> tuple[dict[str, Any], list[Sample]]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
        raise fail(
            path, f"not a readable .eval archive (truncated or corrupt zip: {exc})"
        ) from None
    with archive:
        members = {info.filename: info for info in archive.infolist()}
        head_name = "header.json" if "header.json" in members else "_journal/start.json"
        if head_name not in members:
            raise fail(
                path, "a zip archive but not an Inspect log (no header.json or _journal/start.json)"
            )
        header = _loads(path, head_name, _member(path, archive, handle, members[head_name]))
        check_header(path, head_name, header)
        if head_name != "header.json":
            header.setdefault("status", "started")  # only the journal: the eval is still running
        scorers = scorer_names(header)
        samples = [
            _sample(path, archive, handle, info, scorers)
            for name, info in members.items()
            if name.startswith("samples/") and name.endswith(".json")
        ]
    return header, samples


def scorer_names(header: Mapping[str, Any]) -> set[str]:
    ev = header["eval"]
    names = {
        s["name"]
        for s in ev.get("scorers") or []
        if isinstance(s, dict) and isinstance(s.get("name"), str)
    }
    for score in (header.get("results") or {}).get("scores") or []:
        if isinstance(score, dict) and isinstance(score.get("scorer"), str):
            names.add(score["scorer"])
    return names


def _sample(
    path: Path, archive: zipfile.ZipFile, handle: BinaryIO, info: zipfile.ZipInfo, scorers: set[str]
) -> Sample:
    raw = _member(path, archive, handle, info)
    cut = raw.find(_EVENTS)
    if cut > 0 and _ATTACHMENT.encode() not in raw[:cut]:
        try:
            head = json.loads(raw[:cut] + b"}")
        except ValueError:
            head = None  # the marker was nested, not top-level: parse the whole member below
        scores = head.get("scores") if isinstance(head, dict) else None
        if isinstance(scores, dict) and scores and scorers <= scores.keys():
            return thin(path, info.filename, head)
    return thin(path, info.filename, _loads(path, info.filename, raw))


def _member(path: Path, archive: zipfile.ZipFile, handle: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """A whole member, CRC-checked, inflated in pieces and refused as soon as it passes
    MAX_MEMBER_BYTES: a small archive can hold a member that inflates to gigabytes."""
    limit = MAX_MEMBER_BYTES
    too_big = fail(
        path,
        f"{info.filename}: inflates past {limit >> 20} MiB, the most ragtui reads of one "
        "archive member (set RAGTUI_MAX_MEMBER_MB to raise it)",
    )
    if info.file_size > limit or info.compress_size > limit:
        raise too_big
    try:
        if info.compress_type != _ZSTD or (zstandard is None and _ZIPFILE_ZSTD):
            with archive.open(info) as stream:  # zipfile checks the CRC at the end
                out = _read_capped(stream, limit)
        else:
            out = _zstd_frames(_raw(handle, info), limit)
            if zlib.crc32(out) != info.CRC:
                raise zipfile.BadZipFile("CRC check failed")
    except _TooBig:
        raise too_big from None
    except NotImplementedError as exc:
        raise fail(path, f"{info.filename}: {exc}") from None
    except _CORRUPT as exc:
        raise fail(path, f"{info.filename}: corrupt archive member ({exc})") from None
    if len(out) != info.file_size:
        raise fail(
            path,
            f"{info.filename}: corrupt archive member (inflates to {len(out)} bytes, "
            f"the archive says {info.file_size})",
        )
    return out


class _TooBig(Exception):
    pass


def _read_capped(stream: Any, limit: int, piece: int = 1 << 20) -> bytes:
    buffer = bytearray()
    while True:
        chunk = stream.read(piece)
        if not chunk:
            return bytes(buffer)
        if len(buffer) + len(chunk) > limit:
            raise _TooBig
        buffer += chunk


_ZIPFILE_ZSTD = hasattr(zipfile, "ZIP_ZSTANDARD")  # Python >= 3.14 reads zstd members itself


def _zstd_frames(raw: bytes, limit: int | None = None) -> bytes:
    """All zstd frames of a member (Inspect starts a new frame every 200 MiB), refused past
    `limit` bytes. The input goes in 2 KiB pieces: zstd inflates a piece to at most ~64 MiB,
    so a 68 KB member that inflates to 2 GiB is stopped near the limit, never held whole."""
    if zstandard is None:
        raise NotImplementedError("zstd-compressed; install the 'zstandard' package")
    limit = MAX_MEMBER_BYTES if limit is None else limit
    out = bytearray()
    pending = memoryview(raw)
    while pending.nbytes:
        frame = zstandard.ZstdDecompressor().decompressobj()
        rest = b""
        for start in range(0, pending.nbytes, 2048):
            out += frame.decompress(pending[start : start + 2048])
            if len(out) > limit:
                raise _TooBig
            if frame.eof:
                rest = frame.unused_data + bytes(pending[start + 2048 :])
                break
        if not frame.eof:
            raise zipfile.BadZipFile("zstd frame is truncated")
        pending = memoryview(rest)
    return bytes(out)


def _raw(handle: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """A member's compressed bytes, read from its local header on (a separate handle from
    zipfile's own, so the two never move each other's position)."""
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    handle.seek(info.header_offset + 30 + name_len + extra_len)
    raw = handle.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise zipfile.BadZipFile("member data is truncated")
    return raw


def _read_json_log(path: Path, data: bytes) -> tuple[dict[str, Any], list[Sample]]:
    log = _loads(path, "log", data)
    check_header(path, "log", log)
    raw_samples = log.get("samples") or []
    if not isinstance(raw_samples, list):
        raise fail(path, f"field 'samples': expected an array, found {kind(raw_samples)}")
    return log, [thin(path, f"samples[{i}]", s) for i, s in enumerate(raw_samples)]


def check_header(path: Path, where: str, header: Any) -> None:
    if not isinstance(header, dict):
        raise fail(path, f"{where}: expected a JSON object, found {kind(header)}")
    ev = header.get("eval")
    if not isinstance(ev, dict) or not isinstance(ev.get("task"), str):
        raise fail(path, f"{where}: not an Inspect log (expected field 'eval' with a 'task' name)")
    for key in ("results", "plan", "stats", "error"):
        if header.get(key) is not None and not isinstance(header[key], dict):
            raise fail(
                path, f"{where}: field '{key}': expected an object, found {kind(header[key])}"
            )


def thin(path: Path, where: str, sample: Any) -> Sample:
    """The fields a case needs, checked; transcripts (messages, events) are dropped here."""
    if not isinstance(sample, dict):
        raise fail(path, f"{where}: expected a sample object, found {kind(sample)}")
    sid = sample.get("id")
    if isinstance(sid, bool) or not isinstance(sid, str | int):
        raise fail(path, f"{where}: field 'id': expected a string or integer, found {kind(sid)}")
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise fail(
            path, f"{where}: field 'epoch': expected a positive integer, found {kind(epoch)}"
        )
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict) or not all(isinstance(s, dict) for s in scores.values()):
        raise fail(path, f"{where}: field 'scores': expected an object of Score objects")
    output = sample.get("output") or {}
    if not isinstance(output, dict):
        raise fail(path, f"{where}: field 'output': expected an object, found {kind(output)}")
    attachments = sample.get("attachments")
    fields = {
        "input": sample.get("input"),
        "target": sample.get("target"),
        "scores": scores,
        "answer": _completion(output),
    }
    if isinstance(attachments, dict) and attachments:  # large texts stored once, by reference
        fields = _resolve(fields, attachments)
    error, metadata = sample.get("error"), sample.get("metadata")
    return {
        "id": str(sid),
        "epoch": epoch,
        "question": _question(fields["input"], sample.get("choices")),
        "reference": _reference(fields["target"]),
        "answer": fields["answer"] if isinstance(fields["answer"], str) else "",
        "time": output.get("time"),
        "scores": fields["scores"],
        "error": error_text(error) if error else None,
        "metadata": metadata if isinstance(metadata, dict) else {},
        "where": where,  # its archive member or place in the log, for messages
    }


def _resolve(value: Any, attachments: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith(_ATTACHMENT):
        found = attachments.get(value[len(_ATTACHMENT) :])
        return found if isinstance(found, str) else value
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    return value


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _question(value: Any, choices: Any) -> str:
    text = value if isinstance(value, str) else ""
    if isinstance(value, list):  # a message list: the user's turns are the question
        turns = [
            text_of(m.get("content"))
            for m in value
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        text = "\n\n".join(t for t in turns if t)
    if isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices):
        # multiple choice: the options are part of what was asked, labelled as Inspect does
        text += "\n\n" + "\n".join(f"{chr(65 + i)}) {c}" for i, c in enumerate(choices[:26]))
    return text


def _reference(value: Any) -> str | None:
    if isinstance(value, list):
        parts = [v for v in value if isinstance(v, str)]
        return "\n".join(parts) if parts else None
    return value if isinstance(value, str) and value else None


def _completion(output: Mapping[str, Any]) -> str:
    if isinstance(output.get("completion"), str):
        return output["completion"]
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return text_of(message.get("content"))
    return ""


def error_text(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return str(error)


def kind(value: Any) -> str:
    """A found value for an error message: its JSON type and the start of its text."""
    if value is None:
        return "null"
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    text = json.dumps(value, default=str)[:40]
    return f"{names.get(type(value), 'a number')} {text}"
