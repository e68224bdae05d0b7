"""Text normalisation and similarity shared by the retrieval, answer and claim diffs."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

_WORD = re.compile(r"\w+")


def normalise(text: str | None) -> str:
    """Text as a key: NFKC, case-folded, runs of whitespace as one space, trimmed."""
    if not text:
        return ""
    if not text.isascii():  # NFKC leaves ASCII as it is
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.casefold().split())


def same_text(a: str | None, b: str | None) -> bool:
    """Two outputs (answers) are the same when their text is equal once runs of whitespace
    are collapsed and the ends trimmed; empty equals empty. A change of case or of character
    width is a change of the output (unlike `normalise`, which keys chunks and claims)."""
    return " ".join((a or "").split()) == " ".join((b or "").split())


def words(text: str | None) -> list[str]:
    """The words of a text for similarity: normalised, punctuation dropped."""
    return _WORD.findall(normalise(text))


def similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """Ratcliff–Obershelp ratio over words (2·matched / total), in [0, 1]; 1 for two empties."""
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()
