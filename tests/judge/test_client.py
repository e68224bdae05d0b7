"""The judge client against a real HTTP server on 127.0.0.1 (tests/fakejudge.py)."""

from __future__ import annotations

import socket
import ssl
import time
from pathlib import Path

import pytest

from ragtui.config import JudgeConfig
from ragtui.judge.client import (
    JudgeClient,
    JudgeError,
    JudgeHTTPError,
    JudgeProtocolError,
    JudgeTimeout,
    JudgeUnreachable,
)
from tests.fakejudge import Drop, FakeJudge, Fault, Garbage, Reply

TLS = Path(__file__).resolve().parent / "tls"  # a self-signed certificate (README there)
MESSAGES = [{"role": "system", "content": "grade"}, {"role": "user", "content": "the answer"}]


def judge(fake: FakeJudge, provider: str = "ollama", **kw: object) -> JudgeConfig:
    options = {"timeout": 2.0, "backoff": 0.01, "retries": 3, "concurrency": 4, **kw}
    return JudgeConfig(name="t", provider=provider, url=fake.url, model="judge-1", **options)


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_chat_both_providers_streaming_off(fake_judge: FakeJudge, provider: str) -> None:
    fake_judge.script("PARTIAL")
    async with JudgeClient(judge(fake_judge, provider, temperature=0.3)) as client:
        assert await client.chat(MESSAGES) == "PARTIAL"
    [req] = fake_judge.chat_requests()
    assert req.path == ("/api/chat" if provider == "ollama" else "/v1/chat/completions")
    assert req.body["stream"] is False
    assert req.body["messages"] == MESSAGES
    temperature = (
        req.body["options"]["temperature"] if provider == "ollama" else req.body["temperature"]
    )
    assert temperature == 0.3


async def test_openai_base_url_with_v1_is_not_doubled(fake_judge: FakeJudge) -> None:
    cfg = JudgeConfig(name="t", provider="openai", url=fake_judge.url + "/v1/", model="judge-1")
    async with JudgeClient(cfg) as client:
        assert await client.chat(MESSAGES) == "YES"
    assert fake_judge.chat_requests()[0].path == "/v1/chat/completions"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_connection_refused_is_one_clear_line() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    cfg = JudgeConfig(name="down", provider="ollama", url=url, model="m", backoff=0.01, retries=2)
    async with JudgeClient(cfg) as client:
        with pytest.raises(JudgeUnreachable) as info:
            await client.chat(MESSAGES)
        assert client.calls == 3  # connection errors are retried
    message = str(info.value)
    assert "\n" not in message
    assert message == f"judge down: cannot connect to {url} (connection refused) (after 3 attempts)"


