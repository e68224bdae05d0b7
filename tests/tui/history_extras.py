"""A small history with what the plain `history` fixture lacks: cases that carry latency,
tokens and cost; a run whose judge replies could not be parsed; a summary-only run. Written
with write_run_file; the tests read the expected figures back from these files with json."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from ragtui.core.model import Run, Score, StatedFigure
from ragtui.core.runfile import SUFFIX, write_run_file
from tests.tui.conftest import CONFIGS, DATASET, JUDGE, history_cases

PARSE_FAILED = (2, 9, 16)  # cases whose faithfulness reply had no label


def write_extras(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (run_id, day, cost) in enumerate(
        (("priced-a", 20, 0.002), ("priced-b", 21, 0.004), ("cheap", 22, 0.0005))
    ):
        cases = []
        for k, case in enumerate(history_cases(18, 0.75, seed=40 + i)):
            meta = {"cost": cost * (1 + k % 3), "prompt_tokens": 300 + 10 * k}
            meta["completion_tokens"] = 40 + k
            cases.append(replace(case, metadata=meta, latency_ms=float(700 + 50 * i + 7 * k)))
        key = "cfg-cheap" if run_id == "cheap" else "cfg-priced"
        run = Run(
            id=run_id,
            name=run_id,
            created_at=f"2026-11-{day}T10:00:00Z",
            config=CONFIGS["base"],
            config_key=key,
            judge=JUDGE,
            dataset=DATASET,
        )
        write_run_file(folder / f"{run_id}{SUFFIX}", run, cases)
    failed = []
    for k, case in enumerate(history_cases(18, 0.75, seed=50)):
        if k in PARSE_FAILED:
            scores = dict(case.scores)
            scores["faithfulness"] = Score(value=0.0, reason="parse failure: no YES/PARTIAL/NO")
            case = replace(case, scores=scores)
        failed.append(case)
    run = Run(
        id="unparsed",
        name="unparsed",
        created_at="2026-11-23T10:00:00Z",
        config_key="cfg-unparsed",
        judge=JUDGE,
    )
    write_run_file(folder / f"unparsed{SUFFIX}", run, failed)
    summary = Run(
        id="summary",
        name="summary",
        created_at="2026-11-24T10:00:00Z",
        config_key="cfg-summary",
        stated=(
            StatedFigure("faithfulness", 0.625, raw=0.625, statistic="mean", n=18),
            StatedFigure("answer_relevance", 0.5, raw=0.5, statistic="mean", n=18),
        ),
    )
    write_run_file(folder / f"summary{SUFFIX}", summary, [])
    return folder


def file_cases(folder: Path, run_id: str) -> list[dict]:
    lines = (folder / f"{run_id}{SUFFIX}").read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(line) for line in lines]
