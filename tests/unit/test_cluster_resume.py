"""A turn waiting for the user when its worker dies or stops goes on on another worker:
two workers (each its own `Cluster` and `TurnSessions` on the real runtime and run loop,
answered by a scripted provider) on one PostgreSQL and one real Redis. The worker that
takes the turn over asks again where it waited, a decision or an answer from any tab is
taken there, and the turn finishes as it would have."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from intent_ui.agent import live
from intent_ui.agent.cluster import Cluster, ClusterConfig, RemoteTurn
from intent_ui.agent.cluster.lease import lease_holder
from intent_ui.agent.live import LiveTurns
from intent_ui.agent.pauses import decision_from
from intent_ui.agent.session import TurnRequest, TurnSession, TurnSessions
from intent_ui.core.events import ApprovalRequested, QuestionAsked
from intent_ui.core.patches import apply_ops
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import load_events
from tests.support.cluster import (
    Worker,
    drop_keys,
    fast_config,
    labels,
    new_prefix,
    page_store,
    read_all,
    stored,
    until,
)
from tests.support.loop_runtime import CAREFUL_SPEC, LoopRuntime, loop_config
from tests.support.run_loop import ScriptedProvider, call, end
from tests.support.wire import decode_sse

pytestmark = pytest.mark.parametrize("database_kind", ["postgresql"], indirect=True)

DELETE = {"intent": "Deleting the old notes", "path": "notes.txt"}
QUESTION = {"intent": "Asking which notes", "question": "Which notes?", "choices": ["old"]}


@pytest.fixture
def config(redis_url: str) -> Iterator[ClusterConfig]:
    prefix = new_prefix()
    yield fast_config(redis_url, prefix)
    drop_keys(redis_url, prefix)


@contextlib.asynccontextmanager
async def loop_workers(
    engine: Engine, config: ClusterConfig, workspace: Path, *providers: ScriptedProvider
) -> AsyncIterator[list[Worker]]:
    """One worker per provider (`worker-a`, `worker-b`, ...), each running its turns on
    the real runtime answered by its provider."""
    app_config = loop_config(workspace)
    made: list[Worker] = []
    runtimes: list[LoopRuntime] = []
    try:
        for index, provider in enumerate(providers):
            runtime = LoopRuntime(app_config, provider)
            await runtime.start()
            runtimes.append(runtime)
            name = f"worker-{'abc'[index]}"
            cluster = Cluster(config, engine, worker_id=name, hold_ms=0)
            sessions = TurnSessions(
                engine=engine,
                runtime=runtime,
                config=app_config,
                flush_interval=0.01,
                coordinator=cluster,
            )
            await cluster.start(sessions, sweep=False)
            made.append(Worker(name, cluster, sessions, LiveTurns(sessions, cluster), runtime))  # type: ignore[arg-type]
        yield made
    finally:
        for worker in made:
            await worker.sessions.aclose()
            await worker.cluster.aclose()
        for runtime in runtimes:
            await runtime.aclose()


async def die(worker: Worker, session: TurnSession) -> None:
    """The worker stops dead: it renews no lease, publishes and writes nothing more, and
    hears no request (its process is gone)."""
    owned = worker.cluster.owned_turns[session.message_id]
    owned.fenced = True
    owned.lease.stop_keeping()
    owned.publisher.stop()
    session.log.abandon()
    await worker.cluster._control.aclose()


async def shown_on_open(session: TurnSession) -> dict[str, object]:
    """What a page that opens the running turn now holds: the feed's first frame."""
    stream = session.subscribe("en")
    try:
        first = await anext(stream)
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    store: dict[str, object] = {}
    for event in await decode_sse([first]):
        if event.event == "message":
            apply_ops(store, json.loads(event.data)["ops"], {})
    return store


