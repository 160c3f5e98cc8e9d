"""The turns of a worker that died: whoever notices takes them over, resumed or ended.

A turn is an orphan once its conversation's lease no longer names it: its owner stopped
renewing. It is noticed by a follower whose stream went quiet, by a new start in its
conversation, by a worker's start, or by the periodic sweep (`Cluster`). The one that
takes it first takes the conversation's lease itself (`SET NX`), so no two workers take
one turn and an owner that was only slow cannot take it back; then, in order:

1. what the owner published but never flushed to its log (the stream's entries after the
   log's last seq, up to the first one missing) is what the turn was;
2. a turn that waited for the user with nothing else in flight, by the rules a restart of
   one process resumes by (`intent_ui.agent.resume.waiting_turn`, `core.resume`), and
   whose stream held nothing past a missing entry, goes on here: that tail is written to
   the log, and the turn becomes a session of this worker (`resume_turn`) that holds and
   renews the lease as any turn it runs and publishes to the same stream, its seqs after
   the last one there. The pages on every worker show the same card waiting, and a
   decision from any of them reaches this worker (`control`);
3. any other turn ends: the stream's own `TurnDone` if it has one, else
   `TurnDone("interrupted")` with the next seq free in both the log and the stream, and
   the message's summary; the end goes to the stream as `{seq}-0` (which also refuses
   any write of a stale owner) and the `saved` mark after it, so every follower ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError
from sqlalchemy import Engine

from intent_ui.agent.cluster.lease import Holder, Lease
from intent_ui.agent.cluster.owner import own
from intent_ui.agent.cluster.records import (
    entry_fields,
    entry_id,
    read_entry,
    saved_fields,
)
from intent_ui.agent.resume import WaitingTurn, resume_turn, waiting_turn
from intent_ui.agent.session import TurnSession
from intent_ui.core.events import TurnDone, TurnEvent
from intent_ui.core.turn import TurnView
from intent_ui.store.turns import EventLog, end_interrupted, load_events

if TYPE_CHECKING:
    from intent_ui.agent.cluster.worker import Cluster

__all__ = ["end_orphan", "read_tail", "take_held"]

logger = logging.getLogger(__name__)


async def read_tail(
    cluster: Cluster, message_id: str, after_seq: int
) -> tuple[list[TurnEvent], int]:
    """The events of the turn's stream after `after_seq` that follow on without a hole,
    and the last seq the stream holds (`after_seq` when it holds none after it)."""
    key = cluster.config.stream(message_id)
    try:
        entries = await cluster.redis.xrange(key, min=entry_id(after_seq + 1), max="+")
    except RedisError as exc:
        logger.warning("Reading turn stream %s failed (%s)", key, exc)
        return [], after_seq
    tail: list[TurnEvent] = []
    last, top, whole = after_seq, after_seq, True
    for raw_id, fields in entries:
        try:
            entry = read_entry(raw_id, fields)
        except ValueError as exc:
            logger.warning("Turn stream %s: %s", key, exc)
            whole = False
            continue
        top = max(top, entry.seq)
        if entry.event is None or not whole:
            continue
        if entry.prev > last:
            whole = False  # entries are missing here: what follows cannot be stored
            continue
        tail.append(entry.event)
        last = entry.seq
    return tail, top


async def take_held(
    cluster: Cluster, message_id: str, conversation_id: str, lease: Lease
) -> TurnSession | None:
    """Take the turn over as its owner never handed it on, while holding its
    conversation's `lease`: its session when it resumed here (the lease is the turn's
    now, renewed by this worker), else None (ended, or its log already had an end). See
    the module docstring."""
    engine = cluster.engine
    events, view = await asyncio.to_thread(_replayed, engine, message_id)
    if view.done:
        return None
    tail, top = await read_tail(cluster, message_id, view.last_seq)
    if (tail[-1].seq if tail else view.last_seq) == top and not any(
        isinstance(event, TurnDone) for event in tail
    ):
        waiting = await asyncio.to_thread(
            waiting_turn, message_id, conversation_id, [*events, *tail]
        )
        if waiting is not None:
            await asyncio.to_thread(_store, cluster, message_id, tail)
            holder = Holder(cluster.worker_id, message_id)
            # Taken before the reads above, the lease is renewed (and named) now, so it is
            # still this worker's when the turn starts renewing it.
            kept = await lease.rebind(holder) if lease.holder != holder else await lease.renew()
            if not kept:  # the worker that has it now takes the turn
                logger.warning("Turn %s: its lease went to another worker meanwhile", message_id)
                return None
            session = await _resume(cluster, waiting, lease, top)
            if session is not None:
                return session
    await _end(cluster, message_id, tail, top)
    return None


async def _resume(
    cluster: Cluster, waiting: WaitingTurn, lease: Lease, top: int
) -> TurnSession | None:
    """Run the turn here (its tail stored); None when it could not be."""
    message_id = waiting.message_id

    def bind(session: TurnSession) -> None:
        own(cluster, session, lease, after_seq=top)

    try:
        session = await resume_turn(cluster.sessions, waiting, bind=bind)
    except Exception:  # what it ran on is gone: it ends as interrupted, as it would have
        logger.exception("Could not resume turn %s", message_id)
        return None
    logger.info("Turn %s resumed here, waiting for the user: its worker is gone", message_id)
    return session


def _replayed(engine: Engine, message_id: str) -> tuple[list[TurnEvent], TurnView]:
    events = load_events(engine, message_id)
    return events, TurnView.replay(events)


def _store(cluster: Cluster, message_id: str, tail: list[TurnEvent]) -> None:
    """Write the events the stream holds beyond the log. Blocking."""
    if not tail:
        return
    log = EventLog(cluster.engine, message_id)
    for event in tail:
        log.append(event, label_moved=True)  # unmerged, as `end_interrupted` writes a tail
    log.flush()


async def _end(cluster: Cluster, message_id: str, tail: list[TurnEvent], top: int) -> None:
    """Record the turn's end (the module docstring's third step)."""
    engine = cluster.engine
    done = await asyncio.to_thread(end_interrupted, engine, message_id, tail=tail, after_seq=top)
    if done is None:
        return
    logger.info("Turn %s ended as %s: its worker is gone", message_id, done.stop_reason)
    key = cluster.config.stream(message_id)
    pipe = cluster.redis.pipeline(transaction=False)
    if done.seq > top:
        pipe.xadd(key, entry_fields(done, top), id=entry_id(done.seq))
    pipe.xadd(key, saved_fields(), id=entry_id(done.seq, 1))
    pipe.expire(key, cluster.config.stream_ttl_s)
    try:
        for result in await pipe.execute(raise_on_error=False):
            if isinstance(result, Exception):
                logger.warning("Turn stream %s: %s", key, result)
    except RedisError as exc:  # its followers find the end in the log
        logger.warning("Turn stream %s: could not write its end (%s)", key, exc)


async def end_orphan(cluster: Cluster, message_id: str, conversation_id: str) -> bool:
    """Take the turn over (`take_held`) if its conversation's lease is free, taking the
    lease meanwhile (and keeping it when the turn resumed here); False when someone holds
    it: the turn's owner, or a worker already taking it."""
    lease = Lease(
        cluster.redis,
        cluster.config.lease(conversation_id),
        Holder(cluster.worker_id, message_id),
        ttl_ms=cluster.config.lease_ms,
    )
    if not await lease.acquire():
        return False
    cluster.ending.add(message_id)
    resumed: TurnSession | None = None
    try:
        resumed = await take_held(cluster, message_id, conversation_id, lease)
    finally:
        cluster.ending.discard(message_id)
        if resumed is None:
            await lease.release()
    return True