async def test_a_judge_whose_certificate_is_not_trusted_is_refused_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTPS certificates are verified (the shared TLS context is a verifying one): a server
    with a self-signed certificate gets no request, so neither the prompt nor the key."""
    monkeypatch.setenv("JUDGE_KEY", "sk-secret-123")
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(TLS / "cert.pem", TLS / "key.pem")  # self-signed, for 127.0.0.1
    with FakeJudge(tls=tls) as fake:
        cfg = JudgeConfig(
            name="tls",
            provider="openai",
            url=fake.url,
            model="judge-1",
            api_key_env="JUDGE_KEY",
            backoff=0.01,
        )
        async with JudgeClient(cfg) as client:
            with pytest.raises(JudgeError) as info:
                await client.chat(MESSAGES)
            assert client.calls == 1  # no retry: it cannot make the certificate trusted
        assert fake.requests == []
        message = str(info.value)
        assert "\n" not in message and "sk-secret-123" not in message
        assert message.startswith(
            f"judge tls: cannot connect to {fake.url} ([SSL: CERTIFICATE_VERIFY_FAILED] "
            "certificate verify failed: self-signed certificate"
        ), message
        assert message.endswith(
            "; if this server is yours, point SSL_CERT_FILE at its CA certificate"
        )
        # as the message says: the server's own certificate named as the CA is trusted
        monkeypatch.setenv("SSL_CERT_FILE", str(TLS / "cert.pem"))
        async with JudgeClient(cfg) as client:
            assert await client.chat(MESSAGES) == "YES"
        assert len(fake.chat_requests()) == 1


async def test_slow_reply_beyond_timeout(fake_judge: FakeJudge) -> None:
    fake_judge.delay = 0.5
    async with JudgeClient(judge(fake_judge, timeout=0.1, retries=1)) as client:
        started = time.monotonic()
        with pytest.raises(JudgeTimeout, match=r"no reply .* within 0\.1 s \(after 2 attempts"):
            await client.chat(MESSAGES)
        assert time.monotonic() - started < 0.5 * 2  # gave up on time, did not wait it out
    assert len(fake_judge.chat_requests()) == 2


async def test_500_then_success_is_retried(fake_judge: FakeJudge) -> None:
    fake_judge.script(Fault(500), Fault(503), Reply("YES"))
    async with JudgeClient(judge(fake_judge)) as client:
        assert await client.chat(MESSAGES) == "YES"
        assert client.calls == 3
    assert len(fake_judge.chat_requests()) == 3  # two retries, seen by the server


async def test_500_forever_gives_up_with_status(fake_judge: FakeJudge) -> None:
    fake_judge.default = Fault(500, body="boom")
    async with JudgeClient(judge(fake_judge, retries=2)) as client:
        with pytest.raises(JudgeHTTPError, match=r"HTTP 500: boom \(after 3 attempts") as info:
            await client.chat(MESSAGES)
    assert info.value.status == 500


async def test_429_retry_after_is_honoured(fake_judge: FakeJudge) -> None:
    fake_judge.script(Fault(429, retry_after="0.6"), Reply("NO"))
    async with JudgeClient(judge(fake_judge)) as client:
        assert await client.chat(MESSAGES) == "NO"
    first, second = fake_judge.chat_requests()
    assert second.time - first.time >= 0.6  # backoff alone would be ~0.01 s


async def test_4xx_is_not_retried(fake_judge: FakeJudge) -> None:
    fake_judge.script(Fault(400, body='{"error": "bad request"}'))
    async with JudgeClient(judge(fake_judge)) as client:
        with pytest.raises(JudgeHTTPError, match="HTTP 400") as info:
            await client.chat(MESSAGES)
    assert info.value.status == 400
    assert len(fake_judge.chat_requests()) == 1


async def test_unknown_model_is_a_4xx(fake_judge: FakeJudge) -> None:
    cfg = JudgeConfig(name="t", provider="ollama", url=fake_judge.url, model="nope", retries=3)
    async with JudgeClient(cfg) as client:
        with pytest.raises(JudgeHTTPError, match="HTTP 404"):
            await client.chat(MESSAGES)
    assert len(fake_judge.chat_requests()) == 1


async def test_garbage_body_is_a_protocol_error(fake_judge: FakeJudge) -> None:
    fake_judge.script(Garbage())
    async with JudgeClient(judge(fake_judge)) as client:
        with pytest.raises(JudgeProtocolError, match="not JSON: <html>502"):
            await client.chat(MESSAGES)


async def test_dropped_connection_is_retried(fake_judge: FakeJudge) -> None:
    fake_judge.script(Drop(), Reply("YES"))
    async with JudgeClient(judge(fake_judge)) as client:
        assert await client.chat(MESSAGES) == "YES"
    assert len(fake_judge.chat_requests()) == 2


async def test_wrong_envelope_names_the_field(fake_judge: FakeJudge) -> None:
    # An OpenAI client pointed at an Ollama-only route set: the reply shape is wrong.
    fake_judge.script(Garbage(b'{"message": {}}'))
    async with JudgeClient(judge(fake_judge)) as client:
        with pytest.raises(JudgeProtocolError, match=r"lacks message\.content"):
            await client.chat(MESSAGES)


async def test_concurrency_is_bounded(fake_judge: FakeJudge) -> None:
    import asyncio

    fake_judge.delay = 0.1
    async with JudgeClient(judge(fake_judge, concurrency=3)) as client:
        await asyncio.gather(*(client.chat(MESSAGES) for _ in range(9)))
    times = sorted(r.time for r in fake_judge.chat_requests())
    # three waves of three: request 4 cannot start before request 1 finished
    assert times[3] - times[0] >= 0.09 and times[6] - times[3] >= 0.09


async def test_api_key_sent_from_env_and_never_in_errors(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-1234567890"
    monkeypatch.setenv("RAGTUI_TEST_KEY", secret)
    fake_judge.required_key = secret
    fake_judge.script(Reply("YES"), Fault(400, body=f"bad key Bearer {secret} for you"))
    cfg = judge(fake_judge, "openai", api_key_env="RAGTUI_TEST_KEY")
    async with JudgeClient(cfg) as client:
        assert await client.chat(MESSAGES) == "YES"
        with pytest.raises(JudgeError) as info:
            await client.chat(MESSAGES)
    assert fake_judge.chat_requests()[0].headers["authorization"] == f"Bearer {secret}"
    assert secret not in str(info.value) and secret not in repr(cfg)
    assert "bad key Bearer *** for you" in str(info.value)  # an echoing server is masked


async def test_models_and_check(fake_judge: FakeJudge) -> None:
    fake_judge.models = ["judge-1", "llama3.2:latest"]
    for provider in ("ollama", "openai"):
        async with JudgeClient(judge(fake_judge, provider)) as client:
            assert await client.models() == ["judge-1", "llama3.2:latest"]
            assert await client.check() is None
        cfg = JudgeConfig(name="x", provider=provider, url=fake_judge.url, model="llama3.2")
        async with JudgeClient(cfg) as client:
            assert await client.check() is None  # ":latest" is implied
        cfg = JudgeConfig(name="x", provider=provider, url=fake_judge.url, model="qwen")
        async with JudgeClient(cfg) as client:
            assert await client.check() == (
                f"judge x: model 'qwen' not offered by {fake_judge.url} "
                "(has: judge-1, llama3.2:latest)"
            )


async def test_api_key_not_in_debug_logs(
    fake_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    secret = "sk-test-LOGGED-0987654321"
    monkeypatch.setenv("RAGTUI_TEST_KEY", secret)
    fake_judge.script(Reply("YES"), Fault(500), Reply("NO"))
    caplog.set_level(logging.DEBUG)
    async with JudgeClient(judge(fake_judge, "openai", api_key_env="RAGTUI_TEST_KEY")) as client:
        await client.chat(MESSAGES)
        await client.chat(MESSAGES)
    assert len(caplog.records) > 0  # httpx/httpcore did log the requests...
    assert secret not in caplog.text  # ...without the key
