"""Native run files (`*.ragtui.jsonl`): line 1 is the run header, every further line one case.

The reader validates every line and names file, line, field, expectation and finding on the
first problem. The writer is canonical: reading a written file gives back equal objects, and
writing them again gives the same bytes.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from ragtui.core.errors import RunFileError
from ragtui.core.model import (
    RUN_KINDS,
    VERDICTS,
    Case,
    Chunk,
    Claim,
    DatasetInfo,
    JudgeInfo,
    Run,
    RunFile,
    Score,
    SourceInfo,
    StatedFigure,
    derive_config_key,
    is_faithfulness,
)

SUFFIX = ".ragtui.jsonl"
FORMAT_VERSION = 1
_MAX_EXACT_INT = 2**53  # larger integers do not survive a float64 column


def is_run_file(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


# ---------------------------------------------------------------- reading


class _Line:
    """Validation context for one line: raises RunFileError with file, line and field."""

    def __init__(self, path: str, number: int) -> None:
        self.path = path
        self.lineno = number

    def fail(self, field: str | None, expected: str, found: Any = ...) -> RunFileError:
        message = (
            f"expected {expected}" if found is ... else f"expected {expected}, found {_show(found)}"
        )
        return RunFileError(self.path, message, line=self.lineno, field=field)

    def obj(self, value: Any, field: str | None) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, "a JSON object", value)
        return value

    def text(
        self, obj: Mapping[str, Any], key: str, prefix: str = "", *, required: bool = True
    ) -> str | None:
        field = prefix + key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(field, "a string", None if key in obj else ...)
            return None
        value = obj[key]
        if not isinstance(value, str):
            raise self.fail(field, "a string", value)
        return value

    def number(
        self, obj: Mapping[str, Any], key: str, prefix: str = "", *, required: bool = False
    ) -> float | None:
        field = prefix + key
        value = obj.get(key)
        if value is None:
            if required:
                raise self.fail(field, "a number", None if key in obj else ...)
            return None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_EXACT_INT:
            raise self.fail(field, "a number of magnitude at most 2^53", value)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.fail(field, "a finite number", value)
        return value

    def mapping(self, obj: Mapping[str, Any], key: str, prefix: str = "") -> Mapping[str, Any]:
        value = obj.get(key)
        if value is None:
            return {}
        return self.obj(value, prefix + key)

    def listing(self, obj: Mapping[str, Any], key: str, prefix: str = "") -> list[Any]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(prefix + key, "a JSON array", value)
        return value


def _show(value: Any) -> str:
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__ if not isinstance(value, dict | list) else ('object' if isinstance(value, dict) else 'array')} {text}"


def _loads(raw: bytes | str, ctx: _Line) -> Any:
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise RunFileError(
            ctx.path, f"expected UTF-8 text ({exc.reason})", line=ctx.lineno
        ) from None
    except json.JSONDecodeError as exc:
        raise RunFileError(
            ctx.path,
            f"expected one JSON object per line ({exc.msg} at column {exc.colno})",
            line=ctx.lineno,
        ) from None
    except RecursionError:
        raise RunFileError(ctx.path, "expected JSON nested less deeply", line=ctx.lineno) from None


def _scale(value: Any, ctx: _Line, field: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(
            isinstance(s, int | float) and not isinstance(s, bool) and math.isfinite(s)
            for s in value
        )
        or not value[0] < value[1]
    ):
        raise ctx.fail(field, "[low, high] with low < high", value)
    return (value[0], value[1])


def parse_header(obj: Any, ctx: _Line) -> Run:
    obj = ctx.obj(obj, None)
    if "ragtui_run" not in obj:
        raise ctx.fail(
            "ragtui_run",
            f'the run header (an object with "ragtui_run": {FORMAT_VERSION}) on line 1',
        )
    if obj["ragtui_run"] != FORMAT_VERSION or isinstance(obj["ragtui_run"], bool):
        raise ctx.fail("ragtui_run", f"format version {FORMAT_VERSION}", obj["ragtui_run"])
    run_id = ctx.text(obj, "id")
    assert run_id is not None
    if not run_id.strip():
        raise ctx.fail("id", "a non-empty run id", run_id)
    created_at = ctx.text(obj, "created_at")
    assert created_at is not None
    try:
        datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        raise ctx.fail(
            "created_at", "an ISO 8601 date-time such as 2026-11-20T10:00:00Z", created_at
        ) from None
    config = dict(ctx.mapping(obj, "config"))
    judge_obj = ctx.mapping(obj, "judge")
    judge = JudgeInfo(
        model=ctx.text(judge_obj, "model", "judge.", required=False),
        provider=ctx.text(judge_obj, "provider", "judge.", required=False),
        prompt_hash=ctx.text(judge_obj, "prompt_hash", "judge.", required=False),
    )
    dataset_obj = ctx.mapping(obj, "dataset")
    dataset = DatasetInfo(
        name=ctx.text(dataset_obj, "name", "dataset.", required=False),
        version=ctx.text(dataset_obj, "version", "dataset.", required=False),
    )
    kind = ctx.text(obj, "kind", required=False) or "eval"
    if kind not in RUN_KINDS:
        raise ctx.fail("kind", "one of " + ", ".join(RUN_KINDS), kind)
    source = None
    if obj.get("source") is not None:
        source_obj = ctx.mapping(obj, "source")
        source_format = ctx.text(source_obj, "format", "source.")
        assert source_format is not None
        source = SourceInfo(
            format=source_format,
            path=ctx.text(source_obj, "path", "source.", required=False),
            sha256=ctx.text(source_obj, "sha256", "source.", required=False),
        )
    config_key = ctx.text(obj, "config_key", required=False) or derive_config_key(config, judge)
    stated = []
    for i, item in enumerate(ctx.listing(obj, "stated")):
        prefix = f"stated[{i}]."
        item = ctx.obj(item, f"stated[{i}]")
        value = ctx.number(item, "value", prefix)
        if value is not None and not 0.0 <= value <= 1.0:
            raise ctx.fail(prefix + "value", "a number in [0, 1] (normalised) or null", value)
        n = item.get("n")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 2**53):
            raise ctx.fail(prefix + "n", "a count of cases (integer >= 0)", n)
        stated.append(
            StatedFigure(
                metric=ctx.text(item, "metric", prefix) or "",
                value=value,
                raw=item.get("raw"),
                statistic=ctx.text(item, "statistic", prefix, required=False),
                scale=_scale(item.get("scale"), ctx, prefix + "scale"),
                n=n,
            )
        )
    return Run(
        id=run_id,
        name=ctx.text(obj, "name", required=False) or run_id,
        created_at=created_at,
        config=config,
        config_key=config_key,
        judge=judge,
        dataset=dataset,
        parent=ctx.text(obj, "parent", required=False),
        kind=kind,
        source=source,
        stated=tuple(stated),
    )


def parse_case(obj: Any, ctx: _Line) -> Case:
    obj = ctx.obj(obj, None)
    if "ragtui_run" in obj:
        raise ctx.fail(None, "a case (the run header belongs on line 1 only)")
    case_id = ctx.text(obj, "case_id")
    assert case_id is not None
    if not case_id.strip():
        raise ctx.fail("case_id", "a non-empty case id", case_id)
    contexts = []
    for i, item in enumerate(ctx.listing(obj, "contexts")):
        prefix = f"contexts[{i}]."
        item = ctx.obj(item, f"contexts[{i}]")
        rank = item.get("rank")
        if rank is not None and (
            isinstance(rank, bool) or not isinstance(rank, int) or not -(2**31) <= rank < 2**31
        ):
            raise ctx.fail(prefix + "rank", "a 32-bit integer", rank)
        contexts.append(
            Chunk(
                id=ctx.text(item, "id", prefix) or "",
                text=ctx.text(item, "text", prefix) or "",
                source=ctx.text(item, "source", prefix, required=False),
                rank=rank,
                score=ctx.number(item, "score", prefix),
            )
        )
    scores = {}
    for metric, item in ctx.mapping(obj, "scores").items():
        prefix = f"scores.{metric}."
        item = ctx.obj(item, f"scores.{metric}")
        value = ctx.number(item, "value", prefix, required=True)
        assert value is not None
        if not 0.0 <= value <= 1.0:
            raise ctx.fail(prefix + "value", "a number in [0, 1] (normalised)", value)
        scale = _scale(item.get("scale"), ctx, prefix + "scale")
        scores[metric] = Score(
            value=value,
            raw=item.get("raw"),
            label=ctx.text(item, "label", prefix, required=False),
            scale=scale,
            reason=ctx.text(item, "reason", prefix, required=False),
            reply=ctx.text(item, "reply", prefix, required=False),
            prompt_hash=ctx.text(item, "prompt_hash", prefix, required=False),
            threshold=ctx.number(item, "threshold", prefix),
        )
    claims = []
    for i, item in enumerate(ctx.listing(obj, "claims")):
        prefix = f"claims[{i}]."
        item = ctx.obj(item, f"claims[{i}]")
        verdict = ctx.text(item, "verdict", prefix)
        claim_metric = ctx.text(item, "metric", prefix) or ""
        if is_faithfulness(claim_metric) and verdict not in VERDICTS:
            raise ctx.fail(prefix + "verdict", "one of " + ", ".join(VERDICTS), verdict)
        if not verdict or not verdict.strip():
            raise ctx.fail(prefix + "verdict", "a verdict word", verdict)
        chunk_ids = ctx.listing(item, "chunks", prefix)
        if not all(isinstance(c, str) for c in chunk_ids):
            raise ctx.fail(prefix + "chunks", "an array of chunk ids (strings)", chunk_ids)
        claims.append(
            Claim(
                metric=claim_metric,
                text=ctx.text(item, "text", prefix) or "",
                verdict=verdict,
                chunks=tuple(chunk_ids),
                reason=ctx.text(item, "reason", prefix, required=False),
            )
        )
    errors = ctx.mapping(obj, "errors")
    for metric, message in errors.items():
        if not isinstance(message, str):
            raise ctx.fail(f"errors.{metric}", "an error message (string)", message)
    human = ctx.mapping(obj, "human")
    for metric in human:
        value = ctx.number(human, metric, "human.", required=True)
        assert value is not None
        if not 0.0 <= value <= 1.0:
            raise ctx.fail(f"human.{metric}", "a number in [0, 1]", value)
    return Case(
        case_id=case_id,
        question=ctx.text(obj, "question") or "",
        answer=ctx.text(obj, "answer") or "",
        reference=ctx.text(obj, "reference", required=False),
        contexts=tuple(contexts),
        scores=scores,
        claims=tuple(claims),
        errors=dict(errors),
        human=dict(human),
        latency_ms=ctx.number(obj, "latency_ms"),
        metadata=dict(ctx.mapping(obj, "metadata")),
        cluster=ctx.text(obj, "cluster", required=False),
    )


def iter_run_file(path: str | Path) -> tuple[Run, Iterator[Case]]:
    """Open a run file: the header now, the cases lazily (bounded memory for big files).

    Raises RunFileError on the header at once and on a bad case line when it is reached.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise RunFileError(path, f"cannot be read ({exc.strerror})") from None
    first = handle.readline()
    if not first.strip():
        handle.close()
        raise RunFileError(path, "expected a run header on line 1, found an empty file", line=1)
    ctx = _Line(str(path), 1)
    try:
        run = parse_header(_loads(first, ctx), ctx)
    except RunFileError:
        handle.close()
        raise
    return run, _iter_cases(handle, str(path), first.endswith(b"\n"))


