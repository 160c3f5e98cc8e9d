"""Server CPU per streamed chunk, all in: provider bytes in, a page's SSE bytes out.

    source scripts/env.sh && python tests/bench/bench_session.py [--before REV]
        [--rounds 3] [--subscribers 0,1,2,4,8] [--profile FILE]

The path a live turn takes, in one process and one event loop, with nothing stubbed
between the two ends:

- an OpenAI-shaped SSE byte stream (one `chat.completion.chunk` per network chunk, one
  argument fragment each), served by an httpx `MockTransport`, read by the real provider
  (`OpenAIProvider`: SSE decoder, JSON, `ChatCompletionsAccumulator`);
- the run loop (`TurnRun`: a label-bearing fake tool, run when its call ends);
- `TurnSession.publish`: the fold into its `TurnView`, the event log (a real SQLite file,
  flushed by the session's own timer in a worker thread), the feed's mark;
- the feed's frame, once per loop tick (`PatchFeed`, `TurnPatcher.flush`, `Frame.wire`);
- per subscriber: `TurnSession.subscribe` wrapped as the SSE route wraps it
  (`turn_routes._event_stream`), its bytes written to `/dev/null` (a syscall per write,
  as a socket would take; Starlette's and uvicorn's framing are not in it).

Each chunk gets loop ticks of its own, as network reads do: within a measured window the
byte stream, after each chunk, yields to the loop until the chain has drained (the
session published it, the feed flushed, every subscriber holds the last frame) before it
sends the next. The cost of a chunk is the process's CPU time (`time.process_time`, every
thread: the log's flushes included) over a window of chunks, divided by their number.
The process never sleeps inside a window: what waking up from a sleep between network
reads costs depends on the machine more than on this code, and is printed apart (a timed
pause per chunk with nothing behind it), as is the cost of the loop ticks the stream
waits on. Best of `--rounds` runs, since the machine may be shared. Rows:

- one label-bearing call whose arguments (a short intent, then 64 KB of content) stream in
  4-character fragments, measured at about 1 KB and at 64 KB of arguments: it must be flat;
- a 21 KB intent streamed one character per fragment (the label itself grows; its title
  follows the first 2 KB while it streams), at 4 KB and at 20 KB;
- 8 parallel calls with one-sentence intents (40-110 characters, what people stream), one
  character of one call per chunk: most chunks change a visible label and make a frame
  (a space, or the path after the intent, shows nothing new).

Columns: 0, 1, 2, 4, 8 pages following the same turn; each further one should add only
the writing of its bytes. Then where a chunk's CPU goes, hop by hop: the same turn read
as far as the provider's events, the run loop's, the session without a feed (the CLI's),
with the feed but no page, then pages reading `subscribe` bare or through the route's
wrapper.

Also printed: the same fragments through `TurnSession.publish` alone, synchronously (a feed
without a loop makes its frame at once), timed as the benchmark before the change timed
its "fold + log + card" (wall clock, 256 fragments), and the bytes of one frame while one
intent streams against the snapshot of the whole turn.

`--before REV` runs the benchmark of revision REV (this file as it was there) in a
`git worktree` of it and prints its numbers beside, labelled with what they measured.
`--profile FILE` writes a cProfile of one all-in run of the 8-call row (1 subscriber).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from intent_ui.agent.providers.base import ChatRequest  # noqa: E402
from intent_ui.agent.providers.openai import OpenAIProvider  # noqa: E402
from intent_ui.agent.run import run_turn  # noqa: E402
from intent_ui.agent.session import TurnSession  # noqa: E402
from intent_ui.agent.tools.base import ToolKind, ToolResult  # noqa: E402
from intent_ui.core.capabilities.intent import with_intent  # noqa: E402
from intent_ui.core.events import (  # noqa: E402
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    SeqCounter,
    TextDelta,
)
from intent_ui.core.patches import Frame, TurnPatcher  # noqa: E402
from intent_ui.core.turn import TurnView  # noqa: E402
from intent_ui.store import conversations as conv  # noqa: E402
from intent_ui.store.db import init_db  # noqa: E402
from intent_ui.store.models import LOCAL_USER_ID  # noqa: E402
from intent_ui.store.turns import EventLog  # noqa: E402
from intent_ui.ui.turn_routes import _event_stream  # noqa: E402
from tests.support.bench_app import resolve, worktree  # noqa: E402
from tests.support.bench_provider import intent_sentence  # noqa: E402

TARGET_US = 40.0
WAKE_PAUSE_S = 0.001
"""The pause between chunks when measuring what waking up from a sleep costs."""
WINDOW = 512
"""Chunks timed per measuring point."""
LANG = "en"


# --- the provider's bytes ----------------------------------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def _args_chunk(index: int, fragment: str) -> bytes:
    return _chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})


def _begin_chunk(index: int, name: str) -> bytes:
    call = {
        "index": index,
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    return _chunk({"role": "assistant", "content": None, "tool_calls": [call]})


_END = [_chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
_REPLY = [
    _chunk({"role": "assistant", "content": "Done."}),
    _chunk({}, "stop"),
    b"data: [DONE]\n\n",
]


@dataclass(frozen=True)
class Workload:
    """The first response's chunks, the tool its calls name, and the measuring points:
    label -> index of the first chunk timed (WINDOW chunks from there)."""

    name: str
    tool: str
    chunks: list[bytes]
    marks: dict[str, int]
    fragments: list[tuple[int, str]]  # (call index, fragment) per argument chunk, in order
    first_fragment: int  # index in `chunks` of the first argument chunk


def one_call(name: str, tool: str, args: str, size: int, marks: dict[str, int]) -> Workload:
    """One call whose argument text streams `size` characters per chunk; `marks` are
    character offsets into it."""
    pieces = [args[i : i + size] for i in range(0, len(args), size)]
    chunks = [_begin_chunk(0, tool), *(_args_chunk(0, p) for p in pieces), *_END]
    return Workload(
        name,
        tool,
        chunks,
        {label: 1 + offset // size for label, offset in marks.items()},
        [(0, p) for p in pieces],
        1,
    )


def parallel_calls(calls: int) -> Workload:
    """`calls` calls opened together, their arguments streamed one character per chunk,
    round robin: one character of one call per chunk."""
    texts = [
        json.dumps({"intent": intent_sentence(f"c{i}"), "path": f"src/part_{i}.py"})
        for i in range(calls)
    ]
    fragments = []
    for position in range(max(len(t) for t in texts)):
        for i, text in enumerate(texts):
            if position < len(text):
                fragments.append((i, text[position]))
    chunks = [
        *(_begin_chunk(i, "read_file") for i in range(calls)),
        *(_args_chunk(i, f) for i, f in fragments),
        *_END,
    ]
    # The window starts once every call's intent is well under way.
    return Workload(
        f"{calls} calls", "read_file", chunks, {"sentences": calls + calls * 16}, fragments, calls
    )


CONTENT = json.dumps({"intent": "Writing the quarterly report", "content": "x" * 70_000})
LONG_INTENT = json.dumps({"intent": "Reading " + "carefully " * 2_100, "path": "."})


def workloads() -> list[Workload]:
    return [
        one_call("content", "write_file", CONTENT, 4, {"1 KB": 1_024, "64 KB": 64 * 1_024}),
        one_call("long intent", "read_file", LONG_INTENT, 1, {"4 KB": 4_096, "20 KB": 20_000}),
        parallel_calls(8),
    ]


# --- the turn -----------------------------------------------------------------------------


@dataclass
class BenchTool:
    """A label-bearing tool that answers at once."""

    name: str
    kind: ToolKind = "native"
    server: str | None = None

    @property
    def tool_id(self) -> str:
        return self.name

    @property
    def definition(self) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return {
            "name": self.name,
            "description": f"The {self.name} tool.",
            "parameters": dict(with_intent(schema)),
            "intent": True,
        }

    async def call(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult("ok", outcome=f"Did {self.name}")


@dataclass
class Subscriber:
    """One page following the turn: the SSE route's bytes, written to /dev/null."""

    fd: int
    route: bool = True  # through the SSE route's wrapper, or `subscribe` bare
    written: int = 0
    frames: int = 0
    last_id: str = ""

    async def follow(self, body: AsyncIterator[bytes]) -> None:
        async for chunk in _event_stream(body, None) if self.route else body:
            os.write(self.fd, chunk)
            self.written += len(chunk)
            # A newline byte in an SSE stream only ever ends a line (JSON escapes its
            # own), so each frame's `id:` line starts the chunk or follows one.
            starts = chunk.startswith(b"id: ")
            self.frames += chunk.count(b"\nid: ") + starts
            at = chunk.rfind(b"\nid: ")
            begin = at + 5 if at >= 0 else 4 if starts else None
            if begin is not None:
                self.last_id = chunk[begin : chunk.index(b"\n", begin)].decode()


