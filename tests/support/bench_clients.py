"""Headless conversations for the capacity benchmark: each a websocket client that speaks
Reflex's event protocol as the page does, in a process of their own.

Reflex's page talks to the backend over socket.io (path and namespace `/_event`): the
connection's CONNECT packet carries the boot event (hydrate and load, with the page's
client storage and route) and the state schema, the query string carries the tab's token,
and each user action is an `event` message naming a state's handler with its payload;
the backend answers with `event` messages holding state deltas. Rather than build those
events by hand (their names and payloads belong to the app and to Reflex), `record`
reads them off a real page's websocket as it loads and sends one message, and every
headless conversation replays them with a token of its own, its own user (the
`X-Forwarded-User` header of `auth: mode: header`) and its own message text, sent once
the page is hydrated, as a person would.

`Conversations` runs the clients (python-socketio's `AsyncClient`) on one event loop in a
child process, so their work is not counted as the app's nor the browser driver's. They
count the pushes and bytes they receive without decoding them: decoding every delta in
Python would load the shared cores more than the server's own work does. A client follows
its turn the way a tab does today, through the deltas pushed on its socket; should turns
reach the page by another stream, the clients must read that stream too, or the load
they stand for would cost the server nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import re
import threading
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["Conversations", "Recording", "record"]

NAMESPACE = "/_event"
USER_HEADER = "X-Forwarded-User"
HYDRATE_TIMEOUT_S = 60.0
CONNECTS_AT_ONCE = 16
"""Clients connecting at the same time: hydrating hundreds at once measures a stampede."""


@dataclass(frozen=True)
class Recording:
    """What a page sent: its CONNECT payload, and the event its Send click emitted with
    `marker` as the message."""

    auth: dict[str, Any]
    send: dict[str, Any]
    marker: str

    def send_event(self, message: str) -> dict[str, Any]:
        """The Send event with `message` in place of the recorded marker."""

        def swap(value: Any) -> Any:
            if value == self.marker:
                return message
            if isinstance(value, dict):
                return {k: swap(v) for k, v in value.items()}
            if isinstance(value, list):
                return [swap(v) for v in value]
            return value

        return swap(self.send)


def socketio_packet(frame: str | bytes) -> tuple[str, Any] | None:
    """(socket.io packet type, data) of one engine.io websocket frame of the event
    namespace, or None for anything else (pings, other namespaces, binary)."""
    if not isinstance(frame, str) or not frame.startswith("4") or len(frame) < 2:
        return None
    kind, rest = frame[1], frame[2:]
    if not rest.startswith(NAMESPACE):
        return None
    rest = rest[len(NAMESPACE) :].lstrip(",")
    while rest[:1].isdigit():  # an acknowledgement id
        rest = rest[1:]
    return kind, (json.loads(rest) if rest else None)


def record(page: Any, url: str, message: str, timeout_s: float = 30.0) -> Recording:
    """Load `url` in `page` and send `message` through the chat input, reading the
    CONNECT payload and the Send event off the page's websocket."""
    frames: list[str | bytes] = []

    def watch(socket: Any) -> None:
        # A function of its own: Playwright cannot wrap a builtin method as a handler.
        socket.on("framesent", lambda payload: frames.append(payload))

    page.on("websocket", watch)
    page.goto(url)
    page.get_by_test_id("chat-input").fill(message)
    page.get_by_test_id("send-button").click()
    deadline = time.monotonic() + timeout_s
    auth: dict[str, Any] | None = None
    send: dict[str, Any] | None = None
    while time.monotonic() < deadline and (auth is None or send is None):
        page.wait_for_timeout(100)
        for frame in frames:
            packet = socketio_packet(frame)
            if packet is None:
                continue
            kind, data = packet
            if kind == "0" and isinstance(data, dict):
                auth = data
            elif kind == "2" and isinstance(data, list) and message in json.dumps(data):
                send = data[1]
    if auth is None or send is None:
        missing = "the CONNECT packet" if auth is None else "the Send event"
        raise RuntimeError(
            f"recording the page's events at {url}: {missing} did not appear on its websocket"
            f" within {timeout_s:.0f} s ({len(frames)} frames sent)"
        )
    return Recording(auth=auth, send=send, marker=message)


