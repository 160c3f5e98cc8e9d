"""The servers the workers share restart mid-turn: a PostgreSQL and a Redis of the test's
own (tests/support/servers.py), stopped and started again while worker A streams a turn
that a page of worker B follows. Nothing streamed is lost, the turn ends as it would
have, and B's page gets the same frames as A's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator

import pytest
from sqlalchemy import Engine

from intent_ui.agent.cluster import ClusterConfig, RemoteTurn
from intent_ui.agent.session import TurnRequest, TurnSession
from intent_ui.store import conversations as conv
from intent_ui.store.db import init_db
from intent_ui.store.models import LOCAL_USER_ID
from tests.support import servers
from tests.support.cluster import (
    Worker,
    fast_config,
    labels,
    new_prefix,
    read_page,
    stored,
    until,
    workers,
)
from tests.support.scripted_runtime import Make, recorded_turn, settle

BURSTS = recorded_turn()
DOWN_S = 0.5
"""How long a server stays down: several flushes, renewals and reads fail meanwhile."""


@pytest.fixture(scope="module")
def private_postgres() -> Iterator[servers.PrivateServer]:
    with servers.private_postgres_server() as server:
        yield server


@pytest.fixture
def postgres_engine(
    private_postgres: servers.PrivateServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Engine]:
    monkeypatch.delenv("DB_URL", raising=False)  # it wins over init_db's argument
    with servers.postgres_database(private_postgres.url) as url:
        engine = init_db(url)
        yield engine
        engine.dispose()


@pytest.fixture
def private_redis() -> Iterator[servers.PrivateServer]:
    with servers.private_redis_server() as server:
        yield server


async def start(worker: Worker, engine: Engine) -> TurnSession:
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    return await worker.sessions.start(TurnRequest(chat.id, "find oauth", "demo", "demo"))


async def play(worker: Worker, bursts: Iterable[Iterable[Make]]) -> None:
    for burst in bursts:
        worker.run().send(burst)
        await settle()
        await asyncio.sleep(0.02)  # spread over the outage, as a model streams


async def test_postgresql_restarted_mid_turn_loses_nothing_and_the_live_view_goes_on(
    postgres_engine: Engine, cluster_config: ClusterConfig, private_postgres: servers.PrivateServer
) -> None:
    async with workers(postgres_engine, cluster_config, "worker-a", "worker-b") as (a, b):
        session = await start(a, postgres_engine)
        await play(a, BURSTS[:4])
        remote = await b.live.running(session.conversation_id)
        assert isinstance(remote, RemoteTurn)
        on_a = asyncio.create_task(read_page(session.subscribe("en")))
        on_b = asyncio.create_task(read_page(remote.subscribe("en")))
        flushed = stored(postgres_engine, session.message_id).last_seq
        await asyncio.to_thread(private_postgres.stop)
        await play(a, BURSTS[4:10])
        # The store is down: B's page goes on from the stream all the same.
        await until(lambda: remote.view.last_seq == session.view.last_seq)
        assert not remote.following_log
        assert labels(remote.view) == labels(session.view)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(private_postgres.start)
        # The flushes that failed are retried: the log catches up.
        at = session.view.last_seq
        await until(lambda: stored(postgres_engine, session.message_id).last_seq >= at)
        assert at > flushed
        await play(a, BURSTS[10:])
        await session.wait()
        await remote.wait()
        assert await on_b == await on_a
        recorded = stored(postgres_engine, session.message_id)
        assert (recorded.stop_reason, remote.status, session.status) == (
            "end_turn",
            "complete",
            "complete",
        )
        assert recorded.text == session.view.text
        assert labels(recorded) == labels(session.view) == labels(remote.view)


async def test_redis_restarted_mid_turn_is_followed_from_the_log_and_no_turn_is_lost(
    engine: Engine, private_redis: servers.PrivateServer
) -> None:
    config = fast_config(private_redis.url, new_prefix())
    async with workers(engine, config, "worker-a", "worker-b") as (a, b):
        session = await start(a, engine)
        await play(a, BURSTS[:4])
        remote = await b.live.running(session.conversation_id)
        assert isinstance(remote, RemoteTurn)
        await until(lambda: remote.view.last_seq == session.view.last_seq)
        on_a = asyncio.create_task(read_page(session.subscribe("en")))
        on_b = asyncio.create_task(read_page(remote.subscribe("en")))
        await asyncio.to_thread(private_redis.stop)
        await play(a, BURSTS[4:10])
        # Redis is down: B reads the log instead, as far as A has flushed it.
        await until(lambda: remote.following_log)
        await until(lambda: remote.view.last_seq == session.view.last_seq)
        await asyncio.sleep(DOWN_S)
        await asyncio.to_thread(private_redis.start)  # empty: streams and leases are gone
        # A takes its lease back; B does not take the turn for a dead worker's.
        lease = config.lease(session.conversation_id)
        owned = a.cluster.owned_turns[session.message_id]
        await until_async(lambda: a.cluster.redis.exists(lease))
        await play(a, BURSTS[10:])
        await session.wait()
        await remote.wait()
        assert await on_b == await on_a
        recorded = stored(engine, session.message_id)
        assert (recorded.stop_reason, remote.status) == ("end_turn", "complete")
        assert labels(recorded) == labels(session.view) == labels(remote.view)
        assert not owned.fenced
        # The conversation takes its next turn, from either worker.
        await until(lambda: not a.cluster.owned_turns)
        request = TurnRequest(session.conversation_id, "and then?", "demo", "demo")
        second = await b.sessions.start(request)
        assert b.sessions.running(session.conversation_id) is second


async def until_async(check: Callable[[], Awaitable[object]], *, limit_s: float = 20.0) -> None:
    """`until` for a check that must be awaited."""
    async with asyncio.timeout(limit_s):
        while not await check():
            await asyncio.sleep(0.02)