def new_chat(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m").id


async def test_an_approval_waiting_when_its_worker_dies_is_asked_again_on_another_and_approved(
    engine: Engine, config: ClusterConfig, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("old")
    first = ScriptedProvider([*call("c1", "delete_file", DELETE), end("tool_use")])
    then = ScriptedProvider([end()])
    async with loop_workers(engine, config, tmp_path, first, then) as (a, b):
        chat_id = new_chat(engine)
        request = TurnRequest(chat_id, "tidy the notes", "demo", "m", agent_id=CAREFUL_SPEC)
        before = await a.sessions.start(request)
        # A's log never gets a row: all of the turn is in its stream when A dies.
        before.log.abandon()
        await until(lambda: before.view.waiting())
        remote = await b.live.running(chat_id)  # a page on B follows the turn
        assert isinstance(remote, RemoteTurn)
        on_b = asyncio.create_task(read_all(remote.subscribe("en")))
        await until(lambda: remote.view.last_seq == before.view.last_seq)
        published = before.view.last_seq
        await die(a, before)

        # B's follower notices A is gone and takes the turn over: resumed, not ended.
        await until(lambda: b.sessions.get(before.message_id) is not None)
        session = b.sessions.get(before.message_id)
        assert session is not None and session.pauses is not None
        assert not session.done and [p.call_id for p in session.view.waiting()] == ["c1"]
        holder = await lease_holder(b.cluster.redis, config.lease(chat_id))
        assert holder is not None and (holder.worker, holder.message_id) == (
            "worker-b",
            before.message_id,
        )
        # What A streamed is in the log now, as it was shown.
        assert labels(stored(engine, before.message_id)) == labels(before.view)
        assert stored(engine, before.message_id).last_seq == published
        # A page opening the turn on B sees the same card waiting.
        opened = await shown_on_open(session)
        assert opened["approval:c1"]["state"] == "waiting"  # type: ignore[index]
        assert (await b.live.running(chat_id)) is session

        # The approval from B's page goes over the control channel, as from any tab.
        await until(lambda: "c1" in session.pauses.waiting)  # type: ignore[union-attr]
        assert (await live.decide(remote, "c1", decision_from("once"))).ok
        await asyncio.wait_for(session.wait(), 10)
        await asyncio.wait_for(remote.wait(), 10)

        assert not (tmp_path / "notes.txt").exists()
        events = load_events(engine, before.message_id)
        assert len([e for e in events if isinstance(e, ApprovalRequested)]) == 1  # asked once
        view = stored(engine, before.message_id)
        assert (view.stop_reason, view.error) == ("end_turn", None)
        c1 = view.call("c1")
        assert c1 is not None and c1.state == "settled"
        # The page on B followed it all without a gap: what it holds is the stored turn.
        assert remote.status == "complete" and labels(remote.view) == labels(view)
        assert await page_store(await on_b) == await page_store(
            await read_all(session.subscribe("en"))
        )
        assert conv.messages(engine, chat_id)[-1].status == "complete"
        assert not b.cluster.owned_turns
        # The model read the approved call and its result.
        (resumed,) = then.requests
        assert resumed.messages[-1]["tool_call_id"] == "c1"


async def test_a_question_waiting_when_its_worker_stops_is_answered_on_another(
    engine: Engine, config: ClusterConfig, tmp_path: Path
) -> None:
    first = ScriptedProvider([*call("q1", "ask_user_question", QUESTION), end("tool_use")])
    then = ScriptedProvider([end()])
    async with loop_workers(engine, config, tmp_path, first, then) as (a, b):
        chat_id = new_chat(engine)
        before = await a.sessions.start(TurnRequest(chat_id, "tidy the notes", "demo", "m"))
        await until(lambda: before.view.waiting())
        remote = await b.live.running(chat_id)
        assert isinstance(remote, RemoteTurn)
        # A stops cleanly (a deploy): the waiting turn is left to be resumed, not ended.
        await a.sessions.aclose()
        await a.cluster.aclose()
        assert not stored(engine, before.message_id).done

        await until(lambda: b.sessions.get(before.message_id) is not None)
        session = b.sessions.get(before.message_id)
        assert session is not None and session.pauses is not None
        await until(lambda: "q1" in session.pauses.waiting)  # type: ignore[union-attr]
        assert (await live.answer(session, "q1", "the old ones")).ok
        await asyncio.wait_for(session.wait(), 10)
        await asyncio.wait_for(remote.wait(), 10)
        events = load_events(engine, before.message_id)
        assert len([e for e in events if isinstance(e, QuestionAsked)]) == 1
        assert stored(engine, before.message_id).stop_reason == "end_turn"
        assert remote.status == "complete"
        (resumed,) = then.requests
        assert resumed.messages[-1]["content"] == "the old ones"
