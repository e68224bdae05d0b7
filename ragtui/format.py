"""One formatting for the CLI, the Markdown report and the TUI (plain strings: no rich here).

Figures are fractions in the core and in --json; every text shows points (x 100), never percent.
Untrusted text (anything from a run file, a file name or a judge server) goes through
`printable()` before it reaches any output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

# Every character a terminal may act on or a reader cannot see: C0/C1 controls and DEL (ESC
# starts ANSI/OSC sequences, U+009B is a one-byte CSI), the Unicode categories Cf (bidi
# controls U+061C U+200E/F U+202A-202E U+2066-2069, zero-width U+200B-200D U+2060, BOM U+FEFF,
# soft hyphen, tag characters), Cs (lone surrogates, which cannot even be encoded), Zl/Zp
# (line and paragraph separators), plus invisible letters (Hangul fillers, U+034F, U+17B4/5,
# Mongolian variation selectors) and the noncharacters U+FFFE/F. Unicode 15.1 categories as
# ranges (tests/test_format.py checks them against the running Python's unicodedata).
_UNSAFE_RANGES = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x034F, 0x034F),
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0x3164, 0x3164), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
_KEEP = "\t\n"  # shown as they are where multi-line text is shown


def _char_class(ranges: Iterable[tuple[int, int]], keep: str = "") -> str:
    def esc(code: int) -> str:
        return f"\\U{code:08x}"

    parts = []
    for low, high in ranges:
        for a, b in _split_out(low, high, {ord(c) for c in keep}):
            parts.append(esc(a) if a == b else f"{esc(a)}-{esc(b)}")
    return "[" + "".join(parts) + "]"


def _split_out(low: int, high: int, skip: set[int]) -> list[tuple[int, int]]:
    out, start = [], low
    for code in sorted(c for c in skip if low <= c <= high):
        if start <= code - 1:
            out.append((start, code - 1))
        start = code + 1
    if start <= high:
        out.append((start, high))
    return out


_UNSAFE = re.compile(_char_class(_UNSAFE_RANGES))  # everything, tab and newline too
_UNSAFE_MULTILINE = re.compile(_char_class(_UNSAFE_RANGES, keep=_KEEP))


def _re2_class(ranges: Iterable[tuple[int, int]], keep: str) -> str:
    # RE2 (Arrow, DuckDB) spells code points \x{...}; UTF-8 columns cannot hold surrogates
    parts = []
    for low, high in ranges:
        if low == 0xD800:
            continue
        for a, b in _split_out(low, high, {ord(c) for c in keep}):
            parts.append(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}")
    return "[" + "".join(parts) + "]"


# The same set (less tab and newline) for Arrow/DuckDB regex filters that find the values
# needing `printable`.
UNSAFE_RE2 = _re2_class(_UNSAFE_RANGES, _KEEP)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, *, multiline: bool = True) -> str:
    """Untrusted text with every control, escape, bidi, zero-width or invisible character
    shown as a visible escape (ESC -> "\\x1b", U+202E -> "\\u202e"), so a terminal never acts
    on it and a reader sees what is there. Tab and newline stay where multi-line text is shown
    (`multiline=True`); one-line contexts (a table cell, a file name in a notice, an id) pass
    `multiline=False` and get them escaped too. Markup characters stay as they are: renderers
    must not parse them. None is "" and anything else its str()."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    pattern = _UNSAFE_MULTILINE if multiline else _UNSAFE
    return pattern.sub(_escape, text)


def one_line(text: object) -> str:
    """`printable` for a one-line context: newlines and tabs are escaped as well."""
    return printable(text, multiline=False)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells astral characters as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(obj: Any, **options: Any) -> str:
    """JSON for a terminal or a pipe: readable Unicode, but every character `printable` would
    escape (C1 controls, bidi, zero-width ...) written as a \\u escape, so no such byte reaches
    the output. Outside strings json.dumps writes only ASCII, so this stays valid JSON and
    decodes to the same value. Options go to json.dumps (indent, default, sort_keys)."""
    options.setdefault("ensure_ascii", False)
    # outside strings only indentation whitespace: keep newlines (inside, json escapes them)
    return _UNSAFE_MULTILINE.sub(_json_escape, json.dumps(obj, **options))


# ---------------------------------------------------------------- numbers


def pts(value: float | None) -> str:
    """A fraction in points with one decimal: 0.781 -> "78.1"; None -> "—"."""
    return "—" if value is None else f"{value * 100:.1f}"


def signed_pts(value: float | None) -> str:
    """A delta in signed points: +8.1, -0.7; "0.0" rather than "-0.0" from float dust."""
    if value is None:
        return "—"
    x = round(value * 100, 1)
    return "0.0" if x == 0 else f"{x:+.1f}"


def short_pts(value: float | None) -> str:
    """A per-case value in points without a trailing ".0": 100, 83.3, 50."""
    return "—" if value is None else f"{value * 100:.1f}".removesuffix(".0")


def p_value(p: float | None) -> str:
    """A p-value the way papers print it: .004, <.001, 1."""
    if p is None:
        return "—"
    if p < 0.001:
        return "<.001"
    return f"{p:.3f}".removeprefix("0") if p < 1 else "1"


def interval(low: float | None, high: float | None) -> str:
    """A confidence interval in signed points: [+3.2, +13.0]."""
    if low is None or high is None:
        return "—"
    return f"[{signed_pts(low)}, {signed_pts(high)}]"


# ---------------------------------------------------------------- metric names

_ABBREVIATIONS = {
    "answer": "ans",
    "context": "ctx",
    "faithfulness": "faith",
    "relevance": "rel",
    "relevancy": "rel",
    "precision": "prec",
    "recall": "rec",
    "correctness": "corr",
    "similarity": "sim",
}


def _abbreviate(name: str, keep: int) -> str:
    words = [w for w in re.split(r"[\s_\-/.]+", name) if w]
    return " ".join(_ABBREVIATIONS.get(w.lower(), w[:keep]) for w in words) or name


def short_metrics(names: Iterable[str]) -> dict[str, str]:
    """Column headers for metrics, unique within the table: faithfulness -> faith,
    context_precision -> ctx prec. Names that would collide keep more of each word, and
    at worst their full name, so two columns never read the same."""
    names = list(dict.fromkeys(names))
    out: dict[str, str] = {}
    for keep in (5, 8, 12):
        out = {n: _abbreviate(n, keep) for n in names}
        if len(set(out.values())) == len(out):
            return out
    counts: dict[str, int] = {}
    for short in out.values():
        counts[short] = counts.get(short, 0) + 1
    out = {n: (n if counts[s] > 1 else s) for n, s in out.items()}
    return out if len(set(out.values())) == len(out) else {n: n for n in names}


def short_metric(name: str) -> str:
    """One metric's header on its own (tables use `short_metrics` so headers stay unique)."""
    return short_metrics([name])[name]
