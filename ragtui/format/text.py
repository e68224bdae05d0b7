"""The one neutraliser for untrusted text (file contents, file names, judge replies) and
inert Markdown: what every output passes text through."""

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


def error_text(err: BaseException) -> str:
    """An error for the terminal: one line, unless the error says its message is lines that
    were neutralised one by one when it was made (`RagtuiError.multiline`)."""
    return printable(err) if getattr(err, "multiline", False) else one_line(err)


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


# ---------------------------------------------------------------- Markdown (copy with `y`)

# every character that can start markup; `&` too: an entity (`&rlm;`, `&zwj;`) would turn
# back into the invisible character `printable` made visible
MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!&])")


def md_inline(text: object, limit: int | None = None) -> str:
    """Untrusted text as inert Markdown on one line: controls made visible, markup escaped."""
    flat = " ".join(printable(text).split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return MD_SPECIAL.sub(r"\\\1", flat)


def md_code(text: object, *, in_table: bool = False) -> str:
    """Untrusted text as a Markdown code span on one line (an id: `strict_v2`). A backslash
    escape is literal inside a code span (`md_inline` there showed `strict\\_v2`, and a
    backtick in the text ended the span), so the text goes in as it is, fenced by one backtick
    more than its longest run of them; only in a table cell is `|` escaped, as the table
    splits on it even inside code (and takes the backslash away again)."""
    flat = " ".join(printable(text).split()) or " "
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    if flat.startswith("`") or flat.endswith("`"):
        flat = f" {flat} "  # one space each side is stripped again by the renderer
    if in_table:
        flat = flat.replace("|", "\\|")
    return f"{fence}{flat}{fence}"


def md_table(headers: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    """A Markdown table; every cell (headers too) made inert with `md_inline`."""
    head = [md_inline(h) for h in headers]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(md_inline(c) for c in row) + " |" for row in rows]
    return out


def plural(n: int, word: str) -> str:
    """ "1 case", "2 cases": a count and its noun, -s added past one."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def rescan_text(changed: int, removed: int, failed: int, waiting: int = 0) -> str:
    """What a re-scan of the runs folder found, nothing included: "2 runs new or changed · 1
    gone · 1 file skipped · 1 result file still being written"."""
    parts = [plural(changed, "run") + " new or changed"] if changed else []
    if removed:
        parts.append(f"{removed} gone")
    if failed:
        parts.append(plural(failed, "file") + " skipped")
    if waiting:  # imported once it holds still: not "nothing changed"
        parts.append(plural(waiting, "result file") + " still being written")
    return " · ".join(parts) or "nothing changed"


def run_kind(kind: str, *, in_progress: bool, summary_only: bool) -> str:
    """A run's kind as listed (Runs screen and `ragtui runs`): a run still being written is
    "running", one that kept its means only "summary", else its own kind."""
    return "running" if in_progress else "summary" if summary_only else kind


def case_count(n: int, *, summary_only: bool) -> str:
    """A run's N as listed: "—" for a summary-only run (it kept no cases to count)."""
    return "—" if summary_only else str(n)


def metric_columns(
    metrics: list[str], fixed: list[str], suffixes: tuple[str, ...] = ()
) -> dict[str, str]:
    """Each metric's column name in an export beside the `fixed` columns: the metric's own
    name, or "NAME (metric)" (then "NAME (metric 2)", ...) where it, or it with one of the
    `suffixes` (" error"), would take a name already there. A metric named `judge` or `n`
    overwrote that column, or gave a Parquet file two columns of one name that no reader opens."""

    def names(name: str) -> set[str]:
        return {name, *(name + s for s in suffixes)}

    taken = set(fixed)
    out = {}
    for metric in metrics:  # every metric that can keep its own name keeps it, first
        if not names(metric) & taken:
            out[metric] = metric
            taken |= names(metric)
    for metric in metrics:
        if metric in out:
            continue
        name, k = f"{metric} (metric)", 2
        while names(name) & taken:
            name, k = f"{metric} (metric {k})", k + 1
        out[metric] = name
        taken |= names(name)
    return {m: out[m] for m in metrics}
