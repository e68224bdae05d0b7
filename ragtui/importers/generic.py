"""Home-grown harness results: CSV/TSV, JSON records, JSONL or a Markdown report table.

Columns are found by their common names, or named with `--map question=COL answer=COL
contexts=COL reference=COL case_id=COL score:faithfulness=COL ...`. Without `score:` entries
every numeric column that is not otherwise used is a metric. Scores may be numbers in [0, 1],
1-5 ratings, percentages ("85%"), booleans or labels (PASS/FAIL, YES/PARTIAL/NO).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, RunFile, Score, stable_case_id
from ragtui.importers._common import (
    as_number,
    build_run,
    clamp01,
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
    header_columns,
    is_markdown_table,
    json_keys,
    parse_list,
    read_table,
)
from ragtui.importers.base import ImportOptions, Sniff, register

NAMES = {
    "question": ("question", "query", "input", "user_input", "prompt", "q"),
    "answer": (
        "answer",
        "response",
        "output",
        "prediction",
        "generated_answer",
        "actual_output",
        "completion",
    ),
    "contexts": (
        "contexts",
        "context",
        "retrieved_contexts",
        "retrieval_context",
        "chunks",
        "documents",
        "sources",
    ),
    "reference": (
        "reference",
        "ground_truth",
        "expected",
        "expected_output",
        "gold",
        "ideal",
        "target",
    ),
    "case_id": ("case_id", "id", "sample_id", "example_id", "qid"),
    "latency_ms": ("latency_ms",),
}
FIELDS = tuple(NAMES)
LABELS = {
    "pass": 1.0,
    "fail": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "partial": 0.5,
    "correct": 1.0,
    "incorrect": 0.0,
}


def _find(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.lower().strip(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


class GenericImporter:
    name = "generic"
    description = (
        "a table with question/answer/score columns (CSV, JSON, JSONL, Markdown); --map names them"
    )
    priority = 90

    def sniff(self, path: Path, head: bytes) -> Sniff:
        text = head.decode("utf-8", errors="ignore")
        if "\x00" in text:
            return Sniff(False, "binary data, not a table")
        if is_markdown_table(text):
            columns = [
                c.strip() for c in text[text.index("|") :].splitlines()[0].strip("|").split("|")
            ]
        else:
            columns = header_columns(head) or sorted(json_keys(head))
        if not columns:
            return Sniff(False, "not a table (no CSV header, JSON records or Markdown table)")
        if _find(columns, NAMES["question"]) and _find(columns, NAMES["answer"]):
            return Sniff(True)
        shown = ", ".join(columns[:10])
        return Sniff(
            False,
            f"no question/answer columns (found: {shown}); name them with --map question=COL answer=COL",
        )

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        data = read_bytes(path)
        decode_text(path, data)
        table = read_table(path, data)
        if not table.rows:
            raise fail(path, "the table has a header but no rows (no cases)")
        fields, metrics = _columns(path, table, options)
        scales = _scales(table, metrics)
        cases = [_case(path, table, i, fields, metrics, scales) for i in range(len(table.rows))]
        config = unrecorded_config(path, options, format=table.kind)
        run = build_run(path, sha256_bytes(data), self.name, options, config=config)
        return [RunFile(run=run, cases=tuple(unique_case_ids(cases)))]


def _columns(
    path: Path, table: Table, options: ImportOptions
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
            found = _find(table.columns, NAMES[field])
            if found:
                fields[field] = found
    for field in ("question", "answer"):
        if field not in fields:
            raise fail(
                path,
                f"no {field} column (columns: {', '.join(table.columns[:15])}); name it with --map {field}=COL",
            )
    if not metrics:
        # every column of scores: numbers in [0, 1], labels, percentages, or a rating scale
        used = set(fields.values())
        for column in table.columns:
            if column in used:
                continue
            cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
            if not cells or not any(
                as_number(c) is not None or _score(c) is not None for c in cells
            ):
                continue
            if all(_score(c) is not None for c in cells) or _scales(table, {column: column}):
                metrics[column] = column
    return fields, metrics


def _score(cell: Any) -> tuple[float, Any, str | None, tuple[float, float] | None] | None:
    """(value, raw, label, scale) for a score cell, or None when it is no score."""
    if isinstance(cell, str):
        text = cell.strip()
        if text.lower() in LABELS:
            return LABELS[text.lower()], text, text.upper(), None
        if text.endswith("%") and as_number(text[:-1]) is not None:
            number = as_number(text[:-1]) or 0.0
            return (clamp01(number / 100), text, None, (0.0, 100.0)) if 0 <= number <= 100 else None
    number = as_number(cell)
    if number is None:
        return None
    if -1e-6 <= number <= 1 + 1e-6:
        return clamp01(number), cell, None, None
    return None


def _case(
    path: Path,
    table: Table,
    i: int,
    fields: dict[str, str],
    metrics: dict[str, str],
    scale_of: dict[str, tuple[float, float]],
) -> Case:
    row = table.rows[i]
    where = (
        f"row {table.lines[i]}" if table.kind in ("csv", "markdown", "jsonl") else f"record {i + 1}"
    )
    question = row.get(fields["question"])
    if is_missing(question) or not isinstance(question, str | int | float):
        raise fail(
            path,
            f"{where}, column {fields['question']!r}: expected the question text, found {question!r}",
        )
    question = str(question)
    answer = row.get(fields["answer"])
    answer = (
        ""
        if is_missing(answer)
        else answer
        if isinstance(answer, str)
        else json.dumps(answer, default=str)
    )
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    for metric, column in metrics.items():
        cell = row.get(column)
        if is_missing(cell):
            errors[metric] = "no score in the source file (empty cell)"
            continue
        scale = scale_of.get(metric)
        if scale is not None:
            number = as_number(cell)
            if number is None:
                raise fail(
                    path,
                    f"{where}, column {column!r}: expected a {scale[0]:g}-{scale[1]:g} rating, found {cell!r}",
                )
            scores[metric] = Score(
                value=clamp01((number - scale[0]) / (scale[1] - scale[0])), raw=cell, scale=scale
            )
            continue
        parsed = _score(cell)
        if parsed is None:
            raise fail(
                path,
                f"{where}, column {column!r}: expected a score (0-1, %, PASS/FAIL), found {str(cell)[:40]!r}",
            )
        value, raw, label, pct = parsed
        scores[metric] = Score(value=value, raw=raw, label=label, scale=pct)
    case_id = row.get(fields["case_id"]) if "case_id" in fields else None
    latency = as_number(row.get(fields["latency_ms"])) if "latency_ms" in fields else None
    used = set(fields.values()) | set(metrics.values())
    metadata = {
        k: v
        for k, v in row.items()
        if k not in used and isinstance(v, str | int | float | bool) and not is_missing(v)
    }
    reference = row.get(fields["reference"]) if "reference" in fields else None
    return Case(
        case_id=str(case_id) if not is_missing(case_id) else stable_case_id(question),
        question=question,
        answer=answer,
        reference=None if is_missing(reference) else str(reference),
        contexts=_contexts(
            path, where, row.get(fields["contexts"]) if "contexts" in fields else None
        ),
        scores=scores,
        errors=errors,
        latency_ms=latency,
        metadata=metadata,
    )


def _scales(table: Table, metrics: dict[str, str]) -> dict[str, tuple[float, float]]:
    # a column of whole numbers 1..5 (some above 1) is a rating scale, not a [0, 1] score
    out = {}
    for metric, column in metrics.items():
        numbers = [as_number(r.get(column)) for r in table.rows if not is_missing(r.get(column))]
        if (
            numbers
            and all(n is not None and n == int(n) and 1 <= n <= 5 for n in numbers)
            and any(n and n > 1 for n in numbers)
        ):
            out[metric] = (1.0, 5.0)
        elif (
            numbers
            and all(n is not None and n == int(n) and 0 <= n <= 10 for n in numbers)
            and any(n and n > 5 for n in numbers)
        ):
            out[metric] = (0.0, 10.0)
    return out


def _contexts(path: Path, where: str, cell: Any) -> tuple[Chunk, ...]:
    if is_missing(cell):
        return ()
    items: list[Any] | None = cell if isinstance(cell, list) else parse_list(cell)
    if items is None:
        items = [cell]
    chunks = []
    for n, item in enumerate(items, start=1):
        if isinstance(item, dict):
            text = item.get("text") or item.get("content") or item.get("page_content")
            if not isinstance(text, str):
                raise fail(
                    path,
                    f"{where}, contexts[{n - 1}]: expected a chunk with 'text', found keys {sorted(item)[:6]}",
                )
            source = (
                item.get("source") or (item.get("metadata") or {}).get("source")
                if isinstance(item.get("metadata") or {}, dict)
                else None
            )
            chunks.append(
                Chunk(
                    id=str(item.get("id") or f"c{n}"),
                    text=text,
                    source=source if isinstance(source, str) else None,
                    rank=n,
                    score=as_number(item.get("score")),
                )
            )
        else:
            chunks.append(Chunk(id=f"c{n}", text=str(item), rank=n))
    return tuple(chunks)


register(GenericImporter())
