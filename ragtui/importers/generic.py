"""Home-grown harness results: CSV/TSV, JSON records, JSONL or a Markdown report table.

Columns are found by their common names, or named with `--map question=COL answer=COL
contexts=COL reference=COL case_id=COL score:faithfulness=COL ...`. Without `score:` entries
every column of scores that is not otherwise used is a metric. Scores may be numbers in [0, 1],
numbers on a declared scale (`--scale rating=1:5`), percentages ("85%"), booleans or labels
(PASS/FAIL, YES/PARTIAL/NO); a number outside [0, 1] on no declared scale is an error for
that metric, never a guessed value (see `scales`). The answer column is optional; a table of
scores alone gets row-number case ids; `<metric>_reason` columns become the scores' reasons.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, RunFile, Score, stable_case_id
from ragtui.importers._chunks import read_chunks
from ragtui.importers._columns import (
    ID_NAMES,
    LATENCY_NAMES,
    comma_numbers_notice,
    decimal_comma_error,
    describes_case,
    find_column,
    is_decimal_comma,
    kept_as_metadata_notice,
    labels_beside_text,
    names_a_grade,
    read_label,
)
from ragtui.importers._common import (
    as_number,
    build_run,
    decode_text,
    fail,
    is_missing,
    read_bytes,
    sha256_bytes,
    unique_case_ids,
    unrecorded_config,
)
from ragtui.importers._tabular import (
    Table,
    head_table,
    is_index_column,
    parse_list,
    read_table,
)
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import UNIT, MetricScale, keep_raw, resolve, scale_notices

NAMES = {
    "question": ("question", "query", "input", "inputs", "user_input", "prompt", "q"),
    "answer": (
        "answer",
        "response",
        "output",
        "outputs",
        "prediction",
        "predictions",
        "generated_answer",
        "actual_output",
        "completion",
    ),
    "contexts": (
        "contexts",
        "context",
        "retrieved_contexts",
        "retrieval_context",
        "source_documents",
        "chunks",
        "documents",
        "sources",
    ),
    "reference": (
        "reference",
        "ground_truth",
        "targets",
        "expected",
        "expected_output",
        "expected_response",
        "gold",
        "ideal",
        "target",
    ),
    "case_id": ID_NAMES,
    "latency_ms": LATENCY_NAMES,
}
FIELDS = tuple(NAMES)
# `<metric>_reason`, `<Metric>_Reason`, `<metric>/v1/justification`: the reason for a score
_REASON_SUFFIXES = ("reason", "reasons", "reasoning", "justification", "explanation", "rationale")


def is_reason_column(column: str) -> bool:
    lowered = column.lower().strip()
    return any(
        lowered.endswith(sep + suffix)
        for suffix in _REASON_SUFFIXES
        for sep in ("_", " ", "/", "-")
    )


def reason_column(metric_column: str, columns: list[str]) -> str | None:
    """The column holding the reasons for `metric_column`'s scores, when the table has one."""
    base = metric_column.strip()
    stems = [base]
    if base.lower().endswith("/score"):  # MLflow: name/v1/score + name/v1/justification
        stems.append(base[: -len("/score")])
    lowered = {c.lower().strip(): c for c in columns}
    for stem in stems:
        for suffix in _REASON_SUFFIXES:
            for sep in ("_", " ", "/", "-"):
                found = lowered.get(f"{stem}{sep}{suffix}".lower())
                if found is not None:
                    return found
    return None


def _score_like(cell: Any) -> bool:
    return read_label(cell) is not None or _percent(cell) is not None or as_number(cell) is not None


def metric_only(columns: list[str], rows: list[dict[str, Any]]) -> bool:
    """A table of scores alone (with at most an id column and reasons): no text to pair by."""
    if not rows:
        return False
    scores = 0
    for column in columns:
        if find_column([column], NAMES["case_id"]) or is_index_column(column):
            continue
        if is_reason_column(column):
            continue
        cells = [r.get(column) for r in rows if not is_missing(r.get(column))]
        if cells and all(_score_like(c) and not isinstance(c, dict | list) for c in cells):
            scores += 1
        elif cells:
            return False
    return scores > 0


