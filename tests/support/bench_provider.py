"""An OpenAI-shaped loopback provider for the benchmarks, in a process of its own.

In the app's process its writes would compete with the app for the interpreter, and its
record of every chunk would lengthen the app's garbage collections; a real provider does
neither. It listens on 127.0.0.1 and answers each chat request by the `Spec` named by the
first word of the conversation's last user message ("s8 row3": the spec `s8`, the turn
`s8 row3`), so one server can stream different turns to many conversations at once.

A turn is rounds of parallel `list_directory` calls and then a short reply. Each round's
calls stream a fresh intent: `sentences` are one-sentence intents of 40-110 characters
(different per call, the same in every run), one character per call every 20 ms;
`long` grows every intent by three characters per tick for the whole turn (1,800
characters in 12 s); `whole` sends each call's arguments in one chunk (a turn to store);
`text` streams reply text instead, four characters every 20 ms. Rounds follow while the
rounds' streams add up to `Spec.seconds`, at most `MAX_TOOL_ROUNDS` (the app asks a model
at most eight times per turn); reply text streams while the turn is younger than that.
Both read the spec registered under the name at that moment, so registering it again
with `seconds=0` ends the turns under way after their current round (text: at the next
tick).

`staggered` calls write their chunks on their own, spread over the tick as calls that
started at different moments are; `burst` writes every call's chunk of a tick in one write,
as parallel calls often arrive. Sockets have Nagle's algorithm off, as providers' servers
do: with it on, a burst written while the last is unacknowledged waits for the app's
delayed ACK (tens of ms).

A `Spec` with `record=True` keeps the wall-clock time each intent chunk was written, keyed
by (call id, intent characters sent so far), and each call's intent: what the page's
label times are compared with.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import random
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

__all__ = ["MAX_TOOL_ROUNDS", "TICK_S", "Kind", "Provider", "Spec", "intent_sentence"]

TICK_S = 0.02
"""One chunk per call every 20 ms: 50 chunks/s per call."""

MAX_TOOL_ROUNDS = 7
"""Rounds of calls per turn: the app asks the model at most 8 times (its `max_rounds`), and
the last answer is the reply."""

LONG_PIECE = "abc"
TEXT_PIECE = "Lore"
TOOL = "list_directory"
FIRST_CHUNK_S = 0.5
"""When a `whole` turn's calls arrive."""

Kind = Literal["sentences", "long", "whole", "text"]


@dataclass(frozen=True)
class Spec:
    """What one turn streams (see the module's docstring)."""

    kind: Kind = "sentences"
    calls: int = 1
    burst: bool = False
    seconds: float = 2.0
    record: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("sentences", "long", "whole", "text"):
            raise ValueError(f"Spec.kind {self.kind!r}: use sentences, long, whole or text")
        if self.kind != "text" and self.calls < 1:
            raise ValueError(f"Spec.calls is {self.calls}: a round needs at least one call")


_OPENERS = (
    "Reading",
    "Searching",
    "Checking",
    "Comparing",
    "Tracing",
    "Opening",
    "Scanning",
    "Looking through",
    "Collecting",
    "Walking",
)
_SUBJECTS = (
    "the configuration loader",
    "the callback router",
    "every migration file",
    "the OAuth handlers",
    "the session store",
    "the test fixtures",
    "the websocket layer",
    "the theme tokens",
    "the release notes",
    "the build scripts",
    "the error tree",
    "the provider adapters",
)
_PURPOSES = (
    "to see how endpoints are merged",
    "for places that open a socket",
    "to find where retries are counted",
    "before changing the default",
    "for the code that trims labels",
    "so the fix lands in one place",
    "to confirm nothing else imports it",
    "for uses of the old name",
)
_MORE = (
    "and the modules around it",
    "including the tests",
    "then the docs that describe it",
    "and its callers in the app",
    "starting with the newest files",
    "in both the server and the page",
)


_DANGLING = frozenset({"the", "and", "in", "its", "to", "for", "then", "of", "with", "both"})


