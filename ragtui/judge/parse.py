"""Reading judge replies. A reply that cannot be read raises ParseFailure with a short reason.

Parsing is tolerant of the usual model habits (a trailing period, a ```json fence, a sentence
before the JSON) but never guesses: two different labels, or no JSON object, is a failure.
"""

from __future__ import annotations

import json
import re
from typing import Any

LABELS = ("YES", "PARTIAL", "NO")
_LABEL_RE = re.compile(r"\b(YES|PARTIAL|NO)\b", re.IGNORECASE)
_DIGIT_RE = re.compile(r"(?<!\d)(?<!\d\.)([1-5])(?!\.?\d)")


class ParseFailure(ValueError):
    """The judge replied, but not in the form the prompt asked for."""


def parse_label(reply: str) -> str:
    """YES / PARTIAL / NO from a one-word reply.

    The first word decides when it is a label ("NO. The answer..."); otherwise the reply must
    name exactly one distinct label anywhere, so "YES or NO" is a failure, not a coin toss.
    """
    text = reply.strip()
    if not text:
        raise ParseFailure("empty reply")
    first = re.split(r"[\s.,:;!*\"'`]+", text.strip("*\"'` \n"), maxsplit=1)[0].upper()
    if first in LABELS:
        return first
    found = {m.upper() for m in _LABEL_RE.findall(text)}
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ParseFailure(f"no YES/PARTIAL/NO label in the reply {_show(text)}")
    raise ParseFailure(f"several labels ({', '.join(sorted(found))}) in the reply {_show(text)}")


def parse_rating(reply: str, low: int = 1, high: int = 5) -> int:
    """A single integer rating in [low, high]; several different digits is a failure."""
    text = reply.strip()
    try:
        value = int(text)
    except ValueError:
        found = {int(d) for d in _DIGIT_RE.findall(text)}
        if len(found) != 1:
            what = "no rating" if not found else "several ratings"
            raise ParseFailure(f"{what} {low}-{high} in the reply {_show(text)}") from None
        value = found.pop()
    if not low <= value <= high:
        raise ParseFailure(f"rating {value} outside {low}-{high}")
    return value


def parse_json_object(reply: str) -> dict[str, Any]:
    """The JSON object in a reply: the whole reply, a fenced block, or the outermost {...}."""
    text = reply.strip()
    candidates = [text]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fence:
        candidates.append(fence.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    raise ParseFailure(f"judge reply was not valid JSON {_show(text)}")


def json_list(obj: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """obj[key] as a list of objects; anything else is a failure."""
    items = obj.get(key)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ParseFailure(f'judge JSON lacks "{key}": a list of objects')
    return items


def chunk_number(value: Any, n_chunks: int) -> int | None:
    """A 1-based chunk number, or None; an out-of-range or non-integer number is a failure."""
    if value is None or value == "" or (isinstance(value, str) and value.lower() == "null"):
        return None
    if isinstance(value, str):
        digits = re.fullmatch(r"\s*(?:[Cc](?:hunk)?\s*)?(\d+)\s*", value)
        if digits is None:
            raise ParseFailure(f"chunk {value!r} is not a chunk number")
        value = int(digits.group(1))
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseFailure(f"chunk {value!r} is not a chunk number")
    if not 1 <= value <= n_chunks:
        raise ParseFailure(f"chunk {value} does not exist (there are {n_chunks})")
    return value


def _show(text: str) -> str:
    one_line = " ".join(text.split())
    return repr(one_line if len(one_line) <= 60 else one_line[:57] + "...")
