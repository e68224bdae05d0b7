"""HTTP client for one judge: Ollama or any OpenAI-compatible server.

One long-lived `httpx.AsyncClient` per judge, a semaphore bounding requests in flight, one
deadline per request (connect to last byte: a server trickling its reply cannot hold a request
longer than `timeout`), a cap on the reply size (read as it streams in, stopped at the cap), and
retries with exponential backoff and jitter on connection errors, timeouts, 429 (Retry-After
honoured) and 5xx. Other 4xx are the caller's mistake and are not retried; so is a reply over
the cap. The judge's own generation is never streamed.

A judge server is untrusted. The API key (or the URL's password) goes only to the judge's own
host (no redirects are followed), and every text that comes back (reply content, model names,
error bodies) has the key and password masked before anyone stores, caches or shows it.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import functools
import json
import os
import random
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from ragtui.config import JudgeConfig
from ragtui.core.errors import RagtuiError

MAX_RETRY_AFTER = 120.0  # seconds; a server asking for longer is treated as down
MAX_BACKOFF = 30.0
MAX_CONNECT_RETRIES = 2
MAX_REPLY_BYTES = 4 << 20  # a judge's reply is a few KB; a model list a few hundred
MASK = "***"


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


class JudgeReplyTooLarge(JudgeError):
    """A reply over MAX_REPLY_BYTES: reading stopped at the cap; an error for that call."""


Message = Mapping[str, str]  # {"role": "system" | "user", "content": "..."}


def _tls() -> ssl.SSLContext:
    """A verifying TLS context: the CA bundle, or the one SSL_CERT_FILE / SSL_CERT_DIR name."""
    return _tls_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _tls_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # One per process and setting: building one loads the CA bundle (~20 ms of CPU), and each
    # client (a re-judge, a noise check, every call from the TUI) built its own, also for a
    # plain-HTTP judge that never uses it. httpx reads the same two variables.
    return httpx.create_ssl_context()


class JudgeClient:
    """Use as `async with JudgeClient(cfg) as client:`; the client is safe to share between tasks."""

    def __init__(self, config: JudgeConfig, *, transport: httpx.AsyncBaseTransport | None = None):
        self.config = config
        self.base = config.url.rstrip("/")  # never holds a user or password (JudgeConfig)
        self._origin = _origin(httpx.URL(self.base))
        # identity: a compressed reply could inflate far past the size cap between two reads
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        key = config.api_key()
        auth = None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        elif config.password is not None:
            auth = httpx.BasicAuth(config.username or "", config.password)
        self._secrets = _secret_forms(key, config.username, config.password)
        self._semaphore = asyncio.Semaphore(config.concurrency)
        limits = httpx.Limits(
            max_connections=config.concurrency, max_keepalive_connections=config.concurrency
        )
        self._http = httpx.AsyncClient(
            headers=headers,
            auth=auth,
            timeout=httpx.Timeout(config.timeout),
            limits=limits,
            transport=transport,
            verify=_tls(),
            follow_redirects=False,  # a redirect would carry the key elsewhere: it is an error
        )
        self.calls = 0  # HTTP attempts made, retries included

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
            return self.mask(_field(data, ("message", "content"), self.config, "/api/chat"))
        # No response_format here: servers disagree on it (LM Studio wants json_schema, older
        # llama.cpp rejects it), and the prompts ask for JSON and the parser is tolerant.
        body = {"model": model, "messages": list(messages), "stream": False, **self._options()}
        url = self._openai("/chat/completions")
        data = await self._request("POST", url, body)
        return self.mask(_field(data, ("choices", 0, "message", "content"), self.config, url))

    async def models(self) -> list[str]:
        """Model names the server offers (/api/tags or /v1/models)."""
        if self.config.provider == "ollama":
            data = await self._request("GET", self.base + "/api/tags", None, retry=False)
            items = _field(data, ("models",), self.config, "/api/tags")
            names = [str(m.get("name") or m.get("model")) for m in _dicts(items)]
        else:
            url = self._openai("/models")
            data = await self._request("GET", url, None, retry=False)
            items = _field(data, ("data",), self.config, url)
            names = [str(m.get("id")) for m in _dicts(items)]
        return [self.mask(n) for n in names]

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

    def mask(self, text: str) -> str:
        """`text` with the key and the URL password (in every form a server could echo them:
        raw, percent- or JSON-escaped, as a Basic auth token) replaced by ***."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    async def _request(
        self, method: str, url: str, body: Mapping[str, Any] | None, *, retry: bool = True
    ) -> Any:
        try:
            return await self._attempts(method, url, body, retry)
        except JudgeError as exc:  # every message may quote the server: mask it once, here
            raise _masked(exc, self.mask) from None

    async def _attempts(
        self, method: str, url: str, body: Mapping[str, Any] | None, retry: bool
    ) -> Any:
        cfg = self.config
        attempts = 1 + (cfg.retries if retry else 0)
        async with self._semaphore:
            for attempt in range(attempts):
                last = attempt == attempts - 1
                wait = self._backoff(attempt)
                self.calls += 1
                try:
                    async with asyncio.timeout(cfg.timeout):  # one deadline, whole reply read
                        status, headers, data = await self._send(method, url, body)
                except httpx.ConnectError as exc:
                    if _untrusted(exc):  # final: retrying cannot make a certificate trusted
                        raise JudgeUnreachable(
                            f"judge {cfg.name}: cannot connect to {self.base} ({_reason(exc)}); "
                            "if this server is yours, point SSL_CERT_FILE at its CA certificate"
                        ) from None
                    error: JudgeError = JudgeUnreachable(
                        f"judge {cfg.name}: cannot connect to {self.base} ({_reason(exc)})"
                    )
                except (httpx.TimeoutException, TimeoutError):
                    error = JudgeTimeout(
                        f"judge {cfg.name}: no reply from {url} within {cfg.timeout:g} s"
                    )
                except httpx.TransportError as exc:  # the server hung up mid-request: retry
                    error = JudgeError(
                        f"judge {cfg.name}: connection to {self.base} broke ({_reason(exc)})"
                    )
                else:
                    if status < 300:
                        return _decode(data, cfg, url)
                    error = JudgeHTTPError(
                        f"judge {cfg.name}: {url} answered HTTP {status}" + _excerpt(data),
                        status,
                    )
                    if status != 429 and status < 500:
                        raise error  # a 4xx (or 3xx) is final: retrying cannot help
                    if status == 429:
                        wait = max(wait, _retry_after(headers) or 0.0)
                # A refused connection gets at most MAX_CONNECT_RETRIES: a server that is
                # starting up comes back fast, and one that is down should fail fast.
                refused = isinstance(error, JudgeUnreachable) and attempt >= MAX_CONNECT_RETRIES
                if last or refused or wait > MAX_RETRY_AFTER:
                    if attempts > 1:
                        raise type(error)(*_with_attempts(error, attempt + 1)) from None
                    raise error from None
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    async def _send(
        self, method: str, url: str, body: Mapping[str, Any] | None
    ) -> tuple[int, httpx.Headers, bytes]:
        """(status, headers, body) with the body read as it streams in, up to the cap."""
        request = self._http.build_request(method, url, json=body)
        if _origin(request.url) != self._origin:
            # every URL is built from the judge's base; anything else must never get the key
            raise JudgeError(f"judge {self.config.name}: refusing to send a request to {url}")
        response = await self._http.send(request, stream=True)
        try:
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > MAX_REPLY_BYTES:
                raise self._too_large(url)
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_REPLY_BYTES:
                    raise self._too_large(url)
        finally:
            await response.aclose()
        return response.status_code, response.headers, bytes(data)

    def _too_large(self, url: str) -> JudgeReplyTooLarge:
        return JudgeReplyTooLarge(
            f"judge {self.config.name}: {url} sent a reply over {MAX_REPLY_BYTES >> 20} MB; "
            "stopped reading it"
        )

    def _backoff(self, attempt: int) -> float:
        base = min(MAX_BACKOFF, self.config.backoff * 2**attempt)
        return base + random.uniform(0, base / 2)  # jitter spreads out retrying clients


