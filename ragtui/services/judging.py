"""Judge workflows for both shells: choose a judge, plan a batch, re-judge, noise check.

All of it is async and never blocks the event loop (index queries and statistics go through
`asyncio.to_thread`), so the TUI awaits it in an async worker and the CLI in `asyncio.run`.
Progress is reported as (label, Progress) on the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ragtui.config import Config, JudgeConfig, adhoc_judge
from ragtui.config_values import number
from ragtui.core.compare import Comparison
from ragtui.core.errors import InputError, RagtuiError, UnknownMetricError
from ragtui.core.model import Run
from ragtui.core.queries import DERIVED
from ragtui.core.store import Store
from ragtui.judge.client import JudgeClient
from ragtui.judge.metrics import get_metrics
from ragtui.judge.noise import MetricNoise, pipeline_rerun, rerun_noise
from ragtui.judge.prompts import same_judge
from ragtui.judge.runner import (
    BatchResult,
    Progress,
    batch_run,
    default_metrics,
    judge_run,
    noise_reruns,
)
from ragtui.services import comparing
from ragtui.services.workspace import Workspace
from ragtui.trust import user_config_path

LabelledProgress = Callable[[str, Progress], None]


def pick_judge(
    config: Config,
    name: str | None = None,
    provider: str | None = None,
    url: str | None = None,
    model: str | None = None,
    timeout: float | None = None,
    concurrency: int | None = None,
) -> JudgeConfig:
    """A judge named in the configuration, or an ad-hoc one (provider, url and model)."""
    adhoc = (provider, url, model)
    if name and any(adhoc):
        raise InputError("give either --judge NAME or --provider/--url/--model, not both")
    if name:
        judge = config.judge(name)
    elif all(adhoc):
        assert provider and url and model
        judge = adhoc_judge(provider, url, model)
    elif any(adhoc):
        missing = [
            f"--{k}" for k, v in zip(("provider", "url", "model"), adhoc, strict=True) if not v
        ]
        raise InputError(
            f"an ad-hoc judge needs --provider, --url and --model (missing {', '.join(missing)})"
        )
    else:
        known = ", ".join(sorted(config.judges)) or f"none configured in {user_config_path()}"
        raise InputError(f"name a judge: --judge NAME ({known}) or --provider/--url/--model")
    overrides = {"timeout": timeout, "concurrency": concurrency}
    checked = {k: number(v, f"--{k}", k) for k, v in overrides.items() if v is not None}
    return replace(judge, **checked)


async def check_judges(judges: Sequence[JudgeConfig]) -> list[str | None]:
    """Each judge checked at once (reachable, has its model): None when fine, else why not."""

    async def one(judge: JudgeConfig) -> str | None:
        try:
            async with JudgeClient(judge) as client:
                return await client.check()
        except RagtuiError as err:  # e.g. the key's environment variable is unset
            return str(err)

    return list(await asyncio.gather(*(one(j) for j in judges)))


@dataclass(frozen=True)
class BatchPlan:
    """What a batch will do, shown before it starts: cases x metrics (x reruns) = calls."""

    run_id: str
    run_name: str
    judge: JudgeConfig
    metrics: tuple[str, ...]
    cases: int
    times: int = 1
    done: int = 0  # cases (over every rerun) an earlier run of this very batch already judged

    @property
    def calls(self) -> int:
        return self.cases * len(self.metrics) * self.times

    @property
    def made(self) -> int:
        """Of `calls`, those an earlier run of the batch already made: it resumes after them."""
        return self.done * len(self.metrics)


def plan_batch(
    store: Store,
    run_ref: str,
    judge: JudgeConfig,
    metrics: Sequence[str] | None = None,
    *,
    times: int = 1,
    case_ids: Sequence[str] | None = None,
) -> BatchPlan:
    """The size of a re-judge (times=1) or a noise check (times=K); runs queries: call it in a
    thread from the UI."""
    run_id = store.resolve_run(run_ref)
    names = tuple(metrics or default_metrics(store, run_id))
    parent = store.run(run_id)
    if case_ids:
        return BatchPlan(run_id, parent.name, judge, names, len(case_ids), times)
    rows = store.run_rows()
    cases = next(r.n_cases for r in rows if r.id == run_id)
    # the batch reopens the run file(s) an earlier run of it began and judges only the cases
    # not in them: a plan of every call would overstate what is sent (a finished batch: none)
    chosen = get_metrics(names)
    ids = (
        [batch_run(parent, judge, chosen, kind="rerun", index=i).id for i in range(1, times + 1)]
        if times > 1
        else [batch_run(parent, judge, chosen).id]
    )
    known = {r.id for r in rows}
    done = sum(min(cases, store.case_count(i)) for i in ids if i in known)
    return BatchPlan(run_id, parent.name, judge, names, cases, times, done)


async def rejudge(
    store: Store,
    run_ref: str,
    judge: JudgeConfig,
    *,
    metrics: Sequence[str] | None = None,
    case_ids: Sequence[str] | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> BatchResult:
    """Re-judge a run (or some of its cases) into a new `rejudge` run; resumable. A batch that
    judged nothing (the judge unreachable from the start) leaves no empty run behind."""
    return await judge_run(
        store, run_ref, judge, metrics=metrics, case_ids=case_ids, progress=progress
    )


@dataclass(frozen=True)
class NoiseCheck:
    run_id: str
    reruns: list[str]  # the group whose spread is the noise floor
    batches: list[BatchResult]  # judge-only reruns (empty for full-pipeline reruns)
    noise: list[MetricNoise]
    comparison: Comparison | None = None  # A vs B with the new reruns, when asked
    before: Comparison | None = None  # the verdict as it stood before the reruns
    note: str | None = None  # e.g. "B re-judged by J for a like-for-like verdict"
    full: bool = False


async def noise_check(
    workspace: Workspace,
    run_ref: str,
    judge: JudgeConfig,
    *,
    times: int = 3,
    metrics: Sequence[str] | None = None,
    against: str | None = None,
    progress: LabelledProgress | None = None,
) -> NoiseCheck:
    """Judge-only noise: K fresh judge calls on the same answers (cache bypassed), the noise
    floor per metric, and, with `against`, the verdict A vs B as it stands with them."""
    store = workspace.store
    parent_id = await asyncio.to_thread(store.resolve_run, run_ref)
    before = None
    if against:
        before = await asyncio.to_thread(comparing.compare, workspace, parent_id, against)
    batches = await noise_reruns(
        store,
        parent_id,
        judge,
        times=times,
        metrics=list(metrics) if metrics else None,
        progress=None
        if progress is None
        else lambda i, p: progress(f"rerun {i} of {times}, cache bypassed", p),
    )
    asked = [b.run_id for b in batches]
    have = await asyncio.to_thread(store.metrics, asked)
    names = [m for m in metrics if m in set(have)] if metrics else have
    # the floor over every judge-only replicate of the parent's answers: the reruns asked now,
    # those an earlier check made (`--times 2` after `--times 3` printed a floor over 2 above a
    # verdict over 3), and the parent when its judge is the one rerun; not a run of the config
    # that made new answers (its noise is generation noise too)
    family = await asyncio.to_thread(store.reruns, asked[0])

    def replicates() -> list[str]:
        return [r for r in family if r in (parent_id, *asked) or store.run(r).parent == parent_id]

    group = await asyncio.to_thread(replicates)
    left_out = await asyncio.to_thread(_left_out, store, parent_id, group)
    noise = await asyncio.to_thread(rerun_noise, store, group, names, left_out=left_out)
    comparison, note = None, await asyncio.to_thread(_other_judge, store, parent_id, group[0])
    if against:
        reruns_of_parent = await asyncio.to_thread(store.reruns, group[0])
        # A: the parent when the reruns replicate it (same judge), else the first rerun
        a_ref = parent_id if parent_id in reruns_of_parent else group[0]
        b_ref, like = await _like_for_like(store, against, judge, names, group[0], progress)
        note = " · ".join(n for n in (note, like) if n) or None
        comparison = await _compare(workspace, a_ref, b_ref, names)
    return NoiseCheck(parent_id, group, batches, noise, comparison, before, note)


def _left_out(store: Store, parent_id: str, group: Sequence[str]) -> dict[str, int]:
    """Per noise rerun of the parent, the parent's cases missing from it: a noise rerun grades
    every case, and leaves out of its file a case whose every grade the judge failed."""
    total = store.case_count(parent_id)
    out = {}
    for rid in group:
        run = store.run(rid)
        if rid != parent_id and run.kind == "rerun" and run.parent == parent_id:
            out[rid] = max(0, total - store.case_count(rid))
    return out


def _other_judge(store: Store, run_id: str, rerun_id: str) -> str | None:
    """A line when the noise judge is not the one that graded the run: the floor is that
    judge's, which the run's own judge need not share."""
    run, rerun = store.run(run_id), store.run(rerun_id)
    if same_judge(run.judge, rerun.judge):
        return None
    # the shells show it through their neutraliser, as every line here
    return (
        f"the noise floor is {rerun.judge.model}'s: {run_id} was graded by "
        f"{run.judge.model or 'an unknown judge'}, whose own noise may differ"
    )


async def full_noise_check(
    workspace: Workspace,
    run_ref: str,
    *,
    times: int = 3,
    metrics: Sequence[str] | None = None,
    against: str | None = None,
    on_line: Callable[[str], None] | None = None,
) -> NoiseCheck:
    """Full-pipeline noise: the user's own `[rerun] command` K times, each result imported as a
    `rerun` of the run's config, then the noise floor over the parent and its reruns."""
    config = workspace.require_config()
    if not config.rerun_command:
        raise InputError(f'--full needs [rerun] command = "..." in {user_config_path()}')
    store = workspace.store
    parent_id = await asyncio.to_thread(store.resolve_run, run_ref)
    parent = await asyncio.to_thread(store.run, parent_id)
    if metrics:  # before running the user's command K times
        have = await asyncio.to_thread(store.metrics, [parent_id])
        unknown = [m for m in metrics if m not in have]
        if unknown:
            raise UnknownMetricError(
                f"metric {unknown[0]!r} is not scored in {parent_id} "
                f"(it has: {', '.join(have) or 'none'})"
            )
    prefix = await asyncio.to_thread(_free_prefix, store, f"{parent.id}{DERIVED}full-", times)
    ids: list[str] = []
    for i in range(1, times + 1):
        if on_line:
            on_line(f"rerun {i}/{times}: {config.rerun_command}")
        paths = await pipeline_rerun(
            store,
            parent,
            config.rerun_command,
            f"{prefix}-{i}",
            on_line=None if on_line is None else (lambda line: on_line(f"  | {line}")),
            timeout=config.rerun_timeout,
        )
        for path in paths:
            ids.append(await asyncio.to_thread(store.index_file, path))
    group = await asyncio.to_thread(_pipeline_replicates, store, parent_id, ids)
    names = list(metrics) if metrics else await asyncio.to_thread(store.metrics, group)
    noise = await asyncio.to_thread(rerun_noise, store, group, names)
    comparison = None
    if against:
        comparison = await _compare(workspace, parent_id, against, names)
    return NoiseCheck(parent_id, group, [], noise, comparison, full=True)


