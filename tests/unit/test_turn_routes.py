"""The turn routes under /_iu/: a turn's stream (live from its feed, or from its log),
snapshots and call details, each only with a token for that conversation, readable
from the app's page on another port (CORS)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from intent_ui.agent.providers.sse import ServerSentEvent
from intent_ui.agent.session import TurnRequest, TurnSession
from intent_ui.config import AppConfig
from intent_ui.core.cards import call_detail
from intent_ui.core.patches import END_EVENT, Frame, TurnPatcher, apply_ops, frame_order
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store import users
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import load_events
from intent_ui.ui import origin_guard, turn_routes
from intent_ui.ui.host import Host
from intent_ui.ui.origin_guard import OriginGuard
from intent_ui.ui.stream_tokens import mint_owner_token, mint_share_token
from intent_ui.ui.turn_routes import TurnRoutes
from tests.support.scripted_runtime import ScriptedRuntime, recorded_turn, settle
from tests.support.store import record_turn
from tests.support.wire import decode_sse

PAGE = "http://localhost:3000"
CONFIG = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})


class Reflex:
    """Stands in for Reflex's app: records the paths that reached it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"reflex"})


@pytest.fixture
def runtime() -> ScriptedRuntime:
    return ScriptedRuntime()


@pytest.fixture
def host(serve_host: Callable[..., Host], runtime: ScriptedRuntime) -> Host:
    return serve_host(CONFIG, runtime)


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


@pytest.fixture
def other_chat(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


def _events_of_recorded_turn() -> list[Any]:
    makes = [make for burst in recorded_turn() for make in burst]
    return [make(seq) for seq, make in enumerate(makes, start=1)]


def stored_turn(engine: Engine, chat_id: str) -> str:
    """A finished turn of the conversation, as a session stores it."""
    conv.add_user_message(engine, chat_id, "find oauth")
    message_id = conv.start_assistant_message(engine, chat_id)
    record_turn(engine, message_id, _events_of_recorded_turn())
    return message_id


def owner_token(host: Host, chat_id: str, user: str = LOCAL_USER_ID) -> str:
    return mint_owner_token(host.config.auth, user, chat_id, None)


def route_path(route: str, message_id: str) -> str:
    """The address of one of the turn routes for the turn `message_id` (its call `c1`)."""
    return {
        "stream": f"/_iu/turns/{message_id}/stream",
        "snapshots": "/_iu/turns",
        "detail": f"/_iu/turns/{message_id}/calls/c1",
    }[route]


def client(app: Any = None) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app or TurnRoutes(Reflex()))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000")


def snapshot_of(engine: Engine, message_id: str, lang: str = "en") -> Frame:
    view = TurnView.replay(load_events(engine, message_id))
    return Frame(str(view.last_seq), TurnPatcher(message_id, lang).snapshot(view))


def ops_of(events: list[ServerSentEvent]) -> list[list[Any]]:
    return [json.loads(event.data)["ops"] for event in events if event.event == "message"]


def store_of(ops_lists: list[list[Any]]) -> dict[str, object]:
    """A page's store after `ops_lists` (raises on a gap or a repeat)."""
    store: dict[str, object] = {}
    lengths: dict[str, int] = {}
    for ops in ops_lists:
        apply_ops(store, ops, lengths)
    store.pop("announce", None)
    return store


class Stream:
    """One request to the routes, read chunk by chunk as the server writes them (httpx's
    ASGI transport hands out a body only once it is complete)."""

    def __init__(self, app: Any, path: str, headers: dict[str, str] | None = None) -> None:
        target, _, query = path.partition("?")
        self.scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": target,
            "raw_path": target.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.gone = asyncio.Event()
        self._requested = False
        self.task = asyncio.create_task(app(self.scope, self._receive, self._send))

    async def _receive(self) -> dict[str, Any]:
        if not self._requested:
            self._requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        await self.messages.put(message)

    async def start(self) -> dict[str, Any]:
        return await self.messages.get()

    async def chunk(self) -> bytes:
        message = await self.messages.get()
        return bytes(message.get("body", b""))

    async def rest(self) -> bytes:
        out = []
        while True:
            message = await self.messages.get()
            out.append(bytes(message.get("body", b"")))
            if not message.get("more_body"):
                await self.task
                return b"".join(out)


