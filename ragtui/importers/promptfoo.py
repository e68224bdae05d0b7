"""promptfoo results: `promptfoo eval -o out.json` (results versions 2 and 3), JSONL and CSV.

Every prompt x provider pair (promptIdx, an entry of results.prompts) is its own run (config =
prompt label + provider, and the pair's number where two pairs read alike), so the pairs can be
compared. `namedScores` and `gradingResult.componentResults` become scores; a result
that errored (`failureReason: 2`, or an `error` without grading in version 2) is an error on
every metric of its run, never a zero. `vars` give question, context and reference: by the
common var names, or `--map question=VAR contexts=VAR reference=VAR case_id=VAR`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, JudgeInfo, RunFile, Score
from ragtui.importers._common import (
    as_number,
    build_run,
    decode_text,
    fail,
    iso_from_any,
    json_lines,
    load_json,
    read_bytes,
    sha256_bytes,
    unique_case_ids,
)
from ragtui.importers._promptfoo_rows import GROUP, case_from_vars, csv_rows
from ragtui.importers._promptfoo_rows import as_text as _text
from ragtui.importers._promptfoo_scores import scores_of
from ragtui.importers._tabular import header_columns
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import rescale_cases

_SIGNS = ('"gradingResult"', '"namedScores"', '"promptIdx"', '"evalId"', '"failureReason"')


class PromptfooImporter:
    name = "promptfoo"
    description = "promptfoo eval output (-o out.json results v2/v3, .jsonl, .csv)"
    priority = 10

    def __init__(self) -> None:
        self.last_notices: list[str] = []

    def sniff(self, path: Path, head: bytes) -> Sniff:
        # str.lstrip() keeps a UTF-8 BOM (U+FEFF is no whitespace): drop it first
        text = head.decode("utf-8", errors="ignore").removeprefix("\ufeff").lstrip()
        if text[:1] in "{[":
            if sum(sign in text for sign in _SIGNS) >= 2 or (
                '"results"' in text
                and re.search(r'"version"\s*:\s*[23]\b', text)
                and '"prompts"' in text
            ):
                return Sniff(True)
            return Sniff(False, "no promptfoo keys (results/gradingResult/namedScores/promptIdx)")
        columns = header_columns(head) or []
        if any(GROUP.match(c) for c in columns) and (
            "Status" in columns or "Named Scores" in columns
        ):
            return Sniff(True)
        return Sniff(False, "not a promptfoo output (no '[provider] prompt' + Status columns)")

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        data = read_bytes(path)
        text = decode_text(path, data)
        if not text.strip():
            raise fail(path, "the file is empty")
        if text.lstrip()[:1] in "{[":
            results, meta = _json_results(path, text)
            rows = [_from_json(path, i, r, options) for i, r in enumerate(results)]
        else:
            rows, meta = csv_rows(path, text, options), {}
        if not rows:
            raise fail(path, "no results in the file (an eval with no test cases?)")
        notices: list[str] = []
        self.last_notices = notices
        return _runs(path, sha256_bytes(data), rows, meta, options, notices)


def _json_results(path: Path, text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if _several_lines(text):
        return _jsonl_results(path, text), {}
    data = load_json(path, text)
    if isinstance(data, list):
        return _check_results(path, data), {}
    if not isinstance(data, dict):
        raise fail(path, f"expected a promptfoo output object, found {type(data).__name__}")
    summary = data.get("results") if isinstance(data.get("results"), dict) else data
    results = summary.get("results")
    if not isinstance(results, list):
        if "gradingResult" in data or "namedScores" in data:
            return _check_results(path, [data]), {}
        raise fail(path, "expected results.results to be a list of test results")
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    meta = {
        "version": summary.get("version"),
        "timestamp": summary.get("timestamp") or metadata.get("evaluationCreatedAt"),
        "eval_id": data.get("evalId"),
        "description": (data.get("config") or {}).get("description")
        if isinstance(data.get("config"), dict)
        else None,
        "grader": _grader(data.get("config")),
    }
    return _check_results(path, results), meta


def _several_lines(text: str) -> bool:
    """JSONL: the first line is a whole JSON object and more follows."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict) and bool(text.lstrip()[len(first) :].strip())
    except (ValueError, RecursionError):
        return False


