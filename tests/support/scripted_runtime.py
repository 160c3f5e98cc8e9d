"""A run loop stand-in for driving real turn sessions from a test, and a turn in the
shape providers stream it.

`ScriptedRuntime` is what `TurnSessions` starts turns on: each run emits what the test
sends it, stamping seqs from the session's own counter as `TurnRun` does, and a burst
sent at once is published in one event-loop tick (as the events read from one network
chunk are). `recorded_turn()` is a turn's events in bursts: parallel calls whose intents
arrive split mid-word, a summary, an error, a call that goes to the background and is
harvested later, reply text with an emoji, a second round, the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from typing import Any

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    SeqCounter,
    TextDelta,
    TurnDone,
    TurnEvent,
)

Make = Callable[[int], TurnEvent]
"""An event waiting for its seq."""


class ScriptedRun:
    def __init__(self, seq: SeqCounter, stop: asyncio.Event) -> None:
        self.seq = seq
        self.stop = stop
        self.queue: asyncio.Queue[list[TurnEvent] | BaseException | None] = asyncio.Queue()

    def send(self, burst: Iterable[Make]) -> list[TurnEvent]:
        """Queue one burst (published together, in one loop tick); returns its events."""
        events = [make(self.seq.next()) for make in burst]
        self.queue.put_nowait(events)
        return events

    def emit(self, kind: Any, *args: Any, **kwargs: Any) -> TurnEvent:
        """Queue one event, `kind(seq, *args, **kwargs)`, as a burst of its own."""
        return self.send([_e(kind, *args, **kwargs)])[0]

    def fail(self, exc: BaseException) -> None:
        """The run raises `exc` once what was queued before it is published."""
        self.queue.put_nowait(exc)

    def close(self) -> None:
        """End the run without a `TurnDone` (the session writes one)."""
        self.queue.put_nowait(None)

    async def events(self) -> AsyncIterator[TurnEvent]:
        while True:
            burst = await self.queue.get()
            if burst is None:
                return
            if isinstance(burst, BaseException):
                raise burst
            for event in burst:
                yield event
                if isinstance(event, TurnDone):
                    return


class ScriptedRuntime:
    """What `TurnSessions` starts turns on; `calls` holds each start's arguments."""

    def __init__(self) -> None:
        self.runs: list[ScriptedRun] = []
        self.calls: list[dict[str, Any]] = []

    def start_turn(self, **kwargs: Any) -> ScriptedRun:
        self.calls.append(kwargs)
        run = ScriptedRun(kwargs["seq"], kwargs["stop"])
        self.runs.append(run)
        return run


async def settle() -> None:
    """Let the loop run what is ready: a queued burst is published and its frame made."""
    for _ in range(5):
        await asyncio.sleep(0)


def _e(kind: Any, *args: Any, **kwargs: Any) -> Make:
    return lambda seq: kind(seq, *args, **kwargs)


def restamped(event: TurnEvent) -> Make:
    """An event built elsewhere, sent with the session's next seq in place of its own."""
    return lambda seq: replace(event, seq=seq)


C1_ARGS = '{"intent": "Searching for OAuth handling", "query": "oauth"}'
C2_ARGS = '{"intent": "Reading the callback router", "path": "router.py"}'


def recorded_turn() -> list[list[Make]]:
    """A turn as bursts of events (see the module docstring)."""
    return [
        [_e(GoalSelected, "g1", "Find the OAuth handling")],
        [
            _e(CallStarted, "c1", "search_code", 0, label_bearing=True),
            _e(CallStarted, "c2", "read_file", 0, label_bearing=True),
        ],
        [
            _e(ArgsDelta, "c1", '{"intent": "Searching for OA'),
            _e(ArgsDelta, "c2", '{"intent": "Reading the'),
        ],
        [
            _e(ArgsDelta, "c1", 'uth handling", "query": "oauth"}'),
            _e(ArgsDelta, "c2", ' callback router", "path": "router.py"}'),
        ],
        [_e(ArgsComplete, "c1", C1_ARGS)],
        [
            _e(
                ArgsComplete, "c2", '{"intent": "Reading the callback router", "path": "router.py"}'
            ),
            _e(CallStarted, "c3", "list_directory", 0, label_bearing=True),
            _e(ArgsDelta, "c3", '{"intent": "Listing the auth folder", "path": "auth"}'),
            _e(ArgsComplete, "c3", '{"intent": "Listing the auth folder", "path": "auth"}'),
        ],
        [_e(ActivityLabel, 0, "Looking into OAuth")],
        [_e(CallSettled, "c1", "settled", output="3 matches", outcome="Found 3 matches")],
        [_e(CallSettled, "c2", "error", error="No such file: router.py")],
        [_e(CallBackgrounded, "c3")],
        [_e(TextDelta, "The OAuth handling ")],
        [_e(TextDelta, "lives in auth.py 😀 "), _e(TextDelta, "and callback.py.")],
        [
            _e(CallStarted, "c4", "read_file", 1, label_bearing=True),
            _e(ArgsDelta, "c4", '{"intent": "Reading auth.py", "path": "auth.py"}'),
        ],
        [_e(ArgsComplete, "c4", '{"intent": "Reading auth.py", "path": "auth.py"}')],
        [_e(CallSettled, "c3", "settled", output="a.py b.py", outcome="Found 2 files")],
        [_e(CallSettled, "c4", "settled", output="def login(): ...")],
        [_e(TextDelta, "\n\nDone.")],
        [_e(TurnDone, "end_turn")],
    ]
