"""A running turn as one resumable stream of keyed patches, one stream per language.

`TurnSession.feed(lang)` makes a `PatchFeed` the first time a page asks for the turn in
that language; the session then hands it every published event (`mark`). The feed turns
events into frames (`intent_ui.core.patches`): what changed, as `set`/`add` ops on keys.

- One frame per event-loop tick: `mark` only remembers what the event touched and asks
  for one flush at the end of the tick (`loop.call_soon`), so the burst of events read
  from one network chunk becomes one frame, whatever the number of pages watching.
- A frame's id is the seq of the last event folded into it. A group header held back
  for its minimum display time changes later with no new event: a timer (`call_later`,
  when the patcher says it is due) flushes it as frame `{seq}.{n}`. Ids order by
  `(seq, n)`, and a page sends the last one back to resume (`Last-Event-ID`).
- The last `FRAME_BUFFER` frames are kept: a page that reconnects within them gets
  exactly the frames it missed (`frames_after`); one further behind, or with an id this
  feed never made, gets a snapshot of what the frames so far add up to (`snapshot`,
  the patcher's table as `set` ops) under the last frame's id, so the frames after it
  follow on.
- `done` once the frame holding `TurnDone` was made; a subscriber then gets the `end`
  event after it.

A turn's feeds are a `TurnFeeds`: the one place a live turn's events reach its pages,
whether the turn runs here (`TurnSession`) or on another worker and is followed through
Redis (`intent_ui.agent.cluster.remote.RemoteTurn`). A follower that has to fall back to the
turn's log `rebase`s its feeds onto the replayed view: the next frame is a snapshot.

A session without feeds (the CLI) makes no frames at all. No Reflex here: the wire form
is plain SSE bytes (`Frame.wire`, `END_EVENT`).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Collection

from intent_ui.core.events import TurnDone, TurnEvent
from intent_ui.core.patches import END_EVENT, Frame, Op, TurnPatcher, frame_id, frame_order
from intent_ui.core.turn import TurnView

__all__ = ["END_EVENT", "FRAME_BUFFER", "PatchFeed", "TurnFeeds"]

logger = logging.getLogger(__name__)

FRAME_BUFFER = 4096
"""Frames a feed keeps for pages that reconnect (a quarter more before it trims)."""

FrameKey = tuple[int, int]

_TIMER_SLACK_S = 0.001
"""How far from a held header's due time the armed timer may fire and still be kept."""


def _order(value: str | None) -> FrameKey | None:
    """A client's last id as a frame key; None for none or one no feed makes."""
    if value is None:
        return None
    try:
        return frame_order(value)
    except ValueError:
        return None


