"""ChatState's pickers accept only what the server offers: configured endpoints, the
chosen endpoint's models, and the agents the user may see."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.config import AppConfig
from intent_ui.store import agents as agent_store
from intent_ui.ui import state as chat_module
from intent_ui.ui.host import Host
from intent_ui.ui.state import ChatState


@pytest.fixture
def state(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ChatState:
    config = AppConfig.model_validate(
        {
            "endpoints": [
                {"kind": "demo"},
                {"kind": "openai", "api_key": "k", "models": ["gpt-a", "gpt-b"]},
            ],
            "workspace": tmp_path,
        }
    )
    host = Host(key=("", ""), config=config, engine=engine, runtime=None)  # type: ignore[arg-type]

    async def get_host() -> Host:
        return host

    async def current_user(self: Any, host: Host) -> str:
        return "bob"

    monkeypatch.setattr(chat_module, "get_host", get_host)
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
