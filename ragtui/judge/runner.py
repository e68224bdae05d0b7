"""Batches: re-judge a run, or rerun the judge K times on the same answers (judge-only noise).

A batch writes a new native run file case by case (append + fsync), so a killed process loses
only the cases in flight; the run id and file name are derived from parent, judge and metrics,
so the same command reopens the same file and judges only the cases not yet in it. The file is
indexed when the batch ends. Everything here is async and UI-free and never blocks its event
loop (index and file work go through `asyncio.to_thread`): the CLI drives it with `asyncio.run`,
a Textual async worker awaits it on the UI loop; `progress` is called on the event loop thread
after every finished case.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ragtui.config import JudgeConfig
from ragtui.core.errors import InputError
from ragtui.core.model import Case, JudgeInfo, Run, derive_config_key
from ragtui.core.paths import resumable_run_path
from ragtui.core.queries import DERIVED
from ragtui.core.runfile import RunFileAppender, iter_run_file
from ragtui.core.store import Store
from ragtui.format.text import plural
from ragtui.judge.client import JudgeClient, JudgeError, JudgeUnreachable
from ragtui.judge.journal import ReplyJournal
from ragtui.judge.metrics import DEFAULT_METRICS, METRICS, Metric, NotGradable, Outcome, get_metrics
from ragtui.judge.prompts import PROMPT_SET_HASH, combined_hash, same_judge

MAX_ERROR_SAMPLES = 5
# A batch whose first cases all fail every grade the same way (a wrong model, a server that
# answers 500 to everything) stops: going on would only spend the retries of every other case.
STOP_AFTER_FAILED_CASES = 3
T = TypeVar("T")


@dataclass
class Progress:
    """Counts so far; `done` includes cases found already judged when the batch resumed."""

    run_id: str
    total: int
    done: int = 0
    resumed: int = 0
    scored: int = 0  # metric outcomes, not cases (see ragtui.judge.metrics)
    parse_failures: int = 0
    errors: int = 0
    cached: int = 0  # replies served from the index cache
    case_id: str | None = None  # the case just finished
    left_out: int = 0  # cases whose every grade failed: not written, so the next run retries them
    partial: int = 0  # cases written with grades the judge failed: the next run retries those
    retried: int = 0  # cases written before with grades the judge failed, graded again here


@dataclass
class BatchResult:
    run_id: str
    path: Path
    progress: Progress
    seconds: float
    calls: int  # HTTP attempts, retries included
    error_samples: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # the errors of error_samples, alone
    metrics: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # e.g. a crash-left file was replaced

    def summary(self) -> str:
        """One line; the three counts are grades (case x metric) and add up to all of them."""
        p = self.progress
        judged = p.done - p.resumed
        text = (
            f"{self.run_id}: {plural(judged, 'case')} judged"
            + (f" ({p.resumed} already done)" if p.resumed else "")
            + f"; {p.scored} scored, {p.parse_failures} parse failures, {p.errors} errors"
        )
        text += f"; {p.cached} from cache" if p.cached else ""
        if p.retried:
            text += f" ({p.retried} with failed grades tried again)"
        if p.left_out:
            text += (
                f"; {plural(p.left_out, 'case')} left out (every grade "
                "failed): running it again retries them"
            )
        if p.partial:
            text += (
                f"; {plural(p.partial, 'case')} with grades the judge failed: running it again "
                "retries those"
            )
        return text


ProgressCallback = Callable[[Progress], None]


class Grader:
    """One judge plus the index's reply cache."""

    def __init__(
        self,
        client: JudgeClient,
        store: Store | None,
        *,
        use_cache: bool = True,
        journal: ReplyJournal | None = None,
    ):
        self.client = client
        self.store = store
        self.use_cache = use_cache and store is not None
        self.journal = journal
        self.cached = 0

    def cache_key(self, metric: Metric, messages: list[dict[str, str]]) -> tuple[str, str, str]:
        """(key, input hash, options): everything that can change the judge's reply."""
        cfg = self.client.config
        input_hash = _sha(json.dumps(messages, ensure_ascii=False, sort_keys=True))
        options = json.dumps({"temperature": cfg.temperature, "json": metric.json_reply})
        material = [
            cfg.provider,
            self.client.base,
            cfg.model,
            metric.prompt.hash,
            input_hash,
            options,
        ]
        return _sha(json.dumps(material)), input_hash, options

    async def grade(self, metric: Metric, case: Case) -> Outcome:
        try:
            messages = metric.messages(case)
        except NotGradable as exc:
            return Outcome(metric.name, error=str(exc))
        key, input_hash, options = self.cache_key(metric, messages)
        # DuckDB calls run in a thread so the event loop keeps other requests moving.
        reply = None if self.journal is None else self.journal.get(key)
        if reply is None and self.use_cache and self.store is not None:
            reply = await asyncio.to_thread(self.store.cache_get, key)
            if reply is not None:
                self.cached += 1
        if reply is None:
            try:
                reply = await self.client.chat(messages, json_reply=metric.json_reply)
            except JudgeUnreachable:
                raise  # the whole batch stops: every further call would fail the same way
            except JudgeError as exc:
                return Outcome(metric.name, error=str(exc), judge_failed=True)
            if self.journal is not None:  # kept the moment it arrives: a kill loses no reply
                await asyncio.to_thread(self.journal.put, key, reply)
            if self.use_cache and self.store is not None:
                cfg = self.client.config
                await asyncio.to_thread(
                    self.store.cache_put,
                    key,
                    provider=cfg.provider,
                    url=self.client.base,
                    model=cfg.model,
                    prompt_hash=metric.prompt.hash,
                    input_hash=input_hash,
                    options=options,
                    reply=reply,
                )
        return metric.outcome(case, reply)


