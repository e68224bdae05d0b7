"""TruLens results: its SQLite database (`default.sqlite`), one run per app version.

TruLens records each app call as a record (input, output, the instrumented calls: retrieved
contexts among them) and grades it with feedback functions (the RAG triad: groundedness,
answer relevance, context relevance), each a result in [0, 1] with reasons in its calls. A
feedback that failed, or never finished, is an error for that metric, never a zero. The
groundedness reasons per statement become claims. Read-only: the database is opened with
`mode=ro` and nothing is written to it.

TruLens >= 2 records OpenTelemetry events by default (`trulens_events`); a database that holds
only those is refused with the way to record the tables this importer reads.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, Claim, JudgeInfo, RunFile, Score, stable_case_id
from ragtui.importers._common import (
    MAX_FILE_BYTES,
    build_run,
    fail,
    file_sha256,
    iso_from_any,
    load_json,
    unique_case_ids,
)
from ragtui.importers.base import ImportFormatError, ImportOptions, Sniff, register
from ragtui.importers.scales import MetricScale, keep_raw, resolve, scale_notices

SQLITE_MAGIC = b"SQLite format 3\x00"
_ERROR_LINE = re.compile(r"^[A-Za-z_.]*(Error|Exception):.*$", re.MULTILINE)


class TruLensImporter:
    name = "trulens"
    description = "TruLens SQLite database (default.sqlite: apps, records, feedback results)"
    priority = 10

    def __init__(self) -> None:
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        if not head.startswith(SQLITE_MAGIC):
            return Sniff(False, "not an SQLite database")
        try:
            with sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True) as con:
                tables = _tables(con)
        except (sqlite3.Error, ValueError, UnicodeError, OSError):
            return Sniff(False, "an SQLite database that cannot be read")
        if {"apps", "records"} <= tables.keys() or "events" in tables:
            return Sniff(True)
        return Sniff(False, "an SQLite database without TruLens tables")

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        notices: list[str] = []
        self.last_notices = notices
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise fail(path, f"cannot be read ({exc.strerror})") from None
        if size > MAX_FILE_BYTES:
            raise fail(path, f"larger than {MAX_FILE_BYTES >> 20} MiB (RAGTUI_MAX_FILE_MB)")
        sha = file_sha256(path)
        try:
            uri = path.resolve().as_uri() + "?mode=ro"
            with sqlite3.connect(uri, uri=True) as con:
                return _runs(path, sha, con, options, notices)
        except (sqlite3.Error, ValueError, UnicodeError, OverflowError) as exc:
            raise fail(path, f"not a readable TruLens database ({exc})") from None


def _tables(con: sqlite3.Connection) -> dict[str, str]:
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    out = {}
    for table in ("apps", "records", "feedbacks", "events"):
        for candidate in (f"trulens_{table}", table):  # trulens_eval < 1 had no prefix
            if candidate in names:
                out[table] = candidate
                break
    return out


def _runs(
    path: Path, sha: str, con: sqlite3.Connection, options: ImportOptions, notices: list[str]
) -> list[RunFile]:
    tables = _tables(con)
    if not {"apps", "records", "feedbacks"} <= tables.keys():
        raise fail(path, "an SQLite database without TruLens' apps, records and feedbacks tables")
    n_records = con.execute(f"SELECT count(*) FROM {tables['records']}").fetchone()[0]
    if n_records == 0:
        events = (
            con.execute(f"SELECT count(*) FROM {tables['events']}").fetchone()[0]
            if "events" in tables
            else 0
        )
        if events:
            raise fail(
                path,
                f"TruLens recorded {events} OpenTelemetry events and no records: ragtui reads "
                "the records and feedback tables, which TruLens writes with "
                "TRULENS_OTEL_TRACING=0",
            )
        raise fail(path, "a TruLens database with no records")
    apps = con.execute(
        f"SELECT app_id, app_name, app_version FROM {tables['apps']} ORDER BY app_name, app_version"
    ).fetchall()
    feedback_rows = list(_feedbacks(path, con, tables["feedbacks"]))
    values: dict[str, list[float]] = {}
    for _, metric, status, result, _, _ in feedback_rows:
        if status == "done" and isinstance(result, int | float):
            values.setdefault(metric, []).append(float(result))
    scales = {m: resolve(m, v, options.scales) for m, v in values.items()}
    by_record: dict[str, list[tuple[str, str, Any, str | None, Any]]] = {}
    for record_id, metric, status, result, error, calls in feedback_rows:
        by_record.setdefault(record_id, []).append((metric, status, result, error, calls))
    runs = []
    for app_id, app_name, app_version in apps:
        records = con.execute(
            f"SELECT record_id, input, output, record_json, ts FROM {tables['records']} "
            "WHERE app_id = ? ORDER BY ts",
            (app_id,),
        ).fetchall()
        if not records:
            continue
        metrics: list[str] = []
        for record in records:
            for metric, *_ in by_record.get(record[0], []):
                if metric not in metrics:
                    metrics.append(metric)
        cases = [
            _case(path, record, by_record.get(record[0], []), metrics, scales) for record in records
        ]
        version = str(app_version) if app_version not in (None, "") else str(app_id)
        run = build_run(
            path,
            sha,
            "trulens",
            options,
            default_name=str(app_name or "trulens app"),
            config={"app_name": app_name, "app_version": app_version},
            judge=JudgeInfo(),
            created_at=iso_from_any(records[0][4]),
            part=version if len(apps) > 1 else None,
        )
        cases = unique_case_ids(cases, notices, path=path, repeated="question")
        runs.append(RunFile(run=run, cases=tuple(cases)))
    refused = {
        m: sum("scale unknown" in c.errors.get(m, "") for r in runs for c in r.cases)
        for m in scales
    }
    notices += scale_notices(path, scales.values(), refused)
    if not runs:
        raise fail(path, "no app of the database has records")
    return runs


def metric_key(name: str) -> str:
    """TruLens' display names as metric keys: "Answer Relevance" -> "answer_relevance"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "feedback"


