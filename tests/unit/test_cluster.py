"""Live turns across workers: two workers (two `Cluster`s and two `TurnSessions`) on one
database and one real Redis. A turn started on one is followed from the other, stopped
from it, refused beside it, and ended by it when its worker dies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from redis.typing import EncodableT, KeyT
from sqlalchemy import Engine

from intent_ui.agent import live
from intent_ui.agent.cluster import ClusterConfig, RemoteTurn
from intent_ui.agent.cluster.control import DECIDE, PauseRequest, ask
from intent_ui.agent.cluster.records import entry_fields, entry_id
from intent_ui.agent.pauses import decision_from
from intent_ui.agent.session import TurnAlreadyRunning, TurnRequest, TurnSession
from intent_ui.agent.tools.base import ToolResult
from intent_ui.core.events import CallSettled, TextDelta, TurnDone, TurnEvent
from intent_ui.core.pauses import ASK_USER_QUESTION_NAME
from intent_ui.store import conversations as conv
from intent_ui.store.db import dispose_engines
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import load_events
from intent_ui.ui import host as host_module
from intent_ui.ui.host import close_host_at_shutdown, get_host
from tests.support.cluster import (
    Worker,
    drop_keys,
    labels,
    page_store,
    read_all,
    stored,
    until,
    workers,
)
from tests.support.run_loop import FakeTool
from tests.support.scripted_runtime import Make, recorded_turn, settle

BURSTS = recorded_turn()


@pytest.fixture
async def pair(engine: Engine, cluster_config: ClusterConfig) -> AsyncIterator[list[Worker]]:
    async with workers(engine, cluster_config, "worker-a", "worker-b") as made:
        yield made


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


async def start(worker: Worker, chat_id: str, text: str = "find oauth") -> TurnSession:
    return await worker.sessions.start(TurnRequest(chat_id, text, "demo", "demo"))


async def play(worker: Worker, bursts: Iterable[Iterable[Make]]) -> None:
    for burst in bursts:
        worker.run().send(burst)
        await settle()


async def followed(pair: list[Worker], chat_id: str, played: int) -> tuple[TurnSession, RemoteTurn]:
    """A turn started on the first worker, `played` bursts in, as the second follows it."""
    a, b = pair
    session = await start(a, chat_id)
    await play(a, BURSTS[:played])
    remote = await b.live.running(chat_id)
    assert isinstance(remote, RemoteTurn)
    return session, remote


async def test_a_turn_started_on_one_worker_is_followed_from_another(
    pair: list[Worker], engine: Engine, chat_id: str
) -> None:
    a, b = pair
    # A page served by B opens the conversation mid-turn.
    session, remote = await followed(pair, chat_id, 6)
    assert (remote.message_id, remote.conversation_id) == (session.message_id, chat_id)
    await until(lambda: remote.view.last_seq == session.view.last_seq)
    assert labels(remote.view) == labels(session.view)
    # One follower per turn per worker, whichever page asks.
    assert await b.live.get(session.message_id) is remote
    on_a = asyncio.create_task(read_all(session.subscribe("en")))
    on_b = asyncio.create_task(read_all(remote.subscribe("en")))
    await play(a, BURSTS[6:])
    await session.wait()
    await remote.wait()
    assert await page_store(await on_b) == await page_store(await on_a)
    assert labels(remote.view) == labels(session.view) == labels(stored(engine, remote.message_id))
    assert remote.status == session.status == "complete"
    # Once its log is written the turn is a stored one for B too.
    assert await b.live.get(session.message_id) is None
    assert await b.live.running(chat_id) is None


async def test_stop_on_another_worker_stops_the_turn_where_it_runs(
    pair: list[Worker], engine: Engine, chat_id: str
) -> None:
    a = pair[0]
    session, remote = await followed(pair, chat_id, 3)
    remote.stop()
    await until(session.stop_requested.is_set)
    a.run().send([lambda seq: TurnDone(seq, "cancelled")])
    await remote.wait()
    assert remote.status == "cancelled"
    assert conv.messages(engine, chat_id)[-1].status == "cancelled"


async def test_a_second_turn_is_refused_on_any_worker_while_one_runs(
    pair: list[Worker], engine: Engine, chat_id: str
) -> None:
    a, b = pair
    session = await start(a, chat_id)
    with pytest.raises(TurnAlreadyRunning):
        await start(b, chat_id, "another question")
    # Nothing of the refused turn was stored.
    assert [m.content for m in conv.messages(engine, chat_id) if m.role == "user"] == ["find oauth"]
    await play(a, [[lambda seq: TurnDone(seq, "end_turn")]])
    await session.wait()
    await until(lambda: not a.cluster.owned_turns)
    second = await start(b, chat_id, "another question")
    assert b.sessions.running(chat_id) is second


async def test_the_same_worker_starts_the_next_turn_at_once(
    pair: list[Worker], chat_id: str
) -> None:
    a, _ = pair
    first = await start(a, chat_id)
    await play(a, [[lambda seq: TurnDone(seq, "end_turn")]])
    await first.wait()  # its lease may not be given up yet: it is still this worker's
    second = await start(a, chat_id, "next")
    assert a.sessions.running(chat_id) is second


async def test_a_dead_workers_turn_is_ended_as_interrupted_by_its_follower(
    pair: list[Worker], engine: Engine, chat_id: str
) -> None:
    a = pair[0]
    session, remote = await followed(pair, chat_id, 8)
    # The last events reach the stream but never A's log: A dies right after.
    session.log.abandon()
    await play(a, BURSTS[8:12])
    await until(lambda: remote.view.last_seq == session.view.last_seq)
    last_published = session.view.last_seq
    a.die(session)
    await remote.wait()
    assert (remote.view.stop_reason, remote.status) == ("interrupted", "cancelled")
    recorded = stored(engine, session.message_id)
    assert recorded.done and recorded.stop_reason == "interrupted"
    # What A streamed is kept, and the end takes the next seq free.
    assert recorded.last_seq == last_published + 1
    assert recorded.text == session.view.text
    assert labels(recorded) == labels(remote.view)
    assert conv.messages(engine, chat_id)[-1].status == "cancelled"


async def test_a_start_in_the_conversation_ends_a_dead_workers_turn(
    pair: list[Worker], engine: Engine, cluster_config: ClusterConfig, chat_id: str
) -> None:
    a, b = pair
    session = await start(a, chat_id)
    await play(a, BURSTS[:4])
    await until(lambda: len(load_events(engine, session.message_id)) > 0)
    a.die(session)
    probe = aioredis.Redis.from_url(cluster_config.url)
    try:
        lease = cluster_config.lease(chat_id)
        while await probe.exists(lease):
            await asyncio.sleep(0.05)
    finally:
        await probe.aclose()
    second = await start(b, chat_id, "are you there?")
    recorded = stored(engine, session.message_id)
    assert recorded.done and recorded.stop_reason == "interrupted"
    assert b.sessions.running(chat_id) is second


async def test_a_stale_owners_writes_are_refused_and_its_turn_stops(
    pair: list[Worker], engine: Engine, cluster_config: ClusterConfig, chat_id: str
) -> None:
    a, _ = pair
    session = await start(a, chat_id)
    await play(a, BURSTS[:4])
    owned = a.cluster.owned_turns[session.message_id]
    await until(lambda: not (owned.publisher.pending or owned.publisher.in_flight))
    # Another worker decided A was gone and wrote the turn's end further on.
    ended_at = session.view.last_seq + 10
    end = TurnDone(ended_at, "interrupted")
    await a.cluster.redis.xadd(
        cluster_config.stream(session.message_id),
        entry_fields(end, session.view.last_seq),
        id=entry_id(ended_at),
    )
    await play(a, BURSTS[4:6])
    await until(lambda: owned.publisher.refused)
    assert session.stop_requested.is_set() and owned.fenced
    # From then on A writes nothing of the turn: not to the stream, not to the log.
    written = load_events(engine, session.message_id)
    await play(a, [*BURSTS[6:8], [lambda seq: TurnDone(seq, "cancelled")]])
    await session.wait()
    entries = await a.cluster.redis.xrange(cluster_config.stream(session.message_id))
    assert entries[-1][0] == entry_id(ended_at)
    assert load_events(engine, session.message_id) == written


async def test_a_trimmed_stream_is_followed_from_the_log(
    engine: Engine, cluster_config: ClusterConfig, chat_id: str
) -> None:
    # A's log lags: fragments wait for a flush that comes only with a state change.
    async with workers(engine, cluster_config, "worker-a", "worker-b", flush_interval=30) as pair:
        a, b = pair
        session = await start(a, chat_id)
        await play(a, BURSTS[:10])
        owned = a.cluster.owned_turns[session.message_id]
        # Fragments until one waits for the flush (one already under way may take some).
        for _ in range(5):
            await play(a, [[lambda seq: TextDelta(seq, "on ")]])
            await until(lambda: not (owned.publisher.pending or owned.publisher.in_flight))
            await asyncio.sleep(0.05)
            if stored(engine, session.message_id).last_seq < session.view.last_seq:
                break
        # Two fragments the log lacks: trimmed to its last entry, the stream has a hole.
        await play(a, [[lambda seq: TextDelta(seq, "and on ")]])
        await until(lambda: not (owned.publisher.pending or owned.publisher.in_flight))
        assert stored(engine, session.message_id).last_seq < session.view.last_seq - 1
        await a.cluster.redis.xtrim(
            cluster_config.stream(session.message_id), maxlen=1, approximate=False
        )
        remote = await b.live.running(chat_id)
        assert isinstance(remote, RemoteTurn)
        on_b = asyncio.create_task(read_all(remote.subscribe("en")))
        on_a = asyncio.create_task(read_all(session.subscribe("en")))
        await until(lambda: remote.following_log)
        await play(a, [[lambda seq: CallSettled(seq, "c1", "settled", outcome="Found 3")]])
        await play(a, BURSTS[10:])
        await session.wait()
        await remote.wait()
        assert await page_store(await on_b) == await page_store(await on_a)
        assert remote.view.text == session.view.text and remote.status == "complete"


async def test_entries_lost_mid_turn_are_noticed_and_the_follower_goes_on_from_the_log(
    pair: list[Worker], chat_id: str
) -> None:
    a = pair[0]
    session, remote = await followed(pair, chat_id, 6)
    await until(lambda: remote.view.last_seq == session.view.last_seq)
    on_b = asyncio.create_task(read_all(remote.subscribe("en")))
    on_a = asyncio.create_task(read_all(session.subscribe("en")))
    await play(a, BURSTS[6:7])  # read from the stream
    await until(lambda: remote.view.last_seq == session.view.last_seq)
    # One write of A's never reaches Redis (it went away for a moment).
    writer = a.cluster.writer
    append = writer._append
    failed: list[Sequence[KeyT] | None] = []

    async def lossy(
        keys: Sequence[KeyT] | None = None, args: Iterable[EncodableT] | None = None
    ) -> object:
        if not failed:
            failed.append(keys)
            raise redis.exceptions.ConnectionError("Redis went away")
        return await append(keys=keys, args=args)

    writer._append = lossy  # type: ignore[assignment]
    await play(a, BURSTS[7:9])
    await until(lambda: failed)
    await play(a, BURSTS[9:])
    await session.wait()
    await remote.wait()
    assert remote.following_log
    assert await page_store(await on_b) == await page_store(await on_a)
    assert labels(remote.view) == labels(session.view) and remote.status == "complete"


async def test_starting_a_worker_ends_only_the_turns_whose_lease_is_gone(
    pair: list[Worker], engine: Engine, chat_id: str
) -> None:
    a, b = pair
    running = await start(a, chat_id)
    await play(a, BURSTS[:2])
    other_chat = conv.create_conversation(
        engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
    ).id
    left = conv.start_assistant_message(engine, other_chat)  # its worker died long ago
    assert await b.cluster.end_orphans() == 1
    assert stored(engine, left).stop_reason == "interrupted"
    assert not stored(engine, running.message_id).done
    assert a.sessions.running(chat_id) is running


def test_redis_is_on_only_when_reflex_redis_url_is_set() -> None:
    assert ClusterConfig.from_env({}) is None
    assert ClusterConfig.from_env({"REFLEX_REDIS_URL": "  "}) is None
    found = ClusterConfig.from_env({"REFLEX_REDIS_URL": "redis://example:6379/2"})
    assert found is not None and found.url == "redis://example:6379/2"


def test_a_dead_workers_turn_is_noticed_within_five_seconds_by_default() -> None:
    found = ClusterConfig.from_env({"REFLEX_REDIS_URL": "redis://example:6379/2"})
    assert found == ClusterConfig(url="redis://example:6379/2")
    # The lease runs out, a quiet read sees it gone, waits to confirm, sees it again.
    noticed_s = found.lease_ms / 1000 + found.quiet_s + found.confirm_s + found.quiet_s
    assert noticed_s <= 5.0
    # Renewed often enough that a loop stalled for a second keeps its turns.
    assert found.lease_ms / 1000 - found.renew_s >= 1.0
    assert found.confirm_s > found.renew_s


def test_the_lease_is_set_in_seconds_and_the_other_timings_follow() -> None:
    env = {"REFLEX_REDIS_URL": "redis://example:6379/2", "INTENT_UI_TURN_LEASE_S": "8"}
    found = ClusterConfig.from_env(env)
    assert found is not None
    assert (found.lease_ms, found.renew_s, found.confirm_s, found.quiet_s) == (8000, 2, 4, 2)


@pytest.mark.parametrize("given", ["soon", "0.1", "-3", "inf", "nan"])
def test_a_lease_that_is_no_length_is_refused_saying_what_to_set(given: str) -> None:
    env = {"REFLEX_REDIS_URL": "redis://example:6379/2", "INTENT_UI_TURN_LEASE_S": given}
    with pytest.raises(ValueError, match=r"INTENT_UI_TURN_LEASE_S=.*at least 0\.5.*or unset"):
        ClusterConfig.from_env(env)


async def test_a_host_built_with_redis_configured_runs_its_turns_on_the_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    (tmp_path / "ws").mkdir()
    settings = {"endpoints": [{"kind": "demo", "pacing_ms": 0}], "workspace": str(tmp_path / "ws")}
    (tmp_path / "intent_ui.yaml").write_text(json.dumps(settings), encoding="utf-8")
    monkeypatch.setenv("INTENT_UI_CONFIG", str(tmp_path / "intent_ui.yaml"))
    monkeypatch.setenv("DB_URL", f"sqlite:///{tmp_path / 'app.db'}")
    monkeypatch.setenv("REFLEX_REDIS_URL", redis_url)
    monkeypatch.setattr(host_module, "_host", None)
    monkeypatch.setattr(host_module, "_building", None)
    stream = ""
    try:
        async with close_host_at_shutdown():
            host = await get_host()
            assert host.cluster is not None and host.live.cluster is host.cluster
            chat = conv.create_conversation(
                host.engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
            )
            session = await host.sessions.start(TurnRequest(chat.id, "hello", "demo", "demo"))
            stream = host.cluster.config.stream(session.message_id)
            assert await host.live.running(chat.id) is session
            await session.wait()
            await until(lambda: not host.cluster or not host.cluster.owned_turns)
            entries = await host.cluster.redis.xrange(stream)
            assert entries[-1][1] == {"saved": "1"}
            assert await host.cluster.redis.exists(host.cluster.config.lease(chat.id)) == 0
    finally:
        dispose_engines()
        if stream:
            drop_keys(redis_url, stream)


@dataclass
class _Call:
    call_id: str
    name: str
    chunks: list[str] = field(default_factory=list)


def waiting_on(session: TurnSession) -> list[ToolResult | str]:
    """Bind the session's pauses as its run loop would; what the calls settle with."""
    settled: list[ToolResult | str] = []
    assert session.pauses is not None

    def emit(event: TurnEvent) -> None:
        session.publish(event)

    session.pauses.bind(
        {"delete_file": {"require_approval": True}},
        emit,
        session.seq.next,
        lambda call, result: settled.append(result),
        lambda call, state, error: settled.append(f"{state}: {error}"),
    )
    return settled