@dataclass
class Measured:
    """Per measuring point: CPU µs per chunk, frames per chunk, bytes per frame written
    to one subscriber."""

    micros: dict[str, float] = field(default_factory=dict)
    frames: dict[str, float] = field(default_factory=dict)
    frame_bytes: dict[str, float] = field(default_factory=dict)
    polls: dict[str, float] = field(default_factory=dict)


def _new_session(folder: Path) -> TurnSession:
    engine = init_db(f"sqlite:///{folder / 'bench.db'}")
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="b", model="b")
    message_id = str(conv.start_assistant_message(engine, chat.id))
    return TurnSession(
        message_id=message_id, conversation_id=chat.id, log=EventLog(engine, message_id)
    )


STAGES = ("provider", "run loop", "session", "feed", "pages")
"""How far a chunk goes: the provider's events, read bare; the run loop's events, read
bare; `TurnSession` with no feed (the CLI's); with the feed in one language but no page;
with `subscribers` pages following."""


async def all_in(
    work: Workload, subscribers: int, stage: str = "pages", *, route: bool = True
) -> Measured:
    """One turn of `work` from provider bytes as far as `stage`, with `subscribers`
    pages following when the stage is "pages" (through the SSE route's wrapper, or
    reading `TurnSession.subscribe` bare)."""
    depth = STAGES.index(stage)
    measured = Measured()
    with tempfile.TemporaryDirectory() as folder:
        session = _new_session(Path(folder)) if depth >= 2 else None
        seq = session.seq if session is not None else SeqCounter()
        feed = session.feed(LANG) if session is not None and depth >= 3 else None
        fd = os.open(os.devnull, os.O_WRONLY)
        pages = [Subscriber(fd, route) for _ in range(subscribers if depth >= 4 else 0)]
        follows = [
            asyncio.create_task(p.follow(session.subscribe(LANG)))
            for p in pages
            if session is not None
        ]
        read_seq = 0  # the last event a bare reader of the run loop took

        def drained() -> bool:
            if session is None:
                return read_seq == seq.last
            if session.view.last_seq != seq.last:
                return False
            if feed is None:
                return True
            # The feed's one flush per tick is still to come (private: a benchmark waits
            # for it rather than guess with a longer sleep).
            return not feed._scheduled and all(p.last_id == feed.last_id for p in pages)

        polls = 0

        async def drain() -> None:
            nonlocal polls
            await asyncio.sleep(0)
            polls += 1
            while not drained():
                await asyncio.sleep(0)
                polls += 1

        starts = {start: label for label, start in work.marks.items()}

        async def first_response() -> AsyncIterator[bytes]:
            nonlocal polls
            timing: tuple[str, int, float, int, int] | None = None
            for index, chunk in enumerate(work.chunks):
                if timing is not None and index == timing[1] + WINDOW:
                    label, _, began, frames, written = timing
                    measured.micros[label] = (time.process_time() - began) / WINDOW * 1e6
                    measured.polls[label] = polls / WINDOW
                    if pages:
                        made = pages[0].frames - frames
                        measured.frames[label] = made / WINDOW
                        sent = pages[0].written - written
                        measured.frame_bytes[label] = sent / made if made else 0.0
                    timing = None
                if index in starts:
                    await drain()
                    frames, written = (pages[0].frames, pages[0].written) if pages else (0, 0)
                    polls = 0
                    timing = (starts[index], index, time.process_time(), frames, written)
                yield chunk
                if timing is not None:
                    await drain()
                else:
                    await asyncio.sleep(0)

        async def reply() -> AsyncIterator[bytes]:
            for chunk in _REPLY:
                yield chunk

        responses = iter([first_response, reply])

        async def handler(request: httpx.Request) -> httpx.Response:
            body = next(responses, reply)()
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        provider = OpenAIProvider("http://provider.invalid/v1", "x", http_client=client)
        if depth == 0:
            request = ChatRequest(model="bench", messages=[{"role": "user", "content": "go"}])
            async for _ in provider.stream(request):
                pass
        else:
            run = run_turn(
                provider=provider,
                model="bench",
                history=[],
                user_message="go",
                tools=[BenchTool(work.tool)],
                tool_options={"*": {"describe_intent": True}},
                capabilities=frozenset({"tool_intents"}),
                system=None,
                max_rounds=2,
                seq=seq,
                stop=session.stop_requested if session is not None else None,
            )
            if session is None:
                async for event in run.events():
                    read_seq = event.seq
                if run.error:
                    raise RuntimeError(f"the benchmark's turn failed: {run.error}")
            else:
                session.start(run.events())
                await session.wait()
                await asyncio.gather(*follows)
                if session.view.error:
                    raise RuntimeError(f"the benchmark's turn failed: {session.view.error}")
        await client.aclose()
        os.close(fd)
        missing = set(work.marks) - set(measured.micros)
        if missing:
            raise RuntimeError(f"{work.name}: no measurement at {sorted(missing)}")
    return measured


