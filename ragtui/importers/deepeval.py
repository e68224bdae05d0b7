"""DeepEval test runs as native runs.

Reads `.deepeval/.latest_test_run.json` (`{"testRunData": {...}}`), the `test_run_*.json` a
results folder gets (the same object without the wrapper) and `.deepeval/.temp_test_run_data.json`,
the file an interrupted run leaves behind. Each `metricsData` entry is a score (threshold, reason,
judge model); a metric that errored, or that a case never got, is an error, never a zero. The
verdict lists a metric prints into `verboseLogs` (Claims / Statements + Verdicts) become claims.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragtui.core.model import (
    Case,
    Chunk,
    Claim,
    DatasetInfo,
    JudgeInfo,
    RunFile,
    Score,
    is_faithfulness,
    stable_case_id,
)
from ragtui.importers._common import (
    build_run,
    fail,
    load_json,
    read_bytes,
    sha256_bytes,
    unique_case_ids,
)
from ragtui.importers.base import ImportOptions, Sniff, register
from ragtui.importers.scales import rescale_cases

VERDICTS = {"yes": "SUPPORTED", "idk": "PARTIAL", "borderline": "PARTIAL", "no": "UNSUPPORTED"}
_DEFAULT_NAME = re.compile(r"test_case_\d+")  # deepeval's positional names: not stable ids
# A pytest node name's parameter ids (`test_rag[...]`, parts joined by "-"); pytest makes an
# object parameter's id from its place: its argname and index (`test_case0`).
_PYTEST_NAME = re.compile(r"[^\[\]]{0,200}\[([^\[\]]{1,200})\]")
# argname (ending in a non-digit) + index; linear: the argname cannot end in a digit
_PLACE_ID = re.compile(r"([A-Za-z_](?:\w{0,100}[A-Za-z_])?)(\d{1,9})")
_SECTION = re.compile(r"(?m)^([A-Za-z][A-Za-z ]*?)(?: \(limit=[^)\n]*\))?:\n(?=\[)")
_STRING_ITEM = re.compile(r'^\s*"(.*)",?\s*$')
_CASE_KEYS = (
    b'"metricsData"',
    b'"metricsScores"',
    b'"conversationalTestCases"',
    b'"actualOutput"',
    b'"retrievalContext"',
)
_STAMP = re.compile(r"test_run_(\d{8})_(\d{6})")


class DeepEvalImporter:
    name = "deepeval"
    description = (
        "DeepEval test runs (.deepeval/.latest_test_run.json, test_run_*.json, temp files)"
    )
    priority = 10  # a specific format: asked before generic tables

    def __init__(self) -> None:
        self.last_notices: list[str] = []  # skipped parts, interrupted runs: for the caller to show

    def sniff(self, path: Path, head: bytes) -> Sniff:
        if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] != b"{":
            return Sniff(False, "not a JSON object")
        if b'"testRunData"' in head or b'"testRunLink"' in head:
            return Sniff(True)
        if b'"testCases"' in head and any(
            key in head
            for key in _CASE_KEYS  # camelCase keys only DeepEval writes
        ):
            return Sniff(True)
        return Sniff(
            False, 'no "testRunData", or "testCases" with "metricsData", of a DeepEval run'
        )

    def load(self, path: Path, options: ImportOptions) -> list[RunFile]:
        data = read_bytes(path)
        if not data.strip():
            raise fail(path, "the file is empty")
        notices: list[str] = []
        body = _test_run(path, _parse(path, data))
        run = _run_file(path, sha256_bytes(data), body, options, notices)
        self.last_notices = notices
        return [run]


def _parse(path: Path, data: bytes) -> Any:
    if b"\x00" in data[:4096]:
        raise fail(path, "expected UTF-8 JSON text, found binary data (NUL bytes)")
    return load_json(path, data)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return f"{names.get(type(value), 'a number')} {json.dumps(value, default=str)[:40]}"


def _test_run(path: Path, top: Any) -> dict[str, Any]:
    if not isinstance(top, dict):
        raise fail(path, f"expected a DeepEval test run object, found {_kind(top)}")
    if "testRunData" in top:
        body = top["testRunData"]
        if not isinstance(body, dict):
            raise fail(path, f"field 'testRunData': expected an object, found {_kind(body)}")
    elif "testRunLink" in top:
        raise fail(path, "holds only a link to the run on Confident AI (testRunLink), no results")
    else:
        body = top
    cases = body.get("testCases")
    if not isinstance(cases, list):
        raise fail(
            path, f"field 'testCases': expected an array of test cases, found {_kind(cases)}"
        )
    return body


def _run_file(
    path: Path, sha: str, body: dict[str, Any], options: ImportOptions, notices: list[str]
) -> RunFile:
    raw_cases = body["testCases"]
    skipped = body.get("conversationalTestCases")
    if isinstance(skipped, list) and skipped:
        notices.append(
            f"{path}: {len(skipped)} conversational test cases skipped (multi-turn is not imported)"
        )
    if not raw_cases:
        raise fail(path, "holds no (single-turn) test cases")
    for index, tc in enumerate(raw_cases):
        _check_case(path, index, tc)
    interrupted = "testPassed" not in body and "testFailed" not in body
    if interrupted:
        notices.append(
            f"{path}: an unfinished DeepEval run (no pass/fail totals); imported its "
            f"{len(raw_cases)} test cases, unscored metrics counted as errors"
        )
    declared = _declared(body)
    if all(
        isinstance(tc.get("order"), int) and not isinstance(tc["order"], bool) for tc in raw_cases
    ):
        raw_cases = sorted(raw_cases, key=lambda tc: tc["order"])
    judges: set[str] = set()
    by_place = pytest_positional([tc.get("name") for tc in raw_cases])
    cases = [
        _case(path, tc, declared, interrupted, judges, notices, set(by_place)) for tc in raw_cases
    ]
    if by_place:
        notices.append(
            f"{path}: {len(by_place)} case(s) named by their place in a pytest parametrize "
            f"list ({by_place[0]!r}, …): ids derived from each input instead, so the same "
            "input pairs across runs whatever its place; pytest ids=[...] give stable names"
        )
    # same question twice: keep both, told apart by a suffix no other case holds
    cases = unique_case_ids(cases, notices, path=path)
    cases = rescale_cases(path, cases, options.scales, notices)  # DeepEval scores in [0, 1]
    config = _config(body)
    judge = JudgeInfo(model=", ".join(sorted(judges)) or None)
    dataset = DatasetInfo(
        name=body.get("datasetAlias") if isinstance(body.get("datasetAlias"), str) else None,
        version=str(body["datasetVersion"]) if body.get("datasetVersion") is not None else None,
    )
    created = _created_at(path)
    default_name = body.get("identifier")
    if not isinstance(default_name, str):
        default_name = f"deepeval {created or path.stem.lstrip('.')}"
    run = build_run(
        path,
        sha,
        "deepeval",
        options,
        default_name=default_name,
        config=config,
        judge=judge,
        dataset=dataset,
        created_at=created,
    )
    return RunFile(run=run, cases=tuple(cases))


def _check_case(path: Path, index: int, tc: Any) -> None:
    where = f"testCases[{index}]"
    if not isinstance(tc, dict):
        raise fail(path, f"{where}: expected a test case object, found {_kind(tc)}")
    if not isinstance(tc.get("input"), str):
        raise fail(
            path, f"{where}: field 'input': expected a string, found {_kind(tc.get('input'))}"
        )
    for key in ("actualOutput", "expectedOutput", "name"):
        if tc.get(key) is not None and not isinstance(tc[key], str):
            raise fail(path, f"{where}: field '{key}': expected a string, found {_kind(tc[key])}")
    for key in ("retrievalContext", "context", "metricsData"):
        if tc.get(key) is not None and not isinstance(tc[key], list):
            raise fail(path, f"{where}: field '{key}': expected an array, found {_kind(tc[key])}")
    for k, chunk in enumerate(tc.get("retrievalContext") or []):
        if not isinstance(chunk, str):
            raise fail(
                path,
                f"{where}: field 'retrievalContext[{k}]': expected a string, found {_kind(chunk)}",
            )
    for k, md in enumerate(tc.get("metricsData") or []):
        field = f"{where}: field 'metricsData[{k}]"
        if not isinstance(md, dict) or not isinstance(md.get("name"), str):
            raise fail(path, f"{field}': expected an object with a 'name', found {_kind(md)}")
        score = md.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise fail(path, f"{field}.score': expected a number or null, found {_kind(score)}")
        for key in ("reason", "error", "verboseLogs", "evaluationModel"):
            if md.get(key) is not None and not isinstance(md[key], str):
                raise fail(path, f"{field}.{key}': expected a string, found {_kind(md[key])}")
        threshold = md.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            raise fail(path, f"{field}.threshold': expected a number, found {_kind(threshold)}")


def pytest_positional(names: list[Any]) -> list[str]:
    """The names, when every case of the file is named by pytest from its place: one parameter
    id part that is the same argname with the indices 0..k-1 in every name (`test_rag[test_case0]`
    ... `[test_case47]`; with a second parameter, `[golden3-gpt4]`, each index may recur). Ids a
    user gave (`[refund-01]`, `[q1]`, `[gpt4]` alone) do not cover 0..k-1 under one argname."""
    parts = []
    for name in names:
        match = _PYTEST_NAME.fullmatch(name.strip()) if isinstance(name, str) else None
        if match is None:
            return []
        parts.append(match.group(1).split("-"))
    if not parts or len({len(p) for p in parts}) != 1:
        return []
    for j in range(len(parts[0])):
        places = [_PLACE_ID.fullmatch(p[j]) for p in parts]
        if not all(places) or len({m.group(1) for m in places if m}) != 1:
            continue
        indices = {int(m.group(2)) for m in places if m}
        if indices == set(range(len(indices))) and len(indices) > 1:
            return [n.strip() for n in names]
    return []


def metric_key(name: str) -> str:
    """DeepEval's display names as metric keys: "Answer Relevancy" -> "answer_relevancy"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "metric"