JUDGE_FAILURES = "judge_failures"  # Case.metadata: metrics with no reply, retried on resume


def _judge_failures(case: Case) -> list[str]:
    failed = case.metadata.get(JUDGE_FAILURES)
    return [m for m in failed if isinstance(m, str)] if isinstance(failed, list) else []


def judged_case(case: Case, outcomes: Sequence[Outcome]) -> Case:
    """The parent's case with the new grades only (the parent's own scores are not copied)."""
    metadata = dict(case.metadata)
    for key in ("parse_failures", JUDGE_FAILURES):  # the parent's, if it was itself a re-judge
        metadata.pop(key, None)
    # The metrics whose reply could not be read; the reason is in errors[m] or scores[m].reason.
    failures = sorted(o.metric for o in outcomes if o.parse_failure)
    if failures:
        metadata["parse_failures"] = failures
    # The metrics the judge gave no reply for: the next run of the batch asks again
    unanswered = sorted(o.metric for o in outcomes if o.judge_failed)
    if unanswered:
        metadata[JUDGE_FAILURES] = unanswered
    return Case(
        case_id=case.case_id,
        question=case.question,
        answer=case.answer,
        reference=case.reference,
        contexts=case.contexts,
        scores={o.metric: o.score for o in outcomes if o.score is not None},
        claims=tuple(c for o in outcomes for c in o.claims),
        errors={o.metric: o.error for o in outcomes if o.error is not None},
        human=case.human,
        latency_ms=case.latency_ms,
        metadata=metadata,
    )


def mended_case(earlier: Case, outcomes: Sequence[Outcome]) -> Case:
    """`earlier` (a case the batch wrote with grades the judge failed) with the grades asked
    again put in; every other grade stays exactly as it was written (a noise rerun must never
    replace a grade it already has, and no other grade was asked of the judge)."""
    asked = {o.metric for o in outcomes}
    fresh = judged_case(earlier, outcomes)

    def kept(names: object) -> list[str]:
        items = names if isinstance(names, list) else []
        return [m for m in items if isinstance(m, str) and m not in asked]

    metadata = dict(earlier.metadata)
    for key in ("parse_failures", JUDGE_FAILURES):
        merged = sorted(set(kept(earlier.metadata.get(key))) | set(fresh.metadata.get(key, [])))
        if merged:
            metadata[key] = merged
        else:
            metadata.pop(key, None)
    return replace(
        earlier,
        scores={**{m: s for m, s in earlier.scores.items() if m not in asked}, **fresh.scores},
        claims=tuple(c for c in earlier.claims if c.metric not in asked) + fresh.claims,
        errors={**{m: e for m, e in earlier.errors.items() if m not in asked}, **fresh.errors},
        metadata=metadata,
    )


def _grade_kinds(case: Case, metrics: Sequence[str]) -> list[str]:
    """What a written case holds for each metric: "scored", "parse_failure" or "error"."""
    failures = case.metadata.get("parse_failures")
    parse = set(failures) if isinstance(failures, list) else set()
    return [
        "parse_failure" if m in parse else "scored" if m in case.scores else "error"
        for m in metrics
    ]


