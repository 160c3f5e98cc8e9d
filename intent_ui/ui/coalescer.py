"""Leading-edge coalescing of UI pushes.

Pushed as soon as changes pause when idle, then at most one push per frame, whatever the
rate of changes: 8 or 32 calls streaming fast neither flood the websocket nor drift
behind (`tests/bench/bench_ui_latency.py` measures it; README, Benchmarks). Pushing on
every change instead saturates the tab past a few dozen streams, and a fixed flush
delays every change by its whole period. `push` does the one state update; callers
only `mark()` that something changed.

From idle, when the last push carried more than one change, the push waits until no
change came for `QUIET_SECONDS` (at most a frame): parallel calls often arrive as a burst
of chunks, one per call, read in a few pieces, and pushing on the first piece would leave
the rest of the burst a whole frame behind it. One stream (a reply, a single call) brings
one change at a time and is pushed at once.

The frame is short (12 ms: a change waits at most that long for its push) and stretches
when pushes get expensive: after a push that took `t`, the next waits at least `2 t` (at
most 50 ms). A push's own time is the load signal at hand (a turn with a hundred live
cards, a busy event loop), and stretching the frame then lets one push carry more changes
instead of queueing pushes faster than the browser can apply them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

FRAME_SECONDS = 0.012
QUIET_SECONDS = 0.002
STRETCH = 2.0
MAX_FRAME_SECONDS = 0.05


class LeadingEdgeCoalescer:
    def __init__(
        self,
        push: Callable[[], Awaitable[None]],
        *,
        frame_s: float = FRAME_SECONDS,
        quiet_s: float = QUIET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._push = push
        self._frame_s = frame_s
        self._quiet_s = quiet_s
        self._marks = 0
        self._marks_pushed = 0  # `_marks` when the last push started
        self._burst = False  # the last push carried more than one change
        self._clock = clock
        self._wake = asyncio.Event()
        self._dirty = False
        self._closed = False
        self._last_push = float("-inf")
        self._last_cost = 0.0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> LeadingEdgeCoalescer:
        self._task = asyncio.create_task(self._run())
        return self

    def mark(self) -> None:
        """Something changed: push now if idle, else at the next frame."""
        self._dirty = True
        self._marks += 1
        self._wake.set()

    def mark_later(self, delay_s: float) -> None:
        """Wake again after `delay_s` (a held header label becomes due)."""
        asyncio.get_running_loop().call_later(max(0.0, delay_s), self.mark)

    @property
    def frame_s(self) -> float:
        """The least time between the starts of two pushes, given the last push's cost."""
        return min(max(self._frame_s, STRETCH * self._last_cost), MAX_FRAME_SECONDS)

    async def close(self) -> None:
        """Stop after one final push of whatever is pending."""
        self._closed = True
        self._dirty = True
        self._wake.set()
        if self._task is not None:
            await self._task

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            wait = self._last_push + self.frame_s - self._clock()
            if wait > 0 and not self._closed:
                await asyncio.sleep(wait)
            elif self._burst and not self._closed:
                await self._until_quiet()
            if self._dirty:
                self._dirty = False
                self._burst = self._marks - self._marks_pushed > 1
                self._marks_pushed = self._marks
                self._last_push = self._clock()
                await self._push()
                self._last_cost = self._clock() - self._last_push
            if self._closed and not self._dirty:
                return

    async def _until_quiet(self) -> None:
        """Return once no change came for `quiet_s`, or after about a frame of changes."""
        if self._quiet_s <= 0:
            return
        for _ in range(max(1, round(self._frame_s / self._quiet_s))):
            seen = self._marks
            await asyncio.sleep(self._quiet_s)
            if self._marks == seen or self._closed:
                return
