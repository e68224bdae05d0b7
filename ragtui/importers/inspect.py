"""Inspect AI logs as native runs: `.eval` archives (zip) and `.json` logs, one run per epoch.

Epochs are repeats of one config, so each epoch becomes its own run with one shared config key
(kind "eval" for epoch 1, "rerun" for the others): exactly what the noise check needs. Each
scorer is a metric; a dict-valued scorer gives one metric per key its metrics name
(`scorer.key`). Letter grades and booleans are on [0, 1]; numbers on [0, 1] unless the user
declares a scale (`--scale scorer=LOW:HIGH`): never rescaled by one log's own min and max.
The log's run-level figures (`results.scores[].metrics`) become the runs' stated figures; a log
saved without samples is a summary-only run.

Speed matters (logs of 10,000+ samples): see `_inspect_log` for how a log is read without
parsing its transcripts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragtui.core.model import (
    SPREAD_STATISTICS,
    Case,
    Chunk,
    DatasetInfo,
    JudgeInfo,
    RunFile,
    Score,
    StatedFigure,
)
from ragtui.importers._common import (
    build_run,
    fail,
    iso_from_any,
    slug,
)
from ragtui.importers._inspect_log import error_text, kind, read_log, text_of
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import UNIT, MetricScale, keep_raw, resolve, scale_notices

# Inspect's value_to_float: C/P/I/N grades, and yes/no, true/false words
LETTER_GRADES = {
    "C": 1.0,
    "P": 0.5,
    "I": 0.0,
    "N": 0.0,
    "YES": 1.0,
    "NO": 0.0,
    "TRUE": 1.0,
    "FALSE": 0.0,
}
_NUMERIC = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_JSON_HEAD = re.compile(rb'"(version|status|eval)"\s*:')


class InspectImporter:
    name = "inspect"
    description = "Inspect AI logs (.eval archives and .json logs); one run per epoch"
    priority = 10  # a specific format: asked before generic tables

    def __init__(self) -> None:
        # Notices from the last load (cancelled/error logs, rescaled metrics), for the caller
        # to show; load() raises nothing for them because the import itself succeeded.
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        if head.startswith(b"PK\x03\x04"):
            if any(m in head for m in (b"header.json", b"_journal/start.json", b"samples/")):
                return Sniff(True)
            if path.suffix.lower() == ".eval":
                return Sniff(True)
            return Sniff(False, "a zip archive without Inspect's header.json or samples/")
        start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
        if start != b"{":
            return Sniff(False, "neither a .eval archive nor a JSON object")
        keys = {m.group(1).decode() for m in _JSON_HEAD.finditer(head[:4096])}
        if {"version", "status", "eval"} <= keys and b'"task"' in head:
            return Sniff(True)
        return Sniff(False, 'no top-level "version", "status" and "eval" of an Inspect log')

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        header, samples = read_log(path)
        notices: list[str] = []
        runs = _to_runs(path, _file_sha256(path), header, samples, options, notices)
        self.last_notices = notices
        return runs


def _file_sha256(path: Path) -> str:
    """Hashed in chunks: a log can be far larger than what is kept of it."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise fail(path, f"cannot be read ({exc.strerror})") from None
    return digest.hexdigest()