async def idle_cost(chunks: int, pause: float) -> float:
    """CPU µs per chunk of a byte stream that pauses `pause` seconds after each chunk,
    read with nothing behind it: with 0, the loop tick the benchmark waits on; with a
    timed pause, the wake-up a process sleeping between network reads pays."""

    async def paced() -> AsyncIterator[bytes]:
        for _ in range(chunks):
            yield b"x"
            await asyncio.sleep(pause)

    began = time.process_time()
    async for _ in paced():
        pass
    return (time.process_time() - began) / chunks * 1e6


def keep_best(best: Measured, result: Measured) -> None:
    """Fold `result` into `best`, point by point (the lowest CPU time wins)."""
    for label, micros in result.micros.items():
        if label not in best.micros or micros < best.micros[label]:
            best.micros[label] = micros
            best.polls[label] = result.polls[label]
            if label in result.frames:
                best.frames[label] = result.frames[label]
                best.frame_bytes[label] = result.frame_bytes[label]


# --- publish alone, as the benchmark before the change measured ----------------------------


def publish_alone(work: Workload, marks: dict[str, int], window: int = 256) -> dict[str, float]:
    """µs (wall) per fragment of `TurnSession.publish` with one feed and no loop (its frame
    is made at once), the log flushed every 25 fragments: the old "fold + log + card"
    measurement with the frame in place of the card. `marks`: fragment index per label."""
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        session = _new_session(Path(folder))
        session.feed(LANG)
        seq = session.seq
        calls = sorted({index for index, _ in work.fragments})
        for index in calls:
            session.publish(
                CallStarted(seq.next(), f"call_{index}", work.tool, 0, label_bearing=True)
            )
        starts = {start: label for label, start in marks.items()}
        timing: tuple[str, int, float] | None = None
        for position, (index, fragment) in enumerate(work.fragments):
            if position in starts:
                timing = (starts[position], position, time.perf_counter())
            session.publish(ArgsDelta(seq.next(), f"call_{index}", fragment))
            if position % 25 == 24:
                session.log.flush()
            if timing is not None and position == timing[1] + window - 1:
                timings[timing[0]] = (time.perf_counter() - timing[2]) / window * 1e6
                timing = None
        session.log.flush()
    return timings


