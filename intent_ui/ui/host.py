"""The process-wide services behind the pages: config, database, agent runtime.

Built once per process, on first use, inside the backend's event loop (MCP sessions and
the httpx client belong to that loop), and closed when the backend stops
(`close_host_at_shutdown`, a lifespan task). Running turns live in `sessions`; finished
turns are replayed from their event log once and cached by message id, so a card can be
expanded in an old message without reading the database again.

With `REFLEX_REDIS_URL` set the process is one worker of several (`cluster`,
`intent_ui.agent.cluster`): turns are claimed, published and stopped through Redis, and
`live` finds the turns other workers run as well as this one's. Pages look running turns
up through `live`; without a cluster it answers with `sessions` alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from intent_ui.agent.cluster import Cluster
from intent_ui.agent.live import LiveTurns
from intent_ui.agent.resume import WaitingTurn, resume_turns, waiting_turns
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnSessions
from intent_ui.agent.tools.actions import load_action_tools
from intent_ui.agent.tools.base import Tool
from intent_ui.agent.tracing import Tracing
from intent_ui.config import AppConfig, load_config
from intent_ui.core.turn import TurnView
from intent_ui.store.actions import init_action_store, list_action_documents
from intent_ui.store.db import database_url, init_db
from intent_ui.store.memory import DbMemoryStore
from intent_ui.store.turns import end_interrupted, load_events, mark_interrupted

logger = logging.getLogger(__name__)

TURN_CACHE_SIZE = 200


@dataclass
class Host:
    config: AppConfig
    engine: Engine
    runtime: AgentRuntime
    cluster: Cluster | None = None
    sessions: TurnSessions = field(init=False)
    live: LiveTurns = field(init=False)
    turns: OrderedDict[str, TurnView] = field(default_factory=OrderedDict)
    _cache_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.sessions = TurnSessions(
            engine=self.engine,
            runtime=self.runtime,
            config=self.config,
            tracing=Tracing.from_env(self.config),
            coordinator=self.cluster,
        )
        self.live = LiveTurns(self.sessions, self.cluster)

    def turn(self, message_id: str) -> TurnView:
        """The turn of an assistant message: its running session's view, or its stored
        log replayed (cached). Blocking on a cache miss: call it from a worker thread."""
        session = self.sessions.get(message_id)
        if session is not None:
            return session.view
        with self._cache_lock:
            cached = self.turns.get(message_id)
            if cached is not None:
                self.turns.move_to_end(message_id)
                return cached
        turn = TurnView.replay(load_events(self.engine, message_id))
        if turn.done:  # a turn still being written would go stale in the cache
            self.remember(message_id, turn)
        return turn

    def remember(self, message_id: str, turn: TurnView) -> None:
        with self._cache_lock:
            self.turns[message_id] = turn
            self.turns.move_to_end(message_id)
            while len(self.turns) > TURN_CACHE_SIZE:
                self.turns.popitem(last=False)


_host: Host | None = None
_building: asyncio.Lock | None = None


def current_host() -> Host | None:
    """The host if it was already built (event handlers that must not block on it)."""
    return _host


async def get_host() -> Host:
    """The process's host, built by the first call; calls during that build wait for it,
    and a build that failed (a bad config file) is tried again by the next call."""
    global _host, _building
    if _host is not None:
        return _host
    if _building is None:
        _building = asyncio.Lock()
    async with _building:
        if _host is None:
            _host = await _build()
        return _host


async def _build() -> Host:
    config = load_config()
    engine = await asyncio.to_thread(init_db, database_url())
    cluster = Cluster.from_env(engine)
    waiting: list[WaitingTurn] = []
    if cluster is None:
        # One process: a turn still streaming belonged to a process that stopped. One
        # that waited for the user goes on where it waited; the others are ended.
        waiting = await asyncio.to_thread(waiting_turns, engine)
        keep = {turn.message_id for turn in waiting}
        interrupted = await asyncio.to_thread(mark_interrupted, engine, keep=keep)
    runtime = AgentRuntime(config, memory_store=DbMemoryStore(engine))
    await runtime.start()
    host = Host(config=config, engine=engine, runtime=runtime, cluster=cluster)
    # Before any turn resumes: a waiting call may be of an imported action.
    await asyncio.to_thread(refresh_actions, host)
    if waiting:
        failed = await resume_turns(host.sessions, waiting)
        for message_id in failed:
            await asyncio.to_thread(end_interrupted, engine, message_id)
    if cluster is not None:
        await cluster.start(host.sessions)
        # Several workers: only the turns whose worker is gone (their lease with it).
        interrupted = await cluster.end_orphans()
    if interrupted:
        logger.info("Marked %d interrupted turn(s) as cancelled", interrupted)
    return host


@contextlib.asynccontextmanager
async def close_host_at_shutdown() -> AsyncIterator[None]:
    """The app's lifespan task: when the backend stops, the host (if one was built) stops
    its running turns, each recorded as it ends, then shuts its MCP servers down and
    closes its HTTP clients, so nothing it opened outlives the app."""
    yield
    global _host
    host, _host = _host, None
    if host is None:
        return
    try:
        await host.sessions.aclose()
        if host.cluster is not None:
            await host.cluster.aclose()
        await asyncio.wait_for(host.runtime.aclose(), timeout=10)
    except Exception:
        logger.warning("Closing the agent runtime at shutdown failed", exc_info=True)
    tracing = host.sessions.tracing
    if tracing is not None:
        # The stopped turns' spans go out now, not whenever the batch would have.
        await asyncio.to_thread(tracing.shutdown)


def refresh_actions(host: Host) -> None:
    """Offer the imported OpenAPI actions to chats (at start and after an import)."""
    init_action_store(host.engine)
    # Each document as its stored text: `load_action_tools` parses a text once per content.
    by_owner: dict[str, list[tuple[str, str]]] = {}
    for document in list_action_documents(host.engine, owner=None):
        by_owner.setdefault(document.owner_id, []).append((document.source, document.document_json))
    actions: dict[str, Sequence[Tool]] = {}
    for owner, documents in by_owner.items():
        actions[owner], problems = load_action_tools(
            documents, allow_private_networks=host.config.actions.allow_private_networks
        )
        for problem in problems:
            logger.warning("Skipping a stored OpenAPI document of user %s: %s", owner, problem)
    host.runtime.set_action_tools(actions)