def _iter_cases(handle: IO[bytes], path: str, header_complete: bool) -> Iterator[Case]:
    seen: set[str] = set()
    with handle:
        if not header_complete:
            return
        for number, raw in enumerate(handle, start=2):
            if not raw.strip():
                continue
            ctx = _Line(path, number)
            case = parse_case(_loads(raw, ctx), ctx)
            if case.case_id in seen:
                raise ctx.fail("case_id", "a case id unique within the run", case.case_id)
            seen.add(case.case_id)
            yield case


def read_run_file(path: str | Path) -> RunFile:
    run, cases = iter_run_file(path)
    return RunFile(run=run, cases=tuple(cases))


# ---------------------------------------------------------------- writing


def header_to_json(run: Run) -> dict[str, Any]:
    return {
        "ragtui_run": FORMAT_VERSION,
        "id": run.id,
        "name": run.name,
        "created_at": run.created_at,
        "config": dict(run.config),
        "config_key": run.config_key or None,
        "judge": {
            "model": run.judge.model,
            "provider": run.judge.provider,
            "prompt_hash": run.judge.prompt_hash,
        },
        "dataset": {"name": run.dataset.name, "version": run.dataset.version},
        "parent": run.parent,
        "kind": run.kind,
        "source": None
        if run.source is None
        else {"format": run.source.format, "path": run.source.path, "sha256": run.source.sha256},
        **(
            {
                "stated": [
                    _drop_none(
                        {
                            "metric": f.metric,
                            "value": f.value,
                            "raw": f.raw,
                            "statistic": f.statistic,
                            "scale": None if f.scale is None else list(f.scale),
                            "n": f.n,
                        }
                    )
                    for f in run.stated
                ]
            }
            if run.stated
            else {}
        ),
    }


