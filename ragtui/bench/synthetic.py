"""Synthetic run histories for benchmarks and scale tests (realistic text lengths, seeded)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from ragtui.core.model import Case, Chunk, Claim, JudgeInfo, Run, Score
from ragtui.core.runfile import write_run_file

_WORDS = [
    "refund",
    "invoice",
    "account",
    "billing",
    "support",
    "plan",
    "enterprise",
    "customer",
    "request",
    "approval",
    "manager",
    "credit",
    "card",
    "renewal",
    "period",
    "policy",
    "business",
    "days",
    "ticket",
    "escalation",
    "priority",
    "response",
    "rate",
    "limit",
    "token",
    "quota",
    "burst",
    "window",
    "region",
    "storage",
    "retention",
    "backup",
    "export",
    "audit",
    "log",
    "admin",
    "workspace",
    "member",
    "role",
    "permission",
    "single",
    "sign-on",
    "identity",
    "provider",
    "certificate",
    "webhook",
]
_LABELS = ((1.0, "YES"), (0.5, "PARTIAL"), (0.0, "NO"))
METRIC_NAMES = (
    "faithfulness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "answer_correctness",
    "context_relevance",
    "coherence",
    "conciseness",
)


def _sentence(rng: random.Random, length: int) -> str:
    words = []
    size = 0
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    text = " ".join(words)
    return text[0].upper() + text[1:length] + "."


def synthetic_cases(
    n_cases: int, n_metrics: int, *, seed: int, shift: float = 0.0, texts: bool = True
) -> Iterator[Case]:
    """Cases with 3-5 chunks of ~400 characters; faithfulness is a YES/PARTIAL/NO label.

    `texts=False` writes lean cases (short question and answer, no chunks, no claims) for
    benchmarks about scores only, such as a comparison of 100,000-case runs.
    """
    rng = random.Random(seed)
    metrics = METRIC_NAMES[:n_metrics]
    for i in range(n_cases):
        chunks = tuple(
            Chunk(
                id=f"c{k + 1}",
                text=_sentence(rng, 400),
                source=f"doc_{rng.randrange(40)}.md",
                rank=k + 1,
                score=round(0.9 - 0.07 * k, 3),
            )
            for k in range(rng.randint(3, 5) if texts else 0)
        )
        scores: dict[str, Score] = {}
        for metric in metrics:
            if metric == "faithfulness":
                value, label = _LABELS[min(2, max(0, int(rng.random() * 2.2 - shift * 3)))]
                scores[metric] = Score(value=value, raw=label, label=label, prompt_hash="p-bench")
            else:
                value = round(min(1.0, max(0.0, rng.gauss(0.72 + shift, 0.18))), 4)
                scores[metric] = Score(value=value, prompt_hash="p-bench")
        if not texts:
            yield Case(
                case_id=f"case-{i:06d}",
                question=f"Question {i}?",
                answer="An answer.",
                scores=scores,
                latency_ms=float(rng.randint(300, 2500)),
            )
            continue
        yield Case(
            case_id=f"case-{i:06d}",
            question=_sentence(rng, 90).rstrip(".") + "?",
            answer=_sentence(rng, 260),
            reference=_sentence(rng, 160),
            contexts=chunks,
            scores=scores,
            claims=(Claim("faithfulness", _sentence(rng, 60), "SUPPORTED", ("c1",)),),
            latency_ms=float(rng.randint(300, 2500)),
        )


def write_synthetic_history(
    folder: Path, *, runs: int, cases: int, metrics: int = 4, seed: int = 7, texts: bool = True
) -> list[Path]:
    """`runs` runs of `cases` cases each, over four configs, one file per run.

    Runs r and r + 4 share a config (reruns of each other); `texts` as in `synthetic_cases`.
    """
    paths = []
    for r in range(runs):
        config = {"top_k": 3 + r % 4, "generator": "llama3.2:3b", "prompt": "default-v1"}
        run = Run(
            id=f"synthetic-{r:04d}",
            name=f"config-{r % 4}",
            created_at=f"2026-{1 + (r // 28) % 12:02d}-{1 + r % 28:02d}T10:00:00Z",
            config=config,
            judge=JudgeInfo("qwen2.5:7b", "ollama", "p-bench"),
        )
        body = synthetic_cases(
            cases, metrics, seed=seed * 100_003 + r, shift=0.02 * (r % 4), texts=texts
        )
        paths.append(write_run_file(folder / f"{run.id}.ragtui.jsonl", run, body))
    return paths
