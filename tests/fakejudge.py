"""A real HTTP judge server on 127.0.0.1 for tests: speaks Ollama and OpenAI, with scripts.

    with FakeJudge(models=["judge-1"]) as fake:        # or the `fake_judge` fixture
        fake.when("refund", "NO")                       # prompts containing "refund" get NO
        fake.script(Fault(500), Reply("YES"))           # the next two chat calls, in order
        ... JudgeConfig(provider="ollama", url=fake.url, model="judge-1") ...
        fake.chat_requests()                            # what arrived, in arrival order

Chat endpoints (`/api/chat`, `/api/generate`, `/v1/chat/completions`) answer, in this order of
precedence: the next scripted action, the first `when` rule whose text occurs in the prompt, the
`responder` callable, else `default`. An action is a str (the reply text), `Reply`, `Fault`
(status code, Retry-After), `Garbage` (a 200 whose body is not JSON), `Drop` (close the
connection without answering), `Trickle` (a 200 sent a few bytes at a time), `Huge` (a 200 of
`size` bytes, with or without Content-Length) or `Redirect`. `delay` is added before every
answer. A request with "stream": true is refused with 400, so tests prove streaming is off.

A hostile server, for the security tests: in a Reply's text, a Fault's body, and a Reply's
extra `headers`, `{auth}` is replaced by the Authorization header the request carried; with
`echo_headers`, every answer (model lists and 4xx included) also carries all request headers
in a top-level "echo" field and an `X-Echo` response header.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CHAT_PATHS = ("/api/chat", "/api/generate", "/v1/chat/completions")


@dataclass(frozen=True)
class Reply:
    text: str
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Fault:
    status: int = 500
    body: str = '{"error": "scripted fault"}'
    retry_after: str | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Garbage:
    body: bytes = b"<html>502 bad gateway, or something</html>"
    delay: float = 0.0


@dataclass(frozen=True)
class Drop:
    delay: float = 0.0


@dataclass(frozen=True)
class Trickle:
    """A valid 200 reply sent `step` bytes every `interval` seconds (each gap under a
    per-read timeout, the whole far over it)."""

    text: str = "YES"
    step: int = 4
    interval: float = 0.1
    delay: float = 0.0


@dataclass(frozen=True)
class Huge:
    """A 200 whose body is `size` bytes (a JSON reply with a long content); without
    `declare_length` the body ends when the connection closes."""

    size: int
    declare_length: bool = True
    delay: float = 0.0


@dataclass(frozen=True)
class Redirect:
    location: str
    status: int = 307
    delay: float = 0.0


Action = str | Reply | Fault | Garbage | Drop | Trickle | Huge | Redirect


@dataclass(frozen=True)
class Request:
    time: float  # time.monotonic() on arrival
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    raw: bytes

    @property
    def prompt(self) -> str:
        """All message text of a chat or generate request, joined."""
        if not isinstance(self.body, dict):
            return ""
        if "messages" in self.body:
            return "\n".join(str(m.get("content", "")) for m in self.body["messages"])
        return "\n".join(str(self.body.get(k, "")) for k in ("system", "prompt"))

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None


@dataclass
class FakeJudge:
    models: Sequence[str] = ("judge-1",)
    default: Action = "YES"
    delay: float = 0.0
    required_key: str | None = None  # when set, requests need "Authorization: Bearer <key>"
    echo_headers: bool = False  # a hostile server: every answer repeats the request headers
    responder: Callable[[Request], Action] | None = None
    requests: list[Request] = field(default_factory=list)
    tls: ssl.SSLContext | None = None  # when set, the server speaks HTTPS with its certificate

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._script: deque[Action] = deque()
        self._rules: list[tuple[str, Action]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ control

    def start(self) -> FakeJudge:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        if self.tls is not None:  # the handshake happens as each connection is accepted
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeJudge:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeJudge not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for provider "ollama" (and "openai": the client adds /v1)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def script(self, *actions: Action) -> None:
        """Answer the next chat requests with these actions, in order."""
        with self._lock:
            self._script.extend(actions)

    def when(self, contains: str, action: Action) -> None:
        """Answer prompts containing `contains` with `action` (first matching rule wins)."""
        with self._lock:
            self._rules.append((contains, action))

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._rules.clear()
            self.requests.clear()

    def log(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def chat_requests(self) -> list[Request]:
        return [r for r in self.log() if r.path in CHAT_PATHS]

    # ------------------------------------------------------------ answering

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _choose(self, request: Request) -> Action:
        with self._lock:
            if self._script:
                return self._script.popleft()
            for needle, action in self._rules:
                if needle in request.prompt:
                    return action
        if self.responder is not None:
            return self.responder(request)
        return self.default


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets bursts of new connections
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up (a timeout test) is not a server failure


class _Handler(BaseHTTPRequestHandler):
    fake: FakeJudge
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        path = self.path.split("?")[0]
        request = Request(
            time.monotonic(),
            method,
            path,
            {k.lower(): v for k, v in self.headers.items()},
            body,
            raw,
        )
        fake = self.fake
        fake._record(request)
        key = fake.required_key
        if key is not None and request.headers.get("authorization") != f"Bearer {key}":
            return self._send(401, {"error": "missing or wrong API key"})
        auth = request.headers.get("authorization", "")
        models = [m.replace("{auth}", auth) for m in fake.models]  # a hostile model list
        if method == "GET" and path == "/api/tags":
            return self._send(200, {"models": [{"name": m, "model": m} for m in models]})
        if method == "GET" and path == "/v1/models":
            return self._send(
                200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}
            )
        if method == "POST" and path in ("/api/embed", "/v1/embeddings"):
            return self._embed(path, body)
        if method != "POST" or path not in CHAT_PATHS:
            return self._send(404, {"error": f"no route {method} {path}"})
        if not isinstance(body, dict):
            return self._send(400, {"error": "body is not a JSON object"})
        if body.get("stream", path != "/v1/chat/completions"):  # Ollama streams by default
            return self._send(400, {"error": "this fake judge does not stream"})
        if body.get("model") not in fake.models:
            return self._send(404, {"error": f"model {body.get('model')!r} not found"})
        action = fake._choose(request)
        if isinstance(action, str):
            action = Reply(action)
        time.sleep(fake.delay + action.delay)
        if isinstance(action, Reply):
            headers = {k: v.replace("{auth}", auth) for k, v in action.headers}
            envelope = _envelope(path, body["model"], action.text.replace("{auth}", auth))
            return self._send(200, envelope, headers)
        if isinstance(action, Fault):
            headers = {"Retry-After": action.retry_after} if action.retry_after else {}
            return self._send_raw(
                action.status, action.body.replace("{auth}", auth).encode(), headers
            )
        if isinstance(action, Garbage):
            return self._send_raw(200, action.body, {})
        if isinstance(action, Trickle):
            return self._trickle(_envelope(path, body["model"], action.text), action)
        if isinstance(action, Huge):
            return self._huge(path, body["model"], action)
        if isinstance(action, Redirect):
            return self._send_raw(action.status, b"", {"Location": action.location})
        self.close_connection = True  # Drop: hang up without a reply

    def _embed(self, path: str, body: Any) -> None:
        texts = body.get("input", []) if isinstance(body, dict) else []
        texts = [texts] if isinstance(texts, str) else texts
        vectors = [_vector(str(t)) for t in texts]
        if path == "/api/embed":
            return self._send(200, {"embeddings": vectors})
        return self._send(
            200, {"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]}
        )

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if self.fake.echo_headers and isinstance(payload, dict):
            payload = {**payload, "echo": dict(self.headers.items())}
        headers = {"Content-Type": "application/json", **(headers or {})}
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        if self.fake.echo_headers:
            self.send_header("X-Echo", "; ".join(f"{k}={v}" for k, v in self.headers.items()))
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, payload: Any, action: Trickle) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for i in range(0, len(data), action.step):
                self.wfile.write(data[i : i + action.step])
                self.wfile.flush()
                time.sleep(action.interval)
        except OSError:  # the client gave up: that is the point
            self.close_connection = True

    def _huge(self, path: str, model: str, action: Huge) -> None:
        head, tail = json.dumps(_envelope(path, model, "\0")).encode().split(b"\\u0000")
        filler = max(0, action.size - len(head) - len(tail))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if action.declare_length:
            self.send_header("Content-Length", str(len(head) + filler + len(tail)))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = not action.declare_length
        try:
            self.wfile.write(head)
            block = b"x" * 65536
            while filler > 0:
                self.wfile.write(block[: min(filler, len(block))])
                filler -= len(block)
            self.wfile.write(tail)
        except OSError:  # the client stopped reading at its cap
            self.close_connection = True


def _envelope(path: str, model: str, text: str) -> dict[str, Any]:
    if path == "/api/chat":
        return {"model": model, "message": {"role": "assistant", "content": text}, "done": True}
    if path == "/api/generate":
        return {"model": model, "response": text, "done": True}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255 for b in digest[:8]]


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    with FakeJudge() as fake:
        yield fake


def main() -> None:
    """`python -m tests.fakejudge [--delay S] [--model M ...]`: serve until killed (benchmarks,
    manual tries); prints the base URL on the first line."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--reply", default="YES")
    args = parser.parse_args()
    fake = FakeJudge(models=args.model or ["judge-1"], default=args.reply, delay=args.delay)
    with fake:
        print(fake.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