class PatchFeed:
    """One running turn's frames in one language (see the module docstring)."""

    def __init__(
        self,
        message_id: str,
        view: TurnView,
        lang: str,
        *,
        hold_ms: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        buffer: int | None = None,
    ) -> None:
        self.message_id = message_id
        self.lang = lang
        self._view = view
        self._clock = clock
        self._buffer = FRAME_BUFFER if buffer is None else buffer
        self._patcher = (
            TurnPatcher(message_id, lang)
            if hold_ms is None
            else TurnPatcher(message_id, lang, hold_ms=hold_ms)
        )
        # A view that already ended shows its true headers: nothing is held any more.
        self._patcher.snapshot(view, None if view.done else self._now_ms())
        self._base: FrameKey = (view.last_seq, 0)  # the key just before the first frame
        self._last: FrameKey = self._base
        self._frames: list[Frame] = []
        self._keys: list[FrameKey] = []
        self._wire: list[bytes] = []
        self._made = 0  # frames made so far, the trimmed ones included: a reader's position
        self._marked_seq = view.last_seq
        self._ending = view.done
        self._scheduled = False
        self._timer: asyncio.TimerHandle | None = None
        self._waiters: list[asyncio.Future[None]] = []  # readers waiting for the next frame
        self.done = view.done
        """True once the frame holding `TurnDone`'s patches was made."""

    @property
    def last_id(self) -> str:
        """The id of the last frame made (the snapshot's id before any)."""
        return frame_id(*self._last)

    # --- producing --------------------------------------------------------------------

    def mark(self, event: TurnEvent, changes: Collection[str]) -> None:
        """Remember what `event` changed; the frame is made at the end of this loop tick
        (at once when no loop runs, as in a test driving a session by hand)."""
        if self.done:
            return
        self._patcher.mark(event, changes)
        self._marked_seq = max(self._marked_seq, event.seq)
        if isinstance(event, TurnDone):
            self._ending = True
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._flush()
            return
        self._scheduled = True
        loop.call_soon(self._tick)

    def rebase(self, view: TurnView) -> None:
        """Follow `view` from now on instead of the view the feed was made from (a
        follower replayed the turn's log anew): the next frame is a snapshot of it,
        `reset` then every key, so a page holding anything sent before is set right."""
        if self.done:
            return
        self._view = view
        now = self._now_ms()
        ops = self._patcher.snapshot(view, None if view.done else now)
        self._marked_seq = max(self._marked_seq, view.last_seq)
        self._ending = self._ending or view.done
        self._append(ops)
        self._after_frame(now)

    def _tick(self) -> None:
        self._scheduled = False
        self._flush()

    def _on_timer(self) -> None:
        self._timer = None
        self._flush()

    def _now_ms(self) -> float:
        return self._clock() * 1000

    def _flush(self) -> None:
        if self.done:
            return
        now = self._now_ms()
        try:
            ops = self._patcher.flush(self._view, now)
            if ops:
                self._append(ops)
        except Exception:  # a bug here must not stall the pages: the next flush goes on
            logger.exception("Making a frame of turn %s failed", self.message_id)
        self._after_frame(now)

    def _after_frame(self, now: float) -> None:
        """Once the turn's end is in a frame the feed is done and wakes its readers for
        the last time; until then the timer waits for the next held header."""
        if self._ending:
            self.done = True
            self._cancel_timer()
            self._wake()
            return
        self._arm_timer(now)

    def _append(self, ops: list[Op]) -> None:
        seq, n = self._last
        key = (self._marked_seq, 0) if self._marked_seq > seq else (seq, n + 1)
        frame = Frame(frame_id(*key), ops)
        self._frames.append(frame)
        self._keys.append(key)
        self._wire.append(frame.wire(self.message_id))
        self._last = key
        self._made += 1
        if len(self._frames) > self._buffer + self._buffer // 4:
            drop = len(self._frames) - self._buffer
            self._base = self._keys[drop - 1]
            del self._frames[:drop], self._keys[:drop], self._wire[:drop]
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():  # a reader that went away cancelled its own
                waiter.set_result(None)

    def _arm_timer(self, now_ms: float) -> None:
        due = self._patcher.due_ms(now_ms)
        if due is None:
            self._cancel_timer()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._cancel_timer()
            return
        when = loop.time() + max(due, 0.0) / 1000
        timer = self._timer
        if timer is not None and abs(timer.when() - when) < _TIMER_SLACK_S:
            # A held header is due when it was: a burst of frames keeps the one timer
            # rather than making and cancelling one per frame.
            return
        self._cancel_timer()
        self._timer = loop.call_at(when, self._on_timer)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- reading ----------------------------------------------------------------------

    def _index_after(self, last_id: str | None) -> int | None:
        """Where the frames after `last_id` start in the buffer; None when it cannot say."""
        key = _order(last_id)
        if key is None:
            return None
        if key == self._base:
            return 0
        index = bisect.bisect_left(self._keys, key)
        if index < len(self._keys) and self._keys[index] == key:
            return index + 1
        return None

    def frames_after(self, last_id: str | None) -> list[Frame] | None:
        """The frames after `last_id`; None when `last_id` is older than the buffer or
        not an id of this feed (the caller sends a `snapshot` instead)."""
        index = self._index_after(last_id)
        return None if index is None else self._frames[index:]

    def snapshot(self) -> Frame:
        """The feed's state as one frame: `reset`, then a `set` per key; its id is the last
        frame's, so the frames after it follow on."""
        return Frame(self.last_id, self._patcher.table_ops())

    async def wait(self, after_id: str) -> None:
        """Until a frame after `after_id` exists, or the feed is done."""
        while after_id == self.last_id and not self.done:
            await self._woken(None)

    async def _woken(self, idle: _IdleClock | None) -> None:
        """Until the next frame (or the end), or until `idle` expires."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        if idle is not None:
            idle.waiter = waiter
        try:
            await waiter
        except BaseException:
            self._forget(waiter)  # the reader went away
            raise
        if idle is not None and idle.expired:
            self._forget(waiter)  # no frame woke it: `_wake` did not take it

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)

    async def subscribe(
        self, last_id: str | None = None, idle_s: float | None = None
    ) -> AsyncIterator[bytes]:
        """The frames after `last_id` (a snapshot when the buffer cannot say), then each
        new frame as it is made, as SSE bytes; then `END_EVENT`. Everything available at
        once is one chunk, so a slow reader catches up in one write; one that fell out of
        the buffer meanwhile gets a snapshot. With `idle_s`, an empty chunk after that
        long without a frame, so the reader can write a keep-alive or check who may
        still read, without a task of its own per frame."""
        # Where the reader is, as a count of frames made (cheaper per frame than its id);
        # None until the first read placed it by `last_id`.
        position: int | None = None
        idle = _IdleClock(idle_s) if idle_s is not None else None
        try:
            while True:
                start = self._index_after(last_id) if position is None else None
                if position is not None and position >= self._made - len(self._wire):
                    start = position - (self._made - len(self._wire))
                # Else it fell out of the buffer while it read: a snapshot.
                if start is None:
                    chunk = self.snapshot().wire(self.message_id)
                else:
                    chunk = b"".join(self._wire[start:])
                position = self._made
                if self.done:
                    yield chunk + END_EVENT
                    return
                if chunk:
                    yield chunk
                if idle is not None:
                    idle.restart()
                while position == self._made and not self.done:
                    if idle is not None and idle.expired:
                        yield b""
                        idle.restart()
                        continue
                    await self._woken(idle)
        finally:
            if idle is not None:
                idle.close()


class _IdleClock:
    """One reader's quiet time: `expired` once `idle_s` passed since `restart`, and the
    waiter it holds then is woken. One timer serves a busy stream: it is re-armed only
    when it fires before the reader has been quiet that long, not made per frame."""

    _SLACK_S = 0.001  # firing this close to the end of the quiet time counts as the end

    def __init__(self, idle_s: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._idle_s = idle_s
        self._since = self._loop.time()
        self.expired = False
        self.waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = self._loop.call_at(
            self._since + idle_s, self._fire
        )

    def restart(self) -> None:
        """The reader was just written to: quiet from now."""
        self._since = self._loop.time()
        self.expired = False
        self.waiter = None
        if self._timer is None:
            self._timer = self._loop.call_at(self._since + self._idle_s, self._fire)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        end = self._since + self._idle_s
        if self._loop.time() + self._SLACK_S < end:
            self._timer = self._loop.call_at(end, self._fire)
            return
        self._timer = None
        self.expired = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class TurnFeeds:
    """A live turn's feeds, one per language a page read it in, all fed the same events.

    `mark(event, changes)` hands each event (and what `TurnView.apply` said it changed) to
    every feed; a feed that fails is logged, never raised: a page's patches must not end
    the turn that produced them.
    """

    def __init__(self, message_id: str, view: TurnView, *, hold_ms: float | None = None) -> None:
        self.message_id = message_id
        self._view = view
        self._hold_ms = hold_ms  # the header hold (None: the patcher's default)
        self._feeds: dict[str, PatchFeed] = {}

    def feed(self, lang: str) -> PatchFeed:
        """The feed in `lang`, made on first use from the view as it is then. Callers bound
        `lang` to the supported languages: each one asked for is a feed every event is
        marked on."""
        feed = self._feeds.get(lang)
        if feed is None:
            feed = self._feeds[lang] = PatchFeed(
                self.message_id, self._view, lang, hold_ms=self._hold_ms
            )
        return feed

    def subscribe(self, lang: str, last_id: str | None = None) -> AsyncIterator[bytes]:
        """The turn in `lang` as SSE bytes (`PatchFeed.subscribe`)."""
        return self.feed(lang).subscribe(last_id)

    def mark(self, event: TurnEvent, changes: Collection[str]) -> None:
        for feed in self._feeds.values():
            try:
                feed.mark(event, changes)
            except Exception:  # a page's patches must not end the turn itself
                logger.exception("Marking an event on turn %s failed", self.message_id)

    def rebase(self, view: TurnView) -> None:
        """Every feed follows `view` from now on (`PatchFeed.rebase`), and so do feeds made
        later."""
        self._view = view
        for feed in self._feeds.values():
            try:
                feed.rebase(view)
            except Exception:
                logger.exception("Rebasing a feed of turn %s failed", self.message_id)