def _to_runs(
    path: Path,
    sha: str,
    header: dict[str, Any],
    samples: list[dict[str, Any]],
    options: ImportOptions,
    notices: list[str],
) -> list[RunFile]:
    header = _clean(header)
    ev = header["eval"]
    status = header["status"]
    _one_result_per_sample(path, samples)
    layout = _layout(header, samples)
    scales = _scales(path, samples, layout, options, notices)
    stated = _stated(header, layout, scales, options)
    config, judge, dataset = _header_info(header)
    epochs = sorted({s["epoch"] for s in samples})
    declared_epochs = ev.get("config", {}).get("epochs")
    several = len(epochs) > 1 or (isinstance(declared_epochs, int) and declared_epochs > 1)
    if not samples:
        if not stated:
            raise fail(path, f"the log (status {status}) holds no samples and states no results")
        notices.append(
            f"{path}: the log holds no samples (saved without them), only its stated results: "
            "a summary-only run; compare needs per-case results"
        )
        epochs = [1]
        several = False
    if status != "success":
        detail = ""
        if isinstance(header.get("error"), dict):
            detail = f" ({error_text(header['error']).splitlines()[0][:200]})"
        expected = ev.get("dataset", {}).get("samples")
        held = f"imported the {len(samples)} samples it holds" if samples else "no samples"
        notices.append(
            f"{path}: Inspect log status is '{status}'{detail}; {held}"
            + (f" (dataset has {expected} per epoch)" if expected else "")
        )
    elif samples and (short := _samples_missing(path, header, samples)):
        notices.append(short)
    if several and stated:
        stated = tuple(
            dataclasses.replace(f, statistic=f"{f.statistic}, over all {len(epochs)} epochs")
            for f in stated
        )
    ids = _items(ev.get("dataset", {}).get("sample_ids"))
    order = {str(sid): i for i, sid in enumerate(ids)}
    runs = []
    for epoch in epochs:
        part = f"epoch {epoch}" if several else None
        run = build_run(
            path,
            sha,
            "inspect",
            options,
            default_name=f"{ev['task']} · {ev.get('model') or 'unknown model'}"
            # a cancelled or failed log says so where the run is listed, not only in its id
            + ("" if status == "success" else f" ({status[:20]})"),
            config=dict(config, epoch=epoch),
            judge=judge,
            dataset=dataset,
            created_at=iso_from_any(ev.get("created")),
            part=part,
        )
        run = dataclasses.replace(
            run,
            id=_run_id(ev, status, epoch if several else None) or run.id,
            kind="eval" if epoch == epochs[0] else "rerun",
            stated=stated,
        )
        rows = sorted(
            (s for s in samples if s["epoch"] == epoch),
            key=lambda s: order.get(s["id"], len(order)),
        )
        cases = tuple(_case(s, layout, scales) for s in rows)
        runs.append(RunFile(run=run, cases=cases))
    return runs


def _samples_missing(path: Path, header: dict[str, Any], samples: list[dict[str, Any]]) -> str:
    """A finished log that holds fewer samples than it counts (a member lost from the archive,
    a log cut by hand): its per-case figures cover what it holds, its stated ones every sample.
    Said, with the samples missing where the header lists its ids; "" when they agree."""
    total = header["results"].get("total_samples")
    if not isinstance(total, int) or isinstance(total, bool) or total == len(samples):
        return ""
    ev = header["eval"]
    epochs = ev.get("config", {}).get("epochs")
    epochs = epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else 1
    held = {(str(s["id"]), s["epoch"]) for s in samples}
    ids = [str(i) for i in _items(ev.get("dataset", {}).get("sample_ids"))]
    missing = [
        f"{i}" + (f" (epoch {e})" if epochs > 1 else "")
        for e in range(1, epochs + 1)
        for i in ids
        if (i, e) not in held
    ]
    named = ""
    if missing:
        named = f"; missing: {', '.join(missing[:10])}" + (" …" if len(missing) > 10 else "")
    return (
        f"{path}: the log counts {total} samples (results.total_samples) and holds "
        f"{len(samples)}: the per-case figures are over the {len(samples)} it holds, its "
        f"stated figures over all {total}{named}"
    )


def _one_result_per_sample(path: Path, samples: list[dict[str, Any]]) -> None:
    """Inspect runs a sample id once per epoch: a second result for one is a log put together
    by hand (or damaged), and which of the two counts is not ragtui's to guess."""
    seen: dict[tuple[str, int], str] = {}
    for s in samples:
        key = (s["id"], s["epoch"])
        if key in seen:
            raise fail(
                path,
                f"{s['where']}: sample id {s['id']!r} epoch {s['epoch']}: expected one result "
                f"per sample and epoch, found a second (the first in {seen[key]})",
            )
        seen[key] = s["where"]


