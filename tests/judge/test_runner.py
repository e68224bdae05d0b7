"""Batches against the real Store (DuckDB in a temp dir) and the fake judge server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from ragtui.config import JudgeConfig
from ragtui.core.model import Case, Chunk, Run, Score
from ragtui.core.paths import run_file_name
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.core.store import Store
from ragtui.judge.client import JudgeUnreachable
from ragtui.judge.metrics import METRICS
from ragtui.judge.prompts import PROMPT_SET_HASH
from ragtui.judge.runner import Progress, judge_run, noise_reruns, rejudge_case
from tests.fakejudge import FakeJudge, Fault, Reply


def make_cases(n: int) -> list[Case]:
    return [
        Case(
            case_id=f"case-{i:02d}",
            question=f"Question {i}?",
            answer=f"ANSWER-{i:02d} says refunds take {i} days.",
            reference=f"Refunds take {i} days." if i % 2 == 0 else None,
            contexts=(Chunk(id=f"k{i}", text=f"Refunds take {i} days.", rank=1),),
            scores={"faithfulness": Score(value=1.0, raw="YES", label="YES")},
        )
        for i in range(n)
    ]


def write_parent(folder: Path, n: int = 6) -> Path:
    run = Run(
        id="base",
        name="baseline",
        created_at="2026-11-20T10:00:00Z",
        config={"top_k": 3},
        config_key="cfg-base",
    )
    return write_run_file(folder / "base.ragtui.jsonl", run, make_cases(n))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    write_parent(tmp_path)
    with Store.open(tmp_path) as s:
        yield s


def judge(fake: FakeJudge, provider: str = "ollama", **kw: object) -> JudgeConfig:
    options = {"timeout": 2.0, "backoff": 0.01, "retries": 1, "concurrency": 3, **kw}
    return JudgeConfig(name="j1", provider=provider, url=fake.url, model="judge-1", **options)


def answers_of(fake: FakeJudge) -> list[str]:
    """Which case each chat request was about (the ANSWER-nn marker in its prompt)."""
    import re

    return [m.group(0) for r in fake.chat_requests() if (m := re.search(r"ANSWER-\d\d", r.prompt))]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_rejudge_label_mode_writes_and_indexes_a_run(
    store: Store, fake_judge: FakeJudge, provider: str
) -> None:
    fake_judge.when("ANSWER-01", "NO")
    fake_judge.when("ANSWER-02", "PARTIAL")
    seen: list[int] = []
    result = await judge_run(
        store,
        "baseline",
        judge(fake_judge, provider),
        metrics=["faithfulness"],
        progress=lambda p: seen.append(p.done),
    )
    assert seen == list(range(7))  # 0 (start) then after every case
    rf = read_run_file(result.path)
    assert result.path.parent == store.folder and result.path.name == run_file_name(rf.run.id)
    assert rf.run.kind == "rejudge" and rf.run.parent == "base"
    assert rf.run.judge.model == "judge-1" and rf.run.judge.provider == provider
    assert rf.run.judge.prompt_hash == PROMPT_SET_HASH  # the prompt set, not the metrics
    values = {c.case_id: c.scores["faithfulness"].value for c in rf.cases}
    assert values == {
        "case-00": 1.0,
        "case-01": 0.0,
        "case-02": 0.5,
        "case-03": 1.0,
        "case-04": 1.0,
        "case-05": 1.0,
    }
    assert {c.scores["faithfulness"].prompt_hash for c in rf.cases} == {
        METRICS["faithfulness"].prompt.hash
    }
    assert [c.answer for c in sorted(rf.cases, key=lambda c: c.case_id)] == [
        c.answer for c in make_cases(6)
    ]
    p = result.progress
    assert (p.scored, p.parse_failures, p.errors, p.resumed) == (6, 0, 0, 0)
    assert store.run(rf.run.id).kind == "rejudge"  # indexed
    table = store.scores([rf.run.id]).to_pylist()
    assert sorted(r["value"] for r in table) == [0.0, 0.5, 1.0, 1.0, 1.0, 1.0]


async def test_claim_mode_and_reference_errors(store: Store, fake_judge: FakeJudge) -> None:
    claims = {
        "claims": [
            {"claim": "refunds take days", "verdict": "SUPPORTED", "chunk": 1},
            {"claim": "it is quick", "verdict": "UNSUPPORTED", "chunk": None},
        ]
    }
    recall = {"statements": [{"statement": "refunds take days", "attributed": True, "chunk": 1}]}
    fake_judge.when("Split the answer", json.dumps(claims))
    fake_judge.when("Split the reference", json.dumps(recall))
    result = await judge_run(
        store,
        "base",
        judge(fake_judge, "openai"),
        metrics=["faithfulness_claims", "context_recall"],
    )
    rf = read_run_file(result.path)
    for case in rf.cases:
        assert case.scores["faithfulness_claims"].value == 0.5
        assert [c.verdict for c in case.claims] == ["SUPPORTED", "UNSUPPORTED"]
        assert case.claims[0].chunks == (case.contexts[0].id,)
        if case.reference is None:
            assert case.errors == {"context_recall": "needs a reference"}
        else:
            assert case.scores["context_recall"].value == 1.0
    assert (result.progress.scored, result.progress.errors) == (9, 3)
    assert len(fake_judge.chat_requests()) == 9  # no call for cases without a reference
    bodies = [r.body for r in fake_judge.chat_requests()]
    assert all("response_format" not in b and b["stream"] is False for b in bodies)
    assert rf.run.judge.prompt_hash == PROMPT_SET_HASH
    case = rf.cases[0]
    assert (
        case.scores["faithfulness_claims"].prompt_hash == METRICS["faithfulness_claims"].prompt.hash
    )


async def test_garbage_replies_are_counted_parse_failures(store: Store, fake_judge: FakeJudge):
    fake_judge.when("ANSWER-03", "I refuse to grade this.")
    fake_judge.when("ANSWER-05", "{broken json")  # odd cases have no reference: the answer
    # is in the precision prompt too
    fake_judge.when("chunks are useful", '{"chunks": [{"chunk": 1, "useful": true}]}')
    result = await judge_run(
        store, "base", judge(fake_judge), metrics=["faithfulness", "context_precision"]
    )
    # cases 3 and 5 fail both metrics; the other 4 cases score both
    p = result.progress
    assert (p.scored, p.parse_failures, p.errors) == (8, 4, 0)
    cases = {c.case_id: c for c in read_run_file(result.path).cases}
    bad = cases["case-03"]
    assert bad.scores["faithfulness"].value == 0.0 and bad.scores["faithfulness"].label is None
    assert set(bad.metadata["parse_failures"]) == {"faithfulness", "context_precision"}
    assert cases["case-05"].errors["context_precision"].startswith("parse failure: ")
    assert cases["case-00"].scores["context_precision"].value == 1.0
    assert "parse_failures" not in cases["case-00"].metadata


async def test_cache_reuse_and_no_reuse_across_judges(tmp_path: Path, fake_judge: FakeJudge):
    write_parent(tmp_path)
    with Store.open(tmp_path) as store:
        first = await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
        assert len(fake_judge.chat_requests()) == 6
        before = {c.case_id: c.scores for c in read_run_file(first.path).cases}
        first.path.unlink()  # a fresh batch with the same judge: every reply from the cache
        fake_judge.default = "NO"  # would change every grade if the server were asked
        again = await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
        assert len(fake_judge.chat_requests()) == 6 and again.progress.cached == 6
        assert {c.case_id: c.scores for c in read_run_file(again.path).cases} == before
        fake_judge.models = ["judge-1", "judge-2"]
        other = JudgeConfig(name="j2", provider="ollama", url=fake_judge.url, model="judge-2")
        third = await judge_run(store, "base", other, metrics=["faithfulness"])
        assert third.progress.cached == 0 and len(fake_judge.chat_requests()) == 12
        assert {c.scores["faithfulness"].label for c in read_run_file(third.path).cases} == {"NO"}


async def test_resume_judges_only_missing_cases(store: Store, fake_judge: FakeJudge) -> None:
    cfg = judge(fake_judge)
    part = await judge_run(
        store, "base", cfg, metrics=["faithfulness"], case_ids=["case-01", "case-04"]
    )
    assert sorted(answers_of(fake_judge)) == ["ANSWER-01", "ANSWER-04"]
    fake_judge.reset()
    full = await judge_run(store, "base", cfg, metrics=["faithfulness"])
    assert full.path == part.path and full.progress.resumed == 2
    assert sorted(answers_of(fake_judge)) == ["ANSWER-00", "ANSWER-02", "ANSWER-03", "ANSWER-05"]
    assert sorted(c.case_id for c in read_run_file(full.path).cases) == [
        f"case-{i:02d}" for i in range(6)
    ]
    assert store.runs().num_rows == 2  # one rejudge run, indexed once


async def test_unknown_case_is_an_error(store: Store, fake_judge: FakeJudge) -> None:
    with pytest.raises(Exception, match="has no case 'nope'"):
        await judge_run(store, "base", judge(fake_judge), case_ids=["nope"])


async def test_a_case_whose_every_grade_failed_is_retried_by_the_next_run(
    store: Store, fake_judge: FakeJudge
) -> None:
    """A case the judge could not grade at all (500s after the retries) is counted and left
    out of the file: written, it counted as done, so fixing the server and running the batch
    again changed nothing. The next run grades it, and only it."""
    fake_judge.when("ANSWER-02", Fault(500, body="overloaded"))
    result = await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
    cases = {c.case_id: c for c in read_run_file(result.path).cases}
    assert "case-02" not in cases and len(cases) == 5
    assert (result.progress.scored, result.progress.errors, result.progress.left_out) == (5, 1, 1)
    assert "HTTP 500: overloaded (after 2 attempts)" in result.error_samples[0]
    assert result.summary().endswith(
        "; 1 case left out (every grade failed): running it again retries them"
    )
    fake_judge.reset()  # the server mended (and its request log emptied)
    again = await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
    assert (again.progress.resumed, again.progress.scored, again.progress.left_out) == (5, 1, 0)
    assert len(fake_judge.chat_requests()) == 1  # case-02 alone
    assert (
        "faithfulness" in {c.case_id: c for c in read_run_file(again.path).cases}["case-02"].scores
    )


METRICS2 = ["faithfulness", "answer_relevance"]


async def _one_grade_failed(store: Store, fake_judge: FakeJudge, days: tuple[int, ...] = (2,)):
    """A batch where the judge fails the faithfulness of the cases about these days (500s after
    the retries) and answers everything else: those cases are written with one grade."""
    for day in days:
        fake_judge.when(f"Refunds take {day} days.", Fault(500, body="overloaded"))
    fake_judge.when("Question", "4")  # relevance's prompt holds the question
    return await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)


async def test_a_grade_the_judge_failed_is_asked_again_by_the_next_run(
    store: Store, fake_judge: FakeJudge
) -> None:
    """case-02's faithfulness failed, its relevance was graded: it was written with one grade
    and counted done, so a resumed batch said "nothing new written" and kept the error for
    good. The next run asks the judge again for that grade only (the other reply is in the
    batch's journal), replaces the case's line, and the file holds each case once."""
    first = await _one_grade_failed(store, fake_judge)
    case = {c.case_id: c for c in read_run_file(first.path).cases}["case-02"]
    assert set(case.scores) == {"answer_relevance"} and "faithfulness" in case.errors
    assert (first.progress.partial, first.progress.left_out) == (1, 0)
    assert first.summary().endswith(
        "; 1 case with grades the judge failed: running it again retries those"
    )
    fake_judge.reset()  # mended
    fake_judge.when("Question", "4")
    again = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert (again.progress.resumed, again.progress.retried, again.progress.partial) == (5, 1, 0)
    assert answers_of(fake_judge) == ["ANSWER-02"]  # one call: case-02's faithfulness
    cases = {c.case_id: c for c in read_run_file(again.path).cases}
    assert len(read_run_file(again.path).cases) == len(cases) == 6  # each case once
    mended = cases["case-02"]
    assert set(mended.scores) == set(METRICS2) and not mended.errors
    fake_judge.reset()
    third = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert third.progress.resumed == 6 and fake_judge.chat_requests() == []


async def test_a_retry_that_fails_again_or_another_case_s_run_leaves_the_file_as_it_was(
    store: Store, fake_judge: FakeJudge
) -> None:
    """The judge still fails case-02's grade: the file is byte for byte as it was (its earlier
    grade kept). A run of another case alone leaves case-02 in the file too."""
    first = await _one_grade_failed(store, fake_judge)
    before = first.path.read_bytes()
    again = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert (again.progress.retried, again.progress.partial) == (1, 1)
    assert first.path.read_bytes() == before
    fake_judge.reset()
    await judge_run(store, "base", judge(fake_judge), metrics=METRICS2, case_ids=["case-04"])
    assert first.path.read_bytes() == before


async def test_a_dead_judge_still_stops_a_batch_that_retries_grades(
    store: Store, fake_judge: FakeJudge
) -> None:
    """Cases 0-2 were judged (a --case run) with a failed grade each; then the judge answers
    500 to everything. The cases never judged (3-5) come first and fail alike, so the batch
    stops as a fresh one would, and no case leaves the file."""
    from ragtui.judge.client import JudgeError

    for day in (0, 1, 2):
        fake_judge.when(f"Refunds take {day} days.", Fault(500, body="overloaded"))
    fake_judge.when("Question", "4")
    wanted = ["case-00", "case-01", "case-02"]
    first = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2, case_ids=wanted)
    assert first.progress.partial == 3
    fake_judge.reset()
    fake_judge.default = Fault(500)
    with pytest.raises(JudgeError, match="the first 3 cases failed every grade"):
        await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert len(fake_judge.chat_requests()) <= 3 * 2 * 2 * judge(fake_judge).concurrency
    assert len(read_run_file(first.path).cases) == 3


async def test_a_resume_of_grades_one_case_s_4xx_refuses_reports_each_case_and_goes_on(
    store: Store, fake_judge: FakeJudge
) -> None:
    """Audit finding: three cases' relevance prompts are always refused (HTTP 400, too long);
    every resume then held only those three, and the three alike refusals tripped the stop
    ("the first 3 cases failed every grade") on every run: exit 1 blaming the judge. Retried
    grades are not read by the stop rule: the resume ends, asks each refused grade once more,
    and names each case it failed for; the rest of the file stays as it was."""
    from ragtui.judge.client import JudgeError

    for i in (1, 3, 5):
        fake_judge.when(f"Question {i}?", Fault(400, body="prompt too long"))
    fake_judge.when("Question", "4")
    first = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert first.progress.partial == 3
    before = first.path.read_bytes()
    fake_judge.reset()
    for i in (1, 3, 5):
        fake_judge.when(f"Question {i}?", Fault(400, body="prompt too long"))
    try:
        again = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    except JudgeError as exc:
        pytest.fail(f"a resume of one-case refusals stopped the batch: {exc}")
    assert sorted(answers_of(fake_judge)) == ["ANSWER-01", "ANSWER-03", "ANSWER-05"]
    assert (again.progress.retried, again.progress.partial) == (3, 3)
    assert first.path.read_bytes() == before
    [sample] = again.error_samples
    assert sample.startswith(
        "case-01 answer_relevance, case-03 answer_relevance, case-05 answer_relevance: "
    )
    assert sample.endswith("HTTP 400: prompt too long")


async def test_retried_grades_failing_alike_do_not_stop_cases_never_judged(
    tmp_path: Path, fake_judge: FakeJudge
) -> None:
    """Cases 0-2 have a grade the judge refuses alike (one case's trouble, e.g. a prompt too
    long); a --case run judged 0-5 only. The next run judges 6-9 first, so the stop rule reads
    cases never judged, not the same three refusals, and the batch does not stop for ever."""
    write_parent(tmp_path, 10)
    with Store.open(tmp_path) as store:
        for day in (0, 1, 2):
            fake_judge.when(f"Refunds take {day} days.", Fault(400, body="too long"))
        fake_judge.when("Question", "4")
        wanted = [f"case-{i:02d}" for i in range(6)]
        first = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2, case_ids=wanted)
        again = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
        cases = {c.case_id for c in read_run_file(again.path).cases}
        assert first.path == again.path and cases == {f"case-{i:02d}" for i in range(10)}
        assert (again.progress.retried, again.progress.partial) == (3, 3)


async def test_a_rewrite_that_fails_releases_the_file_and_keeps_the_replies(
    store: Store, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewrite that puts the mended lines in fails (a full disk): one clear error, the file
    as it was and unlocked for the next batch, which mends it from the journal."""
    from ragtui.core import runwrite
    from ragtui.core.errors import WriteError

    first = await _one_grade_failed(store, fake_judge)
    before = first.path.read_bytes()
    fake_judge.reset()
    fake_judge.when("Question", "4")

    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(runwrite.os, "replace", full)
        with pytest.raises(WriteError, match="no space left on device"):
            await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert first.path.read_bytes() == before
    fake_judge.reset()  # the judge's reply for case-02 is in the journal now
    mended = await judge_run(store, "base", judge(fake_judge), metrics=METRICS2)
    assert fake_judge.chat_requests() == [] and mended.progress.partial == 0


