"""ChatState's pickers accept only what the server offers: configured endpoints, the
chosen endpoint's models, and the agents the user may see."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine

from intent_ui.agent.pauses import Verdict, decision_from
from intent_ui.agent.session import TurnRequest
from intent_ui.config import AppConfig
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as user_store
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.host import Host, get_host
from tests.support.scripted_runtime import ScriptedRuntime
from tests.support.sign_in import chat_page, sign_in_as


@pytest.fixture
def state(
    serve_host: Callable[..., Host], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ChatState:
    config = AppConfig.model_validate(
        {
            "endpoints": [
                {"kind": "demo"},
                {"kind": "openai", "api_key": "k", "models": ["gpt-a", "gpt-b"]},
            ],
            "workspace": tmp_path,
        }
    )
    return chat_page(monkeypatch, serve_host(config), "bob")


async def test_set_endpoint_accepts_only_configured_endpoints(state: ChatState) -> None:
    await ChatState.set_endpoint.fn(state, "evil")
    assert (state.endpoint, state.models) == ("demo", ["demo"])
    await ChatState.set_endpoint.fn(state, "openai")
    assert (state.endpoint, state.model) == ("openai", "gpt-a")


async def test_set_model_accepts_only_the_endpoints_models(state: ChatState) -> None:
    await ChatState.set_endpoint.fn(state, "openai")
    ChatState.set_model.fn(state, "demo")  # another endpoint's model
    assert state.model == "gpt-a"
    ChatState.set_model.fn(state, "gpt-b")
    assert state.model == "gpt-b"


async def test_set_agent_accepts_only_agents_the_user_may_see(
    state: ChatState, engine: Engine
) -> None:
    private = agent_store.create_agent(engine, owner="alice", name="Private")
    shared = agent_store.create_agent(engine, owner="alice", name="Shared", shared=True)
    await ChatState.set_agent.fn(state, private.id)
    assert state.agent_id == "default"
    await ChatState.set_agent.fn(state, shared.id)
    assert state.agent_id == shared.id


@pytest.fixture
def alice(state: ChatState, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> str:
    """A signed-in user with a row (the density is stored on it)."""
    user = user_store.ensure_user(engine, "alice")
    sign_in_as(monkeypatch, user.id)
    return user.id


async def test_a_user_who_never_chose_a_density_reads_the_full_cards(alice: str) -> None:
    fresh = ChatState()
    fresh._load_pickers(await get_host(), alice)
    assert fresh.density == "full"


# The density and the theme are one kind of per-user choice (`core.choices.Choice`): one
# test, run for each.
CHOICES = pytest.mark.parametrize(
    ("choice", "stored", "picked", "unknown"),
    [
        ("density", user_store.user_density, "intents", "tiny"),
        ("theme", user_store.user_theme, "dark", "sepia"),
    ],
    ids=["density", "theme"],
)


@CHOICES
async def test_a_choice_accepts_only_its_values_and_is_remembered(
    state: ChatState,
    engine: Engine,
    alice: str,
    choice: str,
    stored: Callable[[Engine, str], str],
    picked: str,
    unknown: str,
) -> None:
    choose = getattr(ChatState, f"set_{choice}").fn
    await choose(state, picked)
    assert getattr(state, choice) == picked
    assert stored(engine, alice) == picked
    await choose(state, unknown)
    assert getattr(state, choice) == picked
    assert stored(engine, alice) == picked
    fresh = ChatState()
    fresh._load_pickers(await get_host(), alice)
    assert getattr(fresh, choice) == picked


async def test_the_theme_is_unknown_until_the_page_loads_the_users_own(alice: str) -> None:
    fresh = ChatState()
    assert fresh.theme == ""  # the browser keeps the mode it remembers meanwhile
    fresh._load_pickers(await get_host(), alice)
    assert fresh.theme == "system"


async def test_search_chats_filters_the_users_own_list_until_cleared(
    state: ChatState, engine: Engine
) -> None:
    def chat(owner: str, title: str, text: str) -> str:
        made = conv_store.create_conversation(
            engine, owner=owner, endpoint="demo", model="demo", title=title
        )
        conv_store.add_user_message(engine, made.id, text)
        return made.id

    rotation = chat("bob", "Keys", "Plan the key rotation")
    chat("bob", "Lunch", "Where to eat")
    chat("alice", "Rotation too", "alice's rotation plan")
    await ChatState.search_chats.fn(state, "  ROTATION ")
    assert [c["id"] for c in state.conversations] == [rotation]
    # The list stays filtered when it is refreshed (a rename, a turn that ended).
    await ChatState.start_rename.fn(state, rotation)
    await ChatState.rename_chat.fn(state, {"title": "Key rotation"})
    assert [c["title"] for c in state.conversations] == ["Key rotation"]
    await ChatState.search_chats.fn(state, "")
    assert sorted(c["title"] for c in state.conversations) == ["Key rotation", "Lunch"]


async def test_only_the_owner_decides_and_answers_and_only_for_the_running_turn(
    serve_host: Callable[..., Host],
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}], "workspace": tmp_path})
    host = serve_host(config, ScriptedRuntime())
    chat = conv_store.create_conversation(engine, owner="bob", endpoint="demo", model="demo")
    session = await host.sessions.start(
        TurnRequest(str(chat.id), "delete it", "demo", "demo", user_id="bob")
    )
    assert session.pauses is not None
    taken: list[tuple[str, object]] = []

    def decide(call_id: str, decision: object) -> Verdict:
        taken.append((call_id, decision))
        return Verdict(True)

    def answer(call_id: str, text: str, by: str = "user") -> Verdict:
        taken.append((call_id, text))
        return Verdict(True)

    monkeypatch.setattr(session.pauses, "decide", decide)
    monkeypatch.setattr(session.pauses, "answer", answer)
    sign_in_as(monkeypatch, "mallory")
    state = ChatState()
    state.conversation_id = str(chat.id)
    # Someone else, on the same conversation id: nothing reaches the turn.
    await ChatState.decide_approval.fn(state, session.message_id, "c1", "once", "", "")
    await ChatState.answer_question.fn(state, session.message_id, "q1", "yes")
    assert taken == []
    sign_in_as(monkeypatch, "bob")
    await ChatState.decide_approval.fn(state, "another-message", "c1", "once", "", "")
    assert taken == []  # not the running turn
    await ChatState.decide_approval.fn(state, session.message_id, "c1", "deny", "no", "")
    await ChatState.answer_question.fn(state, session.message_id, "q1", "yes")
    assert taken == [("c1", decision_from("deny", "no")), ("q1", "yes")]
    session.stop()
    runtime = host.sessions.runtime
    runtime.runs[0].close()  # type: ignore[attr-defined]
    await session.wait()


async def test_a_send_before_the_page_loaded_starts_on_the_configured_endpoint(
    serve_host: Callable[..., Host],
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}], "workspace": tmp_path})
    host = serve_host(config, ScriptedRuntime())
    sign_in_as(monkeypatch, "bob")
    state = ChatState()  # no page load ran: no endpoint known yet
    await ChatState.send.fn(state, {"message": "list the files"})
    assert not state.error
    [row] = conv_store.list_conversations(engine, owner="bob")
    assert (row.endpoint, row.model) == ("demo", "demo")
    runtime = host.sessions.runtime
    runtime.runs[0].close()  # type: ignore[attr-defined]
