"""MLflow `evaluate()` results: the `eval_results_table.json` artifact (pandas split JSON).

Columns: the data (`inputs`, the predictions column such as `outputs`, `ground_truth` or
`targets`, a context column) and per metric `NAME/vN/score` (`NAME/score` for a metric made
without a version) with, for LLM-judged metrics, `NAME/vN/justification`. MLflow's built-in judged metrics (`faithfulness`, `answer_relevance`,
`answer_correctness`, `answer_similarity`, `relevance`: a justification column beside the score)
score 1-5; `toxicity/vN` is a probability in [0, 1]. A `make_genai_metric` judge (any other
score with a justification) scores on the rubric its author wrote, which the file does not
record: its scale must be declared (`--scale NAME/v1=LOW:HIGH`), else each of its values is an
error, never guessed. Any other score column (reading grade levels, ...) outside [0, 1] needs a
declared scale. The metric is named by its
column without `/score` (`faithfulness/v1`), so it never passes for another tool's metric of
the same name. A null score (the judge's reply was not a score) is an error for that metric.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, RunFile, Score, stable_case_id
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
from ragtui.importers._tabular import Table, parse_list, read_table, split_columns
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import (
    UNIT,
    MetricScale,
    conflict_notice,
    declare_hint,
    keep_raw,
    resolve,
    scale_notices,
)

JUDGE_SCALE = (1.0, 5.0)
# MLflow's built-in LLM-judged metrics, each graded on a 1-5 rubric MLflow itself defines
BUILTIN_JUDGED = {
    "faithfulness",
    "answer_relevance",
    "answer_correctness",
    "answer_similarity",
    "relevance",
}
PROBABILITIES = {"toxicity"}  # MLflow's built-in metrics that score in [0, 1]
# NAME/vN/score (versioned metrics) or NAME/score (make_metric without a version)
_SCORE = re.compile(r"^(?P<metric>(?P<name>[^/]+)(?:/v\d+)?)/score$")
QUESTION = ("inputs", "input", "question", "query")
ANSWER = ("outputs", "output", "predictions", "prediction", "answer", "response")
REFERENCE = ("ground_truth", "targets", "target", "expected_response", "reference")
CONTEXT = ("context", "retrieved_context", "contexts", "source_documents")
NOT_METRIC = {"token_count", "latency"}  # per-row figures MLflow adds that grade nothing


class MlflowImporter:
    name = "mlflow"
    description = "MLflow evaluate() results: eval_results_table.json (pandas split JSON)"
    priority = 15

    def __init__(self) -> None:
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        text = head.decode("utf-8", errors="ignore")
        columns = split_columns(text) if '"data"' in text else []
        if any(_SCORE.match(c) for c in columns) or ({"inputs", "outputs"} <= set(columns)):
            return Sniff(True)
        return Sniff(False, 'no pandas split JSON with "NAME/v1/score" or inputs/outputs columns')

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        notices: list[str] = []
        self.last_notices = notices
        data = read_bytes(path)
        decode_text(path, data)
        table = read_table(path, data)
        if not table.rows:
            raise fail(path, "the table has no rows (no cases)")
        fields = {
            field: _find(table.columns, names)
            for field, names in (
                ("question", QUESTION),
                ("answer", ANSWER),
                ("reference", REFERENCE),
                ("contexts", CONTEXT),
            )
        }
        for key in ("question", "answer"):
            if key in options.mapping:
                if options.mapping[key] not in table.columns:
                    raise fail(path, f"--map {key}={options.mapping[key]}: no such column")
                fields[key] = options.mapping[key]
        if fields["question"] is None:
            raise fail(
                path,
                f"no inputs column (columns: {', '.join(table.columns[:12])}); "
                "name it with --map question=COL",
            )
        metrics = _metrics(path, table, options, notices)
        if not metrics:
            raise fail(
                path, "no NAME/vN/score or NAME/score columns: MLflow computed no per-row metric"
            )
        cases = [_case(path, table, i, fields, metrics) for i in range(len(table.rows))]
        refused = {m: sum("scale unknown" in c.errors.get(m, "") for c in cases) for m in metrics}
        notices += scale_notices(path, [ms for ms, _, _ in metrics.values()], refused)
        config = unrecorded_config(path, options, format="mlflow eval_results_table")
        run = build_run(path, sha256_bytes(data), self.name, options, config=config)
        cases = unique_case_ids(cases, notices, path=path, repeated="question")
        return [RunFile(run=run, cases=tuple(cases))]


def _find(columns: list[str], names: tuple[str, ...]) -> str | None:
    return next((c for n in names for c in columns if c.lower() == n), None)


def _metrics(
    path: Path, table: Table, options: ImportOptions, notices: list[str]
) -> dict[str, tuple[MetricScale, str, str | None]]:
    """metric -> (scale, score column, justification column)."""
    out = {}
    for column in table.columns:
        match = _SCORE.match(column)
        if not match or match.group("name") in NOT_METRIC:
            continue
        metric, name = match.group("metric"), match.group("name")
        reason = f"{metric}/justification"
        reason_col = reason if reason in table.columns else None
        builtin = reason_col is not None and name in BUILTIN_JUDGED
        known = JUDGE_SCALE if builtin else UNIT if name in PROBABILITIES else None
        if known is not None:
            note = conflict_notice(path, metric, "MLflow", known, options.scales)
            if note:
                notices.append(note)
        values = [
            n
            for r in table.rows
            if not is_missing(r.get(column)) and (n := as_number(r.get(column))) is not None
        ]
        if reason_col and known is None and metric not in options.scales:
            ms = MetricScale(metric, None, "default", unknown=_custom_judge(metric))
        else:
            ms = resolve(metric, values, options.scales, known)
        out[metric] = (ms, column, reason_col)
    return out


def _custom_judge(metric: str) -> str:
    return (
        f"{metric} is a make_genai_metric judge (a justification beside its score): it scores "
        "on the rubric its author wrote, which MLflow does not record in this file; "
        + declare_hint(metric)
    )


def _case(
    path: Path,
    table: Table,
    i: int,
    fields: dict[str, str | None],
    metrics: dict[str, tuple[MetricScale, str, str | None]],
) -> Case:
    row = table.rows[i]
    where = f"record {i + 1}"
    question = row.get(fields["question"] or "")
    if not isinstance(question, str):
        question = "" if question is None else str(question)
    answer = row.get(fields["answer"]) if fields["answer"] else ""
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    for metric, (ms, column, reason_col) in metrics.items():
        cell = row.get(column)
        reason = row.get(reason_col) if reason_col else None
        reason = reason if isinstance(reason, str) else None
        if is_missing(cell):
            errors[metric] = "MLflow recorded no score" + (f": {reason[:200]}" if reason else "")
            continue
        number = as_number(cell)
        if number is None or isinstance(cell, bool):
            raise fail(path, f"{where}, column {column!r}: expected a number, found {cell!r}")
        graded = ms.score(number, cell, reason=reason)
        if isinstance(graded, Score):
            scores[metric] = graded
        else:
            errors[metric] = graded
            metadata = keep_raw(metadata, metric, cell)
    used = {c for c in fields.values() if c} | {
        c for _, column, reason in metrics.values() for c in (column, reason) if c
    }
    metadata.update(
        {
            k: v
            for k, v in row.items()
            if k not in used and isinstance(v, str | int | float | bool) and not is_missing(v)
        }
    )
    reference = row.get(fields["reference"]) if fields["reference"] else None
    return Case(
        case_id=stable_case_id(question),
        question=question,
        answer=answer if isinstance(answer, str) else "" if answer is None else str(answer),
        reference=reference if isinstance(reference, str) else None,
        contexts=_contexts(row.get(fields["contexts"]) if fields["contexts"] else None),
        scores=scores,
        errors=errors,
        metadata=metadata,
    )


def _contexts(cell: Any) -> tuple[Chunk, ...]:
    if is_missing(cell):
        return ()
    items = parse_list(cell)
    if items is None:
        items = [cell if isinstance(cell, str) else str(cell)]
    return tuple(Chunk(id=f"c{n}", text=t, rank=n) for n, t in enumerate(items, start=1))


register(MlflowImporter())