# --- bytes --------------------------------------------------------------------------------


def _wire(ops: list[Any]) -> int:
    return len(Frame("1", ops).wire("m"))


def frame_bytes(rounds: int, calls: int) -> tuple[int, int]:
    """Wire bytes of the turn's snapshot, and of the frame one more intent character
    makes, while the last call of round `rounds` streams its intent after `rounds - 1`
    finished rounds of `calls` calls each."""
    turn, seq = TurnView(), 0
    last = rounds - 1
    streaming_id = ""
    for group in range(rounds):
        for i in range(calls):
            call_id = f"r{group}c{i}"
            args = json.dumps({"intent": f"Reading part {i} of round {group}", "path": "."})
            streaming = group == last and i == calls - 1
            seq += 1
            turn.apply(CallStarted(seq, call_id, "read_file", group, label_bearing=True))
            seq += 1
            turn.apply(ArgsDelta(seq, call_id, args[:24] if streaming else args))
            if streaming:
                streaming_id = call_id
            else:
                seq += 1
                turn.apply(ArgsComplete(seq, call_id, args))
            if group < last:
                seq += 1
                turn.apply(CallSettled(seq, call_id, "settled", output="ok"))
        if group < last:
            seq += 1
            turn.apply(TextDelta(seq, f"Round {group} read; reading on.\n"))
    patcher = TurnPatcher("m", LANG, hold_ms=0)
    snapshot = _wire(patcher.snapshot(turn, 0.0))
    seq += 1
    event = ArgsDelta(seq, streaming_id, "n")
    patcher.mark(event, turn.apply(event))
    return snapshot, _wire(patcher.flush(turn, 1.0))