def _declared(body: Mapping[str, Any]) -> list[str]:
    """The metrics the run used: every name in any case's metricsData, then metricsScores."""
    names: list[str] = []
    for tc in body["testCases"]:
        for md in tc.get("metricsData") or []:
            if metric_key(md["name"]) not in names:
                names.append(metric_key(md["name"]))
    tally = body.get("metricsScores")
    for entry in tally if isinstance(tally, list) else []:
        metric = entry.get("metric") if isinstance(entry, dict) else None
        if isinstance(metric, str) and metric_key(metric) not in names:
            names.append(metric_key(metric))
    return names


def _case(
    path: Path,
    tc: dict[str, Any],
    declared: list[str],
    interrupted: bool,
    judges: set[str],
    notices: list[str],
    by_place: set[str],
) -> Case:
    name = tc.get("name")
    stable = (
        isinstance(name, str)
        and name.strip()
        and not _DEFAULT_NAME.fullmatch(name)
        and name.strip() not in by_place
    )
    case_id = name.strip() if stable else stable_case_id(tc["input"])
    chunks = tuple(
        Chunk(id=f"c{k + 1}", text=text, rank=k + 1)
        for k, text in enumerate(tc.get("retrievalContext") or [])
    )
    scores: dict[str, Score] = {}
    errors: dict[str, str] = {}
    claims: list[Claim] = []
    for md in tc.get("metricsData") or []:
        metric = metric_key(md["name"])
        if isinstance(md.get("evaluationModel"), str):
            judges.add(md["evaluationModel"])
        score = md.get("score")
        if md.get("error"):
            errors[metric] = md["error"]
        elif score is None or not math.isfinite(score):
            errors[metric] = "no score recorded" if score is None else f"score is {score}"
        else:
            scores[metric] = Score(
                value=min(1.0, max(0.0, float(score))),
                raw=score,
                reason=md.get("reason"),
                reply=md.get("verboseLogs"),
                threshold=md.get("threshold"),
            )
        claims += _claims(metric, md.get("verboseLogs"), chunks, case_id, path, notices)
    for metric in declared:
        if metric not in scores and metric not in errors:
            errors[metric] = (
                "not scored: the run ended before this metric ran"
                if interrupted
                else "no score recorded"
            )
    metadata: dict[str, Any] = dict(tc["metadata"]) if isinstance(tc.get("metadata"), dict) else {}
    if isinstance(name, str) and not stable:
        metadata["deepeval_name"] = name
    for key in ("context", "tags", "comments"):
        if tc.get(key):
            metadata[key] = tc[key]
    completion = tc.get("completionTime")
    latency = (
        completion * 1000
        if isinstance(completion, int | float) and not isinstance(completion, bool)
        else None
    )
    return Case(
        case_id=case_id,
        question=tc["input"],
        answer=tc.get("actualOutput") or "",
        reference=tc.get("expectedOutput"),
        contexts=chunks,
        scores=scores,
        claims=tuple(claims),
        errors=errors,
        latency_ms=latency,
        metadata=metadata,
    )


