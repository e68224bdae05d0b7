"""What a table's column names say, shared by the RAGAS and generic importers so that both read
one file's columns alike: its case ids, its latency, and the numeric columns that describe a
case rather than grade it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from ragtui.importers._common import as_number

# the names of an explicit case-id column, in order of preference
ID_NAMES = ("case_id", "id", "sample_id", "example_id", "qid", "record_id")
LATENCY_NAMES = ("latency_ms",)

# Numeric columns that describe a case rather than grade it (unless --scale declares them a
# metric): a word of the name says so (prompt_tokens, time_taken, latency_ms, row_id, k) and
# no word names a grade. A grade word wins: token_f1, reciprocal_rank and recall_at_k are
# metrics, though "token", "rank" and "k" describe cases elsewhere.
_DESCRIBES = re.compile(
    r"latency|tokens?|cost|usd|duration|time|seconds|secs|ms|index|idx|row|count|n|num|seed|"
    r"epoch|top|k|rank|length|len|chars|words|steps?|id|timestamp|date|version|elapsed|ttft"
)
_GRADES = re.compile(
    r"f1|f2|precision|recall|mrr|ndcg|map|hits?|accuracy|acc|score|reciprocal|exact|match|"
    r"rouge\w*|bleu|meteor|bertscore|faithfulness|relevance|relevancy|correctness|similarity|"
    r"overlap|jaccard|auc|pass|passed|success|grade"
)


def find_column(columns: list[str], names: tuple[str, ...]) -> str | None:
    """The column of `columns` named by the first of `names` that one has (any case)."""
    lowered = {c.lower().strip(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def describes_case(column: str) -> bool:
    """A column whose name says it describes the case (latency, tokens, ids, ...), not a score."""
    return not names_a_grade(column) and any(_DESCRIBES.fullmatch(w) for w in _words(column))


def kept_as_metadata_notice(path: Path, column: str) -> str:
    """The notice for a column of numbers kept as case metadata, not imported as a metric."""
    return (
        f"{path}: column {column!r}: numbers kept as case metadata, not a metric (the name says "
        f"it describes the case); to score it, declare its scale: "
        f"--scale {shlex.quote(column + '=LOW:HIGH')}"
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


def names_a_grade(column: str) -> bool:
    """A word of the name names a grade (faithfulness, recall, f1, score, ...)."""
    return any(_GRADES.fullmatch(w) for w in _words(column))


def _words(column: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", column.lower()) if w]


def comma_numbers_notice(path: Path, column: str, cell: str) -> str:
    """A column of "3,4"-like cells whose name names no grade (page lists, chunk ids): kept as
    text, and said, since it may also be scores saved with decimal commas."""
    return (
        f"{path}: column {column!r}: values such as {_echo(cell)} kept as text (lists, or "
        "numbers with a decimal comma?); if they are scores, save the file with '.' as the "
        f"decimal separator, or declare the metric: --scale {shlex.quote(column + '=LOW:HIGH')}"
    )


def decimal_comma_error(where: str, column: str, cell: str) -> str:
    """The message (after the file name) for a score cell written with a decimal comma."""
    return (
        f"{where}, column {column!r}: expected a score with '.' decimals, found {_echo(cell)} "
        "(a decimal comma?); ragtui does not guess whether ',' separates decimals or thousands: "
        "save the file with '.' as the decimal separator"
    )


def _echo(cell: str, limit: int = 40) -> str:
    """A cell as quoted in a message: its start only (a cell may hold 32 MiB)."""
    text = cell.strip()
    return repr(text if len(text) <= limit else text[:limit] + "…")


# the words a harness grades with, read alike by the RAGAS and generic importers
LABELS = {
    "pass": 1.0,
    "fail": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "partial": 0.5,
    "correct": 1.0,
    "incorrect": 0.0,
}


def read_label(cell: Any) -> tuple[float, str] | None:
    """A label cell (PASS/FAIL, YES/PARTIAL/NO, ...) as (value, LABEL); None for any other."""
    if isinstance(cell, str) and cell.strip().lower() in LABELS:
        return LABELS[cell.strip().lower()], cell.strip().upper()
    return None


def labels_beside_text(path: Path, column: str, cells: list[Any]) -> str | None:
    """The notice for a column of labels with other words among them (PASS, FAIL, ERROR): kept
    as case metadata, not a metric, and said, never dropped unsaid."""
    shown = [c for c in cells if isinstance(c, str) and c.strip()]
    other = next((c for c in shown if read_label(c) is None), None)
    if other is None or not any(read_label(c) is not None for c in shown):
        return None
    return (
        f"{path}: column {column!r}: kept as case metadata, not a metric: {_echo(other)} is "
        "neither a score nor a label (PASS/FAIL, YES/PARTIAL/NO, CORRECT/INCORRECT); leave "
        "a failed grade's cell empty to import the column as a metric"
    )
