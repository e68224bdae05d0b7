"""A hostile judge server against the real client: it trickles, floods, redirects and echoes
the key back everywhere it can. Everything on 127.0.0.1 (tests/fakejudge.py)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from ragtui.config import JudgeConfig
from ragtui.core.model import Case, Run
from ragtui.core.runfile import read_run_file, write_run_file
from ragtui.core.store import Store
from ragtui.judge import client as client_module
from ragtui.judge.client import (
    JudgeClient,
    JudgeHTTPError,
    JudgeReplyTooLarge,
    JudgeTimeout,
)
from ragtui.judge.metrics import METRICS
from ragtui.judge.runner import Grader, judge_run
from tests.fakejudge import FakeJudge, Fault, Huge, Redirect, Reply, Trickle

MESSAGES = [{"role": "user", "content": "grade this"}]
KEY = "sk-test-" + "Zq9" * 10
PASSWORD = "pa ss/w@rd"


def judge(fake: FakeJudge, **kw: object) -> JudgeConfig:
    options = {"timeout": 2.0, "backoff": 0.01, "retries": 0, **kw}
    return JudgeConfig(name="t", provider="ollama", url=fake.url, model="judge-1", **options)


async def test_a_trickling_reply_is_cut_at_one_deadline(fake_judge: FakeJudge) -> None:
    """Each byte comes well within the timeout, the whole reply well after it: httpx's
    per-read timeout never fires, the request deadline does."""
    fake_judge.script(Trickle("YES", step=2, interval=0.05))  # ~100 bytes: ~2.5 s in all
    async with JudgeClient(judge(fake_judge, timeout=0.5)) as client:
        with pytest.raises(JudgeTimeout, match=r"no reply from .* within 0\.5 s"):
            await client.chat(MESSAGES)
    assert len(fake_judge.chat_requests()) == 1


async def test_a_trickle_inside_the_deadline_is_read(fake_judge: FakeJudge) -> None:
    fake_judge.script(Trickle("PARTIAL", step=64, interval=0.01))
    async with JudgeClient(judge(fake_judge)) as client:
        assert await client.chat(MESSAGES) == "PARTIAL"


@pytest.mark.parametrize("declare_length", [True, False])
async def test_a_reply_over_the_cap_is_an_error_not_retried(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, declare_length: bool
) -> None:
    monkeypatch.setattr(client_module, "MAX_REPLY_BYTES", 64 * 1024)
    fake_judge.script(Huge(2 * 1024 * 1024, declare_length=declare_length), "YES")
    async with JudgeClient(judge(fake_judge, retries=3)) as client:
        with pytest.raises(JudgeReplyTooLarge, match="sent a reply over"):
            await client.chat(MESSAGES)
        assert len(fake_judge.chat_requests()) == 1  # not retried
        assert await client.chat(MESSAGES) == "YES"  # the client is still usable


async def test_a_reply_just_under_the_cap_is_read(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "MAX_REPLY_BYTES", 64 * 1024)
    fake_judge.script(Huge(60 * 1024, declare_length=False))
    async with JudgeClient(judge(fake_judge)) as client:
        reply = await client.chat(MESSAGES)
    assert len(reply) > 50_000 and set(reply) == {"x"}


def _write_parent(folder: Path, n: int = 4) -> None:
    run = Run(id="base", name="base", created_at="2026-11-20T10:00:00Z", config={"k": 1})
    cases = [
        Case(case_id=f"c{i}", question=f"q{i}", answer=f"ANSWER-{i}", contexts=()) for i in range(n)
    ]
    write_run_file(folder / "base.ragtui.jsonl", run, cases)


async def test_a_huge_reply_in_a_batch_is_that_grade_error_and_never_cached(
    tmp_path: Path, fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "MAX_REPLY_BYTES", 64 * 1024)
    _write_parent(tmp_path)
    fake_judge.when("ANSWER-2", Huge(1024 * 1024))
    store = Store.open(tmp_path)
    try:
        result = await judge_run(
            store, "base", judge(fake_judge, concurrency=1), metrics=["faithfulness"]
        )
        cases = {c.case_id: c for c in read_run_file(result.path).cases}
        assert "c2" not in cases  # its only grade failed: left out, retried by the next run
        assert any("sent a reply over" in line for line in result.error_samples)
        assert {cid for cid, c in cases.items() if "faithfulness" in c.scores} == {"c0", "c1", "c3"}
        # the reply cache holds the three good replies and nothing for c2
        cfg = judge(fake_judge, concurrency=1)
        async with JudgeClient(cfg) as client:
            grader = Grader(client, store)
            metric = METRICS["faithfulness"]
            cached = {
                c.case_id: store.cache_get(grader.cache_key(metric, metric.messages(c))[0])
                for c in read_run_file(tmp_path / "base.ragtui.jsonl").cases
            }
    finally:
        store.close()
    assert {cid for cid, reply in cached.items() if reply is not None} == {"c0", "c1", "c3"}


async def test_a_redirect_is_not_followed_and_the_key_stays_home(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGTUI_SEC_KEY", KEY)
    with FakeJudge() as elsewhere:
        fake_judge.script(Redirect(elsewhere.url + "/api/chat"))
        async with JudgeClient(judge(fake_judge, api_key_env="RAGTUI_SEC_KEY")) as client:
            with pytest.raises(JudgeHTTPError, match="answered HTTP 307"):
                await client.chat(MESSAGES)
        assert elsewhere.log() == []
    assert fake_judge.chat_requests()[0].headers["authorization"] == f"Bearer {KEY}"


async def test_the_key_echoed_everywhere_comes_back_masked(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGTUI_SEC_KEY", KEY)
    fake_judge.echo_headers = True
    fake_judge.models = ["judge-1", "model {auth}"]
    fake_judge.script(
        Reply("YES {auth}", headers=(("X-Key", "{auth}"),)),
        Fault(401, body='{"error": "bad key {auth}"}'),
        Fault(200, body="not json {auth}"),
    )
    async with JudgeClient(judge(fake_judge, api_key_env="RAGTUI_SEC_KEY")) as client:
        reply = await client.chat(MESSAGES)
        with pytest.raises(JudgeHTTPError) as http_error:
            await client.chat(MESSAGES)
        with pytest.raises(client_module.JudgeProtocolError) as protocol_error:
            await client.chat(MESSAGES)
        names = await client.models()
    texts = [reply, str(http_error.value), str(protocol_error.value), *names]
    assert reply == "YES Bearer ***"
    assert "bad key Bearer ***" in str(http_error.value)
    assert "model Bearer ***" in names
    assert all(KEY not in t for t in texts)


async def test_url_password_is_sent_as_basic_auth_and_masked(
    fake_judge: FakeJudge,
) -> None:
    url = fake_judge.url.replace("http://", "http://alice:pa%20ss%2Fw%40rd@")
    cfg = JudgeConfig(name="t", provider="ollama", url=url, model="judge-1", retries=0)
    assert cfg.url == fake_judge.url and PASSWORD not in repr(cfg) + cfg.label
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    fake_judge.script(Reply("YES {auth} " + PASSWORD), Fault(500, body=f"{PASSWORD} {{auth}}"))
    async with JudgeClient(cfg) as client:
        reply = await client.chat(MESSAGES)
        with pytest.raises(JudgeHTTPError) as error:
            await client.chat(MESSAGES)
    assert fake_judge.chat_requests()[0].headers["authorization"] == f"Basic {token}"
    assert reply == "YES Basic *** ***"
    for text in (reply, str(error.value)):
        assert PASSWORD not in text and token not in text and "pa%20ss" not in text