def _clean(header: Mapping[str, Any]) -> dict[str, Any]:
    """The header with every optional part of the wrong JSON type dropped, so the mapping below
    can trust the types (only `eval.task` is required, and was checked when read)."""
    ev = dict(header["eval"])
    for key in ("config", "dataset", "revision", "model_roles"):
        if not isinstance(ev.get(key), dict):
            ev.pop(key, None)
    for key in ("model", "eval_id", "task_id", "run_id"):
        if not isinstance(ev.get(key), str):
            ev.pop(key, None)
    ev["scorers"] = [_clean_scorer(s) for s in _items(ev.get("scorers")) if isinstance(s, dict)]
    results = dict(header.get("results") or {})
    results["scores"] = [
        _clean_scorer(s) for s in _items(results.get("scores")) if isinstance(s, dict)
    ]
    plan = header.get("plan") or {}
    steps = [s for s in _items(plan.get("steps")) if isinstance(s, dict)]
    status = header.get("status")
    return {
        "eval": ev,
        "status": status if isinstance(status, str) and status else "unknown",
        "results": results,
        "plan": {"steps": steps},
        "error": header.get("error"),
    }


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _clean_scorer(scorer: dict[str, Any]) -> dict[str, Any]:
    out = dict(scorer)
    for key in ("name", "scorer"):
        if not isinstance(out.get(key), str):
            out.pop(key, None)
    for key in ("options", "params"):
        if not isinstance(out.get(key), dict):
            out.pop(key, None)
    return out


def _run_id(ev: Mapping[str, Any], status: str, epoch: int | None) -> str | None:
    """From Inspect's own eval id, so the .eval and the .json of one log are one run (a second
    import is a no-op). Retries get a new eval id from Inspect; an unfinished log gets its
    status in the id, so the finished log imported later is not mistaken for it."""
    key = ev.get("eval_id") or ev.get("task_id")
    if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z0-9_-]{4,64}", key):
        return None
    run_id = f"inspect-{slug(ev['task'], 30)}-{key}"
    if epoch is not None:
        run_id += f"-e{epoch}"
    return run_id if status == "success" else f"{run_id}-{slug(status, 12)}"


@dataclasses.dataclass(frozen=True)
class ScorerLayout:
    """What one scorer gives per case: a metric of its own, or (dict values) one per key."""

    name: str
    dict_valued: bool
    case_keys: tuple[str, ...] | None  # keys that are per-case scores; None: every key

    def metrics(self) -> list[str]:
        if not self.dict_valued:
            return [self.name]
        return [f"{self.name}.{k}" for k in self.case_keys or ()]


def _per_key_declared(scorer: Mapping[str, Any]) -> list[str]:
    """Keys given per-key metrics: `{"words": [mean()]}` or, in list form,
    `[{"Problem Correctness": [mean()]}, scorer_level_metric()]`."""
    metrics = scorer.get("metrics")
    if isinstance(metrics, dict):
        return [str(k) for k in metrics]
    keys: list[str] = []
    for item in _items(metrics):
        if isinstance(item, dict) and "name" not in item:
            keys += [str(k) for k, v in item.items() if isinstance(v, list)]
    return keys


def _layout(header: Mapping[str, Any], samples: list[dict[str, Any]]) -> list[ScorerLayout]:
    """Every scorer of the log and what it gives per case. A dict-valued scorer's metrics
    declared only over the whole dict (SciCode's ratio of sums) are run-level, never a
    per-case score, so a sample is not missing a score under the bare scorer name; its keys
    that no metric names (counts such as "Total Steps") are kept as case metadata."""
    names: list[str] = []
    per_key: dict[str, list[str]] = {}
    for scorer in header["eval"]["scorers"]:
        if "name" in scorer:
            names.append(scorer["name"])
            per_key[scorer["name"]] = _per_key_declared(scorer)
    stated_keys: dict[str, list[str]] = {}
    for score in header["results"]["scores"]:
        scorer = score.get("scorer")
        if isinstance(scorer, str):
            if scorer not in names:
                names.append(scorer)
            name = score.get("name")
            if isinstance(name, str) and name != scorer:
                stated_keys.setdefault(scorer, []).append(name)
    dict_valued: set[str] = set()
    for sample in samples:
        for scorer, score in sample["scores"].items():
            if scorer not in names:
                names.append(scorer)
            if isinstance(score.get("value"), dict):
                dict_valued.add(scorer)
    layout = []
    for name in names:
        keys = per_key.get(name) or stated_keys.get(name)
        is_dict = name in dict_valued or bool(per_key.get(name))
        layout.append(ScorerLayout(name, is_dict, tuple(keys) if keys else None))
    return layout


