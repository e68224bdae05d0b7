"""RAGAS results: `result.to_pandas()` saved as CSV (any delimiter), JSON records or JSONL.

Column sets: v0.2+ `user_input, retrieved_contexts, response, reference`; v0.1 `question,
contexts, answer, ground_truth`. Every other numeric column is a metric, whatever its name
(`factual_correctness(mode=f1)` included). A NaN or empty metric cell is a failed metric, an
error, not a score. A traces JSON (`result.traces`) turns faithfulness verdicts into claims.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, Claim, RunFile, Score, stable_case_id
from ragtui.importers import _traces
from ragtui.importers._common import (
    as_number,
    build_run,
    clamp01,
    decode_text,
    fail,
    file_stem,
    is_missing,
    read_bytes,
    sha256_bytes,
    unique_case_ids,
    unrecorded_config,
)
from ragtui.importers._tabular import Table, header_columns, json_keys, parse_list, read_table
from ragtui.importers.base import ImportOptions, Sniff, register

V02 = {
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "reference": "reference",
}
V01 = {
    "question": "question",
    "answer": "answer",
    "contexts": "contexts",
    "reference": "ground_truth",
}
# columns of the RAGAS sample schemas that are data, not metrics
NON_METRIC = {
    "user_input",
    "retrieved_contexts",
    "reference_contexts",
    "response",
    "multi_responses",
    "reference",
    "rubrics",
    "question",
    "contexts",
    "answer",
    "ground_truth",
    "ground_truths",
    "retrieved_context_ids",
    "reference_context_ids",
    "persona_name",
    "query_style",
    "query_length",
    "synthesizer_name",
    "id",
}
_EPS = 1e-6
_SAVE_HINT = (
    "save the per-case table instead: result.to_pandas().to_csv('results.csv', index=False)"
)


def _looks_like_result_repr(text: str) -> bool:
    stripped = text.strip()
    if "EvaluationResult(" in stripped[:2000] or stripped.startswith("<ragas."):
        return True
    if stripped.startswith("{") and "\n" not in stripped.strip()[:-1].strip():
        try:
            value = (
                ast.literal_eval(stripped) if stripped.startswith("{'") else json.loads(stripped)
            )
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False
        return (
            isinstance(value, dict)
            and bool(value)
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value.values())
        )
    return False


class RagasImporter:
    name = "ragas"
    description = "RAGAS evaluate() results (to_pandas() as CSV, JSON or JSONL), v0.1 and v0.2+"
    priority = 20

    def sniff(self, path: Path, head: bytes) -> Sniff:
        text = head.decode("utf-8", errors="ignore")
        if _looks_like_result_repr(text):
            return Sniff(True)
        if _traces.looks_like_traces(text):
            return Sniff(True)
        columns = header_columns(head)
        keys = set(columns) if columns else json_keys(head)
        if {"user_input", "response"} <= keys or {"user_input", "retrieved_contexts"} <= keys:
            return Sniff(True)
        if {"question", "answer"} <= keys and (
            {"contexts", "ground_truth", "ground_truths"} & keys
        ):
            return Sniff(True)
        return Sniff(
            False,
            "no RAGAS columns (user_input/response/retrieved_contexts, or question/answer/contexts)",
        )

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        data = read_bytes(path)
        text = decode_text(path, data)
        if _looks_like_result_repr(text):
            raise fail(
                path,
                "this is a printed RAGAS EvaluationResult (only the mean of each metric), "
                f"not per-case results; {_SAVE_HINT}",
            )
        if _traces.looks_like_traces(text[:65536]):
            raise fail(
                path,
                "this is a RAGAS traces file; import the results file it belongs to "
                "(it is picked up when named <results>_traces.json, or give --traces FILE)",
            )
        table = read_table(path, data)
        if not table.rows:
            raise fail(path, "the table has a header but no rows (no cases)")
        cols = (
            V02 if "user_input" in table.columns else V01 if "question" in table.columns else None
        )
        if cols is None:
            raise fail(
                path,
                "expected RAGAS columns user_input, response (v0.2+) or question, answer (v0.1); "
                f"found {', '.join(table.columns[:12])}",
            )
        if cols["answer"] not in table.columns:
            raise fail(path, f"expected a column {cols['answer']!r} next to {cols['question']!r}")
        metrics = _metric_columns(path, table)
        cases = [self._case(path, table, i, cols, metrics) for i in range(len(table.rows))]
        cases = unique_case_ids(cases)
        claims = self._claims(path, options, cases)
        if claims:
            cases = [_with_claims(c, claims[i]) if i in claims else c for i, c in enumerate(cases)]
        sha = sha256_bytes(data)
        version = "0.2+" if cols is V02 else "0.1"
        run = build_run(
            path,
            sha,
            self.name,
            options,
            config=unrecorded_config(path, options, ragas_columns=version),
        )
        return [RunFile(run=run, cases=tuple(cases))]

    def _case(
        self,
        path: Path,
        table: Table,
        i: int,
        cols: dict[str, str],
        metrics: dict[str, tuple[float, float] | None],
    ) -> Case:
        row = table.rows[i]
        where = f"row {table.lines[i]}" if table.kind != "json" else f"record {i + 1}"
        question = row.get(cols["question"])
        if not isinstance(question, str) or not question.strip():
            raise fail(
                path,
                f"{where}, column {cols['question']!r}: expected the question text, found {question!r}",
            )
        answer = row.get(cols["answer"])
        if is_missing(answer):
            answer = ""
        if not isinstance(answer, str):
            raise fail(path, f"{where}, column {cols['answer']!r}: expected text, found {answer!r}")
        contexts = _contexts(path, where, cols["contexts"], row.get(cols["contexts"]))
        reference = _reference(row, cols["reference"])
        scores: dict[str, Score] = {}
        errors: dict[str, str] = {}
        for metric, scale in metrics.items():
            cell = row.get(metric)
            if is_missing(cell):
                errors[metric] = "RAGAS produced no score (NaN): the metric failed for this case"
                continue
            raw = as_number(cell)
            assert raw is not None  # _metric_columns checked every cell
            if scale is None:
                scores[metric] = Score(value=clamp01(raw), raw=raw)
            else:
                low, high = scale
                scores[metric] = Score(
                    value=clamp01((raw - low) / (high - low)), raw=raw, scale=scale
                )
        metadata = {
            k: v
            for k, v in row.items()
            if k not in metrics and k not in cols.values() and not is_missing(v)
        }
        metadata = {
            k: v if isinstance(v, str | int | float | bool) else json.dumps(v, default=str)
            for k, v in metadata.items()
        }
        return Case(
            case_id=stable_case_id(question),
            question=question,
            answer=answer,
            reference=reference,
            contexts=contexts,
            scores=scores,
            errors=errors,
            metadata=metadata,
        )

    def _claims(
        self, path: Path, options: ImportOptions, cases: list[Case]
    ) -> dict[int, list[Claim]]:
        questions = [c.question for c in cases]
        if options.traces:
            traces_path = Path(options.traces)
            return _traces.load_claims(traces_path, questions, strict=True)
        sibling = _sibling_traces(path)
        if sibling is None:
            return {}
        # a guessed sibling is used only when it lines up with these results
        return _traces.load_claims(sibling, questions, strict=False)


def _metric_columns(path: Path, table: Table) -> dict[str, tuple[float, float] | None]:
    """Metric columns and their scale: None for [0, 1] scores, (1, 5) for rubric scores."""
    metrics: dict[str, tuple[float, float] | None] = {}
    for column in table.columns:
        if column in NON_METRIC:
            continue
        values: list[float] = []
        bad: tuple[int, Any] | None = None
        for i, row in enumerate(table.rows):
            cell = row.get(column)
            if is_missing(cell):
                continue
            number = as_number(cell) if not isinstance(cell, bool) else None
            if number is None:
                bad = bad or (i, cell)
            else:
                values.append(number)
        if not values:
            continue  # a text column (metadata), or a metric that failed everywhere
        if bad is not None:
            i, cell = bad
            raise fail(
                path,
                f"row {table.lines[i]}, column {column!r}: expected a score (a number, or empty "
                f"for a failed metric), found {str(cell)[:60]!r}",
            )
        if all(-_EPS <= v <= 1 + _EPS for v in values):
            metrics[column] = None
        elif all(v == int(v) and 1 <= v <= 5 for v in values):
            metrics[column] = (1.0, 5.0)
        else:
            raise fail(
                path,
                f"column {column!r}: expected scores in [0, 1] (or 1-5 rubric scores), "
                f"found {min(values)} to {max(values)}",
            )
    all_nan = [
        c
        for c in table.columns
        if c not in NON_METRIC
        and c not in metrics
        and all(is_missing(r.get(c)) for r in table.rows)
        and re.fullmatch(r"[a-z_]+(\(.*\))?", c)
    ]
    for column in all_nan:
        metrics[column] = None  # every case failed this metric: all errors, still a metric
    return metrics


def _contexts(path: Path, where: str, column: str, cell: Any) -> tuple[Chunk, ...]:
    if is_missing(cell):
        return ()
    items = parse_list(cell)
    if items is None:
        if not isinstance(cell, str):
            raise fail(
                path, f"{where}, column {column!r}: expected a list of chunks, found {cell!r}"
            )
        items = [cell]
    return tuple(Chunk(id=f"c{n}", text=t, rank=n) for n, t in enumerate(items, start=1))


def _reference(row: dict[str, Any], column: str) -> str | None:
    value = row.get(column)
    if is_missing(value) and column == "ground_truth":
        value = row.get("ground_truths")
    if is_missing(value):
        return None
    items = parse_list(value)
    if items is not None:
        return "\n".join(items)
    return value if isinstance(value, str) else str(value)


def _with_claims(case: Case, claims: list[Claim]) -> Case:
    return replace(case, claims=tuple(claims))


def _sibling_traces(path: Path) -> Path | None:
    stem = file_stem(path)
    for name in (f"{stem}_traces.json", f"{stem}.traces.json", f"{stem}-traces.json"):
        candidate = path.with_name(name)
        if candidate.is_file():
            return candidate
    try:
        others = [p for p in path.parent.glob("*traces*.json") if p.is_file()]
    except OSError:
        return None
    return others[0] if len(others) == 1 else None


register(RagasImporter())