def parse_verbose_logs(text: str) -> dict[str, list[Any]]:
    """The titled lists in a metric's verbose logs: {"Claims": [...], "Verdicts": [...], ...}."""
    found = list(_SECTION.finditer(text))
    sections: dict[str, list[Any]] = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(text)
        body = text[match.end() : end].strip()
        try:
            value = json.loads(body)
        except ValueError:
            # deepeval prints strings as f'"{item}"' without escaping: parse line by line
            items = [m.group(1) for line in body.splitlines() if (m := _STRING_ITEM.match(line))]
            value = items if items else None
        if isinstance(value, list):
            sections[match.group(1).strip()] = value
    return sections


def _claims(
    metric: str,
    logs: str | None,
    chunks: tuple[Chunk, ...],
    case_id: str,
    path: Path,
    notices: list[str],
) -> list[Claim]:
    if not logs:
        return []
    sections = parse_verbose_logs(logs)
    verdicts = sections.get("Verdicts")
    if not verdicts:
        return []
    texts = sections.get("Claims") or sections.get("Statements")
    linked: list[tuple[str, tuple[str, ...]]]
    if texts is not None:
        linked = [(str(t), ()) for t in texts]
    elif metric.startswith("contextual_precision") and len(verdicts) == len(chunks):
        linked = [
            (c.text, (c.id,)) for c in chunks
        ]  # one verdict per retrieved chunk, in rank order
    else:
        return []
    if len(linked) != len(verdicts):
        notices.append(
            f"{path}: case {case_id}, {metric}: {len(linked)} claims but {len(verdicts)} verdicts; claims skipped"
        )
        return []
    claims = []
    for (text, chunk_ids), verdict in zip(linked, verdicts, strict=True):
        if not isinstance(verdict, dict):
            continue
        word = str(verdict.get("verdict", "")).strip()
        # support verdicts for faithfulness; other metrics keep their own word (answer
        # relevancy's yes/no/idk is about relevance, contextual precision's about the chunk)
        label = VERDICTS.get(word.lower()) if is_faithfulness(metric) else word[:40] or None
        if label is None:
            continue
        reason = verdict.get("reason") if isinstance(verdict.get("reason"), str) else None
        claims.append(
            Claim(metric=metric, text=text, verdict=label, chunks=chunk_ids, reason=reason)
        )
    return claims


def _config(body: Mapping[str, Any]) -> dict[str, Any]:
    hyper = body.get("hyperparameters")
    config: dict[str, Any] = dict(hyper) if isinstance(hyper, dict) else {}
    if "generator" not in config and isinstance(config.get("model"), str):
        config["generator"] = config["model"]  # deepeval's convention: hyperparameters["model"]
    if isinstance(body.get("identifier"), str):
        config["identifier"] = body["identifier"]
    prompts = body.get("prompts")
    if isinstance(prompts, list) and prompts:
        config["prompts"] = [
            {k: p.get(k) for k in ("alias", "version", "hash") if p.get(k) is not None}
            for p in prompts
            if isinstance(p, dict)
        ]
    return config


def _created_at(path: Path) -> str | None:
    """test_run_YYYYMMDD_HHMMSS.json names carry the time (local time; read as UTC)."""
    match = _STAMP.search(path.name)
    if not match:
        return None
    try:
        stamp = datetime.strptime(match.group(1) + match.group(2), "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return stamp.replace(tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


DEEPEVAL = register(DeepEvalImporter())
