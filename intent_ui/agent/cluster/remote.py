"""A turn running on another worker, followed here for this worker's pages.

`RemoteTurn` has the small interface the pages use of a `TurnSession` (its ids, `done`,
`status`, `view`, `stop()`, `wait()`, `feed(lang)`, `subscribe(lang, last_id)`), so the
routes and states serve it the same way; Stop, decisions and answers go to the owner
(`control`). One reads each remote turn per worker, however
many of the worker's pages show it (`Cluster.follow`).

1. It replays the turn's log into its `TurnView`, then reads the turn's stream from the
   log's last seq (`XRANGE`, then `XREAD BLOCK` from the last entry it got), folding each
   event into its view and marking it on its feeds (`TurnFeeds`, exactly as the owner's
   session does), until the `saved` entry after the end says the log is written.
2. When the stream cannot continue what it has (trimmed, entries lost, or Redis out of
   reach: the next entry's `p` says so, or the `saved` entry comes without an end before
   it), it reads the log instead: replayed anew once the log has caught up with
   what its pages were shown (the feeds then send one snapshot), then every
   `log_poll_s` for the rows after that, until the log holds the end.
3. While nothing arrives for `quiet_s`, it asks whether the turn's lease still names the
   turn. Once it has named something else (or nothing) for `confirm_s`, the owner is gone:
   it takes the turn over (`orphans.end_orphan`) and reads on like any reader: the turn
   resumed on this worker, whose session publishes to the same stream, or its end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from intent_ui.agent.approvals import Decision, Verdict
from intent_ui.agent.cluster.control import ANSWER, DECIDE, PauseRequest
from intent_ui.agent.cluster.lease import lease_holder
from intent_ui.agent.cluster.orphans import end_orphan
from intent_ui.agent.cluster.records import entry_id, read_entry
from intent_ui.agent.feeds import PatchFeed, TurnFeeds
from intent_ui.core.events import TurnEvent
from intent_ui.core.turn import TurnView
from intent_ui.store.db import StoreError
from intent_ui.store.turns import load_events, turn_state, turn_status

if TYPE_CHECKING:
    from intent_ui.agent.cluster.worker import Cluster

__all__ = ["RemoteTurn"]

logger = logging.getLogger(__name__)

_READ_COUNT = 1000


class _Gap(Exception):
    """The stream cannot continue what the view has: read the log."""


class RemoteTurn:
    """One turn of another worker, as this worker's pages see it (module docstring)."""

    def __init__(
        self,
        cluster: Cluster,
        message_id: str,
        conversation_id: str = "",
        *,
        hold_ms: float | None = None,
    ) -> None:
        self.message_id = message_id
        self.conversation_id = conversation_id
        self.view = TurnView()
        self._cluster = cluster
        self._feeds = TurnFeeds(message_id, self.view, hold_ms=hold_ms)
        self._ready = asyncio.Event()
        self._saved = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._position = entry_id(0)  # the last entry read
        self._gone_since: float | None = None  # when the lease was first seen not naming it
        self._streamed = False  # the view holds events read from the stream
        self.following_log = False
        """True once it reads the log rather than the stream."""

    # --- what the pages use ---------------------------------------------------------------

    @property
    def status(self) -> str:
        return turn_status(self.view.stop_reason if self.view.done else None, self.view.error)

    @property
    def done(self) -> bool:
        return self.view.done

    @property
    def saved(self) -> bool:
        """True once the turn's end is in its log (or following it gave up)."""
        return self._saved.is_set()

    def stop(self) -> None:
        """Ask the owner to stop the turn (it ends as cancelled, here too)."""
        self._cluster.request_stop(self.message_id)

    async def decide(self, call_id: str, decision: Decision) -> Verdict:
        """A decision on the turn's waiting call, taken where the turn runs."""
        asked = PauseRequest(DECIDE, call_id, self._cluster.new_reply_key(), decision=decision)
        return await self._cluster.ask_owner(self.message_id, asked)

    async def answer(self, call_id: str, text: str, by: str = "user") -> Verdict:
        """An answer to the turn's waiting question, taken where the turn runs."""
        asked = PauseRequest(ANSWER, call_id, self._cluster.new_reply_key(), text=text, by=by)
        return await self._cluster.ask_owner(self.message_id, asked)

    async def wait(self) -> None:
        """Until the turn ended and its log was written."""
        await self._saved.wait()

    def feed(self, lang: str) -> PatchFeed:
        return self._feeds.feed(lang)

    def subscribe(self, lang: str, last_id: str | None = None) -> AsyncIterator[bytes]:
        return self._feeds.subscribe(lang, last_id)

    # --- following ------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"follow turn {self.message_id}")

    async def ready(self) -> None:
        """Until the view holds the turn as far as the log and stream had it."""
        await self._ready.wait()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})

    async def _run(self) -> None:
        try:
            await self._open()
            # A replayed log that holds the end is written whole: the end and the
            # message's summary are one transaction. No conversation: no such turn.
            if not self.view.done and self.conversation_id:
                try:
                    await self._follow_stream()
                except _Gap:
                    self.following_log = True
                    await self._follow_log()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("Following turn %s failed", self.message_id)
        finally:
            self._ready.set()
            self._saved.set()
            self._cluster.forget_remote(self)

    async def _open(self) -> None:
        engine, message_id = self._cluster.engine, self.message_id
        events = await asyncio.to_thread(load_events, engine, message_id)
        if not self.conversation_id:
            state = await asyncio.to_thread(turn_state, engine, message_id)
            self.conversation_id = state[0] if state is not None else ""
        for event in events:
            self.view.apply(event)
        self._position = entry_id(self.view.last_seq)

    # --- the stream -----------------------------------------------------------------------

    async def _follow_stream(self) -> None:
        """Until the `saved` entry; raises `_Gap` when the log must be read instead."""
        redis, key = self._cluster.redis, self._cluster.config.stream(self.message_id)
        # A stream that does not exist (yet: the owner's first write may still be on its
        # way) is waited for; if it was lost, the next entry's `p` says so.
        try:
            caught_up = await redis.xrange(key, min=entry_id(self.view.last_seq + 1), max="+")
        except RedisError as exc:
            logger.warning("Turn %s: reading its stream failed (%s)", self.message_id, exc)
            raise _Gap from None
        if self._take(caught_up):
            return
        self._ready.set()
        block_ms = max(1, int(self._cluster.config.quiet_s * 1000))
        while True:
            try:
                reply = await redis.xread({key: self._position}, block=block_ms, count=_READ_COUNT)
            except RedisError as exc:
                logger.warning("Turn %s: reading its stream failed (%s)", self.message_id, exc)
                raise _Gap from None
            if not reply:
                if await self._owner_gone():
                    await self._end_orphan()
                    if await self._log_holds_end():
                        raise _Gap
                continue
            self._gone_since = None
            if self._take(reply[0][1]):
                return

    def _take(self, entries: Sequence[tuple[str, dict[str, str]]]) -> bool:
        """Fold stream entries in; True at the `saved` one. Raises `_Gap` at a hole."""
        for raw_id, fields in entries:
            try:
                entry = read_entry(raw_id, fields)
            except ValueError as exc:
                logger.warning("Turn %s: %s", self.message_id, exc)
                raise _Gap from None
            if entry.event is None:
                if not self.view.done:  # the end itself was lost: the log has it
                    raise _Gap
                self._saved.set()
                return True
            if entry.prev > self.view.last_seq:
                logger.info("Turn %s: its stream has a hole; reading the log", self.message_id)
                raise _Gap
            self._apply(entry.event)
            self._streamed = True
            self._position = raw_id
        return False

    def _apply(self, event: TurnEvent) -> None:
        changes = self.view.apply(event)
        self._feeds.mark(event, changes)

    # --- the log --------------------------------------------------------------------------

    async def _follow_log(self) -> None:
        """Until the log holds the end: replayed anew once it caught up with the view,
        then read on from there."""
        engine, message_id = self._cluster.engine, self.message_id
        poll_s = self._cluster.config.log_poll_s
        # A view replayed from the log alone reads on from its last row; one that holds
        # stream events may be ahead of the log, and between its rows.
        rebased = not self._streamed
        self._ready.set()
        while True:
            try:
                if not rebased:
                    events = await asyncio.to_thread(load_events, engine, message_id)
                    replayed = TurnView.replay(events)
                    if replayed.done or replayed.last_seq >= self.view.last_seq:
                        progress = replayed.last_seq > self.view.last_seq
                        self.view = replayed
                        self._feeds.rebase(replayed)
                        rebased = True
                    else:
                        progress = False
                else:
                    after = self.view.last_seq
                    events = await asyncio.to_thread(
                        load_events, engine, message_id, after_seq=after
                    )
                    for event in events:
                        self._apply(event)
                    progress = bool(events)
            except StoreError as exc:
                logger.warning("Turn %s: reading its log failed (%s)", message_id, exc)
                progress = False
            if rebased and self.view.done:
                return
            if progress:
                self._gone_since = None
            elif await self._owner_gone():
                await self._end_orphan()
            await asyncio.sleep(poll_s)

    async def _log_holds_end(self) -> bool:
        try:
            state = await asyncio.to_thread(turn_state, self._cluster.engine, self.message_id)
        except StoreError:
            return False
        return state is None or state[1] != "streaming"

    # --- the owner ------------------------------------------------------------------------

    async def _owner_gone(self) -> bool:
        """True once the lease has not named this turn for `confirm_s` (checked when
        nothing arrived for a while)."""
        if not self.conversation_id:
            return False
        try:
            holder = await lease_holder(
                self._cluster.redis, self._cluster.config.lease(self.conversation_id)
            )
        except RedisError:
            return False  # no answer is not an answer
        if holder is not None and holder.message_id == self.message_id:
            self._gone_since = None
            return False
        now = asyncio.get_running_loop().time()
        if self._gone_since is None:
            self._gone_since = now
        return now - self._gone_since >= self._cluster.config.confirm_s

    async def _end_orphan(self) -> None:
        try:
            await end_orphan(self._cluster, self.message_id, self.conversation_id)
        except (RedisError, StoreError) as exc:
            logger.warning("Turn %s: ending it failed (%s)", self.message_id, exc)