async def running_turn(
    host: Host, runtime: ScriptedRuntime, chat_id: str, played: int = 0
) -> TurnSession:
    """A turn started on `host`, its run (`runtime`'s latest) through the first `played`
    bursts of `recorded_turn()`, each published."""
    session = await host.sessions.start(TurnRequest(chat_id, "find oauth", "demo", "demo"))
    for burst in recorded_turn()[:played]:
        runtime.runs[-1].send(burst)
        await settle()
    return session


# --- streams ------------------------------------------------------------------------------


async def test_a_stored_turn_streams_as_one_snapshot_then_end(
    host: Host, engine: Engine, chat_id: str
) -> None:
    message_id = stored_turn(engine, chat_id)
    async with client() as http:
        response = await http.get(
            f"/_iu/turns/{message_id}/stream",
            params={"token": owner_token(host, chat_id), "lang": "en"},
            headers={"Last-Event-ID": "3"},  # a finished turn is sent whole whatever it held
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-store"
    frame = snapshot_of(engine, message_id)
    assert response.content == b"retry: 500\n\n" + frame.wire(message_id) + END_EVENT
    first = response.content.split(b"\n\n")[1].split(b"\n")
    assert first[0] == f"id: {frame.id}".encode()
    assert json.loads(first[1].removeprefix(b"data: ")) == {"m": message_id, "ops": frame.ops}


async def test_a_running_turn_streams_from_the_last_event_id(
    host: Host, runtime: ScriptedRuntime, engine: Engine, chat_id: str
) -> None:
    session = await running_turn(host, runtime, chat_id)
    run = runtime.runs[0]
    feed = session.feed("en")
    initial = feed.snapshot()
    bursts = recorded_turn()
    for burst in bursts[:5]:
        run.send(burst)
        await settle()
    frames = feed.frames_after("0") or []
    held = frames[1].id
    token = owner_token(host, chat_id)
    stream = Stream(
        TurnRoutes(Reflex()),
        f"/_iu/turns/{session.message_id}/stream?token={token}&lang=en&from=1",
        {"Last-Event-ID": held},  # the header EventSource sends wins over `from`
    )
    start = await stream.start()
    assert start["status"] == 200
    assert await stream.chunk() == b"retry: 500\n\n"
    caught_up = await decode_sse([await stream.chunk()])
    assert [event.id for event in caught_up] == [frame.id for frame in frames[2:]]
    for burst in bursts[5:]:
        run.send(burst)
        await settle()
    events = caught_up + await decode_sse([await stream.rest()])
    assert events[-1].event == "end"
    orders = [frame_order(event.id) for event in events if event.event == "message"]
    assert orders == sorted(set(orders))
    await session.wait()
    # The frames it missed and the live ones complete what it held at `held`.
    page = [initial.ops, *(frame.ops for frame in frames[:2]), *ops_of(events)]
    assert store_of(page) == store_of([snapshot_of(engine, session.message_id).ops])


async def test_a_stream_stops_when_the_page_goes_away(
    host: Host, runtime: ScriptedRuntime, chat_id: str
) -> None:
    session = await running_turn(host, runtime, chat_id)
    token = owner_token(host, chat_id)
    stream = Stream(TurnRoutes(Reflex()), f"/_iu/turns/{session.message_id}/stream?token={token}")
    await stream.start()
    await stream.chunk()  # retry
    await stream.chunk()  # the snapshot
    stream.gone.set()
    await stream.task  # returns although the turn still runs
    assert not session.done
    session.stop()
    runtime.runs[0].close()
    await session.wait()


async def test_a_quiet_stream_is_kept_alive(
    host: Host, runtime: ScriptedRuntime, chat_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_routes, "KEEPALIVE_S", 0.01)
    session = await running_turn(host, runtime, chat_id)
    token = owner_token(host, chat_id)
    stream = Stream(TurnRoutes(Reflex()), f"/_iu/turns/{session.message_id}/stream?token={token}")
    await stream.start()
    await stream.chunk()
    await stream.chunk()
    assert await stream.chunk() == b": ka\n\n"
    runtime.runs[0].close()
    assert (await stream.rest()).endswith(END_EVENT)


# --- tokens ---------------------------------------------------------------------------


def _expired(host: Host, chat_id: str, monkeypatch: pytest.MonkeyPatch) -> str:
    real = time.time()
    with monkeypatch.context() as patch:
        patch.setattr(time, "time", lambda: real - 16 * 60)
        return owner_token(host, chat_id)


def _other_secret(host: Host, chat_id: str, monkeypatch: pytest.MonkeyPatch) -> str:
    auth = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo"}], "auth": {"mode": "password", "secret": "x" * 32}}
    ).auth
    return mint_owner_token(auth, LOCAL_USER_ID, chat_id, None)


