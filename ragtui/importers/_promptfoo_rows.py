"""promptfoo rows shared by the JSON and CSV readers: var names -> case fields; the CSV export.

The CSV has var columns, then per prompt x provider a group: `[provider] prompt` (the output),
Status (PASS/FAIL/ERROR), Score, Named Scores, `Metric: NAME`..., Grader Reason, Comment.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from ragtui.core.model import Chunk, Score, stable_case_id
from ragtui.importers._common import as_number, clamp01, fail
from ragtui.importers._tabular import csv_error_text, parse_list
from ragtui.importers.base import ImportOptions

QUESTION_VARS = ("query", "question", "input", "user_input", "prompt", "q")
CONTEXT_VARS = ("context", "contexts", "retrieved_contexts", "documents", "chunks")
REFERENCE_VARS = ("reference", "expected", "ground_truth", "expected_output", "ideal", "answer")
GROUP = re.compile(r"^\[(.+?)\] (.*)$")


# reasons promptfoo gives when the model grader replied with no usable grade (it then scores 0)
GRADER_FAILURES = re.compile(
    r"could not extract json|produced malformed response|no output|"
    r"error (calling|fetching|parsing)|api (response )?error",
    re.IGNORECASE,
)


def grader_failed(reason: str | None, passed: Any) -> bool:
    return passed is False and bool(reason) and bool(GRADER_FAILURES.search(reason or ""))


def pick(vars_: dict[str, Any], options: ImportOptions, field: str, names: tuple[str, ...]) -> Any:
    if field in options.mapping:
        return vars_.get(options.mapping[field])
    for name in names:
        if name in vars_:
            return vars_[name]
    return None


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def case_from_vars(
    vars_: dict[str, Any], options: ImportOptions, fallback_question: str
) -> dict[str, Any]:
    question = pick(vars_, options, "question", QUESTION_VARS)
    contexts_value = pick(vars_, options, "contexts", CONTEXT_VARS)
    reference = pick(vars_, options, "reference", REFERENCE_VARS)
    case_id = as_text(vars_.get(options.mapping["case_id"])) if "case_id" in options.mapping else ""
    if not case_id:
        # the question when the config names one; else all vars, so prompts share case ids
        basis = (
            as_text(question)
            if question is not None
            else json.dumps(vars_, sort_keys=True, default=str)
        )
        case_id = stable_case_id(basis)
    contexts: tuple[Chunk, ...] = ()
    if contexts_value is not None:
        items = parse_list(contexts_value) or [as_text(contexts_value)]
        contexts = tuple(
            Chunk(id=f"c{n}", text=t, rank=n) for n, t in enumerate(items, start=1) if t
        )
    return {
        "case_id": case_id,
        "question": as_text(question) if question is not None else fallback_question,
        "reference": None if reference is None else as_text(reference),
        "contexts": contexts,
    }


def csv_rows(path: Path, text: str, options: ImportOptions) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
        body = list(reader)
    except StopIteration:
        raise fail(path, "expected a CSV header line, found none") from None
    except csv.Error as exc:
        raise fail(path, f"line {reader.line_num}: not valid CSV ({csv_error_text(exc)})") from None
    starts = [i for i, c in enumerate(header) if GROUP.match(c)]
    if not starts:
        raise fail(path, "expected promptfoo CSV columns '[provider] prompt', found none")
    var_cols = [(i, c) for i, c in enumerate(header[: starts[0]]) if c != "Description"]
    rows = []
    for number, cells in enumerate(body, start=2):
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise fail(
                path, f"row {number}: expected {len(header)} cells, found {len(cells)} (truncated?)"
            )
        vars_ = {c: cells[i] for i, c in var_cols}
        for g, start in enumerate(starts):
            end = starts[g + 1] if g + 1 < len(starts) else len(header)
            match = GROUP.match(header[start])
            assert match is not None
            group = {header[k]: cells[k] for k in range(start + 1, end)}
            status = group.get("Status", "")
            scores: dict[str, Score] = {}
            for col, cell in group.items():
                if col.startswith("Metric: ") and cell.strip():
                    value = as_number(cell)
                    if value is None:
                        raise fail(
                            path,
                            f"row {number}, column {col!r}: expected a number, found {cell[:40]!r}",
                        )
                    scores[col[len("Metric: ") :]] = Score(
                        value=clamp01(value), raw=value, reason=group.get("Grader Reason") or None
                    )
            # one Grader Reason per test: a failed grading is pinned on the metrics it zeroed
            failed: dict[str, str] = {}
            reason = group.get("Grader Reason") or None
            if status == "FAIL" and grader_failed(reason, False):
                for metric in [m for m, sc in scores.items() if sc.value == 0.0]:
                    failed[metric] = f"the grader gave no grade: {reason}"
                    del scores[metric]
            if (
                not scores
                and not failed
                and status != "ERROR"
                and as_number(group.get("Score", "")) is not None
            ):
                scores["score"] = Score(
                    value=clamp01(as_number(group["Score"]) or 0.0), raw=group["Score"]
                )
            row = case_from_vars(vars_, options, "")
            rows.append(
                {
                    **row,
                    "part": (match.group(2), match.group(1)),
                    "config": {"prompt": match.group(2), "provider": match.group(1)},
                    "answer": cells[start],
                    "scores": scores,
                    "metric_errors": failed,
                    "error": (
                        group.get("Grader Reason") or "promptfoo reported an error for this test"
                    )
                    if status == "ERROR"
                    else None,
                    "latency_ms": None,
                    "metadata": {"description": cells[header.index("Description")]}
                    if "Description" in header[: starts[0]]
                    else {},
                    "grader": None,
                }
            )
    return rows