def case_to_json(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {
        "case_id": case.case_id,
        "question": case.question,
        "answer": case.answer,
    }
    if case.reference is not None:
        out["reference"] = case.reference
    if case.contexts:
        out["contexts"] = [
            _drop_none(
                {"id": c.id, "text": c.text, "source": c.source, "rank": c.rank, "score": c.score}
            )
            for c in case.contexts
        ]
    if case.scores:
        out["scores"] = {
            metric: _drop_none(
                {
                    "value": s.value,
                    "raw": s.raw,
                    "label": s.label,
                    "scale": None if s.scale is None else list(s.scale),
                    "reason": s.reason,
                    "reply": s.reply,
                    "prompt_hash": s.prompt_hash,
                    "threshold": s.threshold,
                }
            )
            for metric, s in case.scores.items()
        }
    if case.claims:
        out["claims"] = [
            _drop_none(
                {
                    "metric": c.metric,
                    "text": c.text,
                    "verdict": c.verdict,
                    "chunks": list(c.chunks),
                    "reason": c.reason,
                }
            )
            for c in case.claims
        ]
    if case.errors:
        out["errors"] = dict(case.errors)
    if case.human:
        out["human"] = dict(case.human)
    if case.latency_ms is not None:
        out["latency_ms"] = case.latency_ms
    if case.metadata:
        out["metadata"] = dict(case.metadata)
    if case.cluster is not None:
        out["cluster"] = case.cluster
    return out


def _drop_none(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


def dumps_line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def write_run_file(path: str | Path, run: Run, cases: Iterable[Case]) -> Path:
    """Write atomically (temp file + rename), so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX + ".part", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a run file is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(dumps_line(header_to_json(run)))
            for case in cases:
                out.write(dumps_line(case_to_json(case)))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class RunFileAppender:
    """Appends cases one line at a time, flushed and fsynced, for batches that must survive a
    killed process. Reopening an existing file resumes it: `done` lists the cases already there.
    """

    def __init__(self, path: str | Path, run: Run) -> None:
        self.path = Path(path)
        self.done: set[str] = set()
        if self.path.exists():
            self._truncate_partial_tail()
            existing = read_run_file(self.path)
            self.done = {c.case_id for c in existing.cases}
            self._handle = self.path.open("a", encoding="utf-8")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("w", encoding="utf-8")
            self._write(header_to_json(run))

    def _truncate_partial_tail(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(keep)

    def _write(self, obj: Mapping[str, Any]) -> None:
        self._handle.write(dumps_line(obj))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def append(self, case: Case) -> None:
        self._write(case_to_json(case))
        self.done.add(case.case_id)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RunFileAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