TOKENS: dict[str, tuple[Callable[[Host, str, pytest.MonkeyPatch], str], int]] = {
    "missing": (lambda host, chat, mp: "", 401),
    "garbage": (lambda host, chat, mp: "not-a-token", 401),
    "tampered": (lambda host, chat, mp: owner_token(host, chat)[:-2] + "xx", 401),
    "another secret": (_other_secret, 401),
    "expired": (_expired, 401),
    "another user's conversation": (lambda host, chat, mp: owner_token(host, chat, "bob"), 404),
    "an unshared link": (lambda host, chat, mp: mint_share_token(host.config.auth, "s1"), 401),
}


@pytest.mark.parametrize("case", list(TOKENS))
@pytest.mark.parametrize("route", ["stream", "snapshots", "detail"])
async def test_a_token_that_does_not_grant_the_turn_is_refused(
    host: Host,
    engine: Engine,
    chat_id: str,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    route: str,
) -> None:
    message_id = stored_turn(engine, chat_id)
    make, status = TOKENS[case]
    token = make(host, chat_id, monkeypatch)
    async with client() as http:
        response = await http.get(
            route_path(route, message_id), params={"token": token, "ids": message_id}
        )
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]


@pytest.mark.parametrize("route", ["stream", "snapshots", "detail"])
async def test_a_turn_of_another_conversation_is_not_found(
    host: Host, engine: Engine, chat_id: str, other_chat: str, route: str
) -> None:
    elsewhere = stored_turn(engine, other_chat)
    params = {"token": owner_token(host, chat_id), "ids": elsewhere}
    async with client() as http:
        response = await http.get(route_path(route, elsewhere), params=params)
    assert response.status_code == 404
    assert elsewhere in response.json()["error"]


async def test_a_conversation_that_is_gone_is_not_found(
    host: Host, engine: Engine, chat_id: str
) -> None:
    message_id = stored_turn(engine, chat_id)
    token = owner_token(host, chat_id)
    conv.delete_conversation(engine, chat_id, owner=LOCAL_USER_ID)
    async with client() as http:
        response = await http.get(f"/_iu/turns/{message_id}/stream", params={"token": token})
    assert response.status_code == 404


# --- snapshots and details --------------------------------------------------------------


async def test_snapshots_of_stored_and_running_turns(
    host: Host, runtime: ScriptedRuntime, engine: Engine, chat_id: str
) -> None:
    stored = stored_turn(engine, chat_id)
    session = await running_turn(host, runtime, chat_id, played=4)
    async with client() as http:
        response = await http.get(
            "/_iu/turns",
            params={
                "ids": f"{stored},{session.message_id}",
                "token": owner_token(host, chat_id),
                "lang": "es",
            },
        )
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    live = session.feed("es").snapshot()
    frame = snapshot_of(engine, stored, "es")
    assert response.json() == {
        "turns": {
            stored: {"id": frame.id, "ops": json.loads(json.dumps(frame.ops))},
            session.message_id: {"id": live.id, "ops": json.loads(json.dumps(live.ops))},
        }
    }
    assert live.ops[0] == ["reset"] and live.id == session.feed("es").last_id
    runtime.runs[0].close()
    await session.wait()


