"""The one neutraliser: `printable` and `json_text` leave no control, bidi or invisible
character in what they return, and hide nothing else."""

from __future__ import annotations

import json
import unicodedata

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragtui.format import UNSAFE_RE2, json_text, one_line, printable

# What must never reach a terminal from data (the categories, by their definition).
DANGEROUS_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
INVISIBLE_EXTRAS = [0x115F, 0x1160, 0x3164, 0xFFA0, 0x034F, 0x17B4, 0x17B5, 0x180B, 0xFFFE]


def dangerous(code: int) -> bool:
    return unicodedata.category(chr(code)) in DANGEROUS_CATEGORIES or code in INVISIBLE_EXTRAS


def test_every_control_format_and_separator_character_is_escaped() -> None:
    """Exhaustive over all of Unicode, as this Python's unicodedata classifies it."""
    missed = [
        hex(c)
        for c in range(0x110000)
        if dangerous(c) and c not in (9, 10) and printable(chr(c)) == chr(c)
    ]
    assert missed == []
    assert one_line("\t") == "\\x09" and one_line("\n") == "\\x0a"


def test_named_attacks_become_visible_escapes() -> None:
    osc52 = "\x1b]52;c;cHduZWQ=\x07"
    assert printable(osc52) == "\\x1b]52;c;cHduZWQ=\\x07"
    assert printable("\x1b]8;;http://evil/\x1b\\x\x1b]8;;\x1b\\") == (
        "\\x1b]8;;http://evil/\\x1b\\x\\x1b]8;;\\x1b\\"
    )
    assert printable("a\x9b31mb") == "a\\x9b31mb"  # C1 CSI
    assert printable("\x7f") == "\\x7f"
    bidi = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert printable(bidi) == "".join(f"\\u{ord(c):04x}" for c in bidi)
    invisible = "\u200b\u200c\u200d\u2060\ufeff\u2028\u2029"
    assert printable(invisible) == "".join(f"\\u{ord(c):04x}" for c in invisible)
    assert printable("\U000e0041") == "\\U000e0041"  # tag characters smuggle text
    assert printable("soft\u00adhyphen") == "soft\\xadhyphen"
    assert printable("x\ud800y") == "x\\ud800y"  # a lone surrogate cannot even be encoded
    assert printable("line 1\n\tline 2") == "line 1\n\tline 2"
    assert printable(None) == "" and printable(3) == "3"


@pytest.mark.parametrize(
    "text",
    ["café", "中文 question", "emoji 😀 ok", "[bold red]markup[/]", "tab-free ASCII", "ß∑≈"],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert printable(text) == text == one_line(text)


@given(st.text())
def test_printable_output_holds_no_dangerous_character(text: str) -> None:
    assert not any(dangerous(ord(c)) and c not in "\t\n" for c in printable(text))
    assert not any(dangerous(ord(c)) for c in one_line(text))
    one_line(text).encode("utf-8")  # always encodable, even with lone surrogates


@given(st.recursive(st.text() | st.integers() | st.none(), lambda xs: st.lists(xs, max_size=3)))
def test_json_text_is_the_same_json_without_dangerous_characters(value: object) -> None:
    for indent in (None, 2):
        text = json_text({"v": value, "k\x9b": "\u202e"}, indent=indent)
        assert json.loads(text) == {"v": value, "k\x9b": "\u202e"}
        assert not any(dangerous(ord(c)) and c != "\n" for c in text)


def test_json_text_keeps_readable_unicode() -> None:
    assert json_text({"q": "café 中文 😀"}) == '{"q": "café 中文 😀"}'
    assert json_text({"q": "\U000e0041"}) == '{"q": "\\udb40\\udc41"}'


def test_re2_pattern_finds_what_printable_changes() -> None:
    samples = ["ok", "é中", "a\u202eb", "t\tn\n", "x\x1b", "\U000e0041", "\u200b", "\x9b"]
    found = pc.match_substring_regex(pa.array(samples), UNSAFE_RE2).to_pylist()
    assert found == [printable(s) != s for s in samples]