def batch_run(
    parent: Run,
    judge: JudgeConfig,
    metrics: Sequence[Metric],
    *,
    kind: str = "rejudge",
    index: int | None = None,
) -> Run:
    """The header of a re-judge (or of rerun number `index`); its id is deterministic."""
    names = sorted(m.name for m in metrics)
    # the hash of the chosen metrics' prompts: in the id (as ever, so the same command finds
    # the file an earlier version began) and in the config key of another judge's runs
    chosen_hash = combined_hash([m.prompt for m in metrics])
    material = [
        parent.id,
        kind,
        judge.provider,
        judge.url.rstrip("/"),
        judge.model,
        judge.temperature,
        names,
        chosen_hash,
    ]
    stamp = _sha(json.dumps(material))[:6]
    run_id = f"{parent.id}{DERIVED}{kind}-{_slug(judge.name)}-{stamp}"
    name = f"{parent.name} · {judge.name}"
    if index is not None:
        run_id += f"-{index}"
        name += f" rerun {index}"
    # the header names the prompt set, not the metrics: a re-judge of some metrics by the same
    # judge is the same judge for those metrics
    info = JudgeInfo(model=judge.model, provider=judge.provider, prompt_hash=PROMPT_SET_HASH)
    # Same judge model and prompts as the parent (whichever metrics either graded): a true
    # replicate, so it joins the parent's config group; otherwise the judge is part of what was
    # configured (keyed, as before, by the chosen metrics' prompts).
    if same_judge(parent.judge, info):
        config_key = parent.config_key
    else:
        config_key = derive_config_key(parent.config, replace(info, prompt_hash=chosen_hash))
    return Run(
        id=run_id,
        name=name,
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        config=dict(parent.config),
        config_key=config_key,
        judge=info,
        dataset=parent.dataset,
        parent=parent.id,
        kind=kind,
        source=None,
    )


def default_metrics(store: Store, run_id: str) -> list[str]:
    """The parent's metrics that ragtui can judge, else faithfulness + answer relevance."""
    have = [m for m in store.metrics([run_id]) if m in METRICS]
    return have or list(DEFAULT_METRICS)