def _free_prefix(store: Store, start: str, times: int) -> str:
    """`start` + the time to the second, made unique: a second check within that second (a
    script's next command) took the same run ids and failed on them."""
    known = set(store.runs().column("run_id").to_pylist())
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for k in range(1000):
        prefix = f"{start}{stamp}" + (f".{k}" if k else "")
        if not any(f"{prefix}-{i}" in known for i in range(1, times + 1)):
            return prefix
    raise InputError(f"no free run id for the reruns: {start}{stamp}.* are all used")


def _pipeline_replicates(store: Store, parent_id: str, ids: Sequence[str]) -> list[str]:
    """The floor's runs, oldest first: the parent, the pipeline reruns asked now and those an
    earlier `--full` made of it (new answers: a judge-only rerun shares the parent's), as the
    comparison counts the config's reruns (`-k 2` twice printed a floor over 3 runs, above a
    verdict over 5)."""
    family = store.reruns(parent_id)
    prints = store.answer_fingerprints(family)

    def earlier(r: str) -> bool:
        run = store.run(r)
        return (
            run.kind == "rerun"
            and run.parent == parent_id
            and prints.get(r) != prints.get(parent_id)
        )

    chosen = [r for r in family if r == parent_id or r in ids or earlier(r)]
    return chosen + [r for r in ids if r not in chosen]