async def test_snapshot_requests_say_which_turns(host: Host, engine: Engine, chat_id: str) -> None:
    message_id = stored_turn(engine, chat_id)
    token = owner_token(host, chat_id)
    many = ",".join(f"m{i}" for i in range(501))
    async with client() as http:
        unsaid = await http.get("/_iu/turns", params={"token": token})
        none = await http.get("/_iu/turns", params={"ids": "", "token": token})
        repeated = await http.get(
            "/_iu/turns", params={"ids": f"{message_id},{message_id}", "token": token}
        )
        too_many = await http.get("/_iu/turns", params={"ids": many, "token": token})
    assert unsaid.status_code == 400 and unsaid.json()["error"]
    assert none.json() == {"turns": {}}
    assert list(repeated.json()["turns"]) == [message_id]
    assert too_many.status_code == 400 and "500" in too_many.json()["error"]


async def test_the_detail_of_a_call(host: Host, engine: Engine, chat_id: str) -> None:
    message_id = stored_turn(engine, chat_id)
    view = TurnView.replay(load_events(engine, message_id))
    token = owner_token(host, chat_id)
    async with client() as http:
        failed = await http.get(f"/_iu/turns/{message_id}/calls/c2", params={"token": token})
        unknown = await http.get(f"/_iu/turns/{message_id}/calls/nope", params={"token": token})
    assert failed.status_code == 200
    assert failed.json() == call_detail(view, "c2", "en")
    assert failed.json()["result"] == "No such file: router.py"
    assert '"path": "router.py"' in failed.json()["arguments"]
    assert unknown.status_code == 404 and unknown.json()["error"]