def _numbers(samples: list[dict[str, Any]], layout: list[ScorerLayout]) -> dict[str, list[float]]:
    seen: dict[str, list[float]] = {}
    wanted = {s.name: s for s in layout}
    for sample in samples:
        for scorer, score in sample["scores"].items():
            for metric, value in _flatten(wanted.get(scorer), scorer, score.get("value")):
                number = _number(value)
                if number is not None:
                    seen.setdefault(metric, []).append(number)
    return seen


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None  # booleans are grades, on [0, 1] by definition
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMERIC.fullmatch(value.strip()):
        return float(value)
    return None


def _scales(
    path: Path,
    samples: list[dict[str, Any]],
    layout: list[ScorerLayout],
    options: ImportOptions,
    notices: list[str],
) -> dict[str, MetricScale]:
    """A scale per numeric metric: declared by the user, else [0, 1] (values outside it are
    errors, "scale unknown"). Never taken from the values' own min and max."""
    scales = {
        metric: resolve(metric, values, options.scales)
        for metric, values in _numbers(samples, layout).items()
    }
    for scorer in layout:
        for metric in scorer.metrics():
            if metric not in scales and metric in options.scales:
                scales[metric] = resolve(metric, [], options.scales)
    refused = {
        m: sum(
            1
            for s in samples
            for scorer, score in s["scores"].items()
            for metric, value in _flatten(None, scorer, score.get("value"))
            if metric == m and _number(value) is not None
        )
        for m, ms in scales.items()
        if ms.scale is None
    }
    notices += scale_notices(path, scales.values(), refused)
    return scales


def _stated(
    header: Mapping[str, Any],
    layout: list[ScorerLayout],
    scales: Mapping[str, MetricScale],
    options: ImportOptions,
) -> tuple[StatedFigure, ...]:
    """The log's own run-level figures (`results.scores[].metrics`), as Inspect stated them."""
    out = []
    keyed = {s.name: s.case_keys or () for s in layout if s.dict_valued}
    for score in header["results"]["scores"]:
        scorer, name = score.get("scorer"), score.get("name")
        if not isinstance(scorer, str):
            continue
        metric = scorer if name in (None, scorer) else f"{scorer}.{name}"
        if name == scorer and name in keyed.get(scorer, ()):  # a key named like its scorer
            metric = f"{scorer}.{name}"
        n = score.get("scored_samples")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None
        ms = scales.get(metric) or resolve(metric, [], options.scales)
        metrics = score.get("metrics")
        for key, entry in metrics.items() if isinstance(metrics, dict) else ():
            raw = entry.get("value") if isinstance(entry, dict) else None
            stat = entry.get("name") if isinstance(entry, dict) else None
            stat = stat if isinstance(stat, str) else str(key)
            number = _number(raw)
            value = None
            if number is not None and ms.scale is not None:
                low, high = ms.scale
                base = _base_stat(stat)
                if base == "var":
                    value = number / (high - low) ** 2
                elif base in SPREAD_STATISTICS:
                    value = number / (high - low)
                elif low - 1e-9 <= number <= high + 1e-9:
                    value = (number - low) / (high - low)
            elif number is not None and -1e-9 <= number <= 1 + 1e-9:
                value = number  # a figure over a metric with no per-case values: [0, 1]
            out.append(
                StatedFigure(
                    metric=metric,
                    value=value,
                    raw=raw if isinstance(raw, int | float | str | bool) else None,
                    statistic=stat,
                    scale=ms.scale if value is not None else None,
                    n=n,
                )
            )
    return tuple(out)


