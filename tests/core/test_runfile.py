from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragtui.core.errors import RunFileError
from ragtui.core.model import (
    Case,
    Chunk,
    Claim,
    DatasetInfo,
    JudgeInfo,
    Run,
    Score,
    SourceInfo,
    derive_config_key,
    stable_case_id,
)
from ragtui.core.runfile import RunFileAppender, read_run_file, write_run_file

FULL_RUN = Run(
    id="baseline-2026-11-20",
    name="baseline",
    created_at="2026-11-20T10:00:00Z",
    config={"top_k": 3, "generator": "llama3.2:3b", "prompt": "strict-v2"},
    config_key="cfg-explicit",
    judge=JudgeInfo(model="llama3.2:3b", provider="ollama", prompt_hash="abc123"),
    dataset=DatasetInfo(name="golden", version="v3"),
    parent="other-run",
    kind="rejudge",
    source=SourceInfo(format="ragas", path="results.csv", sha256="f" * 64),
)
FULL_CASE = Case(
    case_id="refund-01",
    question="Who approves refunds past 30 days?",
    answer="A manager — [bold]always[/bold] \x1b[31m in writing.",
    reference="A manager approves them.",
    contexts=(
        Chunk(
            id="c1",
            text="Managers approve late refunds.",
            source="refund_policy.md",
            rank=1,
            score=0.83,
        ),
    ),
    scores={
        "faithfulness": Score(
            value=0.5, raw="PARTIAL", label="PARTIAL", reply="PARTIAL", prompt_hash="p1"
        ),
        "answer_relevance": Score(
            value=0.75, raw=4, scale=(1, 5), reason="on topic", threshold=0.5
        ),
    },
    claims=(
        Claim(
            metric="faithfulness",
            text="in writing",
            verdict="UNSUPPORTED",
            chunks=(),
            reason="not in C1",
        ),
        Claim(
            metric="faithfulness", text="a manager approves", verdict="SUPPORTED", chunks=("c1",)
        ),
    ),
    errors={"context_recall": "judge reply was not valid JSON"},
    human={"faithfulness": 1.0},
    latency_ms=812,
    metadata={"tags": ["refunds"], "nested": {"a": 1}},
)


def test_round_trip_keeps_every_field_and_bytes(tmp_path: Path) -> None:
    path = write_run_file(tmp_path / "a.ragtui.jsonl", FULL_RUN, [FULL_CASE])
    loaded = read_run_file(path)
    assert loaded.run == FULL_RUN
    assert loaded.cases == (FULL_CASE,)
    again = write_run_file(tmp_path / "b.ragtui.jsonl", loaded.run, loaded.cases)
    assert again.read_bytes() == path.read_bytes()


def test_header_matches_the_design_layout(tmp_path: Path) -> None:
    path = write_run_file(tmp_path / "a.ragtui.jsonl", FULL_RUN, [FULL_CASE])
    header, case = (json.loads(line) for line in path.read_text().splitlines())
    assert header["ragtui_run"] == 1
    assert header["judge"] == {
        "model": "llama3.2:3b",
        "provider": "ollama",
        "prompt_hash": "abc123",
    }
    assert case["scores"]["answer_relevance"] == {
        "value": 0.75,
        "raw": 4,
        "scale": [1, 5],
        "reason": "on topic",
        "threshold": 0.5,
    }
    assert case["errors"] == {"context_recall": "judge reply was not valid JSON"}