async def test_the_detail_names_the_turns_trace_when_traces_are_on(
    host: Host, engine: Engine, chat_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message_id = stored_turn(engine, chat_id)
    token = owner_token(host, chat_id)
    path = f"/_iu/turns/{message_id}/calls/c2"
    async with client() as http:
        untraced = await http.get(path, params={"token": token})
        monkeypatch.setattr(host.sessions, "_tracing", object())
        traced = await http.get(path, params={"token": token})
    assert "trace_id" not in untraced.json()
    assert traced.json()["trace_id"] == message_id


async def test_the_detail_of_a_running_call(
    host: Host, runtime: ScriptedRuntime, chat_id: str
) -> None:
    session = await running_turn(host, runtime, chat_id, played=4)
    async with client() as http:
        response = await http.get(
            f"/_iu/turns/{session.message_id}/calls/c1",
            params={"token": owner_token(host, chat_id)},
        )
    assert response.json() == call_detail(session.view, "c1", "en")
    assert response.json()["result"] == ""
    runtime.runs[0].close()
    await session.wait()


# --- share links ------------------------------------------------------------------------


async def test_a_share_link_reads_the_turns_but_no_details_and_ends_when_revoked(
    host: Host,
    runtime: ScriptedRuntime,
    engine: Engine,
    chat_id: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared = {"s1": chat_id}
    monkeypatch.setattr(turn_routes, "resolve_share", lambda host, share_id: shared.get(share_id))
    monkeypatch.setattr(turn_routes, "SHARE_RECHECK_S", 0.01)
    stored = stored_turn(engine, chat_id)
    token = mint_share_token(host.config.auth, "s1")
    async with client() as http:
        snapshots = await http.get("/_iu/turns", params={"ids": stored, "token": token})
        detail = await http.get(f"/_iu/turns/{stored}/calls/c1", params={"token": token})
    assert snapshots.status_code == 200 and stored in snapshots.json()["turns"]
    assert detail.status_code == 403 and detail.json()["error"]

    session = await running_turn(host, runtime, chat_id)
    stream = Stream(TurnRoutes(Reflex()), f"/_iu/turns/{session.message_id}/stream?token={token}")
    assert (await stream.start())["status"] == 200
    await stream.chunk()
    await stream.chunk()
    del shared["s1"]
    assert (await stream.rest()).endswith(b"event: revoked\ndata: {}\n\n")
    runtime.runs[0].close()
    await session.wait()


# --- mounting and CORS ----------------------------------------------------------------------


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> tuple[OriginGuard, Reflex]:
    """The backend as `GuardedApp` builds it, with the frontend on port 3000."""
    config = SimpleNamespace(deploy_url=f"{PAGE}/", frontend_port=3000)
    monkeypatch.setattr(origin_guard, "get_config", lambda: config)
    reflex = Reflex()
    return OriginGuard(TurnRoutes(reflex), ()), reflex


async def test_the_apps_page_reads_the_routes_across_ports(
    guarded: tuple[OriginGuard, Reflex], host: Host, engine: Engine, chat_id: str
) -> None:
    app, reflex = guarded
    message_id = stored_turn(engine, chat_id)
    token = owner_token(host, chat_id)
    async with client(app) as http:
        read = await http.get(
            f"/_iu/turns?ids={message_id}&token={token}", headers={"Origin": PAGE}
        )
        refused = await http.get("/_iu/turns?ids=x&token=bad", headers={"Origin": PAGE})
        bare = await http.get(f"/_iu/turns?ids={message_id}&token={token}")
        preflight = await http.options(
            f"/_iu/turns/{message_id}/stream",
            headers={
                "Origin": PAGE,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "last-event-id",
            },
        )
        foreign = await http.get(
            f"/_iu/turns?ids={message_id}&token={token}", headers={"Origin": "https://evil.example"}
        )
        page = await http.get("/ping", headers={"Origin": PAGE})
    for response in (read, refused):
        assert response.headers["access-control-allow-origin"] == PAGE
        assert response.headers["vary"] == "Origin"
        assert "access-control-allow-credentials" not in response.headers
    assert read.status_code == 200 and refused.status_code == 401
    assert "access-control-allow-origin" not in bare.headers
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == PAGE
    assert "GET" in preflight.headers["access-control-allow-methods"]
    assert "last-event-id" in preflight.headers["access-control-allow-headers"].lower()
    assert foreign.status_code == 403
    assert page.content == b"reflex" and reflex.paths == ["/ping"]


async def test_anything_else_under_the_prefix_is_a_json_error(host: Host) -> None:
    async with client() as http:
        missing = await http.get("/_iu/nothing")
        wrong_method = await http.post("/_iu/turns")
    assert missing.status_code == 404 and missing.json()["error"]
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]


async def test_signing_out_everywhere_refuses_the_tokens_pages_already_hold(
    serve_host: Callable[..., Host], runtime: ScriptedRuntime, engine: Engine
) -> None:
    """A token is worth what the sign-in that got it is worth: "sign out everywhere" (or
    a new password) ends it too, not 15 minutes later."""
    config = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo"}], "auth": {"mode": "password", "secret": "x" * 32}}
    )
    serve_host(config, runtime)
    alice = users.add_user(engine, "alice", "a long enough password")
    chat = conv.create_conversation(engine, owner=alice.id, endpoint="demo", model="demo").id
    message_id = stored_turn(engine, chat)
    token = mint_owner_token(config.auth, alice.id, chat, users.session_epoch(engine, alice.id))
    path = route_path("snapshots", message_id)
    async with client() as http:
        assert (await http.get(path, params={"token": token, "ids": message_id})).status_code == 200
        users.end_sign_ins(engine, alice.id)
        refused = await http.get(path, params={"token": token, "ids": message_id})
    assert refused.status_code == 401
    assert "sign in again" in refused.json()["error"]