def _feedbacks(
    path: Path, con: sqlite3.Connection, table: str
) -> Iterator[tuple[str, str, str, Any, str | None, Any]]:
    rows = con.execute(
        f"SELECT record_id, name, status, result, error, calls_json FROM {table} ORDER BY last_ts"
    )
    for record_id, name, status, result, error, calls_json in rows:
        calls = load_json(path, calls_json, f"feedback {name!r}") if calls_json else {}
        status = str(status or "").lower().rsplit(".", 1)[-1]
        yield str(record_id), metric_key(str(name)), status, result, error, calls


def _text(path: Path, raw: Any, where: str) -> str:
    """TruLens stores inputs and outputs JSON-encoded (`"Who approves ..."`)."""
    if raw is None:
        return ""
    try:
        value = load_json(path, raw, where) if isinstance(raw, str | bytes) else raw
    except ImportFormatError:  # plain text, not JSON-encoded
        value = raw
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _case(
    path: Path,
    record: tuple[Any, ...],
    results: list[tuple[str, str, Any, str | None, Any]],
    metrics: list[str],
    scales: dict[str, MetricScale],
) -> Case:
    record_id, raw_input, raw_output, record_json, _ = record
    question = _text(path, raw_input, f"record {record_id}: input")
    answer = _text(path, raw_output, f"record {record_id}: output")
    detail = load_json(path, record_json, f"record {record_id}") if record_json else {}
    contexts = _contexts(detail)
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    claims: list[Claim] = []
    metadata: dict[str, Any] = {"trulens_record_id": str(record_id)}
    named: dict[str, list[str]] = {}
    for metric, status, result, _, _ in results:
        named.setdefault(metric, []).append(repr(result) if status == "done" else str(status))
    for metric, status, result, error, calls in results:
        if len(named[metric]) > 1:  # two feedback definitions of one name: which one is it?
            scores.pop(metric, None)
            errors[metric] = (
                f"{len(named[metric])} feedback results named {metric!r} for this record "
                f"({', '.join(named[metric][:4])}): two feedback definitions share the name, "
                "so which one is the grade is unknown; give them distinct names"
            )
            continue
        if status == "done" and isinstance(result, int | float) and not isinstance(result, bool):
            graded = scales[metric].score(float(result), result, reason=_reason(calls))
            if isinstance(graded, Score):
                scores[metric] = graded
                claims += _claims(metric, calls)
            else:
                errors[metric] = graded
                metadata = keep_raw(metadata, metric, result)
        elif status == "failed":
            errors[metric] = "TruLens feedback failed" + _error_line(error)
        else:
            errors[metric] = f"TruLens feedback did not finish (status {status or 'unknown'})"
        if not contexts and metric.startswith("context_relevance"):
            contexts = _contexts_from_calls(calls)
    for metric in metrics:
        if metric not in scores and metric not in errors:
            errors[metric] = "no feedback result recorded for this record"
    return Case(
        case_id=stable_case_id(question) if question else str(record_id),
        question=question,
        answer=answer,
        contexts=contexts,
        scores=scores,
        claims=tuple(claims),
        errors=errors,
        metadata=metadata,
    )


