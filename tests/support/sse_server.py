"""A loopback HTTP/1.1 server that replays scripted (SSE) responses, for tests.

`ReplayServer` listens on 127.0.0.1 on a free port (or the `port` given) and serves
from a background thread, so synchronous (Playwright) and asynchronous (pytest-asyncio)
tests can both use it. Each request is answered by the next queued `Script`, or by a `responder`
callable, or by the `default` script once the queue is empty::

    from tests.support.sse_server import ReplayServer, Script
    from tests.support.wire import openai_chunks

    with ReplayServer([Script.json(429, {...}, headers={"retry-after-ms": "10"}),
                       Script.sse(openai_chunks(text="Hi", finish_reason="stop"))]) as server:
        provider = OpenAIProvider(f"{server.base_url}/v1", "sk-test")
        ...
        assert len(server.requests) == 2
        assert server.requests[1].json["stream"] is True

SSE bodies go out with chunked transfer encoding (or `framing="close"`: no length,
the connection closes at the end), one flushed write per chunk, so the client really
receives them one by one. `disconnect_after=n` drops the socket after n chunks without
the terminating chunk, which an HTTP client reports as an incomplete body.
`hold_after=n` with `release=threading.Event()` pauses after n chunks until the test
sets the event (for example to click "stop" while a call is in flight), without any
sleeps in the test.

With nothing left to serve, the server answers 500 with `x-should-retry: false` and a
JSON error naming the request, so a missing script fails fast with a clear message.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

HOLD_TIMEOUT_S = 30.0
"""A held stream gives up waiting for `release` after this long (a forgotten release)."""


@dataclass(frozen=True)
class Script:
    """One scripted response.

    - `events`: SSE body chunks (str is UTF-8 encoded; bytes go out as they are, so a
      multi-byte character may be split across chunks). Empty chunks are skipped.
    - `body`: a non-SSE body instead (str, bytes, or a JSON-able dict/list) sent with a
      Content-Length; used for error answers.
    - `delay_s`: server-side pause before each chunk (pacing, never synchronisation).
    - `disconnect_after`: drop the connection after this many chunks.
    - `hold_after` / `release`: pause after this many chunks until `release` is set.
    - `framing`: `"chunked"` (default) or `"close"` (end of body = connection close).
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    events: Sequence[bytes | str] = ()
    delay_s: float = 0.0
    disconnect_after: int | None = None
    body: bytes | str | dict[str, Any] | list[Any] | None = None
    framing: Literal["chunked", "close"] = "chunked"
    hold_after: int | None = None
    release: threading.Event | None = None

    @classmethod
    def sse(cls, events: Iterable[bytes | str], **options: Any) -> Script:
        """A 200 event stream of `events` (options as in the constructor)."""
        return cls(events=tuple(events), **options)

    @classmethod
    def json(cls, status: int, payload: Any, *, headers: Mapping[str, str] | None = None) -> Script:
        """A JSON answer, typically an error body."""
        return cls(status=status, body=payload, headers=dict(headers or {}))


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received. Header names are lower-case; `client_port` tells
    connections apart (two requests with the same port shared a keep-alive connection)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    client_port: int = 0

    @property
    def json(self) -> Any:
        """The body parsed as JSON, or `None` when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None


Responder = Callable[[Any, int], Script]
"""`responder(request_json, attempt_index) -> Script`; `attempt_index` counts every
request this server received before this one (0 for the first)."""


class ReplayServer:
    """A threaded loopback HTTP/1.1 server replaying `Script`s; see the module docstring."""

    def __init__(
        self,
        scripts: Iterable[Script] = (),
        *,
        responder: Responder | None = None,
        default: Script | None = None,
        port: int = 0,
    ) -> None:
        self._port = port  # 0: any free port
        self._queue: deque[Script] = deque(scripts)
        self._responder = responder
        self._default = default
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> ReplayServer:
        if self._httpd is not None:
            return self
        self._httpd = _Server(("127.0.0.1", self._port), _Handler, replay=self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"ReplayServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop open connections (held streams are released)."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            _drop(connection)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- configuration and assertions --------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ReplayServer is not started; use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (append `/v1` for an OpenAI-style base_url)."""
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *scripts: Script) -> None:
        with self._lock:
            self._queue.extend(scripts)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[str]:
        """Problems the server hit (a responder that raised, an exhausted queue)."""
        with self._lock:
            return list(self._errors)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until `count` requests arrived (or raise `TimeoutError`); for sync tests."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(
                    f"ReplayServer got {len(self._requests)} of {count} requests in {timeout}s"
                )
            return list(self._requests)

    # -- used by the handler -----------------------------------------------------------

    def _record(self, request: RecordedRequest) -> Script:
        with self._lock:
            attempt = len(self._requests)
            self._requests.append(request)
            self._lock.notify_all()
            if self._queue:
                return self._queue.popleft()
            responder, default = self._responder, self._default
        if responder is not None:
            try:
                return responder(request.json, attempt)
            except Exception as exc:
                return self._failure(f"the responder raised {type(exc).__name__}: {exc}")
        if default is not None:
            return default
        return self._failure(
            f"no scripted response left for {request.method} {request.path} (request "
            f"#{attempt + 1}); enqueue more Scripts or pass default= / responder="
        )

    def _failure(self, message: str) -> Script:
        with self._lock:
            self._errors.append(message)
        return Script.json(
            500,
            {"error": {"message": f"ReplayServer: {message}", "type": "replay_server_error"}},
            headers={"x-should-retry": "false"},
        )

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, *, replay: ReplayServer):
        self.replay = replay
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up (a cancelled stream, a closed pool) is routine, not news.
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        with self.replay._lock:
            self.replay._errors.append(f"handler failed: {error!r}")
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    # An idle keep-alive connection is dropped after this long, ending its thread.
    timeout = 10

    def setup(self) -> None:
        super().setup()
        self.server.replay._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.replay._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean; assertions use `ReplayServer.requests`

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={key.lower(): value for key, value in self.headers.items()},
            body=self._read_body(),
            client_port=int(self.client_address[1]),
        )
        script = self.server.replay._record(request)
        try:
            if script.body is not None or (not script.events and script.status != 200):
                self._send_body(script)
            else:
                self._send_stream(script)
        except OSError:
            # The client went away (e.g. it cancelled the stream): nothing to answer.
            self.close_connection = True

    def _read_body(self) -> bytes:
        length = self.headers.get("content-length")
        if length is not None:
            return self.rfile.read(int(length))
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return b""

    def _send_body(self, script: Script) -> None:
        body, content_type = _encode_body(script.body)
        self.send_response(script.status)
        headers = {"content-type": content_type}
        headers.update({key.lower(): value for key, value in script.headers.items()})
        headers["content-length"] = str(len(body))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_stream(self, script: Script) -> None:
        chunked = script.framing == "chunked"
        self.send_response(script.status)
        headers = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        headers.update({key.lower(): value for key, value in script.headers.items()})
        for key, value in headers.items():
            self.send_header(key, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()
        stopping = self.server.replay._stopping
        chunks = [c.encode() if isinstance(c, str) else bytes(c) for c in script.events]
        for sent, chunk in enumerate(c for c in chunks if c):
            if script.disconnect_after is not None and sent >= script.disconnect_after:
                self._disconnect()
                return
            if script.hold_after is not None and sent == script.hold_after:
                self._hold(script.release or threading.Event(), stopping)
            if script.delay_s and stopping.wait(script.delay_s):
                return
            self.wfile.write(f"{len(chunk):X}\r\n".encode() + chunk + b"\r\n" if chunked else chunk)
            self.wfile.flush()
        if script.disconnect_after is not None:
            self._disconnect()
            return
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _hold(self, release: threading.Event, stopping: threading.Event) -> None:
        # Short waits so a stopping server never waits for a release that won't come.
        deadline = time.monotonic() + HOLD_TIMEOUT_S
        while not release.wait(0.02) and not stopping.is_set():
            if time.monotonic() > deadline:
                return

    def _disconnect(self) -> None:
        self.close_connection = True
        _drop(self.connection)


def _drop(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


def _encode_body(body: Any) -> tuple[bytes, str]:
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    if body is None:
        return b"", "text/plain; charset=utf-8"
    return json.dumps(body).encode(), "application/json"