def _jsonl_results(path: Path, text: str) -> list[dict[str, Any]]:
    out = []
    for number, line, last in json_lines(text):
        obj = load_json(path, line, first_line=number, last=last)
        if not isinstance(obj, dict):
            raise fail(path, f"line {number}: expected a JSON object, found {type(obj).__name__}")
        out.append(obj)
    return out


def _check_results(path: Path, results: list[Any]) -> list[dict[str, Any]]:
    for i, r in enumerate(results):
        if not isinstance(r, dict):
            raise fail(path, f"result {i + 1}: expected an object, found {type(r).__name__}")
    return results


def _grader(config: Any) -> str | None:
    try:
        provider = config["defaultTest"]["options"]["provider"]
    except (KeyError, TypeError):
        return None
    if isinstance(provider, str):
        return provider
    return (
        provider.get("id")
        if isinstance(provider, dict) and isinstance(provider.get("id"), str)
        else None
    )


def _label(value: Any, limit: int = 40) -> str:
    text = " ".join(_text(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _from_json(path: Path, i: int, r: dict[str, Any], options: ImportOptions) -> dict[str, Any]:
    vars_ = r.get("vars") if isinstance(r.get("vars"), dict) else {}
    if (
        not vars_
        and isinstance(r.get("testCase"), dict)
        and isinstance(r["testCase"].get("vars"), dict)
    ):
        vars_ = r["testCase"]["vars"]
    prompt = r.get("prompt") if isinstance(r.get("prompt"), dict) else {}
    provider = r.get("provider")
    if isinstance(provider, dict):
        provider_id, provider_label = (
            _text(provider.get("id")),
            _text(provider.get("label") or provider.get("id")),
        )
    else:
        provider_id = provider_label = _text(provider)
    prompt_idx = r.get("promptIdx")
    prompt_idx = (
        prompt_idx if isinstance(prompt_idx, int) and not isinstance(prompt_idx, bool) else None
    )
    prompt_text = " ".join(
        _text(
            prompt.get("label")
            or prompt.get("display")
            or prompt.get("raw")
            or f"prompt {prompt_idx or 0}"
        ).split()
    )
    prompt_label = _label(prompt_text)
    response = r.get("response") if isinstance(r.get("response"), dict) else {}
    grading = r.get("gradingResult") if isinstance(r.get("gradingResult"), dict) else None
    error = r.get("error") or response.get("error")
    failure = r.get("failureReason")
    errored = failure == 2 or (
        failure is None and bool(error) and (grading is None or not response.get("output"))
    )
    scores: dict[str, Score] = {}
    failed: dict[str, str] = {}
    if not errored:
        scores, failed = scores_of(path, i, r, grading)
    row = case_from_vars(vars_, options, _text(prompt.get("raw")))
    latency = as_number(r.get("latencyMs"))
    test_case = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    options_provider = (
        (test_case.get("options") or {}).get("provider")
        if isinstance(test_case.get("options"), dict)
        else None
    )
    grader = (
        options_provider
        if isinstance(options_provider, str)
        else (options_provider.get("id") if isinstance(options_provider, dict) else None)
    )
    metadata = {
        k: v
        for k, v in {
            "description": test_case.get("description") or r.get("description"),
            "success": r.get("success"),
            "test_index": r.get("testIdx"),
        }.items()
        if isinstance(v, str | int | float | bool)
    }
    return {
        **row,
        "part": (prompt_label, provider_label),
        # promptIdx numbers the prompt x provider pairs (results.prompts); without it (results
        # version 2) the pair is told by its whole prompt text and provider, never a cut label
        "pair": ("index", prompt_idx)
        if prompt_idx is not None
        else ("text", prompt_text, provider_id, provider_label),
        "config": {
            "prompt": prompt_label,
            "provider": provider_id,
            "prompt_template": _text(prompt.get("display") or "") or None,
        },
        "answer": _text(response.get("output")),
        "scores": scores,
        "metric_errors": failed,
        "error": _text(error) or "promptfoo reported an error for this test" if errored else None,
        "latency_ms": latency,
        "metadata": metadata,
        "grader": grader if isinstance(grader, str) else None,
    }


def _pair_names(
    groups: dict[tuple[Any, ...], list[dict[str, Any]]],
) -> dict[tuple[Any, ...], tuple[str, int | None]]:
    """Each pair's readable name; pairs that read alike (the same prompt label and provider, or
    labels alike in their first 40 characters) are numbered by their promptIdx (else their
    order), so no two runs share a name, an id or a config."""
    names = {key: " · ".join(items[0]["part"]) for key, items in groups.items()}
    seen: dict[str, int] = {}
    for name in names.values():
        seen[name] = seen.get(name, 0) + 1
    out: dict[tuple[Any, ...], tuple[str, int | None]] = {}
    for order, (key, name) in enumerate(names.items()):
        if seen[name] == 1:
            out[key] = (name, None)
        else:
            pair = key[1] if key[0] == "index" else order
            out[key] = (f"{name} · pair {pair}", pair)
    return out


def _runs(
    path: Path,
    sha: str,
    rows: list[dict[str, Any]],
    meta: dict[str, Any],
    options: ImportOptions,
    notices: list[str],
) -> list[RunFile]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row.get("pair") or row["part"], []).append(row)
    parts = _pair_names(groups)
    created = iso_from_any(meta.get("timestamp"))
    out = []
    for key, items in groups.items():
        metrics: list[str] = []
        for item in items:
            metrics.extend(m for m in (*item["scores"], *item["metric_errors"]) if m not in metrics)
        cases = []
        for item in items:
            errors = dict(item["metric_errors"])
            if item["error"]:  # the test itself errored: every metric of the run failed
                errors = {m: item["error"] for m in (metrics or ["score"])}
            cases.append(
                Case(
                    case_id=item["case_id"],
                    question=item["question"],
                    answer=item["answer"],
                    reference=item["reference"],
                    contexts=item["contexts"],
                    scores=item["scores"],
                    errors=errors,
                    latency_ms=item["latency_ms"],
                    metadata=item["metadata"],
                )
            )
        config = {k: v for k, v in items[0]["config"].items() if v is not None}
        part, pair = parts[key]
        if pair is not None:  # another pair reads the same: the config tells them apart
            config["pair"] = pair
        if meta.get("description"):
            config["description"] = meta["description"]
        grader = next((i["grader"] for i in items if i["grader"]), None) or meta.get("grader")
        run = build_run(
            path,
            sha,
            "promptfoo",
            options,
            default_name=meta.get("description") or None,
            config=config,
            judge=JudgeInfo(model=grader, provider="promptfoo") if grader else JudgeInfo(),
            created_at=created,
            part=part if len(groups) > 1 else None,
        )
        cases = unique_case_ids(cases, notices, path=path, repeated="test")
        out.append(RunFile(run=replace(run, config=dict(run.config)), cases=tuple(cases)))
    # a metric's scale is one for the whole file (every pair's values), said once
    flat = rescale_cases(path, [c for r in out for c in r.cases], options.scales, notices)
    start = 0
    for n, run_file in enumerate(out):
        out[n] = replace(run_file, cases=tuple(flat[start : start + len(run_file.cases)]))
        start += len(run_file.cases)
    notices[:] = list(dict.fromkeys(notices))  # a fact of the file, not one line per pair
    return out


register(PromptfooImporter())