def _error_line(error: Any) -> str:
    if not isinstance(error, str) or not error.strip() or error == "None":
        return ""
    lines = _ERROR_LINE.findall(error)
    found = _ERROR_LINE.search(error)
    line = found.group(0) if found and lines else error.strip().splitlines()[-1]
    return f": {line.strip()[:300]}"


def _calls(calls: Any) -> list[dict[str, Any]]:
    items = calls.get("calls") if isinstance(calls, dict) else None
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def _reason(calls: Any) -> str | None:
    parts = []
    for call in _calls(calls):
        meta = call.get("meta") if isinstance(call.get("meta"), dict) else {}
        if isinstance(meta.get("reason"), str):
            parts.append(meta["reason"])
        for item in meta.get("reasons") or [] if isinstance(meta.get("reasons"), list) else []:
            if isinstance(item, dict) and isinstance(item.get("supporting_evidence"), str):
                parts.append(f"{item.get('criteria', '')}: {item['supporting_evidence']}")
    return "\n".join(parts) or None


def _claims(metric: str, calls: Any) -> list[Claim]:
    """Groundedness reasons per statement: the statement, its 0-1 score, the evidence."""
    out = []
    for call in _calls(calls):
        meta = call.get("meta") if isinstance(call.get("meta"), dict) else {}
        reasons = meta.get("reasons")
        for item in reasons if isinstance(reasons, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("criteria"), str):
                continue
            score = item.get("score")
            if isinstance(score, bool) or not isinstance(score, int | float):
                continue
            verdict = (
                "SUPPORTED" if score >= 0.999 else "UNSUPPORTED" if score <= 0.001 else "PARTIAL"
            )
            evidence = item.get("supporting_evidence")
            out.append(
                Claim(
                    metric=metric,
                    text=item["criteria"],
                    verdict=verdict,
                    reason=evidence if isinstance(evidence, str) else None,
                )
            )
    return out


def _contexts(detail: Any) -> tuple[Chunk, ...]:
    """The retrieved chunks: what an instrumented retrieve/search method returned."""
    calls = detail.get("calls") if isinstance(detail, dict) else None
    for call in calls if isinstance(calls, list) else []:
        stack = call.get("stack") if isinstance(call, dict) else None
        method = (
            stack[-1].get("method")
            if isinstance(stack, list) and stack and isinstance(stack[-1], dict)
            else None
        )
        name = method.get("name") if isinstance(method, dict) else None
        rets = call.get("rets")
        if (
            isinstance(name, str)
            and re.search(r"retriev|search|context", name, re.IGNORECASE)
            and isinstance(rets, list)
            and rets
            and all(isinstance(r, str) for r in rets)
        ):
            return tuple(Chunk(id=f"c{n}", text=t, rank=n) for n, t in enumerate(rets, start=1))
    return ()


def _contexts_from_calls(calls: Any) -> tuple[Chunk, ...]:
    chunks = []
    for call in _calls(calls):
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        text = args.get("context")
        ret = call.get("ret")
        if isinstance(text, str):
            score = (
                float(ret) if isinstance(ret, int | float) and not isinstance(ret, bool) else None
            )
            chunks.append(
                Chunk(id=f"c{len(chunks) + 1}", text=text, rank=len(chunks) + 1, score=score)
            )
    return tuple(chunks)


register(TruLensImporter())
