"""This worker's place among several: the Redis client, the turns it owns and the turns
of others it follows, the control subscription and the sweep for orphaned turns.

`Cluster` is the `TurnCoordinator` of this worker's `TurnSessions`: a start claims the
conversation's lease before anything is stored, so "a turn is already running" holds
across workers; a lease left by a worker that died is taken over, and that worker's
turn in the conversation is taken over first (`orphans`): resumed here when it waited for
the user (the start is then refused, as beside any running turn), else ended as
interrupted. The pages find the turns of other workers through
`intent_ui.agent.live.LiveTurns`, which asks `follow` and `running_elsewhere` here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Iterable

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from sqlalchemy import Engine

from intent_ui.agent.approvals import Verdict
from intent_ui.agent.cluster.config import ClusterConfig
from intent_ui.agent.cluster.control import (
    DECIDE,
    STOP,
    ControlListener,
    PauseRequest,
    ask,
    reply,
    reply_key,
    request,
)
from intent_ui.agent.cluster.lease import Holder, Lease, lease_holder
from intent_ui.agent.cluster.orphans import end_orphan, take_held
from intent_ui.agent.cluster.owner import Claim, OwnedTurn
from intent_ui.agent.cluster.publisher import StreamWriter
from intent_ui.agent.cluster.records import read_entry
from intent_ui.agent.cluster.remote import RemoteTurn
from intent_ui.agent.session import TurnAlreadyRunning, TurnSessions
from intent_ui.store.db import StoreError
from intent_ui.store.turns import streaming_turns

__all__ = ["Cluster", "ClusterError"]

logger = logging.getLogger(__name__)

ALREADY_RUNNING = "A turn is already running in this conversation; stop it or wait for it."


class ClusterError(StoreError):
    """Redis did not answer where a turn cannot go on without it (a start's claim)."""


def new_worker_id() -> str:
    """Unique among the workers: the host, the process, and a random part (a pid is reused
    by the next process)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"


class Cluster:
    """This worker's part of the cluster (see the module docstring)."""

    def __init__(
        self,
        config: ClusterConfig,
        engine: Engine,
        *,
        worker_id: str | None = None,
        hold_ms: float | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self.worker_id = worker_id or new_worker_id()
        # No retries inside the client: a pipeline of XADDs sent twice would read as a
        # stale producer's; every caller here handles a failure itself.
        self.redis: Redis = Redis.from_url(
            config.url, decode_responses=True, retry=Retry(NoBackoff(), 0)
        )
        self.writer = StreamWriter(
            self.redis, ttl_s=config.stream_ttl_s, linger_s=config.publish_linger_s
        )
        """Writes the streams of every turn this worker runs."""
        self.owned_turns: dict[str, OwnedTurn] = {}
        """The turns this worker runs, by message id."""
        self.ending: set[str] = set()
        """Turns this worker is ending for a worker that died."""
        self._hold_ms = hold_ms
        self._remote: dict[str, RemoteTurn] = {}
        self._sessions: TurnSessions | None = None
        self._control = ControlListener(self.redis, config.control_pattern, self._on_request)
        self._sweeper: asyncio.Task[None] | None = None
        self._suspects: dict[str, float] = {}
        self._tasks: set[asyncio.Task[object]] = set()

    @classmethod
    def from_env(cls, engine: Engine) -> Cluster | None:
        """The cluster when `REFLEX_REDIS_URL` is set, else None (one process)."""
        config = ClusterConfig.from_env()
        return None if config is None else cls(config, engine)

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self, sessions: TurnSessions, *, sweep: bool = True) -> None:
        """Serve `sessions` (this worker's): write their streams, take Stop requests for
        them, and look for orphaned turns every `sweep_s` (the host looks once at start:
        `end_orphans`)."""
        self._sessions = sessions
        self.writer.start()
        await self._control.start()
        if sweep:
            self._sweeper = asyncio.create_task(self._sweep(), name="sweep orphaned turns")

    async def aclose(self) -> None:
        """After the sessions closed: let the owned turns finish publishing (bounded),
        stop following and listening, close the connections."""
        owned = [turn.wait() for turn in list(self.owned_turns.values())]
        if owned:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*owned), 5)
        for turn in list(self.owned_turns.values()):
            await turn.abandon()  # its lease expires on its own
        tasks = [t for t in (self._sweeper, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*(r.aclose() for r in list(self._remote.values())))
        await self.writer.aclose()
        await self._control.aclose()
        if tasks:
            await asyncio.wait(tasks)
        await self.redis.aclose()

    @property
    def sessions(self) -> TurnSessions:
        if self._sessions is None:
            raise RuntimeError("Cluster.start was not called")
        return self._sessions

    # --- starting a turn (TurnCoordinator) ----------------------------------------------------

    async def claim(self, conversation_id: str) -> Claim:
        """Hold the conversation for a new turn of this worker; raises
        `TurnAlreadyRunning` when another worker's turn runs there, `ClusterError` when
        Redis does not answer. Turns of the conversation whose worker is gone are taken
        over first: one that resumes here holds the lease from then on, and is the turn
        already running."""
        key = self.config.lease(conversation_id)
        lease = Lease(self.redis, key, Holder(self.worker_id, ""), ttl_ms=self.config.lease_ms)
        try:
            if not await lease.acquire() and not await self._take_own(lease, conversation_id):
                raise TurnAlreadyRunning(ALREADY_RUNNING)
            try:
                resumed = await self._take_orphans_held(conversation_id, lease)
            except BaseException:
                await lease.release()
                raise
            if resumed:
                raise TurnAlreadyRunning(ALREADY_RUNNING)
        except RedisError as exc:
            raise ClusterError(
                f"Could not reach Redis ({exc}) to start the turn; try again in a moment."
            ) from exc
        return Claim(self, lease)

    async def _take_own(self, lease: Lease, conversation_id: str) -> bool:
        """Take the lease from this worker itself, when it names a turn of ours that no
        longer runs (ended, its lease not yet given up) or nothing (it just expired)."""
        held = await lease_holder(self.redis, lease.key)
        if held is None:
            return await lease.acquire()
        if held.worker != self.worker_id or held.message_id in self.ending:
            return False
        if self.sessions.running(conversation_id) is not None:
            return False
        # The ended turn may give it up between the two questions.
        return await lease.take_over(held) or await lease.acquire()

    async def _take_orphans_held(self, conversation_id: str, lease: Lease) -> bool:
        """Take over the conversation's turns left by a worker that is gone; True when one
        resumed here (with `lease`)."""
        turns = await asyncio.to_thread(streaming_turns, self.engine, conversation_id)
        for message_id, _ in turns:
            if self.sessions.get(message_id) is not None:
                continue
            if await take_held(self, message_id, conversation_id, lease) is not None:
                return True
        return False

    # --- turns of other workers --------------------------------------------------------------

    async def follow(
        self, message_id: str, *, conversation_id: str = "", live: bool = False
    ) -> RemoteTurn | None:
        """The turn as followed here, when it runs on another worker (its stream has no
        `saved` entry yet; with `live`, the caller knows it runs): one follower per turn,
        shared by every page of this worker. None for a turn that is not live."""
        remote = self._remote.get(message_id)
        if remote is None:
            if not live and not await self._streaming(message_id):
                return None
            remote = self._remote.get(message_id)  # another page asked meanwhile
            if remote is None:
                remote = self._remote[message_id] = RemoteTurn(
                    self, message_id, conversation_id, hold_ms=self._hold_ms
                )
                remote.start()
        await remote.ready()
        return None if remote.saved else remote

    async def follow_many(self, message_ids: Iterable[str]) -> dict[str, RemoteTurn]:
        """`follow` for each of `message_ids` that is live, asking Redis once for all."""
        ids = list(message_ids)
        unknown = [i for i in ids if i not in self._remote]
        live = set(ids) - set(unknown)
        if unknown:
            pipe = self.redis.pipeline(transaction=False)
            for message_id in unknown:
                pipe.xrevrange(self.config.stream(message_id), count=1)
            try:
                tops = await pipe.execute(raise_on_error=False)
            except RedisError as exc:
                logger.warning("Looking for live turns failed (%s)", exc)
                tops = [[] for _ in unknown]
            live |= {i for i, top in zip(unknown, tops, strict=True) if _unsaved(top)}
        found = {}
        for message_id in ids:
            if message_id in live:
                remote = await self.follow(message_id, live=True)
                if remote is not None:
                    found[message_id] = remote
        return found

    async def _streaming(self, message_id: str) -> bool:
        try:
            top = await self.redis.xrevrange(self.config.stream(message_id), count=1)
        except RedisError as exc:
            logger.warning("Looking for live turn %s failed (%s)", message_id, exc)
            return False
        return _unsaved(top)

    async def running_elsewhere(self, conversation_id: str) -> RemoteTurn | None:
        """The conversation's turn when another worker runs it (or ends it), followed here;
        one that ended but whose log is not written yet too."""
        following = self.following(conversation_id)
        try:
            holder = await lease_holder(self.redis, self.config.lease(conversation_id))
        except RedisError as exc:
            logger.warning("Reading the lease of conversation %s failed (%s)", conversation_id, exc)
            return following
        if holder is None or holder.worker == self.worker_id or not holder.message_id:
            return following
        found = await self.follow(holder.message_id, conversation_id=conversation_id, live=True)
        return found or following

    def following(self, conversation_id: str) -> RemoteTurn | None:
        """A turn of the conversation this worker follows, until its log is written."""
        for remote in self._remote.values():
            if remote.conversation_id == conversation_id and not remote.saved:
                return remote
        return None

    def forget_remote(self, remote: RemoteTurn) -> None:
        if self._remote.get(remote.message_id) is remote:
            del self._remote[remote.message_id]

    # --- control -----------------------------------------------------------------------------

    def request_stop(self, message_id: str) -> None:
        """Ask the turn's owner, wherever it runs, to stop it."""
        task = asyncio.create_task(self._request_stop(message_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _request_stop(self, message_id: str) -> None:
        try:
            heard = await request(self.redis, self.config.control(message_id), STOP)
        except RedisError as exc:
            logger.warning("Asking turn %s to stop failed (%s)", message_id, exc)
            return
        if not heard:
            logger.warning("Nobody took the request to stop turn %s", message_id)

    async def ask_owner(self, message_id: str, asked: PauseRequest) -> Verdict:
        """A decision or an answer for a waiting call of the turn, taken by its owner
        wherever it runs; the owner's verdict."""
        return await ask(self.redis, self.config.control(message_id), asked)

    def new_reply_key(self) -> str:
        return reply_key(self.config.prefix)

    def _on_request(self, message_id: str, what: str) -> None:
        if self._sessions is None:
            return
        session = self._sessions.get(message_id)
        if session is None:
            return  # another worker's turn (every worker hears every request)
        if what == STOP:
            session.stop()
            return
        asked = PauseRequest.decode(what)
        if asked is None or session.pauses is None:
            return
        if asked.what == DECIDE and asked.decision is not None:
            verdict = session.pauses.decide(asked.call_id, asked.decision)
        else:
            verdict = session.pauses.answer(asked.call_id, asked.text, asked.by)
        task = asyncio.create_task(reply(self.redis, asked.reply_to, verdict))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- orphans ------------------------------------------------------------------------------

    async def end_orphans(self, *, confirm: bool = False) -> int:
        """Take over the turns left `streaming` whose lease is gone (not this worker's
        own): resumed here or ended (`orphans`); returns how many. With `confirm`, one is
        taken only when its lease was already gone at the previous call at least
        `confirm_s` before (see `ClusterConfig`)."""
        turns = await asyncio.to_thread(streaming_turns, self.engine)
        now = asyncio.get_running_loop().time()
        suspects: dict[str, float] = {}
        ended = 0
        try:
            for message_id, conversation_id in turns:
                if self.sessions.get(message_id) is not None or message_id in self._remote:
                    continue  # this worker's own, or one a follower here watches already
                if confirm:
                    holder = await lease_holder(self.redis, self.config.lease(conversation_id))
                    if holder is not None:
                        continue
                    since = suspects[message_id] = self._suspects.get(message_id, now)
                    if now - since < self.config.confirm_s:
                        continue
                if await end_orphan(self, message_id, conversation_id):
                    ended += 1
                    suspects.pop(message_id, None)
        except RedisError as exc:  # the next sweep looks again
            logger.warning("Looking for turns of stopped workers failed (%s)", exc)
        self._suspects = suspects
        return ended

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_s)
            try:
                await self.end_orphans(confirm=True)
            except (RedisError, StoreError) as exc:
                logger.warning("Looking for orphaned turns failed (%s)", exc)
            except Exception:
                logger.exception("Looking for orphaned turns failed")


def _unsaved(top: object) -> bool:
    """Whether the last entry of a stream (`XREVRANGE … COUNT 1`) is a live turn's: there
    is one, and it is not the mark that the log is written."""
    if not isinstance(top, list) or not top:
        return False
    raw_id, fields = top[0]
    try:
        return read_entry(raw_id, fields).event is not None
    except ValueError:
        return False