def _with_attempts(error: JudgeError, attempts: int) -> tuple[Any, ...]:
    message = f"{error} (after {attempts} attempt{'s' * (attempts != 1)})"
    return (message, error.status) if isinstance(error, JudgeHTTPError) else (message,)


def _untrusted(exc: BaseException) -> bool:
    """Whether the server's TLS certificate failed verification (in the exception chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reason(exc: BaseException) -> str:
    """A short cause; walks the exception chain because httpx hides the OS error there."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "refused" in str(seen).lower():
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:120]


def _excerpt(data: bytes) -> str:
    """The start of a reply body, for error messages (masked with the message)."""
    text = " ".join(data[:2000].decode("utf-8", "replace").split())[:120]
    return f": {text}" if text else ""


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is not None:
        return max(0.0, seconds) if seconds == seconds else None  # NaN: no usable hint
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _decode(data: bytes, cfg: JudgeConfig, url: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # not JSON, bad UTF-8, or nested past reason
        raise JudgeProtocolError(
            f"judge {cfg.name}: {url} replied with something that is not JSON{_excerpt(data)}"
        ) from None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _dicts(items: Any) -> list[dict[str, Any]]:
    return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []


def _secret_forms(key: str | None, user: str | None, password: str | None) -> list[str]:
    """Every spelling of the secrets a server could send back, longest first."""
    forms: set[str] = set()
    for secret in (key, password):
        if secret:
            escaped = json.dumps(secret)[1:-1]
            forms |= {secret, escaped, escaped.replace("/", "\\/"), quote(secret, safe="")}
    if password:
        token = f"{user or ''}:{password}".encode()
        forms.add(base64.b64encode(token).decode())
    return sorted(forms, key=len, reverse=True)


def _masked(error: JudgeError, mask: Any) -> JudgeError:
    text = mask(str(error))
    if isinstance(error, JudgeHTTPError):
        return JudgeHTTPError(text, error.status)
    return type(error)(text)


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
