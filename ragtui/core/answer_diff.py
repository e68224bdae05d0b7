"""Word-level diff of two answers, as data: segments of equal, added and removed literal text.

Tokens are words (letters/digits, with inner apostrophes) and single punctuation marks, each
carrying the whitespace after it. Tokens compare without their whitespace: a line break that
became a space is not a change. An equal segment carries B's literal text, so the equal and
added segments give B's answer back exactly (A's up to whitespace in the unchanged stretches).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

MAX_TOKENS = 4000  # per answer; SequenceMatcher is quadratic at worst, and answers are untrusted
_TOKEN = re.compile(r"\s+|(?:\w+(?:['’]\w+)*|[^\w\s])\s*")

KINDS = ("equal", "added", "removed")


@dataclass(frozen=True)
class Segment:
    kind: str  # one of KINDS
    text: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


@dataclass(frozen=True)
class AnswerDiff:
    segments: tuple[Segment, ...]
    words_added: int
    words_removed: int
    similarity: float  # share of tokens in common, 2·matched / total, in [0, 1]
    truncated: bool  # an answer had more than MAX_TOKENS tokens: only their start is diffed

    @property
    def identical(self) -> bool:
        return all(s.kind == "equal" for s in self.segments) and not self.truncated

    def text(self, side: str) -> str:
        """One side's text rebuilt from the segments ("a" or "b")."""
        skip = "added" if side == "a" else "removed"
        return "".join(s.text for s in self.segments if s.kind != skip)

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "words_added": self.words_added,
            "words_removed": self.words_removed,
            "similarity": self.similarity,
            "truncated": self.truncated,
            "segments": [s.to_json() for s in self.segments],
        }


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _count_words(parts: list[str]) -> int:
    return sum(1 for p in parts if p.strip())


def diff_answers(a: str | None, b: str | None) -> AnswerDiff:
    ta, tb = tokens(a or ""), tokens(b or "")
    truncated = len(ta) > MAX_TOKENS or len(tb) > MAX_TOKENS
    ta, tb = ta[:MAX_TOKENS], tb[:MAX_TOKENS]
    ka, kb = [t.strip() for t in ta], [t.strip() for t in tb]
    matcher = SequenceMatcher(None, ka, kb, autojunk=False)
    segments: list[Segment] = []
    added = removed = 0

    def emit(kind: str, parts: list[str]) -> None:
        text = "".join(parts)
        if not text:
            return
        if segments and segments[-1].kind == kind:
            segments[-1] = Segment(kind, segments[-1].text + text)
        else:
            segments.append(Segment(kind, text))

    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            emit("equal", tb[j1:j2])
            continue
        if i2 > i1:
            removed += _count_words(ta[i1:i2])
            emit("removed", ta[i1:i2])
        if j2 > j1:
            added += _count_words(tb[j1:j2])
            emit("added", tb[j1:j2])
    return AnswerDiff(tuple(segments), added, removed, matcher.ratio(), truncated)
