"""Why the decoder refused a line, as the project's one-line message.

msgspec names the failing field by path (`$.contexts[0].text`, `$.scores[...].value`); this
module turns that into `contexts[0].text` / `scores.faithfulness.value`, looks the field's
expectation up in `runschema.EXPECTED`, and shows the value found. Only refused lines pay for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from ragtui.core.runschema import EXPECTED, FORMAT_VERSION, FREE_KEYS, LineProblem

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_TOKEN = re.compile(r"\.(\w+)|\[(\d+)\]|\[\.\.\.\]")
_MISSING = re.compile(r"Object missing required field `(\w+)`")
_BYTE = re.compile(r"\(byte (\d+)\)")
_RANGE = re.compile(r"Expected `[^`]*` [<>]=? |out of range")


class _Missing:
    """The value found where a required field is missing: none, and the message says so."""


MISSING = _Missing()


class _BigInt:
    """An integer too long for Python's int(); kept as its digits, only to be shown."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __str__(self) -> str:
        return self.digits


def _untyped(line: bytes) -> Any:
    """The line as plain Python values; big integers stay digits, surrogates stay as they are."""
    return json.loads(line, parse_int=lambda s: _BigInt(s) if len(s) > 4000 else int(s))


def explain(line: bytes, exc: BaseException, *, header: bool = False) -> LineProblem:
    """The problem with a line the decoder refused with `exc`."""
    if isinstance(exc, LineProblem):
        return exc
    if isinstance(exc, RecursionError):
        return LineProblem(None, "JSON nested less deeply")
    if isinstance(exc, msgspec.ValidationError):
        return _invalid(line, str(exc), header)
    return _malformed(line, str(exc))


def _malformed(line: bytes, message: str) -> LineProblem:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        return LineProblem(None, f"UTF-8 text ({err.reason} at column {err.start + 1})")
    try:
        value = _untyped(line)
    except (ValueError, RecursionError):
        value = None
    else:
        found = _lone_surrogate(value, "")
        if found is not None:
            field, text = found
            return LineProblem(
                field or None, "text without unpaired surrogate escapes (\\ud800-\\udfff)", text
            )
    if "truncated" in message:
        detail = "the line ends inside a value"
    else:
        detail = message.removeprefix("JSON is malformed: ")
        byte = _BYTE.search(detail)
        if byte:
            detail = detail[: byte.start()].strip() + f" at column {int(byte.group(1)) + 1}"
    return LineProblem(None, f"one JSON object per line ({detail})")


def _lone_surrogate(value: Any, path: str) -> tuple[str, str] | None:
    """(field path, text) of the first string or key holding an unpaired surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path, value
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            if _lone_surrogate(key, here) is not None:
                return here, key
            found = _lone_surrogate(item, here)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _invalid(line: bytes, message: str, header: bool) -> LineProblem:
    parts = _AT.match(message)
    assert parts is not None  # the pattern matches any text
    msg, path = parts.group("msg"), parts.group("path") or "$"
    try:
        value: Any = _untyped(line)
    except (ValueError, RecursionError):
        value = ...
    if header and isinstance(value, dict):  # the version first: other versions, other fields
        if "ragtui_run" not in value:
            return LineProblem("ragtui_run", str(EXPECTED["ragtui_run"]), MISSING)
        version = value["ragtui_run"]
        if version != FORMAT_VERSION or isinstance(version, bool):
            return LineProblem("ragtui_run", f"format version {FORMAT_VERSION}", version)
    steps = _walk(path.removeprefix("$"), value)
    missing = _MISSING.match(msg)
    if missing:
        field, pattern, _ = steps[-1]
        name = missing.group(1)
        steps.append(
            (
                f"{field}.{name}" if field else name,
                f"{pattern}.{name}" if pattern else name,
                MISSING,
            )
        )
    while steps[-1][1] not in EXPECTED:  # e.g. one item of a scale: the scale is the field
        steps.pop()
    field, pattern, found = steps[-1]
    expected = EXPECTED[pattern]
    if isinstance(expected, tuple):
        expected = expected[1] if _RANGE.search(msg) else expected[0]
    return LineProblem(field or None, expected, found)


def _walk(path: str, value: Any) -> list[tuple[str, str, Any]]:
    """(field, pattern, value) at each step along a msgspec path, the line itself first.

    `[...]` (a key msgspec does not name) becomes the first key whose value the field's type
    refuses; inside a free JSON value (metadata, config, raw) the field is where it starts.
    """
    field, pattern = "", ""
    steps = [(field, pattern, value)]
    for match in _TOKEN.finditer(path):
        name, index = match.group(1), match.group(2)
        if name is not None:
            field = f"{field}.{name}" if field else name
            pattern = f"{pattern}.{name}" if pattern else name
            value = value.get(name, ...) if isinstance(value, dict) else ...
        elif index is not None:
            field, pattern = f"{field}[{index}]", f"{pattern}[]"
            i = int(index)
            value = value[i] if isinstance(value, list) and i < len(value) else ...
        else:
            key = _refused_key(value, FREE_KEYS.get(pattern.rsplit(".", 1)[-1]))
            field, pattern = f"{field}.{key}", f"{pattern}.*"
            value = value[key] if isinstance(value, dict) and key in value else ...
        steps.append((field, pattern, value))
        if pattern.endswith((".raw", "metadata.*", "config.*")):
            break
    return steps


def _refused_key(value: Any, kind: Any) -> str:
    if not isinstance(value, dict):
        return "?"
    for key, item in value.items():
        try:
            msgspec.json.decode(msgspec.json.encode(item), type=kind)
        except (msgspec.ValidationError, msgspec.EncodeError, TypeError, ValueError):
            return str(key)
    return "?"


def show(value: Any) -> str:
    """A found value for a message: its JSON type and (up to 60 characters of) its text."""
    if value is None:
        return "null"
    if value is MISSING:
        return "no such field"
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, _BigInt):
        kind, text = "int", value.digits
    else:
        kind = {dict: "object", list: "array"}.get(type(value), type(value).__name__)
        text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}".encode("utf-8", "backslashreplace").decode("utf-8")
