"""Ending the turns of a worker that died: whoever notices records the end it never wrote.

A turn is an orphan once its conversation's lease no longer names it: its owner stopped
renewing. It is noticed by a follower whose stream went quiet, by a new start in its
conversation, by a worker's start, or by the periodic sweep (`Cluster`). The one that
ends it first takes the conversation's lease itself (`SET NX`), so no two workers end
one turn and an owner that was only slow cannot take it back; then, in order:

1. what the owner published but never flushed to its log (the stream's entries after the
   log's last seq, up to the first one missing) is written to the log;
2. the end: the stream's own `TurnDone` if it has one, else `TurnDone("interrupted")`
   with the next seq free in both the log and the stream, and the message's summary;
3. the end goes to the stream as `{seq}-0` (which also refuses any write of a stale owner)
   and the `saved` mark after it, so every follower ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from intent_ui.agent.cluster.lease import Holder, Lease
from intent_ui.agent.cluster.records import (
    entry_fields,
    entry_id,
    read_entry,
    saved_fields,
)
from intent_ui.core.events import TurnDone, TurnEvent
from intent_ui.core.turn import TurnView
from intent_ui.store.turns import end_interrupted, load_events

if TYPE_CHECKING:
    from intent_ui.agent.cluster.worker import Cluster

__all__ = ["end_held", "end_orphan", "read_tail"]

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


async def end_held(cluster: Cluster, message_id: str) -> TurnDone | None:
    """End the turn as its owner never did, while holding its conversation's lease; the
    end written, or None when its log already had one (see the module docstring)."""
    engine = cluster.engine
    view = await asyncio.to_thread(lambda: TurnView.replay(load_events(engine, message_id)))
    if view.done:
        return None
    tail, top = await read_tail(cluster, message_id, view.last_seq)
    done = await asyncio.to_thread(end_interrupted, engine, message_id, tail=tail, after_seq=top)
    if done is None:
        return None
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
    return done


async def end_orphan(cluster: Cluster, message_id: str, conversation_id: str) -> bool:
    """End the turn if its conversation's lease is free (taking it meanwhile); False when
    someone holds it: the turn's owner, or a worker already ending it."""
    lease = Lease(
        cluster.redis,
        cluster.config.lease(conversation_id),
        Holder(cluster.worker_id, message_id),
        ttl_ms=cluster.config.lease_ms,
    )
    if not await lease.acquire():
        return False
    cluster.ending.add(message_id)
    try:
        await end_held(cluster, message_id)
    finally:
        cluster.ending.discard(message_id)
        await lease.release()
    return True
