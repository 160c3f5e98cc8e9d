"""ChatState's pickers accept only what the server offers: configured endpoints, the
chosen endpoint's models, and the agents the user may see."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.config import AppConfig
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as user_store
from intent_ui.ui.host import Host, get_host
from intent_ui.ui.state import ChatState
from intent_ui.ui.viewmodels import compact_key


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
    host = serve_host(config)

    async def current_user(self: Any, host: Host) -> str:
        return "bob"

    monkeypatch.setattr(ChatState, "current_user", current_user)
    chat = ChatState()  # type: ignore[call-arg]
    chat._load_pickers(host, "bob")
    return chat


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

    async def current_user(self: Any, host: Host) -> str:
        return user.id

    monkeypatch.setattr(ChatState, "current_user", current_user)
    return user.id


async def test_a_user_who_never_chose_a_density_reads_the_full_cards(alice: str) -> None:
    fresh = ChatState()  # type: ignore[call-arg]
    fresh._load_pickers(await get_host(), alice)
    assert fresh.density == "full"


async def test_set_density_accepts_the_three_densities_and_remembers_them(
    state: ChatState, engine: Engine, alice: str
) -> None:
    await ChatState.set_density.fn(state, "intents")
    assert state.density == "intents"
    assert user_store.user_density(engine, alice) == "intents"
    await ChatState.set_density.fn(state, "tiny")
    assert state.density == "intents"
    assert user_store.user_density(engine, alice) == "intents"
    fresh = ChatState()  # type: ignore[call-arg]
    fresh._load_pickers(await get_host(), alice)
    assert fresh.density == "intents"


async def test_the_theme_is_unknown_until_the_page_loads_the_users_own(alice: str) -> None:
    fresh = ChatState()  # type: ignore[call-arg]
    assert fresh.theme == ""  # the browser keeps the mode it remembers meanwhile
    fresh._load_pickers(await get_host(), alice)
    assert fresh.theme == "system"


async def test_set_theme_accepts_the_three_themes_and_remembers_them(
    state: ChatState, engine: Engine, alice: str
) -> None:
    await ChatState.set_theme.fn(state, "dark")
    assert state.theme == "dark"
    assert user_store.user_theme(engine, alice) == "dark"
    await ChatState.set_theme.fn(state, "sepia")
    assert state.theme == "dark"
    assert user_store.user_theme(engine, alice) == "dark"
    fresh = ChatState()  # type: ignore[call-arg]
    fresh._load_pickers(await get_host(), alice)
    assert fresh.theme == "dark"


async def test_groups_toggle_per_density(state: ChatState, alice: str) -> None:
    await ChatState.toggle_group.fn(state, "m:0", True)
    assert state.group_open == {"m:0": False}
    await ChatState.set_density.fn(state, "header")
    await ChatState.toggle_group.fn(state, "m:0", False)
    assert state.group_open == {"m:0": False, compact_key("m:0"): True}
    await ChatState.set_density.fn(state, "intents")
    await ChatState.toggle_group.fn(state, "m:0", True)  # groups stay open there
    assert state.group_open == {"m:0": False, compact_key("m:0"): True}


async def test_open_card_opens_the_card_and_its_group_and_never_closes(state: ChatState) -> None:
    for _ in range(2):
        await ChatState.open_card.fn(state, "call_1", "m:0")
        assert state.expanded == ["call_1"]
        assert state.group_open == {"m:0": True, compact_key("m:0"): True}


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
