"""RAGAS results: `result.to_pandas()` saved as CSV (any delimiter), JSON records or JSONL.

Column sets: v0.2+ `user_input, retrieved_contexts, response, reference`; v0.1 `question,
contexts, answer, ground_truth`. Every other numeric column is a metric, whatever its name
(`factual_correctness(mode=f1)` included), except those read as the generic importer reads
them: an explicit id column (`case_id`, `id`, ...) gives the case ids, `latency_ms` the latency,
and a column named as describing the case (`prompt_tokens`, `cost_usd`) is case metadata, with
a notice. A column of labels (PASS/FAIL, YES/PARTIAL/NO) is a metric as the generic importer
reads it; one with other words among its labels is metadata, with a notice. A NaN or empty
metric cell is a failed metric, an error, not a score. A traces JSON
(`result.traces`) turns faithfulness verdicts into claims.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import io
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, Claim, RunFile, Score, StatedFigure, stable_case_id
from ragtui.importers import _traces
from ragtui.importers._chunks import chunk_items, has_chunk_objects, read_chunks
from ragtui.importers._columns import (
    ID_NAMES,
    LATENCY_NAMES,
    comma_numbers_notice,
    decimal_comma_error,
    describes_case,
    find_column,
    is_decimal_comma,
    is_percent,
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
    file_stem,
    is_missing,
    read_bytes,
    sha256_bytes,
    unique_case_ids,
    unrecorded_config,
)
from ragtui.importers._tabular import (
    Table,
    head_table,
    header_columns,
    is_index_column,
    json_keys,
    looks_like_json,
    parse_list,
    read_table,
)
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import (
    UNIT,
    MetricScale,
    Scale,
    conflict_notice,
    keep_raw,
    resolve,
    scale_notices,
)

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
NO_TEXT = {"question": "", "answer": "", "contexts": "", "reference": ""}  # scores only
_INDEX = {"", "unnamed: 0", "index", "level_0"}
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
# RAGAS scores every metric in [0, 1] except its rubric metrics, which score 1-5
RUBRIC_METRICS = frozenset(
    {
        "domain_specific_rubrics",
        "instance_rubrics",
        "labelled_rubrics_score",
        "reference_free_rubrics_score",
        "rubrics_score_with_reference",
        "rubrics_score_without_reference",
    }
)
RUBRIC_SCALE = (1.0, 5.0)
# metric names RAGAS itself writes: a table of only these columns is a RAGAS table of scores
KNOWN_METRICS = RUBRIC_METRICS | {
    "faithfulness",
    "faithfulness_with_hhem",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "context_entity_recall",
    "context_utilization",
    "context_relevance",
    "answer_correctness",
    "answer_similarity",
    "semantic_similarity",
    "factual_correctness",
    "noise_sensitivity",
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "llm_context_precision_with_reference",
    "llm_context_precision_without_reference",
    "non_llm_context_precision_with_reference",
    "llm_context_recall",
    "non_llm_context_recall",
    "response_groundedness",
    "answer_accuracy",
    "summary_score",
    "harmfulness",
    "maliciousness",
    "coherence",
    "correctness",
    "conciseness",
    "bleu_score",
    "rouge_score",
    "exact_match",
    "string_present",
}
_AGGREGATE_HEADERS = {
    ("metric", "score"),
    ("metric", "value"),
    ("metric", "mean"),
    ("metric", "average"),
    ("metrics", "score"),
    ("name", "score"),
}
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


_OBJECTS = (
    "contexts given as chunk objects (id, text, source, score): RAGAS writes texts only; "
    "a generic table"
)


def _chunk_objects(rows: list[dict[str, Any]]) -> bool:
    return any(
        has_chunk_objects(row.get(column))
        for row in rows
        for column in ("contexts", "retrieved_contexts")
    )


class RagasImporter:
    name = "ragas"
    description = "RAGAS evaluate() results (to_pandas() as CSV, JSON or JSONL), v0.1 and v0.2+"
    priority = 20

    def __init__(self) -> None:
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        # without its BOM, as load() reads it: a printed result or traces JSON starts with { or [
        text = head.decode("utf-8", errors="ignore").removeprefix("\ufeff")
        if _looks_like_result_repr(text):
            return Sniff(True)
        if _traces.looks_like_traces(text):
            return Sniff(True)
        columns = header_columns(head)
        if columns and _aggregate_header(columns):
            return Sniff(True)
        keys = set(columns) if columns else json_keys(head)
        metric_names = {k for k in keys if not is_index_column(k)}
        if metric_names and all(_base(k) in KNOWN_METRICS for k in metric_names):
            return Sniff(True)  # a table of RAGAS scores alone
        rows = head_table(head, path.suffix.lower() == ".jsonl")[1]
        if _chunk_objects(rows):  # a harness's own records: the generic importer reads them
            return Sniff(False, _OBJECTS)
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
        notices: list[str] = []
        self.last_notices = notices
        sha = sha256_bytes(data)
        if not looks_like_json(text) and _aggregate_header(header_columns(data[:65536]) or []):
            return [_summary_run(path, sha, text, options, notices)]
        table = read_table(path, data)
        if not table.rows:
            raise fail(path, "the table has a header but no rows (no cases)")
        cols = (
            V02 if "user_input" in table.columns else V01 if "question" in table.columns else None
        )
        if cols is None and not all(_base(c) in KNOWN_METRICS for c in table.columns):
            raise fail(
                path,
                "expected RAGAS columns user_input, response (v0.2+) or question, answer (v0.1); "
                f"found {', '.join(table.columns[:12])}",
            )
        if cols is None:
            cols = NO_TEXT
            notices.append(
                f"{path}: only metric columns, no question: cases are numbered by row "
                "(row-1, row-2, ...), so they pair only with files in the same row order"
            )
        # an explicit id and a latency column, read as the generic importer reads them, so the
        # cases pair with the same cases of a file without contexts (which generic imports)
        id_col = find_column(table.columns, ID_NAMES) if cols is not NO_TEXT else None
        latency_col = find_column(table.columns, LATENCY_NAMES)
        own = {c for c in (id_col, latency_col) if c}
        metrics = _metric_columns(path, table, options.scales, notices, own)
        cases = [
            self._case(path, table, i, cols, metrics, id_col=id_col, latency_col=latency_col)
            for i in range(len(table.rows))
        ]
        refused = {m: sum("scale unknown" in c.errors.get(m, "") for c in cases) for m in metrics}
        notices += scale_notices(path, metrics.values(), refused)
        if id_col:  # a repeated id of the file is said row by row; repeated questions at once
            rows = [table.where(i) for i in range(len(table.rows))]
            cases = unique_case_ids(cases, notices, path=path, where=rows)
        else:
            cases = unique_case_ids(cases, notices, path=path, repeated="question")
        claims = self._claims(path, options, cases) if cols is not NO_TEXT else {}
        if claims:
            cases = [_with_claims(c, claims[i]) if i in claims else c for i, c in enumerate(cases)]
        version = "0.2+" if cols is V02 else "0.1" if cols is V01 else "scores only"
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
        metrics: dict[str, MetricScale],
        *,
        id_col: str | None = None,
        latency_col: str | None = None,
    ) -> Case:
        row = table.rows[i]
        where = table.where(i)
        question = row.get(cols["question"]) if cols is not NO_TEXT else f"row {i + 1}"
        if not isinstance(question, str) or not question.strip():
            raise fail(
                path,
                f"{where}, column {cols['question']!r}: expected the question text, "
                f"found {str(question)[:40]!r}",
            )
        answer = row.get(cols["answer"])
        if is_missing(answer):
            answer = ""
        if not isinstance(answer, str):
            raise fail(
                path,
                f"{where}, column {cols['answer']!r}: expected text, found {str(answer)[:40]!r}",
            )
        contexts = _contexts(path, where, cols["contexts"], row.get(cols["contexts"]))
        reference = _reference(row, cols["reference"])
        scores: dict[str, Score] = {}
        errors: dict[str, str] = {}
        refused: dict[str, Any] = {}
        for metric, ms in metrics.items():
            cell = row.get(metric)
            if is_missing(cell):
                errors[metric] = "RAGAS produced no score (NaN): the metric failed for this case"
                continue
            label = read_label(cell)
            if label is not None:  # a label column (_metric_columns checked every cell)
                scores[metric] = Score(value=label[0], raw=cell, label=label[1], scale=UNIT)
                continue
            raw = as_number(cell)
            assert raw is not None  # _metric_columns checked every cell
            graded = ms.score(raw, raw)
            if isinstance(graded, Score):
                scores[metric] = graded
            else:
                errors[metric] = graded
                refused[metric] = cell
        metadata: dict[str, Any] = {
            k: v
            for k, v in row.items()
            if k not in metrics
            and k not in cols.values()
            and k not in (id_col, latency_col)
            and not is_missing(v)
        }
        metadata = {
            k: v if isinstance(v, str | int | float | bool) else json.dumps(v, default=str)
            for k, v in metadata.items()
        }
        for metric, cell in refused.items():
            metadata = keep_raw(metadata, metric, cell)
        explicit = row.get(id_col) if id_col else None
        if not is_missing(explicit):
            case_id = str(explicit)
        else:
            case_id = stable_case_id(question) if cols is not NO_TEXT else f"row-{i + 1}"
        return Case(
            case_id=case_id,
            question=question,
            answer=answer,
            reference=reference,
            contexts=contexts,
            scores=scores,
            errors=errors,
            latency_ms=as_number(row.get(latency_col)) if latency_col else None,
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


def _metric_columns(
    path: Path,
    table: Table,
    declared: Mapping[str, Scale],
    notices: list[str],
    own: set[str] | frozenset[str] = frozenset(),
) -> dict[str, MetricScale]:
    """Metric columns, each with its scale: RAGAS's own (rubrics 1-5, else [0, 1]) or declared.
    Not the columns in `own` (the case id, latency), nor, unless declared, a column no RAGAS
    metric is named after whose name says it describes the case (tokens, cost): those are case
    metadata, with a notice when they hold numbers."""
    metrics: dict[str, MetricScale] = {}
    for column in table.columns:
        if column in NON_METRIC or column in own:
            continue
        if _describes_case(column, declared):
            if _all_numbers(table, column):
                notices.append(kept_as_metadata_notice(path, column))
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
        written = _scores_as_text(table, column, declared) if not values else None
        if written == "list" and bad is not None:  # "3,4" under a name naming no grade: pages
            notices.append(comma_numbers_notice(path, column, bad[1]))
        if not values and _all_labels(table, column):  # PASS/FAIL, YES/PARTIAL/NO: a grade
            metrics[column] = MetricScale(column, UNIT, "default")
            continue
        if not values and written != "scores":
            note = labels_beside_text(path, column, [r.get(column) for r in table.rows])
            if note:  # a grade with other words in it: kept as text, and said
                notices.append(note)
            continue  # a text column (metadata), or a metric that failed everywhere
        if bad is not None:  # numbers beside text, or scores all written as "85%" or "0,9"
            i, cell = bad
            raise fail(path, _not_a_score(table.where(i), column, cell))
        metrics[column] = _scale_of(path, column, values, declared, notices)
    all_nan = [
        c
        for c in table.columns
        if c not in NON_METRIC
        and c not in own
        and not _describes_case(c, declared)
        and c not in metrics
        and all(is_missing(r.get(c)) for r in table.rows)
        and re.fullmatch(r"[a-z_]+(\(.*\))?", c)
    ]
    for column in all_nan:
        # every case failed this metric: all errors, still a metric
        metrics[column] = _scale_of(path, column, [], declared, notices)
    return metrics


def _scores_as_text(table: Table, column: str, declared: Mapping[str, Scale]) -> str | None:
    """A column of text that reads as numbers: "scores" (percentages, or decimal commas under
    a name that names a grade or is declared), "list" ("3,4" elsewhere: page numbers, ids),
    else None."""
    cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
    if not cells or not all(is_percent(c) or is_decimal_comma(c) for c in cells):
        return None
    if all(is_percent(c) for c in cells) or column in declared:
        return "scores"
    named = names_a_grade(column) or _base(column) in KNOWN_METRICS
    return "scores" if named else "list"


def _not_a_score(where: str, column: str, cell: Any) -> str:
    if is_decimal_comma(cell):
        return decimal_comma_error(where, column, cell)
    hint = ""
    if is_percent(cell):  # the generic importer reads them; RAGAS never writes them
        hint = (
            "; RAGAS writes scores as fractions in [0, 1]: save them as numbers, or import "
            "the file with --format generic, which reads percentages"
        )
    return (
        f"{where}, column {column!r}: expected a score (a number, or empty for a failed "
        f"metric), found {str(cell)[:60]!r}{hint}"
    )


def _describes_case(column: str, declared: Mapping[str, Scale]) -> bool:
    return column not in declared and _base(column) not in KNOWN_METRICS and describes_case(column)


def _all_labels(table: Table, column: str) -> bool:
    cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
    return bool(cells) and all(read_label(c) is not None for c in cells)


def _all_numbers(table: Table, column: str) -> bool:
    cells = [r.get(column) for r in table.rows if not is_missing(r.get(column))]
    return bool(cells) and all(
        as_number(c) is not None and not isinstance(c, bool | dict | list) for c in cells
    )


def _scale_of(
    path: Path, metric: str, values: list[float], declared: Mapping[str, Scale], notices: list[str]
) -> MetricScale:
    known = RUBRIC_SCALE if _base(metric) in RUBRIC_METRICS else None
    if known is not None:
        note = conflict_notice(path, metric, "RAGAS", known, declared)
        if note:
            notices.append(note)
    return resolve(metric, values, declared, known)


def _base(column: str) -> str:
    """`factual_correctness(mode=f1)` -> `factual_correctness`."""
    return column.split("(", 1)[0].strip().lower()


def _aggregate_header(columns: list[str]) -> bool:
    names = [c.strip().lower() for c in columns]
    if names and names[0] in _INDEX and len(names) == 3:
        names = names[1:]
    return tuple(names) in _AGGREGATE_HEADERS


def _summary_run(
    path: Path, sha: str, text: str, options: ImportOptions, notices: list[str]
) -> RunFile:
    """`metric,score` rows (RAGAS means saved as a table): a run of stated figures, no cases."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    header = [h.strip().lower() for h in next(reader)]
    skip = 1 if header[0] in _INDEX and len(header) == 3 else 0
    stated: list[StatedFigure] = []
    seen: set[str] = set()
    for number, cells in enumerate(reader, start=2):
        cells = cells[skip:]
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != 2:
            raise fail(path, f"row {number}: expected 2 cells (metric, score), found {len(cells)}")
        metric, cell = cells[0].strip(), cells[1]
        if not metric or metric in seen:
            raise fail(path, f"row {number}: expected a metric name used once, found {metric!r}")
        seen.add(metric)
        if is_missing(cell):
            stated.append(StatedFigure(metric=metric, value=None, raw=None, statistic="mean"))
            continue
        number_value = as_number(cell)
        if number_value is None:
            raise fail(
                path, f"row {number}, metric {metric!r}: expected a number, found {cell[:40]!r}"
            )
        ms = _scale_of(path, metric, [number_value], options.scales, notices)
        graded = ms.score(number_value, number_value)
        if isinstance(graded, Score):
            stated.append(
                StatedFigure(
                    metric=metric,
                    value=graded.value,
                    raw=number_value,
                    statistic="mean",
                    scale=graded.scale,
                )
            )
        else:
            notices.append(f"{path}: {graded}")
            stated.append(
                StatedFigure(metric=metric, value=None, raw=number_value, statistic="mean")
            )
    if not stated:
        raise fail(path, "a metric,score table with no rows")
    notices.append(
        f"{path}: only the mean of each metric (no per-case rows): a summary-only run, "
        "listed with its stated means; compare needs per-case results"
    )
    run = build_run(
        path,
        sha,
        "ragas",
        options,
        config=unrecorded_config(path, options, ragas_columns="means only"),
    )
    return RunFile(run=dataclasses.replace(run, stated=tuple(stated)), cases=())


def _contexts(path: Path, where: str, column: str, cell: Any) -> tuple[Chunk, ...]:
    if is_missing(cell):
        return ()
    if chunk_items(cell) is None and not isinstance(cell, str):
        raise fail(path, f"{where}, column {column!r}: expected a list of chunks, found {cell!r}")
    return read_chunks(path, where, column, cell)  # objects (given --format ragas) kept whole


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
