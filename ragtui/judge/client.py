"""HTTP client for one judge: Ollama or any OpenAI-compatible server.

One long-lived `httpx.AsyncClient` per judge, a semaphore bounding requests in flight, a timeout
per request, and retries with exponential backoff and jitter on connection errors, timeouts,
429 (Retry-After honoured) and 5xx. Other 4xx are the caller's mistake and are not retried.
Streaming is always off. The API key lives only in the client's headers: error messages name
the judge and the URL, never a header.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ragtui.config import JudgeConfig
from ragtui.core.errors import RagtuiError

MAX_RETRY_AFTER = 120.0  # seconds; a server asking for longer is treated as down
MAX_BACKOFF = 30.0
MAX_CONNECT_RETRIES = 2


class JudgeError(RagtuiError):
    """A judge request that failed for good (after retries); one line, no headers."""


class JudgeUnreachable(JudgeError):
    """Connection refused / DNS failure: the judge server is not there."""


class JudgeTimeout(JudgeError):
    pass


class JudgeHTTPError(JudgeError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class JudgeProtocolError(JudgeError):
    """A 2xx reply that is not the provider's response shape (not JSON, fields missing)."""


Message = Mapping[str, str]  # {"role": "system" | "user", "content": "..."}


class JudgeClient:
    """Use as `async with JudgeClient(cfg) as client:`; the client is safe to share between tasks."""

    def __init__(self, config: JudgeConfig, *, transport: httpx.AsyncBaseTransport | None = None):
        self.config = config
        self.base = config.url.rstrip("/")
        headers = {"Accept": "application/json"}
        key = config.api_key()
        self._key = key  # kept only to mask it in error text
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._semaphore = asyncio.Semaphore(config.concurrency)
        limits = httpx.Limits(
            max_connections=config.concurrency, max_keepalive_connections=config.concurrency
        )
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(config.timeout),
            limits=limits,
            transport=transport,
            follow_redirects=False,
        )
        self.calls = 0  # HTTP attempts made, retries included
        self.retried = 0

    async def __aenter__(self) -> JudgeClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------ endpoints

    def _openai(self, path: str) -> str:
        # Accept both "http://host:8000" and "http://host:8000/v1" as the base URL.
        root = self.base if self.base.endswith("/v1") else self.base + "/v1"
        return root + path

    def _options(self) -> dict[str, Any]:
        return {"temperature": self.config.temperature}

    async def chat(self, messages: Sequence[Message], *, json_reply: bool = False) -> str:
        """The assistant's reply text. `json_reply` sets Ollama's format=json (OpenAI: prompt only)."""
        model = self.config.model
        if self.config.provider == "ollama":
            body: dict[str, Any] = {
                "model": model,
                "messages": list(messages),
                "stream": False,
                "options": self._options(),
            }
            if json_reply:
                body["format"] = "json"
            data = await self._request("POST", self.base + "/api/chat", body)
            return _field(data, ("message", "content"), self.config, "/api/chat")
        # No response_format here: servers disagree on it (LM Studio wants json_schema, older
        # llama.cpp rejects it), and the prompts ask for JSON and the parser is tolerant.
        body = {"model": model, "messages": list(messages), "stream": False, **self._options()}
        url = self._openai("/chat/completions")
        data = await self._request("POST", url, body)
        return _field(data, ("choices", 0, "message", "content"), self.config, url)

    async def generate(self, prompt: str, *, system: str | None = None) -> str:
        """Ollama's /api/generate (single prompt); OpenAI servers get a one-message chat."""
        if self.config.provider != "ollama":
            messages = [{"role": "user", "content": prompt}]
            if system:
                messages.insert(0, {"role": "system", "content": system})
            return await self.chat(messages)
        body: dict[str, Any] = {
            "model": self.config.model,
            "prompt": prompt,
            "stream": False,
            "options": self._options(),
        }
        if system:
            body["system"] = system
        data = await self._request("POST", self.base + "/api/generate", body)
        return _field(data, ("response",), self.config, "/api/generate")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = self.config.model
        if self.config.provider == "ollama":
            data = await self._request(
                "POST", self.base + "/api/embed", {"model": model, "input": list(texts)}
            )
            vectors = _field(data, ("embeddings",), self.config, "/api/embed")
        else:
            url = self._openai("/embeddings")
            data = await self._request("POST", url, {"model": model, "input": list(texts)})
            items = _field(data, ("data",), self.config, url)
            vectors = [item.get("embedding") if isinstance(item, dict) else None for item in items]
        if (
            not isinstance(vectors, list)
            or len(vectors) != len(texts)
            or not all(isinstance(v, list) for v in vectors)
        ):
            raise JudgeProtocolError(
                f"judge {self.config.name}: embeddings reply has the wrong shape"
            )
        return vectors

    async def models(self) -> list[str]:
        """Model names the server offers (/api/tags or /v1/models)."""
        if self.config.provider == "ollama":
            data = await self._request("GET", self.base + "/api/tags", None, retry=False)
            items = _field(data, ("models",), self.config, "/api/tags")
            return [str(m.get("name") or m.get("model")) for m in items if isinstance(m, dict)]
        url = self._openai("/models")
        data = await self._request("GET", url, None, retry=False)
        items = _field(data, ("data",), self.config, url)
        return [str(m.get("id")) for m in items if isinstance(m, dict)]

    async def check(self) -> str | None:
        """None when the server is reachable and offers the model, else the problem in one line."""
        try:
            names = await self.models()
        except JudgeError as exc:
            return str(exc)
        wanted = self.config.model
        if wanted in names or (":" not in wanted and f"{wanted}:latest" in names):
            return None
        shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "") if names else "none"
        return (
            f"judge {self.config.name}: model {wanted!r} not offered by {self.base} (has: {shown})"
        )

    # ------------------------------------------------------------ transport

    async def _request(
        self, method: str, url: str, body: Mapping[str, Any] | None, *, retry: bool = True
    ) -> Any:
        cfg = self.config
        attempts = 1 + (cfg.retries if retry else 0)
        async with self._semaphore:
            for attempt in range(attempts):
                last = attempt == attempts - 1
                wait = self._backoff(attempt)
                self.calls += 1
                try:
                    response = await self._http.request(method, url, json=body)
                except httpx.ConnectError as exc:
                    error: JudgeError = JudgeUnreachable(
                        f"judge {cfg.name}: cannot connect to {self.base} ({_reason(exc)})"
                    )
                except httpx.TimeoutException:
                    error = JudgeTimeout(
                        f"judge {cfg.name}: no reply from {url} within {cfg.timeout:g} s"
                    )
                except httpx.TransportError as exc:  # the server hung up mid-request: retry
                    error = JudgeError(
                        f"judge {cfg.name}: connection to {self.base} broke ({_reason(exc)})"
                    )
                else:
                    status = response.status_code
                    if status < 300:
                        return _decode(response, cfg, url)
                    error = JudgeHTTPError(
                        f"judge {cfg.name}: {url} answered HTTP {status}"
                        + _excerpt(response, self._key),
                        status,
                    )
                    if status != 429 and status < 500:
                        raise error  # a 4xx is our request's fault: retrying cannot help
                    if status == 429:
                        wait = max(wait, _retry_after(response) or 0.0)
                # A refused connection gets at most MAX_CONNECT_RETRIES: a server that is
                # starting up comes back fast, and one that is down should fail fast.
                refused = isinstance(error, JudgeUnreachable) and attempt >= MAX_CONNECT_RETRIES
                if last or refused or wait > MAX_RETRY_AFTER:
                    if attempts > 1:
                        raise type(error)(*_with_attempts(error, attempt + 1)) from None
                    raise error from None
                self.retried += 1
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        base = min(MAX_BACKOFF, self.config.backoff * 2**attempt)
        return base + random.uniform(0, base / 2)  # jitter spreads out retrying clients


