"""Small native histories for tests, written with the real writer."""

from __future__ import annotations

from pathlib import Path

from ragtui.core.model import Case, Chunk, Claim, JudgeInfo, Run, Score, StatedFigure
from ragtui.core.runfile import SUFFIX, write_run_file


def make_case(i: int, faith: float = 1.0, relevance_raw: int = 4) -> Case:
    return Case(
        case_id=f"case-{i:03d}",
        question=f"How long do refunds take for plan {i}?",
        answer="Refunds are issued within 5-10 business days.",
        reference="Refunds take 5 to 10 business days.",
        contexts=(
            Chunk(
                "c1", "Refunds are processed in 5-10 business days.", "refund_policy.md", 1, 0.83
            ),
            Chunk("c2", "Invoices can be issued in EUR or USD.", "billing_faq.md", 2, 0.61),
        ),
        scores={
            "faithfulness": Score(
                faith,
                raw={1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}[faith],
                label={1.0: "YES", 0.5: "PARTIAL", 0.0: "NO"}[faith],
                prompt_hash="p1",
            ),
            "answer_relevance": Score((relevance_raw - 1) / 4, raw=relevance_raw, scale=(1, 5)),
        },
        claims=(Claim("faithfulness", "Refunds take 5-10 business days", "SUPPORTED", ("c1",)),),
    )


def make_run(
    folder: Path,
    run_id: str,
    *,
    faith: list[float] | None = None,
    created_at: str = "2026-11-20T10:00:00Z",
    config: dict | None = None,
    n: int = 5,
) -> Path:
    faith = faith if faith is not None else [1.0] * n
    run = Run(
        id=run_id,
        name=run_id.split("-")[0],
        created_at=created_at,
        config=config if config is not None else {"top_k": 3, "generator": "llama3.2:3b"},
        judge=JudgeInfo("qwen2.5:7b", "ollama", "p1"),
    )
    cases = [make_case(i, f) for i, f in enumerate(faith)]
    return write_run_file(folder / f"{run_id}.ragtui.jsonl", run, cases)


def make_summary_only_run(folder: Path, *extra: StatedFigure) -> Path:
    """Run "popularity" with no cases, stating match accuracy 2/3 (3 cases), then its stderr
    1/3, as an Inspect log without samples does; `extra` figures after them."""
    run = Run(
        id="popularity",
        name="popularity",
        created_at="2025-05-12T20:28:13Z",
        config_key="cfg-p",
        stated=(
            StatedFigure("match", 2 / 3, raw=2 / 3, statistic="accuracy", n=3),
            StatedFigure("match", 1 / 3, raw=1 / 3, statistic="stderr", n=3),
            *extra,
        ),
    )
    return write_run_file(folder / f"popularity{SUFFIX}", run, [])