async def judge_run(
    store: Store,
    run_ref: str,
    judge: JudgeConfig,
    *,
    metrics: Sequence[str] | None = None,
    case_ids: Sequence[str] | None = None,
    progress: ProgressCallback | None = None,
    kind: str = "rejudge",
    index: int | None = None,
    client: JudgeClient | None = None,
) -> BatchResult:
    """Re-judge run `run_ref` (id, prefix or name) with `judge`; resumable; indexes the result.

    kind="rerun" bypasses the cache (a noise replicate must be a fresh judge call).
    Raises JudgeUnreachable when the server is not there (finished cases stay in the file).
    """
    store.require_writable("write a judged run")
    # Index queries and file reads run in threads: the event loop (the TUI's, too) never waits.
    parent_id = await asyncio.to_thread(store.resolve_run, run_ref)
    parent = await asyncio.to_thread(store.run, parent_id)
    names = metrics or await asyncio.to_thread(default_metrics, store, parent_id)
    chosen = get_metrics(names)
    run = batch_run(parent, judge, chosen, kind=kind, index=index)
    cases = await asyncio.to_thread(_read_cases, store, parent_id)
    if case_ids:
        known = {c.case_id for c in cases}
        missing = [c for c in case_ids if c not in known]
        if missing:
            raise InputError(f"run {parent_id} has no case {', '.join(map(repr, missing))}")
        wanted = set(case_ids)
        cases = [c for c in cases if c.case_id in wanted]
    # a name built by ragtui, never the id; reopening an existing file resumes it
    path = await asyncio.to_thread(resumable_run_path, store.folder, run.id)
    appender = await asyncio.to_thread(
        RunFileAppender, path, run, lambda c: bool(_judge_failures(c))
    )
    own_client = client is None
    client = client or JudgeClient(judge)
    started = asyncio.get_running_loop().time()
    journal = await asyncio.to_thread(ReplyJournal, path)
    grader = Grader(client, store, use_cache=kind != "rerun", journal=journal)
    state = Progress(run_id=run.id, total=len(cases))
    # per error (the first MAX_ERROR_SAMPLES kinds), every "case metric" that failed with it:
    # a refusal that is one case's (a prompt too long) is said for each case it hits
    failures: dict[str, list[str]] = {}
    write_lock = asyncio.Lock()
    # the first cases of the batch, in case order (not in the order they finish, which load
    # and retries shuffle): index -> the error every grade failed with, or None if graded
    first: dict[int, str | None] = {}
    # cases this run wrote with grades the judge failed: the next run asks again for those
    # grades, so the journal (the only copy of a noise rerun's replies) must stay
    written_with_failures: set[str] = set()
    try:
        # cases not in the file yet, and those in it with grades the judge failed (graded again;
        # their line is replaced at the end only if the judge answers more of them this time)
        retry = appender.retryable
        todo = [c for c in cases if c.case_id not in appender.done or c.case_id in retry]
        # cases not judged yet first: the stop rule reads the first cases, and retried grades
        # failing alike may be one case's trouble (a prompt too long), not the judge's
        todo.sort(key=lambda c: c.case_id in retry)
        state.done = state.resumed = len(cases) - len(todo)
        better: dict[str, Case] = {}
        if progress:
            progress(replace(state))
        pending = iter(enumerate(todo))

        async def worker() -> None:
            for index, case in pending:  # one shared iterator: each case goes to one worker
                earlier = retry.get(case.case_id)
                # a case graded before is asked only for the grades the judge failed; the
                # grades it has stay as they were written
                again = None if earlier is None else set(_judge_failures(earlier))
                ask = [m for m in chosen if again is None or m.name in again]
                outcomes = await _all_or_none([grader.grade(m, case) for m in ask])
                failed = bool(outcomes) and all(o.judge_failed for o in outcomes)
                # the stop rule reads cases never judged only: retried grades failing alike are
                # likely one case's trouble (a prompt too long), and would stop every resume
                if earlier is None and index < STOP_AFTER_FAILED_CASES:
                    first[index] = str(outcomes[-1].error) if failed else None
                    _stop_if_the_judge_is_dead(judge, first)
                if earlier is not None:
                    new = mended_case(earlier, outcomes)
                    state.retried += 1
                    if len(_judge_failures(new)) < len(_judge_failures(earlier)):
                        better[case.case_id] = new  # put in place when the batch closes
                    state.partial += bool(_judge_failures(better.get(case.case_id, earlier)))
                    # the case's grades as the file will hold them (those kept, those asked)
                    kinds = _grade_kinds(
                        better.get(case.case_id, earlier), [m.name for m in chosen]
                    )
                else:
                    new = judged_case(case, outcomes)
                    kinds = [o.kind for o in outcomes]
                    if outcomes and all(o.judge_failed for o in outcomes):
                        # nothing graded: written, it would count as done and never be retried
                        state.left_out += 1
                    else:
                        await _append(appender, new, write_lock)
                        if any(o.judge_failed for o in outcomes):
                            state.partial += 1
                            written_with_failures.add(case.case_id)
                state.scored += kinds.count("scored")
                state.parse_failures += kinds.count("parse_failure")
                state.errors += kinds.count("error")
                for o in outcomes:
                    if o.error and (o.error in failures or len(failures) < MAX_ERROR_SAMPLES):
                        failures.setdefault(o.error, []).append(f"{case.case_id} {o.metric}")
                state.done += 1
                state.cached = grader.cached
                state.case_id = case.case_id
                if progress:
                    progress(replace(state))  # a snapshot: safe to hand to another thread

        # More workers than request slots, so a slot freed during a file append is refilled.
        workers = max(1, min(2 * judge.concurrency, len(todo)))
        await _all_or_none([worker() for _ in range(workers)])
    finally:
        # the journal stays while grades remain to retry, in the cases this run wrote, in
        # those it retried, or in others of the file (a --case run): the replies so far are in it
        unmended = [c for c in appender.retryable if _judge_failures(better.get(c) or retry[c])]
        finished = (
            state.done == state.total
            and not state.left_out
            and not unmended
            and not written_with_failures
        )
        empty = not appender.done

        async def close() -> None:
            replaced = False
            try:
                await asyncio.to_thread(appender.replace, better)  # before the journal goes
                replaced = True
            finally:  # whatever happens, the lock is released and the client closed
                await asyncio.to_thread(journal.close, finished=finished and replaced)
                await asyncio.to_thread(appender.close)  # releases the file's batch lock
                if own_client:
                    await client.aclose()
            if empty:  # nothing judged (e.g. the judge unreachable): leave no empty run
                path.unlink(missing_ok=True)
            else:  # even a partial batch: the index mirrors the file
                await asyncio.to_thread(store.index_file, path)

        # A stopped batch is often cancelled twice (its screen closes too): the second
        # cancel must not skip the closing, or the file stays locked for the next batch.
        await _uncancellable(close())
    return BatchResult(
        run_id=run.id,
        path=path,
        progress=state,
        calls=client.calls,
        error_samples=[f"{_places(where)}: {error}" for error, where in failures.items()],
        reasons=list(failures),
        metrics=[m.name for m in chosen],
        seconds=asyncio.get_running_loop().time() - started,
        notices=list(appender.notices),
    )