def _with_attempts(error: JudgeError, attempts: int) -> tuple[Any, ...]:
    message = f"{error} (after {attempts} attempt{'s' * (attempts != 1)})"
    return (message, error.status) if isinstance(error, JudgeHTTPError) else (message,)


def _reason(exc: BaseException) -> str:
    """A short cause; walks the exception chain because httpx hides the OS error there."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:120]


def _excerpt(response: httpx.Response, secret: str | None = None) -> str:
    """The start of a reply body, for error messages; a server echoing our key gets it masked."""
    text = " ".join(response.text.split())
    if secret:
        text = text.replace(secret, "***")
    text = text[:120]
    return f": {text}" if text else ""


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _decode(response: httpx.Response, cfg: JudgeConfig, url: str) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise JudgeProtocolError(
            f"judge {cfg.name}: {url} replied with something that is not JSON{_excerpt(response)}"
        ) from None


def _field(data: Any, path: tuple[str | int, ...], cfg: JudgeConfig, where: str) -> Any:
    value = data
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            dotted = ".".join(str(s) for s in path)
            raise JudgeProtocolError(
                f"judge {cfg.name}: {where} reply lacks {dotted} (is this a {cfg.provider} server?)"
            ) from None
    if path[-1] == "content" and not isinstance(value, str):
        raise JudgeProtocolError(f"judge {cfg.name}: {where} reply content is not text")
    return value
