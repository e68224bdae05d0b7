"""A writer of real native run files in a temp folder, for comparison tests (core and CLI)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragtui.core.model import Case, Claim, DatasetInfo, JudgeInfo, Run, Score
from ragtui.core.runfile import write_run_file
from ragtui.core.store import Store


class RunWriter:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0
        self._stores: list[Store] = []

    def write(
        self,
        run_id: str,
        scores: Mapping[str, Mapping[str, float | str]],
        *,
        config: Mapping[str, Any] | None = None,
        judge: str = "qwen2.5:7b",
        prompt_hash: str = "faith-label-v1",
        dataset_version: str = "v3",
        kind: str = "eval",
        parent: str | None = None,
        labels: Mapping[str, Mapping[str, str]] | None = None,
        human: Mapping[str, Mapping[str, float]] | None = None,
        name: str | None = None,
        answers: Mapping[str, str] | None = None,
        claims: Mapping[str, list[Claim]] | None = None,
        scales: Mapping[str, tuple[float, float]] | None = None,
        reasons: Mapping[str, Mapping[str, str]] | None = None,
        clusters: Mapping[str, str] | None = None,
        metadata: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Path:
        """scores: metric -> case id -> value, or an error message (a str) for a failed grade.
        scales: metric -> the declared scale its raw values came on (value stays normalised);
        reasons: metric -> case id -> the grade's reason ("parse failure: ..." marks one)."""
        self.count += 1
        case_ids = list(dict.fromkeys(c for per in scores.values() for c in per))
        cases = []
        for cid in case_ids:
            got: dict[str, Score] = {}
            errors: dict[str, str] = {}
            for metric, per in scores.items():
                if cid not in per:
                    continue
                value = per[cid]
                if isinstance(value, str):
                    errors[metric] = value
                else:
                    label = (labels or {}).get(metric, {}).get(cid)
                    scale = (scales or {}).get(metric)
                    raw = None if scale is None else scale[0] + float(value) * (scale[1] - scale[0])
                    got[metric] = Score(
                        value=float(value),
                        raw=raw,
                        label=label,
                        scale=scale,
                        reason=(reasons or {}).get(metric, {}).get(cid),
                    )
            cases.append(
                Case(
                    case_id=cid,
                    question=f"question {cid}?",
                    answer=(answers or {}).get(cid, f"answer {cid}"),
                    scores=got,
                    errors=errors,
                    claims=tuple((claims or {}).get(cid, ())),
                    human={m: h[cid] for m, h in (human or {}).items() if cid in h},
                    cluster=(clusters or {}).get(cid),
                    metadata=dict((metadata or {}).get(cid, {})),
                )
            )
        run = Run(
            id=run_id,
            name=name or run_id,
            created_at=f"2026-11-{10 + self.count:02d}T10:00:00Z",
            config=dict(config or {"generator": "llama3.2:3b", "prompt": "v1"}),
            judge=JudgeInfo(judge, "ollama", prompt_hash),
            dataset=DatasetInfo("golden", dataset_version),
            kind=kind,
            parent=parent,
        )
        return write_run_file(self.folder / f"{run_id}.ragtui.jsonl", run, cases)

    def store(self) -> Store:
        store = Store.open(self.folder)
        assert not store.problems, store.problems
        self._stores.append(store)
        return store

    def close(self) -> None:
        for store in self._stores:
            store.close()