def intent_sentence(seed: str) -> str:
    """A one-sentence intent of 40 to 110 characters, the same for the same seed: letters,
    spaces and commas only (nothing a JSON string escapes), never ending in a space."""
    rng = random.Random(seed)
    target = rng.randint(40, 110)
    words = f"{rng.choice(_OPENERS)} {rng.choice(_SUBJECTS)} {rng.choice(_PURPOSES)}".split()
    while len(words) < 60:
        words += f"{'' if rng.random() < 0.5 else ','} {rng.choice(_MORE)}".split()
    text = words[0]
    for word in words[1:]:
        joined = f"{text}{word}" if word == "," else f"{text} {word}"
        if len(joined) > target and len(text) >= 40:
            break
        text = joined
    # A sentence does not end on a word that leads into more.
    while text.rsplit(" ", 1)[-1] in _DANGLING:
        shorter = text.rsplit(" ", 1)[0].rstrip(",")
        if len(shorter) < 40:
            break
        text = shorter
    return text.rstrip(",")


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "bench",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _args(index: int, text: str) -> bytes:
    return _chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


DONE = b"data: [DONE]\n\n"
CLOSE_ARGS = '", "path": "."}'

Mark = tuple[str, int]
"""(call id, intent characters written so far)."""


@dataclass
class Event:
    """One write: when (seconds after the response starts), what, how many SSE chunks it
    carries, and the intent chunks it completes."""

    at: float
    data: bytes
    chunks: int
    marks: list[Mark] = field(default_factory=list)


def round_events(
    spec: Spec, round_index: int, seconds_left: float
) -> tuple[list[Event], dict[str, str]]:
    """The writes of one round of calls, and each call's intent by call id."""
    ids = [f"r{round_index}c{i}" for i in range(spec.calls)]
    if spec.kind == "whole":
        intents = {cid: f"Listing folder number {i} of the workspace" for i, cid in enumerate(ids)}
        data = b"".join(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": TOOL,
                                "arguments": json.dumps({"intent": intents[cid], "path": "."}),
                            },
                        }
                    ]
                }
            )
            for i, cid in enumerate(ids)
        )
        # As a provider's first token would: a turn that ends before the tab has started
        # following it can leave the tab showing Stop with no cards (seen at 0.1 s).
        first = FIRST_CHUNK_S
        return [Event(first, data + _chunk({}, "tool_calls") + DONE, spec.calls + 2)], intents
    if spec.kind == "long":
        ticks = max(1, int(seconds_left / TICK_S))
        pieces = {cid: [LONG_PIECE] * ticks for cid in ids}
    else:
        texts = [intent_sentence(f"{round_index}:{i}") for i in range(spec.calls)]
        pieces = {cid: list(text) for cid, text in zip(ids, texts, strict=True)}
    intents = {cid: "".join(p) for cid, p in pieces.items()}
    opening = b"".join(
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": cid,
                        "type": "function",
                        "function": {"name": TOOL, "arguments": '{"intent": "'},
                    }
                ]
            }
        )
        for i, cid in enumerate(ids)
    )
    events = [Event(0.0, opening, spec.calls)]
    if spec.burst:
        longest = max(len(p) for p in pieces.values())
        for tick in range(1, longest + 2):
            parts: list[bytes] = []
            marks: list[Mark] = []
            for i, cid in enumerate(ids):
                if tick <= len(pieces[cid]):
                    parts.append(_args(i, pieces[cid][tick - 1]))
                    marks.append((cid, tick * len(pieces[cid][0])))
                elif tick == len(pieces[cid]) + 1:
                    parts.append(_args(i, CLOSE_ARGS))
            events.append(Event(tick * TICK_S, b"".join(parts), len(parts), marks))
    else:
        for i, cid in enumerate(ids):
            phase = i / spec.calls
            written = 0
            for tick, piece in enumerate(pieces[cid], start=1):
                written += len(piece)
                events.append(Event((tick + phase) * TICK_S, _args(i, piece), 1, [(cid, written)]))
            close_at = (len(pieces[cid]) + 1 + phase) * TICK_S
            events.append(Event(close_at, _args(i, CLOSE_ARGS), 1))
        events.sort(key=lambda event: event.at)
    end = events[-1].at + TICK_S
    events.append(Event(end, _chunk({}, "tool_calls") + DONE, 1))
    return events, intents


