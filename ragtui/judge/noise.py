"""Noise from reruns: the noise floor of a group of reruns, and full-pipeline reruns.

Judge-only noise comes from `runner.noise_reruns` (same answers, fresh judge calls). Full noise
runs the user's own pipeline (`[rerun] command` in ragtui.toml) K times and imports each result
as a `rerun` run with the parent's config key, so `compare_runs` averages them into the baseline.
"""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ragtui.config import DEFAULT_RERUN_TIMEOUT
from ragtui.core import stats
from ragtui.core.errors import RagtuiError
from ragtui.core.model import Run
from ragtui.core.paths import new_run_path
from ragtui.core.runfile import is_run_file, read_run_file, write_run_file
from ragtui.core.store import Store
from ragtui.judge.command import command_argv, run_command


@dataclass(frozen=True)
class MetricNoise:
    metric: str
    n: int  # cases scored in every rerun
    means: tuple[float, ...]  # each rerun's mean over those cases
    errors: tuple[int, ...]  # each rerun's errored cases for the metric
    floor: stats.NoiseFloor | None  # None with fewer than 2 reruns or no common case
    identical: bool = False  # every rerun graded every common case alike
    runs: tuple[str, ...] = ()  # the reruns that graded this metric (means, errors: theirs)


def rerun_noise(
    store: Store,
    run_ids: Sequence[str],
    metrics: Sequence[str] | None = None,
    *,
    left_out: Mapping[str, int] | None = None,
) -> list[MetricNoise]:
    """Per metric: the k x N matrix of cases scored by all k runs, and its noise floor.

    `left_out`: per run, the cases its batch left out of the file because the judge failed
    every grade: each counts as an errored score of every metric (it is in no row)."""
    table = store.scores(list(run_ids), list(metrics) if metrics else None).to_pylist()
    names = list(metrics) if metrics else sorted({r["metric"] for r in table})
    out = []
    for metric in names:
        rows = [r for r in table if r["metric"] == metric]
        # the runs that graded it: a rerun of some metrics only (`-m`) has no row of the others
        # and would leave no case in common
        graded = {r["run_id"] for r in rows}
        measured = [rid for rid in run_ids if rid in graded]
        by_run: dict[str, dict[str, float]] = {rid: {} for rid in measured}
        errors = {rid: (left_out or {}).get(rid, 0) for rid in measured}
        for r in rows:
            if r["value"] is None:
                errors[r["run_id"]] += 1
            else:
                by_run[r["run_id"]][r["case_id"]] = r["value"]
        common = sorted(set.intersection(*(set(v) for v in by_run.values()))) if by_run else []
        matrix = np.array([[by_run[rid][c] for c in common] for rid in measured], dtype=float)
        out.append(
            MetricNoise(
                metric=metric,
                n=len(common),
                means=tuple(float(m) for m in matrix.mean(axis=1)) if common else (),
                errors=tuple(errors[rid] for rid in measured),
                floor=stats.noise_floor(matrix) if common else None,
                identical=len(measured) > 1 and bool(common) and bool((matrix == matrix[0]).all()),
                runs=tuple(measured),
            )
        )
    return out


def noise_lines(noise: Sequence[MetricNoise], margin: float = 0.05) -> list[str]:
    """Plain text, in points: one line per metric."""
    lines = []
    for m in noise:
        if m.floor is None:
            lines.append(f"{m.metric}: no noise floor (needs 2 reruns scoring the same cases)")
            continue
        f = m.floor
        means = " / ".join(f"{100 * x:.1f}" for x in m.means)
        icc = "—" if f.icc is None else f"{f.icc:.2f}"
        # (in the words compare's rule line uses)
        rule = "within it" if stats.rule_holds(f.rerun_delta, margin) else "above it"
        errs = sum(m.errors)
        lines.append(
            f"{m.metric}: reruns {means} · noise floor ±{100 * f.noise_floor:.1f} points · "
            f"reruns differ by {100 * f.rerun_delta:.1f} points (rule of thumb: < "
            f"{100 * margin:g}, {rule}) · ICC {icc} · N {m.n}"
            + (f" · {errs} errored scores left out" if errs else "")
            + (
                " · every run gave every case the same grade: this judge (at this temperature) "
                "adds no noise, and a comparison takes such reruns for cached copies"
                if m.identical
                else ""
            )
        )
    return lines


# ---------------------------------------------------------------- full pipeline reruns


async def pipeline_rerun(
    store: Store,
    parent: Run,
    command: str,
    run_id: str,
    *,
    on_line: Callable[[str], None] | None = None,
    timeout: float = DEFAULT_RERUN_TIMEOUT,
) -> list[Path]:
    """Run the user's pipeline once (an argv list, no shell, within `timeout` seconds) and
    import what it wrote into the runs folder.

    Placeholders: {config} (a JSON file with the parent's config), {out} (an empty folder the
    command writes its result files into), {run_id} (the id the new run will get).
    """
    store.require_writable("write pipeline reruns")  # (before the command runs, not after)
    with tempfile.TemporaryDirectory(prefix="ragtui-rerun-") as tmp:
        config_path = Path(tmp) / "config.json"
        config_path.write_text(json.dumps(dict(parent.config), indent=2), encoding="utf-8")
        out = Path(tmp) / "out"
        out.mkdir()
        argv = command_argv(
            command, "rerun.command", config=str(config_path), out=str(out), run_id=run_id
        )
        await run_command(argv, timeout=timeout, on_line=on_line)
        line = shlex.join(argv)
        files = sorted(p for p in out.rglob("*") if p.is_file())
        if not files:
            raise RagtuiError(f"rerun command wrote no result file into {{out}}: {line}")
        runs = []
        for path in files:
            if is_run_file(path):
                runs.append(read_run_file(path, whole=True))  # a cut file is an error
            else:
                from ragtui.importers import load_file

                runs.extend(load_file(path))
        written = []
        for i, rf in enumerate(runs):
            rid = run_id if len(runs) == 1 else f"{run_id}-{i + 1}"
            header = replace(
                rf.run,
                id=rid,
                kind="rerun",
                parent=parent.id,
                config_key=parent.config_key,
                name=f"{parent.name} rerun ({rid})",
            )
            target = new_run_path(store.folder, rid)  # a name built by ragtui, never the id
            write_run_file(target, header, rf.cases)
            store.index_file(target)
            written.append(target)
        return written
