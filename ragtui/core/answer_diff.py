"""Word-level diff of two answers, as data: segments of equal, added and removed literal text.

Tokens are words (letters/digits, with inner apostrophes) and single punctuation marks, each
carrying the whitespace after it. Tokens compare by their text and by whether whitespace
follows them (not how much): a line break that became a space is not a change, "5 days." and
"5 days ." differ. So the diff shows a change exactly when `text_match.same_text` says the
answers differ, the rule `diagnose` counts "answers changed" by. An equal segment carries B's literal text and A's (`text_a`:
they differ only in whitespace), so each side's answer comes back exactly, line breaks and all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ragtui.core.text_match import same_text

MAX_TOKENS = 4000  # per answer; SequenceMatcher is quadratic at worst, and answers are untrusted
_TOKEN = re.compile(r"\s+|(?:\w+(?:['’]\w+)*|[^\w\s])\s*")

KINDS = ("equal", "added", "removed")


@dataclass(frozen=True)
class Segment:
    kind: str  # one of KINDS
    text: str  # B's literal text (A's for a removed segment)
    text_a: str | None = None  # an equal segment's text in A, where its whitespace differs

    @property
    def in_a(self) -> str:
        return self.text if self.text_a is None else self.text_a

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


@dataclass(frozen=True)
class AnswerDiff:
    segments: tuple[Segment, ...]
    words_added: int
    words_removed: int
    similarity: float  # share of tokens in common, 2·matched / total, in [0, 1]
    truncated: bool  # an answer had more than MAX_TOKENS tokens: only their start is diffed
    same: bool = False  # the answers are the same text (`text_match.same_text`)

    @property
    def identical(self) -> bool:
        return self.same

    def text(self, side: str) -> str:
        """One side's text rebuilt from the segments ("a" or "b")."""
        if side == "a":
            return "".join(s.in_a for s in self.segments if s.kind != "added")
        return "".join(s.text for s in self.segments if s.kind != "removed")

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
    """Words only: a punctuation mark is a token of the diff, not a word ("5 days." -> "7
    days!" is one word changed, not two)."""
    return sum(1 for p in parts if _WORD.match(p))


_WORD = re.compile(r"\w")


def _keys(parts: list[str]) -> list[tuple[str, bool]]:
    """What a token compares by: its text, and whether whitespace follows it (the last
    token's trailing whitespace is trimmed away, as `same_text` trims it)."""
    out = [(p.strip(), p != p.rstrip()) for p in parts]
    if out:
        out[-1] = (out[-1][0], True)
    return out


def _lead(parts: list[str]) -> list[str]:
    """Leading whitespace joined to the first token (it is no change of its own)."""
    if len(parts) > 1 and not parts[0].strip():
        return [parts[0] + parts[1], *parts[2:]]
    return parts


def diff_answers(a: str | None, b: str | None) -> AnswerDiff:
    ta, tb = _lead(tokens(a or "")), _lead(tokens(b or ""))
    truncated = len(ta) > MAX_TOKENS or len(tb) > MAX_TOKENS
    ta, tb = ta[:MAX_TOKENS], tb[:MAX_TOKENS]
    ka, kb = _keys(ta), _keys(tb)
    matcher = SequenceMatcher(None, ka, kb, autojunk=False)
    segments: list[Segment] = []
    added = removed = 0

    def emit(kind: str, parts: list[str], parts_a: list[str] | None = None) -> None:
        text = "".join(parts)
        if not text:
            return
        text_a = None if parts_a is None else "".join(parts_a)
        if segments and segments[-1].kind == kind:
            last = segments[-1]
            joined_a = (
                None
                if text_a is None and last.text_a is None
                else last.in_a + (text if text_a is None else text_a)
            )
            segments[-1] = Segment(kind, last.text + text, joined_a)
        else:
            segments.append(Segment(kind, text, text_a if text_a != text else None))

    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            emit("equal", tb[j1:j2], ta[i1:i2])
            continue
        if i2 > i1:
            removed += _count_words(ta[i1:i2])
            emit("removed", ta[i1:i2])
        if j2 > j1:
            added += _count_words(tb[j1:j2])
            emit("added", tb[j1:j2])
    return AnswerDiff(tuple(segments), added, removed, matcher.ratio(), truncated, same_text(a, b))