async def test_a_judge_that_fails_every_grade_stops_the_batch_and_writes_nothing(
    store: Store, fake_judge: FakeJudge
) -> None:
    """A wrong model or a server answering 500 to everything: the batch stops after its first
    cases, with one line, instead of spending every retry of every case (474 s in an audit)
    and leaving a run made only of errors."""
    from ragtui.judge.client import JudgeError
    from ragtui.judge.runner import STOP_AFTER_FAILED_CASES

    fake_judge.script(*[Fault(500, body="down for maintenance")] * 100)
    with pytest.raises(JudgeError) as info:
        await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
    message = str(info.value)
    assert message.startswith(f"judge j1: the first {STOP_AFTER_FAILED_CASES} cases failed every")
    assert "HTTP 500: down for maintenance" in message
    assert not list(store.folder.glob("base--rejudge-*"))  # no run of errors left behind


async def test_failures_that_finish_while_a_graded_case_is_written_do_not_stop_the_batch(
    store: Store, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen in a full run under load: case-00 graded YES, and while its line was being written
    (a thread, fsync'd) three cases failed alike with HTTP 500; the batch stopped as if the
    judge could grade nothing. Here the write is held for 0.5 s (real writes, slowed), so the
    three failures always land inside it: the batch goes on and grades the rest."""
    import time

    from ragtui.core.runwrite import RunFileAppender

    real_append = RunFileAppender.append

    def slow_append(self: RunFileAppender, case: Case) -> None:
        time.sleep(0.5)
        real_append(self, case)

    monkeypatch.setattr(RunFileAppender, "append", slow_append)
    for broken in ("ANSWER-01", "ANSWER-02", "ANSWER-03"):
        fake_judge.when(broken, Fault(500, body="overloaded", delay=0.1))
    result = await judge_run(
        store, "base", judge(fake_judge, concurrency=4), metrics=["faithfulness"]
    )
    assert (result.progress.scored, result.progress.left_out) == (3, 3)
    graded = {c.case_id for c in read_run_file(result.path).cases}
    assert graded == {"case-00", "case-04", "case-05"}


async def test_the_stop_reads_the_first_cases_in_order_not_the_first_to_finish(
    store: Store, fake_judge: FakeJudge
) -> None:
    """Seen as a flaky secrets test: a resumed batch holds only the cases that failed before,
    in several ways; under load three that fail alike finished first and the batch stopped
    ("the first 3 cases failed every grade") or ran through, by timing. The rule reads the
    batch's first three cases in case order: here they fail differently (and slowly), while
    the later ones fail alike at once, so the batch always runs through."""
    fake_judge.when("ANSWER-00", Fault(500, body="overloaded", delay=0.3))
    fake_judge.when("ANSWER-01", Fault(400, body="bad request", delay=0.3))
    fake_judge.when("ANSWER-02", Fault(500, body="overloaded", delay=0.3))
    fake_judge.default = Fault(500, body="down")
    # six request slots: all six cases in flight at once, so the later three finish first
    cfg = judge(fake_judge, concurrency=6)
    result = await judge_run(store, "base", cfg, metrics=["faithfulness"])
    assert (result.progress.left_out, result.progress.scored) == (6, 0)


async def test_unreachable_judge_stops_the_batch(store: Store) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = JudgeConfig(
        name="down",
        provider="ollama",
        url=f"http://127.0.0.1:{port}",
        model="m",
        retries=1,
        backoff=0.01,
    )
    with pytest.raises(JudgeUnreachable, match="connection refused"):
        await judge_run(store, "base", cfg, metrics=["faithfulness"])


async def test_noise_reruns_bypass_the_cache_and_share_a_config_key(
    store: Store, fake_judge: FakeJudge
) -> None:
    cfg = judge(fake_judge)
    await judge_run(store, "base", cfg, metrics=["faithfulness"])  # fills the cache
    fake_judge.reset()
    updates: list[tuple[int, int]] = []

    def progress(i: int, p: Progress) -> None:
        updates.append((i, p.done))

    results = await noise_reruns(
        store, "base", cfg, times=2, metrics=["faithfulness"], progress=progress
    )
    assert len(fake_judge.chat_requests()) == 12  # 2 x 6 fresh calls, none from the cache
    assert updates[-1] == (2, 6) and (1, 6) in updates
    runs = [read_run_file(r.path).run for r in results]
    assert [r.kind for r in runs] == ["rerun", "rerun"]
    assert runs[0].config_key == runs[1].config_key and runs[0].id != runs[1].id
    assert set(store.reruns(runs[0].id)) >= {runs[0].id, runs[1].id}
    again = await noise_reruns(store, "base", cfg, times=2, metrics=["faithfulness"])
    assert len(fake_judge.chat_requests()) == 12  # already complete: nothing to do
    assert [r.progress.resumed for r in again] == [6, 6]


async def test_rejudge_one_case_returns_it(store: Store, fake_judge: FakeJudge) -> None:
    fake_judge.when("ANSWER-04", "PARTIAL")
    result, case = await rejudge_case(
        store, "base", "case-04", judge(fake_judge), metrics=["faithfulness"]
    )
    assert case.case_id == "case-04" and case.scores["faithfulness"].label == "PARTIAL"
    assert result.progress.total == 1 and len(fake_judge.chat_requests()) == 1


async def test_rejudge_one_case_whose_every_grade_failed_says_the_judge_s_reason(
    store: Store, fake_judge: FakeJudge
) -> None:
    from ragtui.judge.client import JudgeError

    fake_judge.default = Fault(500, body='{"error": "model overloaded"}')
    with pytest.raises(JudgeError) as caught:
        await rejudge_case(store, "base", "case-04", judge(fake_judge), metrics=["faithfulness"])
    message = str(caught.value)
    assert "case-04" in message and "HTTP 500" in message and "model overloaded" in message
    assert "\n" not in message
    # nothing judged: no run file left behind, and the next try asks the judge again
    assert not list(store.folder.glob("base--rejudge-*"))


async def test_slow_replies_beyond_the_timeout_are_counted_errors(
    store: Store, fake_judge: FakeJudge
) -> None:
    from tests.fakejudge import Reply

    fake_judge.when("ANSWER-01", Reply("YES", delay=0.6))
    result = await judge_run(
        store, "base", judge(fake_judge, timeout=0.2), metrics=["faithfulness"]
    )
    cases = {c.case_id: c for c in read_run_file(result.path).cases}
    assert "case-01" not in cases  # left out: the next run retries it
    assert "no reply from" in result.error_samples[0]
    assert (result.progress.scored, result.progress.errors) == (5, 1)


def _pairs(fake: FakeJudge) -> list[tuple[str, str]]:
    """(case marker, metric) of every chat request the server received."""
    import re

    out = []
    for r in fake.chat_requests():
        case = re.search(r"ANSWER-\d\d", r.prompt)
        metric = "answer_relevance" if "1 to 5" in r.prompt else "faithfulness"
        out.append((case.group(0) if case else "?", metric))
    return out


async def test_a_stopped_batch_resends_only_the_calls_in_flight(
    store: Store, fake_judge: FakeJudge
) -> None:
    """Issue 16.5: every reply is kept as it arrives, so a resume re-sends only what was in
    flight. Case 00's faithfulness reply arrives, its relevance call hangs, and the batch is
    stopped (as by a kill) before the case could be written: the resume must not ask for case
    00's faithfulness again. Noise reruns bypass the reply cache, so only the journal can help."""
    import asyncio

    def answer(request: object) -> Reply:
        relevance = "1 to 5" in request.prompt  # type: ignore[attr-defined]
        hang = relevance and "ANSWER-00" in request.prompt  # type: ignore[attr-defined]
        return Reply("4" if relevance else "YES", delay=30 if hang else 0)

    fake_judge.responder = answer
    cfg = judge(fake_judge, concurrency=1)
    batch = asyncio.ensure_future(
        judge_run(
            store, "base", cfg, metrics=["faithfulness", "answer_relevance"], kind="rerun", index=1
        )
    )
    for _ in range(400):  # wait for case 00's relevance call to be in flight
        await asyncio.sleep(0.01)
        if ("ANSWER-00", "answer_relevance") in _pairs(fake_judge):
            break
    assert ("ANSWER-00", "faithfulness") in _pairs(fake_judge)
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    before = _pairs(fake_judge)
    fake_judge.reset()
    fake_judge.responder = lambda request: "4" if "1 to 5" in request.prompt else "YES"
    result = await judge_run(
        store, "base", cfg, metrics=["faithfulness", "answer_relevance"], kind="rerun", index=1
    )
    again = _pairs(fake_judge)
    assert ("ANSWER-00", "faithfulness") not in again  # its reply was kept
    assert ("ANSWER-00", "answer_relevance") in again  # the call in flight is sent again
    assert not set(again) & (set(before) - {("ANSWER-00", "answer_relevance")})
    assert len(again) == len(set(again))
    assert len(read_run_file(result.path).cases) == 6
    assert not (store.folder / f".{result.path.name}.replies").exists()  # gone once complete


@pytest.mark.parametrize("journal_lost", [False, True])
async def test_a_noise_rerun_s_resume_asks_only_the_failed_grades_and_keeps_the_others(
    store: Store, fake_judge: FakeJudge, journal_lost: bool
) -> None:
    """Audit finding: a noise rerun wrote case-02 with its relevance failed and deleted its
    reply journal as if complete (the check looked only at cases already in the file when it
    opened); the resume (cache bypassed) asked case-02's faithfulness again and overwrote the
    grade it had. Here the judge answers faithfulness differently on every call: the resume
    must ask only case-02's relevance, and case-02's faithfulness must stay as first written,
    even when the journal is gone (a file a batch before this fix left)."""
    from itertools import count

    calls = count()
    refuse = {"on": True}

    def answer(request: object) -> Reply | Fault:
        prompt = request.prompt  # type: ignore[attr-defined]
        if "1 to 5" in prompt:
            if refuse["on"] and "ANSWER-02" in prompt:
                return Fault(400, body="temporarily rejected")
            return Reply("4")
        return Reply(["YES", "NO", "PARTIAL"][next(calls) % 3])  # a new grade on every call

    fake_judge.responder = answer
    cfg = judge(fake_judge)
    first = await judge_run(store, "base", cfg, metrics=METRICS2, kind="rerun", index=1)
    written = {c.case_id: c for c in read_run_file(first.path).cases}["case-02"]
    assert set(written.scores) == {"faithfulness"} and "answer_relevance" in written.errors
    journal = store.folder / f".{first.path.name}.replies"
    assert journal.exists()  # a grade is still to ask: the replies so far stay
    if journal_lost:
        journal.unlink()
    fake_judge.reset()
    refuse["on"] = False
    again = await judge_run(store, "base", cfg, metrics=METRICS2, kind="rerun", index=1)
    assert _pairs(fake_judge) == [("ANSWER-02", "answer_relevance")]
    cases = {c.case_id: c for c in read_run_file(again.path).cases}
    assert cases["case-02"].scores["faithfulness"] == written.scores["faithfulness"]
    assert cases["case-02"].scores["answer_relevance"].value == 0.75 and not cases["case-02"].errors
    assert (again.progress.scored, again.progress.errors, again.progress.partial) == (2, 0, 0)
    assert not journal.exists()  # every grade in: the journal goes


async def test_a_batch_removes_the_part_files_a_killed_write_left_and_only_those(
    store: Store, fake_judge: FakeJudge, tmp_path: Path
) -> None:
    """Audit finding: a kill during a rewrite left a hidden `.tmp-XXXXXXXX.ragtui.jsonl.part`
    (as large as the run) that nothing removed or reported. A batch now removes such files and
    says so; it leaves a link of that name (and what it points to), a part file a live writer
    holds locked, one written a moment ago, and any other name."""
    import fcntl
    import os

    folder = store.folder
    old = 1_000_000_000.0  # 2001: long untouched

    def part(name: str, *, age: float | None = old) -> Path:
        path = folder / name
        path.write_text("{half a run\n")
        if age is not None:
            os.utime(path, (age, age))
        return path

    stale = part(".tmp-ab12cd_9.ragtui.jsonl.part")
    young = part(".tmp-young123.ragtui.jsonl.part", age=None)
    other = part(".tmp-notours.txt")
    live = part(".tmp-livewrit.ragtui.jsonl.part")
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    link = folder / ".tmp-linkname.ragtui.jsonl.part"
    link.symlink_to(target)
    os.utime(link, (old, old), follow_symlinks=False)
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a writer holds it
        result = await judge_run(store, "base", judge(fake_judge), metrics=["faithfulness"])
    assert not stale.exists()
    assert young.exists() and other.exists() and live.exists()
    assert link.is_symlink() and target.read_text() == "keep me"
    assert result.notices == [
        f"removed 1 temporary file an interrupted write left in {folder}: {stale.name}"
    ]