def _write_lines(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "bad.ragtui.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


HEADER = {"ragtui_run": 1, "id": "r", "created_at": "2026-11-20T10:00:00Z"}


@pytest.mark.parametrize(
    ("case_line", "field", "expected", "found"),
    [
        (
            {
                "case_id": "x",
                "question": "q",
                "answer": "a",
                "scores": {"faithfulness": {"value": 1.7}},
            },
            "scores.faithfulness.value",
            "a number in [0, 1]",
            "1.7",
        ),
        ({"case_id": "x", "question": "q"}, "answer", "a string", None),
        ({"case_id": 5, "question": "q", "answer": "a"}, "case_id", "a string", "int 5"),
        (
            {"case_id": "x", "question": "q", "answer": "a", "contexts": [{"id": "c", "text": 3}]},
            "contexts[0].text",
            "a string",
            "int 3",
        ),
        (
            {
                "case_id": "x",
                "question": "q",
                "answer": "a",
                "claims": [{"metric": "faithfulness", "text": "t", "verdict": "MAYBE"}],
            },
            "claims[0].verdict",
            "one of SUPPORTED",
            "MAYBE",
        ),
        (
            {"case_id": "x", "question": "q", "answer": "a", "scores": {"f": {"value": "high"}}},
            "scores.f.value",
            "a finite number",
            'str "high"',
        ),
    ],
)
def test_bad_case_line_names_file_line_field_expected_found(
    tmp_path: Path, case_line: dict, field: str, expected: str, found: str | None
) -> None:
    good = {"case_id": "ok", "question": "q", "answer": "a"}
    path = _write_lines(tmp_path, HEADER, good, case_line)
    with pytest.raises(RunFileError) as info:
        read_run_file(path)
    err = info.value
    assert err.line == 3
    assert err.field == field
    message = str(err)
    assert message.startswith(f"{path}:3: field '{field}': expected {expected}")
    if found is not None:
        assert found in message


def test_bad_json_and_bad_header(tmp_path: Path) -> None:
    path = _write_lines(tmp_path, HEADER, '{"case_id": "x", "question": ')
    with pytest.raises(RunFileError, match=r":2: expected one JSON object per line"):
        read_run_file(path)
    path = _write_lines(tmp_path, {"case_id": "x"})
    with pytest.raises(RunFileError, match=r":1: field 'ragtui_run': expected the run header"):
        read_run_file(path)
    path = _write_lines(tmp_path, {**HEADER, "created_at": "yesterday"})
    with pytest.raises(RunFileError, match=r"created_at.*ISO 8601.*yesterday"):
        read_run_file(path)
    path = _write_lines(tmp_path, {**HEADER, "kind": "replay"})
    with pytest.raises(RunFileError, match=r"'kind': expected one of eval, rejudge, rerun"):
        read_run_file(path)
    empty = tmp_path / "empty.ragtui.jsonl"
    empty.write_text("")
    with pytest.raises(RunFileError, match="empty file"):
        read_run_file(empty)


def test_duplicate_case_ids_rejected(tmp_path: Path) -> None:
    case = {"case_id": "x", "question": "q", "answer": "a"}
    with pytest.raises(RunFileError, match=r":3: field 'case_id': expected a case id unique"):
        read_run_file(_write_lines(tmp_path, HEADER, case, case))


def test_config_key_derived_without_volatile_keys() -> None:
    judge = JudgeInfo("qwen2.5:7b", "ollama", "p1")
    base = {"top_k": 3, "generator": "llama3.2:3b"}
    key = derive_config_key(base, judge)
    assert derive_config_key({**base, "seed": 7, "run_id": "x", "timestamp": "now"}, judge) == key
    assert derive_config_key(dict(reversed(list(base.items()))), judge) == key
    assert derive_config_key({**base, "top_k": 5}, judge) != key
    assert derive_config_key(base, JudgeInfo("gpt-4o-mini", "openai", "p1")) != key
    assert derive_config_key(base, JudgeInfo("qwen2.5:7b", "ollama", "p2")) != key


def test_header_without_config_key_gets_derived_key(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path, {**HEADER, "config": {"top_k": 3, "seed": 1}, "judge": {"model": "m"}}
    )
    run = read_run_file(path).run
    assert run.config_key == derive_config_key({"top_k": 3}, JudgeInfo("m", None, None))
    assert run.name == "r" and run.kind == "eval"


def test_stable_case_id_ignores_whitespace_and_case() -> None:
    assert stable_case_id("Who approves  refunds?") == stable_case_id(" who approves refunds? ")
    assert stable_case_id("Who approves refunds?") != stable_case_id("Who approves invoices?")


def test_appender_resumes_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "batch.ragtui.jsonl"
    with RunFileAppender(path, FULL_RUN) as out:
        out.append(FULL_CASE)
    with path.open("a") as handle:
        handle.write('{"case_id": "torn", "quest')  # a write cut short by a kill
    resumed = RunFileAppender(path, FULL_RUN)
    assert resumed.done == {"refund-01"}
    resumed.close()
    assert read_run_file(path).cases == (FULL_CASE,)


@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        ('"latency_ms": 18014398509481985', "latency_ms", "a number of magnitude at most 2^53"),
        ('"latency_ms": ' + "9" * 400, "latency_ms", "a number of magnitude at most 2^53"),
        (
            '"contexts": [{"id": "c", "text": "t", "rank": 4294967296}]',
            "contexts[0].rank",
            "a 32-bit integer",
        ),
    ],
)
def test_numbers_too_big_for_the_index_are_clear_errors(
    tmp_path: Path, line: str, field: str, expected: str
) -> None:
    path = _write_lines(
        tmp_path, HEADER, '{"case_id": "c", "question": "q", "answer": "a", ' + line + "}"
    )
    with pytest.raises(RunFileError) as info:
        read_run_file(path)
    assert info.value.field == field and f"expected {expected}" in str(info.value)
