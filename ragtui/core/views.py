"""Plain-data views shared by the CLI and the TUI (no rich, no textual here)."""

from __future__ import annotations

import json
from typing import Any

from ragtui.core.model import Case
from ragtui.core.store import Store
from ragtui.format import printable


def run_rows(store: Store) -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per run (oldest first) with its per-metric means, and the metric names."""
    means: dict[str, dict[str, float | None]] = {}
    errors: dict[str, dict[str, int]] = {}
    for row in store.run_means().to_pylist():
        means.setdefault(row["run_id"], {})[row["metric"]] = row["mean"]
        if row["n_errors"]:
            errors.setdefault(row["run_id"], {})[row["metric"]] = row["n_errors"]
    metrics = store.metrics()
    rows = []
    for run in store.runs().to_pylist():
        rows.append(
            {
                "id": run["run_id"],
                "created_at": run["created_at"].strftime("%Y-%m-%dT%H:%M:%SZ"),
                "name": run["name"],
                "kind": run["kind"],
                "config_key": run["config_key"],
                "config": json.loads(run["config"]),
                "generator": run["generator"],
                "judge": run["judge_model"],
                "judge_provider": run["judge_provider"],
                "judge_prompt_hash": run["judge_prompt_hash"],
                "dataset": run["dataset_name"],
                "dataset_version": run["dataset_version"],
                "parent": run["parent"],
                "n_cases": run["n_cases"],
                "means": means.get(run["run_id"], {}),
                "errors": errors.get(run["run_id"], {}),
                "file": run["file_path"],
            }
        )
    return rows, metrics


def case_lines(case: Case) -> list[str]:
    """A case as plain text lines: question, reference, answer, chunks, scores, claims."""
    out = [f"case {printable(case.case_id)}", "", "Question", f"  {printable(case.question)}"]
    if case.reference is not None:
        out += ["Reference", f"  {printable(case.reference)}"]
    out += ["Answer", f"  {printable(case.answer)}", "", "Chunks"]
    for chunk in case.contexts:
        score = "" if chunk.score is None else f"{chunk.score:.2f}"
        rank = "" if chunk.rank is None else f"#{chunk.rank}"
        out.append(
            f"  [{printable(chunk.id)}] {rank} {printable(chunk.source or '')} {score}".rstrip()
        )
        out.append(f"      {printable(chunk.text)}")
    out += ["", "Scores"]
    for metric, score in case.scores.items():
        label = f" {printable(score.label)}" if score.label else ""
        raw = (
            ""
            if score.raw is None
            else f"  raw {printable(json.dumps(score.raw, ensure_ascii=False))}"
        )
        out.append(f"  {printable(metric)}: {100 * score.value:.1f}{label}{raw}")
    for metric, message in case.errors.items():
        out.append(f"  {printable(metric)}: ERROR {printable(message)}")
    for metric, value in case.human.items():
        out.append(f"  human {printable(metric)}: {100 * value:.1f}")
    if case.claims:
        out += ["", "Claims"]
        mark = {"SUPPORTED": "✓", "PARTIAL": "~", "UNSUPPORTED": "✗"}
        for claim in case.claims:
            chunks = ", ".join(printable(c) for c in claim.chunks) or "—"
            out.append(
                f"  {mark.get(claim.verdict, '?')} {claim.verdict:<11} {printable(claim.text)}  [{chunks}]"
            )
            if claim.reason:
                out.append(f"      {printable(claim.reason)}")
    return out
