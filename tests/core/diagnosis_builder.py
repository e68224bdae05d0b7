"""Hand-built native run files for the diagnosis tests: cases with chunks, claims and scores,
written with the real writer into a temp folder and read back through the real index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Chunk, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import write_run_file


def chunk_text(chunk_id: str) -> str:
    return f"Passage {chunk_id}: what the handbook says about {chunk_id}."


def chunks(*ids: str) -> tuple[Chunk, ...]:
    """Chunks in rank order, each with its own text."""
    return tuple(
        Chunk(cid, chunk_text(cid), f"{cid.split('-')[0]}.md", rank, round(0.9 - 0.05 * rank, 3))
        for rank, cid in enumerate(ids, start=1)
    )


def claim(text: str, verdict: str, *chunk_ids: str) -> Claim:
    return Claim("faithfulness", text, verdict, tuple(chunk_ids))


def case(
    case_id: str,
    scores: Mapping[str, float | str],
    *,
    contexts: Sequence[Chunk] = (),
    claims: Sequence[Claim] = (),
    answer: str | None = None,
    latency_ms: float | None = None,
    metadata: Mapping[str, Any] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> Case:
    """scores: metric -> value, or a str for a metric that errored."""
    got = {
        m: Score(float(v), threshold=(thresholds or {}).get(m))
        for m, v in scores.items()
        if not isinstance(v, str)
    }
    errors = {m: v for m, v in scores.items() if isinstance(v, str)}
    return Case(
        case_id=case_id,
        question=f"What does the handbook say about {case_id}?",
        answer=answer if answer is not None else f"The handbook covers {case_id}.",
        reference=f"The reference answer for {case_id}.",
        contexts=tuple(contexts),
        scores=got,
        claims=tuple(claims),
        errors=errors,
        latency_ms=latency_ms,
        metadata=dict(metadata or {}),
    )


def write(
    folder: Path,
    run_id: str,
    cases: Sequence[Case],
    *,
    config: Mapping[str, Any] | None = None,
    day: int = 1,
    dataset: tuple[str, str] = ("golden", "v1"),
    name: str | None = None,
) -> Path:
    """A run; runs with the same `config` (seed aside) are reruns of one config."""
    run = Run(
        id=run_id,
        name=name or run_id,
        created_at=f"2026-11-{day:02d}T10:00:00Z",
        config=dict(config or {"generator": "llama3.2:3b", "top_k": 3}),
        judge=JudgeInfo("qwen2.5:7b", "ollama", "judge-v1"),
        dataset=DatasetInfo(*dataset),
    )
    folder.mkdir(parents=True, exist_ok=True)
    return write_run_file(folder / f"{run_id}.ragtui.jsonl", run, list(cases))