def planned_rounds(spec: Spec) -> int:
    """Rounds of calls in a turn: as many as it takes for their streams to add up to
    `spec.seconds` (at least one, at most `MAX_TOOL_ROUNDS`). Counted from the streams'
    own length, not the clock, so a slower app gets the same turn, not a shorter one."""
    if spec.kind in ("long", "whole"):
        return 1
    total, rounds = 0.0, 0
    while rounds < MAX_TOOL_ROUNDS and (rounds == 0 or total < spec.seconds):
        longest = max(len(intent_sentence(f"{rounds}:{i}")) for i in range(spec.calls))
        total += (longest + 2) * TICK_S
        rounds += 1
    return rounds


def text_events(seconds: Callable[[], float]) -> Iterator[Event]:
    """Reply text, four characters every tick while the stream is younger than
    `seconds()` (asked again at every tick, so a benchmark can end it), then the end."""
    tick = 0
    while tick == 0 or tick * TICK_S < seconds():
        yield Event(tick * TICK_S, _chunk({"content": TEXT_PIECE}), 1)
        tick += 1
    yield Event(tick * TICK_S, _chunk({}, "stop") + DONE, 1)


def reply_events() -> list[Event]:
    return [Event(0.0, _chunk({"content": "Done."}) + _chunk({}, "stop") + DONE, 2)]


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


@dataclass(frozen=True)
class _Plan:
    name: str
    spec: Spec
    events: Iterable[Event]
    intents: dict[str, str]
    ends_turn: bool


