"""A page served by one worker reads a turn another worker runs: the stream route, the
snapshots and a card's detail answer from the follower there (`host.live`), as they
answer from a session of their own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable

import httpx
import pytest
from sqlalchemy import Engine

from intent_ui.agent.cluster import Cluster, ClusterConfig
from intent_ui.agent.session import TurnRequest
from intent_ui.core.patches import apply_ops
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui import host as host_module
from intent_ui.ui.host import Host
from intent_ui.ui.stream_tokens import mint_owner_token
from intent_ui.ui.turn_routes import TurnRoutes
from tests.support.cluster import (
    APP_CONFIG,
    Worker,
    until,
    workers,
)
from tests.support.scripted_runtime import Make, ScriptedRuntime, recorded_turn, settle
from tests.support.wire import decode_sse


@pytest.fixture
async def worker_a(engine: Engine, cluster_config: ClusterConfig) -> AsyncIterator[Worker]:
    async with workers(engine, cluster_config, "worker-a") as made:
        yield made[0]


@pytest.fixture
async def host_b(
    engine: Engine, cluster_config: ClusterConfig, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Host]:
    """The host of the worker serving the page: a cluster of its own on the same Redis."""
    cluster = Cluster(cluster_config, engine, worker_id="worker-b")
    host = Host(config=APP_CONFIG, engine=engine, runtime=ScriptedRuntime(), cluster=cluster)  # type: ignore[arg-type]
    await cluster.start(host.sessions, sweep=False)
    monkeypatch.setattr(host_module, "_host", host)
    yield host
    await host.sessions.aclose()
    await cluster.aclose()


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


def client() -> httpx.AsyncClient:
    async def reflex(scope: object, receive: object, send: object) -> None:
        raise AssertionError("not a turn route")

    transport = httpx.ASGITransport(app=TurnRoutes(reflex))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")


async def play(worker: Worker, bursts: Iterable[Iterable[Make]]) -> None:
    for burst in bursts:
        worker.run().send(burst)
        await settle()


async def test_a_page_on_another_worker_streams_the_turn_live(
    worker_a: Worker, host_b: Host, chat_id: str
) -> None:
    bursts = recorded_turn()
    session = await worker_a.sessions.start(TurnRequest(chat_id, "find oauth", "demo", "demo"))
    await play(worker_a, bursts[:5])
    token = mint_owner_token(host_b.config.auth, LOCAL_USER_ID, chat_id, None)
    params = {"token": token, "lang": "en"}
    async with client() as http:
        # The page opens the conversation: every turn's snapshot, the live one's from
        # the follower's feed, so the stream can follow on from its id.
        listed = await http.get("/_iu/turns", params={**params, "ids": session.message_id})
        snapshot = listed.json()["turns"][session.message_id]
        remote = await host_b.live.get(session.message_id)
        assert remote is not None and remote is not session
        assert snapshot["id"] == remote.feed("en").last_id
        streaming = asyncio.create_task(
            http.get(
                f"/_iu/turns/{session.message_id}/stream",
                params=params,
                headers={"Last-Event-ID": snapshot["id"]},
            )
        )
        await play(worker_a, bursts[5:])
        response = await streaming
        await session.wait()
        detail = await http.get(f"/_iu/turns/{session.message_id}/calls/c1", params=params)
    assert response.status_code == 200
    events = await decode_sse([response.content])
    assert events[-1].event == "end"
    page: dict[str, object] = {}
    lengths: dict[str, int] = {}
    apply_ops(page, snapshot["ops"], lengths)
    for event in events:
        if event.event == "message":
            apply_ops(page, json.loads(event.data)["ops"], lengths)
    page.pop("announce", None)
    own: dict[str, object] = {}
    apply_ops(own, session.feed("en").snapshot().ops)
    assert page == own
    assert detail.status_code == 200 and "Searching for OAuth" in json.dumps(detail.json())


async def test_the_conversation_lists_another_workers_turn_as_running(
    worker_a: Worker, host_b: Host, chat_id: str
) -> None:
    session = await worker_a.sessions.start(TurnRequest(chat_id, "find oauth", "demo", "demo"))
    await play(worker_a, recorded_turn()[:3])
    found = await host_b.live.running(chat_id)
    assert found is not None and found.message_id == session.message_id
    assert await host_b.live.latest(chat_id) is found
    worker_a.run().close()  # the run ends without an end: the session writes one
    await found.wait()
    await until(lambda: host_b.cluster is not None and not host_b.cluster.following(chat_id))
    assert await host_b.live.running(chat_id) is None
    assert found.status == "error"