async def _compare(workspace: Workspace, a: str, b: str, metrics: list[str]) -> Comparison:
    def run() -> Comparison:
        store = workspace.store
        have_b = set(store.metrics([store.resolve_run(b)]))
        chosen = [m for m in metrics if m in have_b] or None
        return comparing.compare(workspace, a, b, metrics=chosen)

    return await asyncio.to_thread(run)


async def _like_for_like(
    store: Store,
    b_ref: str,
    judge: JudgeConfig,
    metrics: list[str],
    rerun_id: str,
    progress: LabelledProgress | None,
) -> tuple[str, str | None]:
    """B as graded by the noise judge, so the verdict does not mix two judges' scales: B itself
    when the same judge and prompts graded it, else a (cached) re-judge of B."""

    def runs() -> tuple[str, Run, Run]:
        b_id = store.resolve_run(b_ref)
        return b_id, store.run(b_id), store.run(rerun_id)

    b_id, b, rerun = await asyncio.to_thread(runs)
    if same_judge(b.judge, rerun.judge):
        return b_id, None
    label = f"re-judging B ({b.name}) with {judge.name}"
    result = await judge_run(
        store,
        b_id,
        judge,
        metrics=metrics,
        progress=None if progress is None else (lambda p: progress(label, p)),
    )
    return result.run_id, (
        f"B re-judged by {judge.name} for a like-for-like verdict: {result.summary()}"
    )