def _base_stat(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower()


def _flatten(layout: ScorerLayout | None, scorer: str, value: Any) -> Iterator[tuple[str, Any]]:
    """(metric, value) pairs a score gives; with a layout only the per-case keys."""
    if isinstance(value, dict):
        for key, item in value.items():
            if layout is None or layout.case_keys is None or key in layout.case_keys:
                yield f"{scorer}.{key}", item
    else:
        yield scorer, value


def _score(value: Any, score: Mapping[str, Any], ms: MetricScale | None) -> Score | str:
    """A Score, or the error text when the value is not a grade."""
    reason = score.get("explanation") if isinstance(score.get("explanation"), str) else None
    reply = _transcript(
        (score.get("metadata") or {}).get("grading")
        if isinstance(score.get("metadata"), dict)
        else None
    )
    if isinstance(value, bool):
        return Score(value=1.0 if value else 0.0, raw=value, scale=UNIT, reason=reason, reply=reply)
    number = _number(value)
    if number is not None:
        assert ms is not None  # every number of the log was given a scale by _scales
        return ms.score(number, value, reason=reason, reply=reply)
    if isinstance(value, int | float):
        return f"score is {value}"
    if isinstance(value, str):
        grade = value.strip().upper()
        if grade in LETTER_GRADES:
            return Score(
                value=LETTER_GRADES[grade],
                raw=value,
                label=grade,
                scale=UNIT,
                reason=reason,
                reply=reply,
            )
        return (
            f"unrecognised grade {value[:40]!r} (expected C, P, I, N, yes/no, a number "
            "or a boolean)"
        )
    if value is None:
        return "no score value"
    return f"unsupported score value {kind(value)}"


def _transcript(grading: Any) -> str | None:
    """The grading conversation, role by role, shown as the judge's raw reply."""
    if not isinstance(grading, list) or not grading:
        return None
    blocks = [
        f"[{m.get('role', '?')}]\n{text_of(m.get('content'))}"
        for m in grading
        if isinstance(m, dict)
    ]
    return "\n\n".join(blocks) or None


def _case(
    sample: dict[str, Any], layout: list[ScorerLayout], scales: Mapping[str, MetricScale]
) -> Case:
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    metadata = dict(sample["metadata"])
    by_name = {s.name: s for s in layout}
    for scorer, score in sample["scores"].items():
        value = score.get("value")
        shape = by_name.get(scorer)
        if isinstance(value, dict) and shape is not None and shape.case_keys is not None:
            for key, item in value.items():  # counts and other fields no metric names
                if key not in shape.case_keys:
                    metadata[f"{scorer}.{key}"] = item
        for metric, item in _flatten(shape, scorer, value):
            result = _score(item, score, scales.get(metric))
            if isinstance(result, Score):
                scores[metric] = result
            else:
                errors[metric] = result
                if item is not None:
                    metadata = keep_raw(metadata, metric, item)
    for scorer in layout:
        expected = scorer.metrics()
        if scorer.dict_valued and scorer.case_keys is None:
            expected = [m for m in scores if m.startswith(scorer.name + ".")] or [scorer.name]
        for metric in expected:
            if metric not in scores and metric not in errors:
                errors[metric] = sample["error"] or "no score recorded for this sample"
    time = sample["time"]
    latency = (
        float(time) * 1000 if isinstance(time, int | float) and not isinstance(time, bool) else None
    )
    return Case(
        case_id=sample["id"],
        question=sample["question"],
        answer=sample["answer"],
        reference=sample["reference"],
        contexts=_contexts(sample["metadata"]),
        scores=scores,
        errors=errors,
        latency_ms=latency,
        metadata=metadata,
    )


_CONTEXT_KEYS = ("retrieved_contexts", "retrieval_context", "contexts", "context", "documents")


def _contexts(metadata: Mapping[str, Any]) -> tuple[Chunk, ...]:
    """Inspect has no retrieval field; RAG tasks put the chunks in sample metadata."""
    for key in _CONTEXT_KEYS:
        items = metadata.get(key)
        if not isinstance(items, list) or not items:
            continue
        chunks = []
        for rank, item in enumerate(items, start=1):
            if isinstance(item, str):
                chunks.append(Chunk(id=f"c{rank}", text=item, rank=rank))
            elif isinstance(item, dict):
                text = next(
                    (
                        item[k]
                        for k in ("text", "page_content", "content")
                        if isinstance(item.get(k), str)
                    ),
                    None,
                )
                if text is None:
                    return ()  # not a list of chunks after all
                source = item.get("source") if isinstance(item.get("source"), str) else None
                cid = str(item["id"]) if isinstance(item.get("id"), str | int) else f"c{rank}"
                cid = f"c{rank}" if any(c.id == cid for c in chunks) else cid  # ids must be unique
                chunks.append(Chunk(id=cid, text=text, source=source, rank=rank))
            else:
                return ()
        return tuple(chunks)
    return ()


def _header_info(header: Mapping[str, Any]) -> tuple[dict[str, Any], JudgeInfo, DatasetInfo]:
    ev = header["eval"]
    model = ev.get("model")
    dataset = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    scorers = list(ev["scorers"])
    if not scorers:  # older logs: scorer names and params live in results.scores
        scorers = [
            {"name": s.get("scorer"), "options": s.get("params") or s.get("options") or {}}
            for s in header["results"]["scores"]
            if isinstance(s, dict)
        ]
    steps = header["plan"]["steps"]
    revision = ev.get("revision") if isinstance(ev.get("revision"), dict) else {}
    config: dict[str, Any] = {
        "task": ev["task"],
        "task_version": ev.get("task_version"),
        "task_args": ev.get("task_args") or {},
        "generator": model,
        "model_args": _plain(ev.get("model_args") or {}),
        "model_generate_config": ev.get("model_generate_config") or {},
        "solver": [
            {"solver": s.get("solver"), "params": s.get("params") or {}}
            for s in steps
            if isinstance(s, dict)
        ],
        "scorers": [{"name": s.get("name"), "options": s.get("options") or {}} for s in scorers],
        "dataset_location": dataset.get("location"),
        "revision": revision.get("commit"),
        "eval_id": ev.get("eval_id") or ev.get("task_id"),
        "run_id": ev.get("run_id"),
    }
    return (
        {k: v for k, v in config.items() if v is not None},
        _judge(ev, scorers),
        DatasetInfo(
            name=dataset.get("name") if isinstance(dataset.get("name"), str) else None,
            version=next(
                (str(dataset[k]) for k in ("version", "revision") if dataset.get(k)), None
            ),
        ),
    )


def _judge(ev: Mapping[str, Any], scorers: list[dict[str, Any]]) -> JudgeInfo:
    """The grader of model-graded scorers: the "grader" role, a scorer's model, else the model
    under evaluation (Inspect's default grader). Rule-based scorers have no judge."""
    graded = [
        s
        for s in scorers
        if str(s.get("name") or "").startswith("model_graded")
        or "model" in (s.get("options") or {})
    ]
    if not graded:
        return JudgeInfo()
    role = ev.get("model_roles", {}).get("grader")
    candidates = [role.get("model") if isinstance(role, dict) else None]
    candidates += [s.get("options", {}).get("model") for s in graded]  # model_graded_*(model=...)
    candidates.append(ev.get("model"))
    model = next((m for m in candidates if isinstance(m, str) and m), None)
    material = json.dumps(
        [[s.get("name"), s.get("options") or {}] for s in graded], sort_keys=True, default=str
    )
    provider = model.split("/", 1)[0] if model and "/" in model else None
    return JudgeInfo(
        model=model,
        provider=provider,
        prompt_hash="inspect-" + hashlib.sha256(material.encode()).hexdigest()[:12],
    )


def _plain(value: Any) -> Any:
    """Model args as JSON-safe values (mockllm's `custom_outputs: null` and the like stay)."""
    return json.loads(json.dumps(value, default=str))


INSPECT = register(InspectImporter())