class GenericImporter:
    name = "generic"
    description = (
        "a table with question/answer/score columns (CSV, JSON, JSONL, Markdown); --map names them"
    )
    priority = 90

    def __init__(self) -> None:
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        text = head.decode("utf-8", errors="ignore")
        if "\x00" in text:
            return Sniff(False, "binary data, not a table")
        columns, rows = head_table(head, path.suffix.lower() == ".jsonl")
        if not columns:
            return Sniff(False, "not a table (no CSV header, JSON records or Markdown table)")
        if find_column(columns, NAMES["question"]) or metric_only(columns, rows):
            return Sniff(True)
        shown = ", ".join(columns[:10])
        return Sniff(
            False,
            f"no question column (found: {shown}); name it with --map question=COL answer=COL",
        )

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        notices: list[str] = []
        self.last_notices = notices
        data = read_bytes(path)
        decode_text(path, data)
        table = read_table(path, data)
        if not table.rows:
            raise fail(path, "the table has a header but no rows (no cases)")
        fields, metrics = _columns(path, table, options, notices)
        if "question" not in fields:
            notices.append(
                f"{path}: no question column, only scores: cases are numbered by row "
                "(row-1, row-2, ...), so they pair only with files in the same row order"
            )
        reasons = {m: reason_column(c, table.columns) for m, c in metrics.items()}
        if not any(k.startswith("score:") for k in options.mapping):
            notices += _kept_as_metadata(path, table, fields, metrics, reasons)
        if "question" in fields and "answer" not in fields:
            used = set(fields.values()) | set(metrics.values()) | set(reasons.values())
            text = [c for c in table.columns if c not in used and _is_text(table, c)]
            kept = f"; text columns kept as metadata: {', '.join(text[:6])}" if text else ""
            notices.append(
                f"{path}: no answer column, answers left empty{kept}; name it with --map answer=COL"
            )
        scales = {
            metric: resolve(metric, _numbers(table, column), options.scales)
            for metric, column in metrics.items()
        }
        cases = [
            _case(path, table, i, fields, metrics, scales, reasons) for i in range(len(table.rows))
        ]
        refused = {
            m: sum(
                isinstance(c.errors.get(m), str) and "scale unknown" in c.errors[m] for c in cases
            )
            for m in metrics
        }
        notices += scale_notices(path, scales.values(), refused)
        config = unrecorded_config(path, options, format=table.kind)
        if table.extra:
            config.update(table.extra)
        run = build_run(path, sha256_bytes(data), self.name, options, config=config)
        rows = [table.where(i) for i in range(len(table.rows))]
        cases = unique_case_ids(cases, notices, path=path, where=rows)
        return [RunFile(run=run, cases=tuple(cases))]


def _kept_as_metadata(
    path: Path,
    table: Table,
    fields: dict[str, str],
    metrics: dict[str, str],
    reasons: dict[str, str | None],
) -> list[str]:
    """A notice for each column of scores that is kept as case metadata (its name says it
    describes the case), so that no column that looks like a metric is left out unsaid."""
    used = set(fields.values()) | set(metrics.values()) | {r for r in reasons.values() if r}
    kept = [
        c
        for c in table.columns
        if c not in used
        and not is_reason_column(c)
        and not is_index_column(c)
        and (cells := [r.get(c) for r in table.rows if not is_missing(r.get(c))])
        and all(_score_like(x) for x in cells)
    ]
    return [kept_as_metadata_notice(path, c) for c in kept]


def _is_text(table: Table, column: str) -> bool:
    cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
    return bool(cells) and any(isinstance(c, str) and as_number(c) is None for c in cells)


def _numbers(table: Table, column: str) -> list[float]:
    """The plain numbers of a column (labels and percentages carry their own scale)."""
    out = []
    for row in table.rows:
        cell = row.get(column)
        if is_missing(cell) or read_label(cell) is not None or _percent(cell) is not None:
            continue
        number = as_number(cell)
        if number is not None:
            out.append(number)
    return out


def _columns(
    path: Path, table: Table, options: ImportOptions, notices: list[str]
) -> tuple[dict[str, str], dict[str, str]]:
    fields: dict[str, str] = {}
    metrics: dict[str, str] = {}
    for key, column in options.mapping.items():
        if key.startswith("score:"):
            target = metrics
            key = key[len("score:") :]
        elif key in FIELDS:
            target = fields
        else:
            raise fail(
                path, f"--map {key}=...: unknown field; use {', '.join(FIELDS)} or score:METRIC"
            )
        if column not in table.columns:
            raise fail(
                path,
                f"--map {key}={column}: no such column (columns: {', '.join(table.columns[:15])})",
            )
        target[key] = column
    for field in FIELDS:
        if field not in fields:
            found = find_column(table.columns, NAMES[field])
            if found:
                fields[field] = found
    if not metrics:
        # every column of scores: numbers, labels or percentages; a column whose name says it
        # describes the case (latency, tokens, ...) only when its scale is declared
        used = set(fields.values())
        for column in table.columns:
            if column in used or is_reason_column(column):
                continue
            cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
            maybe_metric = column in options.scales or not describes_case(column)
            if not cells or not all(_score_like(c) for c in cells):
                if maybe_metric:
                    _refuse_decimal_commas(path, table, column, cells, options, notices)
                    note = labels_beside_text(path, column, cells)
                    if note:
                        notices.append(note)
                continue
            if maybe_metric:
                metrics[column] = column
    if "question" not in fields and not metric_only(table.columns, table.rows):
        raise fail(
            path,
            f"no question column (columns: {', '.join(table.columns[:15])}); "
            "name it with --map question=COL",
        )
    if not metrics:
        raise fail(
            path,
            f"no score columns (columns: {', '.join(table.columns[:15])}); "
            "name them with --map score:METRIC=COL",
        )
    return fields, metrics


