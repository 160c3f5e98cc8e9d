"""The owning worker's side of a running turn: its lease and its stream.

`Claim` is what `TurnSessions.start` holds between checking the conversation and having
a session: the lease, taken as `{worker}:` (no message yet). `bind` names the turn in it
and makes the `OwnedTurn`, which

- publishes every event of the session to its stream (`StreamPublisher`, an observer);
- renews the lease while the turn runs;
- when the session has ended and its log is written: writes the last entries, gives the
  lease up, then marks the stream `saved` (in that order, so a page that renders the
  turn from the store next may also start the conversation's next turn); a session
  suspended while it waits for the user (the worker stops) gives the lease up and marks
  nothing, so the worker that takes the lease next resumes the turn (`orphans`);
- and stops the turn, writing nothing more of it anywhere, once it is no longer its to
  write: the lease is held by another worker, or the stream refused a write. Either means
  another worker decided this one was gone and recorded the turn's end.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from intent_ui.agent.cluster.lease import Holder, Lease
from intent_ui.agent.cluster.publisher import StreamPublisher
from intent_ui.agent.session import TurnSession

if TYPE_CHECKING:
    from intent_ui.agent.cluster.worker import Cluster

__all__ = ["Claim", "OwnedTurn", "own"]

logger = logging.getLogger(__name__)


class Claim:
    """A conversation held for a turn that is starting (`TurnClaim`)."""

    def __init__(self, cluster: Cluster, lease: Lease) -> None:
        self._cluster = cluster
        self.lease = lease

    async def bind(self, session: TurnSession) -> None:
        """Name the turn in the lease and start publishing it. Never raises: with Redis
        out of reach the turn runs all the same, followed from its log."""
        holder = Holder(self._cluster.worker_id, session.message_id)
        try:
            await self.lease.rebind(holder)
        except RedisError as exc:
            logger.warning("Naming turn %s in its lease failed (%s)", session.message_id, exc)
        own(self._cluster, session, self.lease)

    async def release(self) -> None:
        await self.lease.release()


def own(cluster: Cluster, session: TurnSession, lease: Lease, *, after_seq: int = 0) -> OwnedTurn:
    """Run `session` as this worker's turn, holding `lease` (which names it); `after_seq`
    is the last seq its stream holds already (a turn resumed from another worker's)."""
    owned = OwnedTurn(cluster, session, lease)
    owned.publisher.prev = after_seq
    cluster.owned_turns[session.message_id] = owned
    owned.start()
    return owned


class OwnedTurn:
    """A session of this worker, as the other workers see it (module docstring)."""

    def __init__(self, cluster: Cluster, session: TurnSession, lease: Lease) -> None:
        self._cluster = cluster
        self.session = session
        self.lease = lease
        self.publisher: StreamPublisher = cluster.writer.publisher(
            cluster.config.stream(session.message_id), on_refused=self.fence
        )
        session.observers.append(self.publisher)
        self.fenced = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.lease.keep(self._cluster.config.renew_s, self.fence)
        self._task = asyncio.create_task(self._until_done(), name=f"own {self.lease.key}")

    async def wait(self) -> None:
        """Until the turn's end is published and its lease given up."""
        if self._task is not None:
            await asyncio.wait({self._task})

    async def abandon(self) -> None:
        """Stop renewing and publishing (the worker is shutting down)."""
        self.lease.stop_keeping()
        self.publisher.stop()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})

    def fence(self) -> None:
        """Another worker recorded this turn's end: stop it, write nothing more."""
        if self.fenced:
            return
        self.fenced = True
        logger.warning(
            "Turn %s was ended by another worker (its lease had expired): stopping it here",
            self.session.message_id,
        )
        self.session.log.abandon()
        self.publisher.stop()
        self.lease.stop_keeping()
        self.session.stop()

    async def _until_done(self) -> None:
        try:
            await self.session.wait()
            await self.publisher.aclose()
            if self.fenced:
                return
            await self.lease.release()
            if self.session.done:  # else suspended: the turn is still to be resumed
                await self.publisher.mark_saved(self.session.view.last_seq)
        finally:
            self.lease.stop_keeping()
            self._cluster.owned_turns.pop(self.session.message_id, None)