class _Server:
    """The asyncio server and the state the parent asks about."""

    def __init__(self) -> None:
        self.specs: dict[str, Spec] = {}
        self.sent: dict[Mark, float] = {}
        self.intents: dict[str, str] = {}
        self.chunks = 0
        self.active = 0
        self.turns_started: dict[str, int] = {}
        self.turns_ended: dict[str, int] = {}

    def plan(self, body: dict[str, Any]) -> _Plan | str:
        messages = body.get("messages") or []
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if not users:
            return "the request has no user message"
        turn = _message_text(messages[users[-1]]).strip()
        name = turn.split(" ", 1)[0]
        spec = self.specs.get(name)
        if spec is None:
            return (
                f"no spec named {name!r} (the first word of the user message {turn[:60]!r});"
                f" known: {sorted(self.specs)}"
            )
        rounds = sum(1 for m in messages[users[-1] + 1 :] if m.get("role") == "assistant")
        if rounds == 0:
            self.turns_started[name] = self.turns_started.get(name, 0) + 1
        if spec.kind == "text":
            if rounds > 0:
                return _Plan(name, spec, reply_events(), {}, ends_turn=True)
            return _Plan(name, spec, text_events(lambda: self.specs[name].seconds), {}, True)
        if rounds > 0 and rounds >= planned_rounds(spec):
            return _Plan(name, spec, reply_events(), {}, ends_turn=True)
        events, intents = round_events(spec, rounds, spec.seconds)
        return _Plan(name, spec, events, intents, ends_turn=False)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n")[1:]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "content-length":
                    length = int(value.strip())
            body = json.loads(await reader.readexactly(length)) if length else {}
            planned = self.plan(body)
            if isinstance(planned, str):
                error = json.dumps({"error": {"message": f"bench provider: {planned}"}}).encode()
                writer.write(
                    b"HTTP/1.0 400 Bad Request\r\ncontent-type: application/json\r\n"
                    b"x-should-retry: false\r\n\r\n" + error
                )
                return
            spec, intents = planned.spec, planned.intents
            if spec.record:
                self.intents.update(intents)
            writer.write(b"HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
            self.active += 1
            try:
                await self.play(writer, planned.events, spec.record)
            finally:
                self.active -= 1
            if planned.ends_turn:
                ended = self.turns_ended
                ended[planned.name] = ended.get(planned.name, 0) + 1
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the app went away mid-turn (stopped, or the benchmark ended)
        finally:
            writer.close()

    async def play(
        self, writer: asyncio.StreamWriter, events: Iterable[Event], record: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        for event in events:
            delay = start + event.at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(event.data)
            self.chunks += event.chunks
            if record and event.marks:
                written = time.time() * 1000
                for mark in event.marks:
                    self.sent[mark] = written
            if writer.transport.get_write_buffer_size() > 1 << 16:
                await writer.drain()
        await writer.drain()

    def command(self, request: tuple[Any, ...]) -> Any:
        what = request[0]
        if what == "spec":
            self.specs[request[1]] = request[2]
            return None
        if what == "reset":
            self.sent, self.intents = {}, {}
            return None
        if what == "sent":
            return self.sent, self.intents
        if what == "counters":
            return {
                "chunks": self.chunks,
                "active": self.active,
                "started": dict(self.turns_started),
                "ended": dict(self.turns_ended),
            }
        raise ValueError(f"unknown provider command {what!r}")


def _serve(conn: Connection) -> None:
    server = _Server()

    async def main() -> None:
        listener = await asyncio.start_server(server.handle, "127.0.0.1", 0, backlog=1024)
        conn.send(listener.sockets[0].getsockname()[1])
        closed = asyncio.Event()
        loop = asyncio.get_running_loop()

        def on_command() -> None:
            try:
                request = conn.recv()
            except EOFError:
                closed.set()
                return
            if request[0] == "close":
                closed.set()
                return
            try:
                conn.send(("ok", server.command(request)))
            except Exception as exc:  # the parent shows it; the server keeps serving
                conn.send(("error", f"{type(exc).__name__}: {exc}"))

        loop.add_reader(conn.fileno(), on_command)
        await closed.wait()
        loop.remove_reader(conn.fileno())
        listener.close()

    asyncio.run(main())


class Provider:
    """The provider's process; `port` is where it listens on 127.0.0.1."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.port: int = self._conn.recv()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def app_config(self, workdir: Path, *, header_auth: bool = False) -> str:
        """The app's config YAML: one OpenAI endpoint `bench` (model `bench`) on this
        provider, the workspace `workdir`; with `header_auth` the app takes the user from a
        request header, which the headless clients send (`bench_clients.USER_HEADER`)."""
        yaml = (
            "endpoints:\n  - name: bench\n    kind: openai\n"
            f"    base_url: {self.base_url}\n"
            "    api_key: x\n    models: [bench]\n"
            f"workspace: {json.dumps(str(workdir))}\n"
        )
        return yaml + ("auth:\n  mode: header\n" if header_auth else "")

    def _ask(self, *request: Any) -> Any:
        self._conn.send(request)
        status, value = self._conn.recv()
        if status != "ok":
            raise RuntimeError(f"bench provider: {value}")
        return value

    def spec(self, name: str, spec: Spec) -> None:
        """Stream `spec` to turns whose message starts with the word `name`."""
        if not name or " " in name:
            raise ValueError(f"spec name {name!r}: one word, the first of the turn's message")
        self._ask("spec", name, spec)

    def reset(self) -> None:
        """Forget the recorded write times and intents."""
        self._ask("reset")

    def sent(self) -> tuple[dict[Mark, float], dict[str, str]]:
        """When each recorded intent chunk was written (ms since the epoch), and the
        recorded calls' intents."""
        return self._ask("sent")

    def counters(self) -> dict[str, Any]:
        """SSE chunks written so far (every turn), responses streaming now, and turns
        started and ended so far per spec name."""
        return self._ask("counters")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(("close",))
        self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.terminate()