def wide_frame_bytes(calls: int, chars: int) -> tuple[int, int]:
    """Wire bytes of the snapshot, and of one frame in which each of `calls` streaming
    intents of about `chars` characters grows by 3."""
    turn, seq = TurnView(), 0
    for i in range(calls):
        seq += 1
        turn.apply(CallStarted(seq, f"c{i}", "read_file", 0, label_bearing=True))
        seq += 1
        body = f"Reading part {i} of the archive, " + "carefully " * (chars // 10)
        turn.apply(ArgsDelta(seq, f"c{i}", json.dumps({"intent": body})[:-2]))
    patcher = TurnPatcher("m", LANG, hold_ms=0)
    snapshot = _wire(patcher.snapshot(turn, 0.0))
    for i in range(calls):
        seq += 1
        event = ArgsDelta(seq, f"c{i}", "abc")
        patcher.mark(event, turn.apply(event))
    return snapshot, _wire(patcher.flush(turn, 1.0))


# --- the revision before ------------------------------------------------------------------

_OLD_NUMBERS = {
    "1 KB": r"at\s+1 KB of arguments:\s+([\d.]+) us",
    "64 KB": r"at 64 KB of arguments:\s+([\d.]+) us",
    "4 KB": r"at\s+4 KB of intent:\s+([\d.]+) us",
    "20 KB": r"at 20 KB of intent:\s+([\d.]+) us",
}


def run_before(rev: str) -> tuple[str, dict[str, float]]:
    """The output of REV's own bench_session.py (run in a worktree of REV), and the
    per-fragment numbers read from it."""
    with worktree(rev) as tree:
        script = tree / "tests" / "bench" / "bench_session.py"
        if not script.exists():
            return f"{rev} has no tests/bench/bench_session.py", {}
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tree, capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        return f"its bench_session.py failed:\n{done.stderr[-2000:]}", {}
    numbers = {}
    for label, pattern in _OLD_NUMBERS.items():
        found = re.search(pattern, done.stdout)
        if found:
            numbers[label] = float(found.group(1))
    return done.stdout, numbers


# --- report -------------------------------------------------------------------------------


def _keys(works: dict[str, Workload], counts: list[int]) -> list[tuple[str, int]]:
    return [(name, count) for name in works for count in counts]


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_table(headers: Sequence[str], lines: Sequence[Sequence[str]]) -> None:
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    print(
        "  ".join(
            h.rjust(w) if i else h.ljust(w)
            for i, (h, w) in enumerate(zip(headers, widths, strict=True))
        )
    )
    for line in lines:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            )
        )