HYDRATED = re.compile(r'"is_hydrated_rx_state_":\s*true')
"""Reflex's own var, set once the page's load handlers have run: a person types only
after that, and a message sent before it would be handled before the page's user, agent
and endpoint are loaded."""


class _PushCounter:
    """A json module for socket.io that leaves pushes undecoded: an `event` message
    becomes ["event", (its length, whether it marks the page hydrated)]; everything else
    is parsed as usual."""

    @staticmethod
    def dumps(obj: Any, **kwargs: Any) -> str:
        return json.dumps(obj, **kwargs)

    @staticmethod
    def loads(text: str | bytes, **kwargs: Any) -> Any:
        if isinstance(text, str) and text.startswith('["event",'):
            return ["event", (len(text), HYDRATED.search(text) is not None)]
        return json.loads(text, **kwargs)


class _Client:
    def __init__(self) -> None:
        import socketio

        self.pushes = 0
        self.bytes = 0
        self.hydrated = asyncio.Event()
        self.sio = socketio.AsyncClient(json=_PushCounter, reconnection=False, handle_sigint=False)
        self.sio.on("event", self._on_event, namespace=NAMESPACE)

    async def _on_event(self, push: tuple[int, bool]) -> None:
        self.pushes += 1
        self.bytes += push[0]
        if push[1]:
            self.hydrated.set()

    async def start(self, api_url: str, recording: Recording, user: str, message: str) -> None:
        await self.sio.connect(
            f"{api_url}?token={uuid.uuid4()}",
            headers={USER_HEADER: user},
            auth=recording.auth,
            transports=["websocket"],
            namespaces=[NAMESPACE],
            socketio_path=NAMESPACE,
            wait_timeout=60,
        )
        await asyncio.wait_for(self.hydrated.wait(), HYDRATE_TIMEOUT_S)
        await self.sio.emit("event", recording.send_event(message), namespace=NAMESPACE)


async def _start_all(
    clients: list[_Client],
    api_url: str,
    recording: Recording,
    users: list[str],
    messages: list[str],
) -> None:
    gate = asyncio.Semaphore(CONNECTS_AT_ONCE)

    async def one(user: str, message: str) -> None:
        async with gate:
            client = _Client()
            clients.append(client)
            await client.start(api_url, recording, user, message)

    await asyncio.gather(*(one(u, m) for u, m in zip(users, messages, strict=True)))


async def _stop_all(clients: list[_Client]) -> dict[str, int]:
    stats = {
        "clients": len(clients),
        "pushes": sum(c.pushes for c in clients),
        "bytes": sum(c.bytes for c in clients),
    }
    await asyncio.gather(*(c.sio.disconnect() for c in clients), return_exceptions=True)
    clients.clear()
    return stats


def _serve(conn: Connection) -> None:
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    clients: list[_Client] = []

    def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        try:
            if request[0] == "start":
                started = time.monotonic()
                run(_start_all(clients, *request[1:]))
                conn.send(("ok", time.monotonic() - started))
            elif request[0] == "stop":
                conn.send(("ok", run(_stop_all(clients))))
            else:
                run(_stop_all(clients))
                conn.send(("ok", None))
                return
        except Exception as exc:  # the parent shows it
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class Conversations:
    """The headless conversations' process."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()

    def _ask(self, *request: Any) -> Any:
        self._conn.send(request)
        status, value = self._conn.recv()
        if status != "ok":
            raise RuntimeError(f"headless conversations: {value}")
        return value

    def start(
        self, api_url: str, recording: Recording, users: list[str], messages: list[str]
    ) -> float:
        """Connect one client per user and send its message; returns the seconds it took."""
        return self._ask("start", api_url, recording, users, messages)

    def stop(self) -> dict[str, int]:
        """Disconnect every client; returns how many there were and what they received."""
        return self._ask("stop")

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, RuntimeError):
            self._ask("close")
        self._process.join(timeout=30)
        if self._process.is_alive():
            self._process.terminate()

    def __enter__(self) -> Conversations:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
