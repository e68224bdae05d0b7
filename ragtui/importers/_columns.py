"""What a table's column names say, shared by the RAGAS and generic importers so that both read
one file's columns alike: its case ids, its latency, and the numeric columns that describe a
case rather than grade it."""

from __future__ import annotations

import re
from pathlib import Path

from ragtui.importers._common import as_number

# the names of an explicit case-id column, in order of preference
ID_NAMES = ("case_id", "id", "sample_id", "example_id", "qid", "record_id")
LATENCY_NAMES = ("latency_ms",)

# Numeric columns that describe a case rather than grade it (unless --scale declares them a
# metric). Matched on the whole name, its first or last word, never any part of it: token_f1,
# reciprocal_rank and recall_at_k are metrics; prompt_tokens, latency_ms, row_id and k are not.
_DESCRIBES_WHOLE = re.compile(
    r"latency|duration|elapsed|time|seconds|secs|ms|cost|usd|tokens|token_count|index|idx|row|"
    r"count|n|num|seed|epoch|top_k|k|rank|length|len|chars|words|steps?|id|timestamp|date|version"
)
_DESCRIBES_FIRST = re.compile(r"latency|duration|elapsed|cost|num|n")
_DESCRIBES_LAST = re.compile(
    r"ms|s|secs?|seconds|time|tokens|usd|cost|id|idx|index|count|len|length|chars|words|steps|"
    r"timestamp|date|version|seed|epoch"
)
_DESCRIBES_ANY = re.compile(r"latency|tokens|usd|timestamp|seed")  # never a word of a grade


def find_column(columns: list[str], names: tuple[str, ...]) -> str | None:
    """The column of `columns` named by the first of `names` that one has (any case)."""
    lowered = {c.lower().strip(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def describes_case(column: str) -> bool:
    """A column whose name says it describes the case (latency, tokens, ids, ...), not a score."""
    words = [w for w in re.split(r"[^a-z0-9]+", column.lower()) if w]
    if not words:
        return False
    return bool(
        _DESCRIBES_WHOLE.fullmatch("_".join(words))
        or (
            len(words) > 1
            and (_DESCRIBES_FIRST.fullmatch(words[0]) or _DESCRIBES_LAST.fullmatch(words[-1]))
        )
        or any(_DESCRIBES_ANY.fullmatch(w) for w in words)
    )


def kept_as_metadata_notice(path: Path, column: str) -> str:
    """The notice for a column of numbers kept as case metadata, not imported as a metric."""
    return (
        f"{path}: column {column!r}: numbers kept as case metadata, not a metric (the name says "
        f"it describes the case); to score it, declare its scale: --scale {column}=LOW:HIGH"
    )


def is_percent(cell: object) -> bool:
    """A percentage such as "85%" or "66.7 %" (the percent sign declares the scale)."""
    return (
        isinstance(cell, str)
        and cell.strip().endswith("%")
        and as_number(cell.strip()[:-1]) is not None
    )


# A number written with a decimal comma ("0,9"), as spreadsheets in many locales save it. It is
# refused, never read: "1,000" may be one or a thousand, and ragtui does not guess.
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


def is_decimal_comma(cell: object) -> bool:
    return isinstance(cell, str) and bool(_DECIMAL_COMMA.fullmatch(cell.strip()))


def decimal_comma_error(where: str, column: str, cell: str) -> str:
    """The message (after the file name) for a score cell written with a decimal comma."""
    return (
        f"{where}, column {column!r}: expected a score with '.' decimals, found {cell.strip()!r} "
        "(a decimal comma?); ragtui does not guess whether ',' separates decimals or thousands: "
        "save the file with '.' as the decimal separator"
    )