ROWS = (
    ("1 call, 4-char fragments, at 1 KB of args", "content", "1 KB"),
    ("1 call, 4-char fragments, at 64 KB of args", "content", "64 KB"),
    ("21 KB intent, 1 char/fragment, at 4 KB", "long intent", "4 KB"),
    ("21 KB intent, 1 char/fragment, at 20 KB", "long intent", "20 KB"),
    ("8 calls, sentence intents, 1 char/chunk", "8 calls", "sentences"),
)
HOPS = (
    ("provider", "provider", 0, True),
    ("+ run loop", "run loop", 0, True),
    ("+ session (fold, log)", "session", 0, True),
    ("+ feed (frame)", "feed", 0, True),
    ("+ 1 page, subscribe bare", "pages", 1, False),
    ("+ 1 page, the SSE route's wrapper instead", "pages", 1, True),
    ("8 pages, subscribe bare", "pages", 8, False),
    ("8 pages, the SSE route's wrapper", "pages", 8, True),
)
"""Where a chunk's CPU goes: (title, stage, pages, through the route's wrapper)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", metavar="REV", help="run REV's bench_session.py beside")
    parser.add_argument("--rounds", type=int, default=3, help="runs per row (best is shown)")
    parser.add_argument("--subscribers", default="0,1,2,4,8")
    parser.add_argument("--profile", metavar="FILE", help="cProfile of one 8-call run")
    args = parser.parse_args()
    counts = sorted({int(n) for n in args.subscribers.split(",") if n} | {1})
    before_label = resolve(args.before)[:7] if args.before else None

    old_output, old = "", dict[str, float]()
    if args.before:
        print(f"running the benchmark of {before_label} in a worktree ...", file=sys.stderr)
        old_output, old = run_before(args.before)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        asyncio.run(all_in(parallel_calls(8), 1))
        profiler.disable()
        profiler.dump_stats(args.profile)
        print(f"profile written to {args.profile}", file=sys.stderr)

    works = {work.name: work for work in workloads()}
    results: dict[tuple[str, int], Measured] = {key: Measured() for key in _keys(works, counts)}
    hops: dict[tuple[str, str], Measured] = {}
    # Rounds go over every configuration in turn, so drift in a shared machine's load
    # falls on all of them alike.
    for round_ in range(args.rounds):
        print(f"round {round_ + 1} of {args.rounds} ...", file=sys.stderr)
        for name, count in results:
            keep_best(results[(name, count)], asyncio.run(all_in(works[name], count)))
        for name in ("content", "8 calls"):
            for title, stage, pages, route in HOPS:
                measured = asyncio.run(all_in(works[name], pages, stage, route=route))
                keep_best(hops.setdefault((name, title), Measured()), measured)
    tick = min(asyncio.run(idle_cost(WINDOW * 8, 0)) for _ in range(args.rounds))
    wake = min(asyncio.run(idle_cost(WINDOW, WAKE_PAUSE_S)) for _ in range(args.rounds))

    slices: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, marks in (
            ("content", {"1 KB": 1_024 // 4, "64 KB": 64 * 1_024 // 4}),
            ("long intent", {"4 KB": 4_096, "20 KB": 20_000}),
            ("8 calls", {"sentences": 8 * 16}),
        ):
            for label, micros in publish_alone(works[name], marks).items():
                slices[label] = min(slices.get(label, micros), micros)

    load = os.getloadavg()
    print(
        "\nserver CPU per streamed chunk, all in (provider bytes -> run loop -> publish -> "
        f"frame -> SSE bytes),\nµs, best of {args.rounds}; target <= {TARGET_US:g} µs with one "
        "page, flat 1 KB..64 KB; each further page only its bytes"
    )
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    most = counts[-1]
    headers = ["chunk", *(f"{c} page{'s' if c != 1 else ''}" for c in counts)]
    if most > 1:
        headers.append("per further page")
    headers += ["frames/chunk", "B/frame", "publish alone"]
    if before_label:
        headers.append(f"{before_label} fold+log+card")
    lines = []
    for title, name, label in ROWS:
        line = [title, *(_us(results[(name, c)].micros[label]) for c in counts)]
        if most > 1:
            further = results[(name, most)].micros[label] - results[(name, 1)].micros[label]
            line.append(_us(further / (most - 1)))
        shown = results[(name, 1)]
        line += [f"{shown.frames[label]:.2f}", f"{shown.frame_bytes[label]:.0f}"]
        line.append(_us(slices.get(label)))
        if before_label:
            line.append(_us(old.get(label)))
        lines.append(line)
    print_table(headers, lines)
    one = results[("content", 1)]
    print(f"ratio 64 KB / 1 KB: {one.micros['64 KB'] / one.micros['1 KB']:.2f} (flat is ~1)")
    polls = results[("8 calls", most)].polls["sentences"]
    print(
        f"included: the loop ticks the byte stream waits on ({polls:.1f} per chunk at "
        f"{most} pages, {tick:.1f} µs each alone)"
    )
    print(
        f"not included: waking from a sleep between network reads, {wake:.1f} µs per chunk on"
        " this machine\n(a 1 ms pause per chunk, nothing behind it)"
    )
    print(
        "'publish alone': TurnSession.publish with the feed making its frame, no provider, no"
        "\nloop, no page (wall clock, 256 fragments), the slice the benchmark before measured"
    )
    if before_label:
        print(
            f"'{before_label} fold+log+card': {before_label}'s bench_session.py, wall clock per "
            "fragment of\nfold + log + building the card a push carried (no provider, no "
            "pushes, no pages);\nits 8-call row did not exist"
        )

    print(f"\nwhere a chunk's CPU goes (µs per chunk, best of {args.rounds}; each line adds a hop)")
    hop_lines = []
    for title, *_ in HOPS:
        hop_lines.append(
            [
                title,
                _us(hops[("content", title)].micros["64 KB"]),
                _us(hops[("8 calls", title)].micros["sentences"]),
            ]
        )
    print_table(["hops", "1 call at 64 KB", "8 calls, sentences"], hop_lines)

    snapshot, frame = frame_bytes(rounds=10, calls=20)
    print("\nbytes while the last call of round 10 streams (9 finished rounds, 20 calls each)")
    print(f"  the whole turn's snapshot:         {snapshot / 1024:7.1f} KB")
    print(f"  the frame of one intent character: {frame:7d} B")
    print(f"  ratio:                             {snapshot / frame:7.0f}")
    snapshot, frame = wide_frame_bytes(calls=128, chars=1_800)
    print("\nbytes while 128 intents of about 1,800 characters stream, 3 more each")
    print(f"  the whole turn's snapshot:         {snapshot / 1024:7.1f} KB")
    print(f"  the frame of the 128 appends:      {frame / 1024:7.1f} KB")
    print(f"  ratio:                             {snapshot / frame:7.1f}")

    if before_label:
        print(f"\nthe benchmark of {before_label}, as it printed (what it measured, in its words):")
        print("\n".join(f"  | {line}" for line in old_output.strip().splitlines()))


if __name__ == "__main__":
    main()