async def rejudge_case(
    store: Store,
    run_ref: str,
    case_id: str,
    judge: JudgeConfig,
    *,
    metrics: Sequence[str] | None = None,
    client: JudgeClient | None = None,
) -> tuple[BatchResult, Case]:
    """Re-judge one case (the TUI's `j`): it lands in the same re-judge run file a whole-run
    re-judge with this judge would use, and comes back as the indexed Case."""
    result = await judge_run(
        store, run_ref, judge, metrics=metrics, case_ids=[case_id], client=client
    )
    if result.progress.left_out:
        # every grade failed: the case was not written (the next try asks again), so there
        # is no case to show; the judge's own reason is the one line to say
        reasons = "; ".join(result.reasons)
        raise JudgeError(
            f"judge {judge.name}: every grade of case {case_id} failed, nothing written"
            + (f" ({reasons})" if reasons else "")
        )
    case = await asyncio.to_thread(store.case, result.run_id, case_id)
    assert case is not None, "judge_run indexes the case it wrote"
    return result, case


async def noise_reruns(
    store: Store,
    run_ref: str,
    judge: JudgeConfig,
    *,
    times: int = 3,
    metrics: Sequence[str] | None = None,
    progress: Callable[[int, Progress], None] | None = None,
) -> list[BatchResult]:
    """Judge the same answers `times` times, cache bypassed, as `rerun` runs of one config key.

    Rerun i has a fixed id, so a second call with the same K only finishes missing cases, and a
    larger K adds replicates.
    """
    if times < 2:
        raise InputError(f"--times: a noise floor needs at least 2 reruns, found {times}")
    results = []
    async with JudgeClient(judge) as client:
        for i in range(1, times + 1):
            callback = None if progress is None else _bind(progress, i)
            results.append(
                await judge_run(
                    store,
                    run_ref,
                    judge,
                    metrics=metrics,
                    progress=callback,
                    kind="rerun",
                    index=i,
                    client=client,
                )
            )
    return results


def _places(where: list[str], most: int = 8) -> str:
    """ "case-01 faithfulness, case-04 faithfulness and 3 more", in case order."""
    where = sorted(where)
    text = ", ".join(where[:most])
    return text + (f" and {len(where) - most} more" if len(where) > most else "")


def _stop_if_the_judge_is_dead(judge: JudgeConfig, first: dict[int, str | None]) -> None:
    """The batch's first cases all failed every grade with one same error: the judge's, not
    one case's (a wrong model, a server answering 500 to everything); going on would only
    spend the retries of every other case."""
    errors = set(first.values())
    if len(first) == STOP_AFTER_FAILED_CASES and len(errors) == 1 and None not in errors:
        raise JudgeError(
            f"judge {judge.name}: the first {STOP_AFTER_FAILED_CASES} cases failed every "
            f"grade, stopped ({errors.pop()})"
        )


async def _append(appender: RunFileAppender, case: Case, lock: asyncio.Lock) -> None:
    """Append in a thread: the per-case fsync must not stall the requests in flight."""
    async with lock:
        task = asyncio.ensure_future(asyncio.to_thread(appender.append, case))
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await task  # let the line land whole before the file is closed
            raise


async def _uncancellable(coro: Coroutine[Any, Any, None]) -> None:
    """Run `coro` to its end even if the caller is cancelled (again) meanwhile; then let the
    cancellation through."""
    task = asyncio.ensure_future(coro)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    task.result()  # its own error, if it failed
    if cancelled:
        raise asyncio.CancelledError


async def _all_or_none(coros: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run together; the first exception cancels the siblings (no orphan requests) and is
    raised as itself, not wrapped in an ExceptionGroup."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coros]
    except BaseExceptionGroup as errors:
        raise _first_leaf(errors) from None
    return [task.result() for task in tasks]


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _read_cases(store: Store, run_id: str) -> list[Case]:
    _, cases = iter_run_file(store.run_path(run_id))
    return list(cases)


def _bind(progress: Callable[[int, Progress], None], i: int) -> ProgressCallback:
    return lambda state: progress(i, state)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _slug(text: str) -> str:
    """A file-name-safe version of a run or judge name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "run"