def _refuse_decimal_commas(
    path: Path,
    table: Table,
    column: str,
    cells: list[Any],
    options: ImportOptions,
    notices: list[str],
) -> None:
    """A column of scores written with decimal commas ("0,9") is refused, not left out unsaid;
    "3,4" under a name that names no grade (source_pages) may be a list: kept, and said."""
    if not any(is_decimal_comma(c) for c in cells):
        return
    if not all(_score_like(c) or is_decimal_comma(c) for c in cells):
        return  # text with a "3,4" in it: not a column of scores
    i = next(i for i, r in enumerate(table.rows) if is_decimal_comma(r.get(column)))
    if not (names_a_grade(column) or column in options.scales):
        notices.append(comma_numbers_notice(path, column, table.rows[i][column]))
        return
    raise fail(path, decimal_comma_error(table.where(i), column, table.rows[i][column]))


def _percent(cell: Any) -> float | None:
    if isinstance(cell, str):
        text = cell.strip()
        if text.endswith("%"):
            return as_number(text[:-1])
    return None


def _grade(
    cell: Any, ms: MetricScale, reason: str | None, where: str, column: str, path: Path
) -> Score | str:
    """A score cell as a Score, or the error text when it cannot be one."""
    label = read_label(cell)
    if label is not None:
        return Score(value=label[0], raw=cell, label=label[1], scale=UNIT, reason=reason)
    pct = _percent(cell)
    if pct is not None:  # the percent sign declares the scale
        return MetricScale(ms.metric, (0.0, 100.0), "tool").score(pct, cell, reason=reason)
    number = as_number(cell)
    if number is None or isinstance(cell, dict | list):
        raise fail(
            path,
            f"{where}, column {column!r}: expected a score (a number, %, PASS/FAIL), "
            f"found {str(cell)[:40]!r}",
        )
    return ms.score(number, cell, reason=reason)


def _case(
    path: Path,
    table: Table,
    i: int,
    fields: dict[str, str],
    metrics: dict[str, str],
    scales: dict[str, MetricScale],
    reasons: dict[str, str | None],
) -> Case:
    row = table.rows[i]
    where = table.where(i)
    question: Any = ""
    if "question" in fields:
        question = row.get(fields["question"])
        if is_missing(question) or not isinstance(question, str | int | float):
            raise fail(
                path,
                f"{where}, column {fields['question']!r}: expected the question text, "
                f"found {str(question)[:40]!r}",
            )
        question = str(question)
    answer = row.get(fields["answer"]) if "answer" in fields else None
    answer = (
        ""
        if is_missing(answer)
        else answer
        if isinstance(answer, str)
        else json.dumps(answer, default=str)
    )
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    for metric, column in metrics.items():
        cell = row.get(column)
        if is_missing(cell):
            errors[metric] = "no score in the source file (empty cell)"
            continue
        reason_col = reasons.get(metric)
        reason = row.get(reason_col) if reason_col else None
        reason = reason if isinstance(reason, str) and not is_missing(reason) else None
        graded = _grade(cell, scales[metric], reason, where, column, path)
        if isinstance(graded, Score):
            scores[metric] = graded
        else:
            errors[metric] = graded
            metadata = keep_raw(metadata, metric, cell)
    case_id = row.get(fields["case_id"]) if "case_id" in fields else None
    latency = as_number(row.get(fields["latency_ms"])) if "latency_ms" in fields else None
    used = set(fields.values()) | set(metrics.values()) | {r for r in reasons.values() if r}
    metadata.update(
        {
            k: v
            for k, v in row.items()
            if k not in used and isinstance(v, str | int | float | bool) and not is_missing(v)
        }
    )
    reference = row.get(fields["reference"]) if "reference" in fields else None
    if not is_missing(case_id):
        cid = str(case_id)
    elif "question" in fields:
        cid = stable_case_id(question)
    else:
        cid = f"row-{i + 1}"
    return Case(
        case_id=cid,
        question=question,
        answer=answer,
        reference=None if is_missing(reference) else _text(reference),
        contexts=read_chunks(path, where, fields["contexts"], row.get(fields["contexts"]))
        if "contexts" in fields
        else (),
        scores=scores,
        errors=errors,
        latency_ms=latency,
        metadata=metadata,
    )


def _text(value: Any) -> str:
    items = parse_list(value) if isinstance(value, list | str) else None
    if isinstance(value, list) and items is not None:
        return "\n".join(items)
    return value if isinstance(value, str) else json.dumps(value, default=str)


register(GenericImporter())