async def test_an_approval_decided_on_another_worker_is_taken_where_the_turn_runs(
    pair: list[Worker], chat_id: str
) -> None:
    a, b = pair
    session = await start(a, chat_id)
    waiting_on(session)
    assert session.pauses is not None
    tool = FakeTool("delete_file", properties={"path": {"type": "string"}})
    admitted = asyncio.create_task(
        session.pauses.admit(_Call("d1", "delete_file"), tool, {"path": "old"})
    )
    await until(lambda: session.pauses is not None and "d1" in session.pauses.waiting)
    remote = await b.live.running(chat_id)
    assert isinstance(remote, RemoteTurn)
    bad = await live.decide(remote, "d1", decision_from("once", arguments="[1, 2]"))
    assert not bad.ok and "object" in bad.problem  # the owner's verdict, word for word
    approved = await live.decide(remote, "d1", decision_from("once", arguments='{"path": "new"}'))
    assert approved.ok
    assert await asyncio.wait_for(admitted, 5) == {"path": "new"}
    # The first decision wins, wherever it came from.
    late = await live.decide(remote, "d1", decision_from("deny"))
    assert late.stale and not late.ok


async def test_a_question_answered_on_another_worker_resumes_the_turn_where_it_runs(
    pair: list[Worker], chat_id: str
) -> None:
    a, b = pair
    session = await start(a, chat_id)
    settled = waiting_on(session)
    assert session.pauses is not None
    asked = asyncio.create_task(
        session.pauses.admit(
            _Call("q1", ASK_USER_QUESTION_NAME),
            FakeTool(ASK_USER_QUESTION_NAME),
            {"question": "Which database?", "choices": ["Postgres", "SQLite"]},
        )
    )
    await until(lambda: session.pauses is not None and "q1" in session.pauses.waiting)
    remote = await b.live.running(chat_id)
    assert isinstance(remote, RemoteTurn)
    assert (await live.answer(remote, "q1", "SQLite, for now")).ok
    assert await asyncio.wait_for(asked, 5) is None
    (result,) = settled
    assert isinstance(result, ToolResult) and "SQLite, for now" in result.output
    assert not (await live.answer(remote, "q1", "Postgres")).ok


async def test_a_decision_for_a_worker_that_is_gone_says_it_was_not_taken(
    pair: list[Worker], chat_id: str
) -> None:
    a, b = pair
    session = await start(a, chat_id)
    remote = await b.live.running(chat_id)
    assert isinstance(remote, RemoteTurn)
    await a.cluster._control.aclose()  # a's worker hears nothing any more
    asked = PauseRequest(DECIDE, "d1", b.cluster.new_reply_key(), decision=decision_from("once"))
    verdict = await ask(
        b.cluster.redis, b.cluster.config.control(session.message_id), asked, timeout_s=0.3
    )
    assert not verdict.ok and "did not answer" in verdict.problem
