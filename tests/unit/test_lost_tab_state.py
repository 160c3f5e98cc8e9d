"""A tab whose UI state was lost (with several workers it lives in Redis, which may restart
empty) shows its conversation again on its own. Reflex gives the tab's next event a new
state and runs the page's load first, but without what the browser stores: the chat
state asks the browser for the conversation it remembers and opens it, and a tab whose
state lost its sign-in cookie loads again instead of being sent to the sign-in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.config import AppConfig, AuthConfig
from intent_ui.store import conversations as conv_store
from intent_ui.store import users as user_store
from intent_ui.ui.auth import LOGIN_ROUTE, sign_in_token
from intent_ui.ui.chat_state import STORED_CONVERSATION_KEY, ChatState
from intent_ui.ui.host import Host
from tests.support.sign_in import sign_in_as


@pytest.fixture
def alice(
    serve_host: Callable[..., Host],
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    serve_host(AppConfig.model_validate({"endpoints": [{"kind": "demo"}], "workspace": tmp_path}))
    user = user_store.ensure_user(engine, "alice")
    sign_in_as(monkeypatch, user.id)
    return user.id


def new_chat(engine: Engine, owner: str, said: str) -> str:
    chat = conv_store.create_conversation(engine, owner=owner, endpoint="demo", model="demo")
    conv_store.add_user_message(engine, chat.id, said)
    return chat.id


def asks_the_browser(events: list[Any]) -> bool:
    """Whether the page's load asks the browser which conversation it remembers."""
    return any(STORED_CONVERSATION_KEY in str(event) for event in events)


async def test_a_tab_whose_state_was_lost_opens_the_conversation_it_showed_again(
    alice: str, engine: Engine
) -> None:
    chat_id = new_chat(engine, alice, "where is oauth handled?")
    shown = ChatState()
    shown.stored_conversation = chat_id  # what the browser's first load gives the state
    assert not asks_the_browser(await ChatState.load_page.fn(shown))
    assert shown.conversation_id == chat_id
    assert [m.text for m in shown.messages] == ["where is oauth handled?"]

    # Redis restarted empty: the tab's next event finds a state that knows nothing.
    lost = ChatState()
    events = await ChatState.load_page.fn(lost)
    assert lost.conversation_id == "" and lost.messages == []  # the empty chat it was
    assert asks_the_browser(events)
    # The browser answers with what it remembers for the tab.
    await ChatState.open_remembered.fn(lost, chat_id)
    assert lost.conversation_id == chat_id
    assert lost.messages == shown.messages
    assert lost.stream_token  # its turns can be read again


async def test_a_browser_that_remembers_no_conversation_is_asked_once_and_opens_none(
    alice: str, engine: Engine
) -> None:
    someone_elses = new_chat(engine, "bob", "bob's secret")
    fresh = ChatState()
    assert asks_the_browser(await ChatState.load_page.fn(fresh))
    await ChatState.open_remembered.fn(fresh, "")
    assert fresh.conversation_id == ""
    assert not asks_the_browser(await ChatState.load_page.fn(fresh))  # once per state
    # An id the browser sends is the user's only if the store says so.
    await ChatState.open_remembered.fn(fresh, someone_elses)
    assert fresh.conversation_id == "" and fresh.messages == []


async def test_a_conversation_opened_meanwhile_is_not_replaced_by_the_remembered_one(
    alice: str, engine: Engine
) -> None:
    remembered = new_chat(engine, alice, "the older chat")
    opened = new_chat(engine, alice, "the one clicked")
    lost = ChatState()
    await ChatState.load_page.fn(lost)
    # The event that found the state lost was a click on another conversation.
    await ChatState.select_chat.fn(lost, opened)
    await ChatState.open_remembered.fn(lost, remembered)
    assert lost.conversation_id == opened


@pytest.fixture
def password_host(
    serve_host: Callable[..., Host], engine: Engine, tmp_path: Path
) -> tuple[Host, str]:
    """A host of password sign-ins, and the sign-in cookie of alice's browser."""
    auth = AuthConfig(mode="password", secret="s" * 40)
    config = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo"}], "workspace": tmp_path, "auth": auth.model_dump()}
    )
    alice = user_store.add_user(engine, "alice", "correct horse battery")
    return serve_host(config), sign_in_token(auth, alice)


def script_of(event: Any) -> str:
    """What a handler's returned event does in the page, as text."""
    return str(event)


async def test_a_signed_in_tab_whose_state_was_lost_loads_again_rather_than_signing_in(
    password_host: tuple[Host, str],
) -> None:
    _, cookie = password_host
    lost = ChatState()  # the cookie the browser holds is not in it
    asked = await ChatState.load_page.fn(lost)
    assert "document.cookie" in script_of(asked) and LOGIN_ROUTE not in script_of(asked)
    # The browser holds one: the page loads again, which gives the state its storage.
    assert "reload" in script_of(await ChatState.recover_sign_in.fn(lost, True))
    lost.sign_in_cookie = cookie
    await ChatState.load_page.fn(lost)
    assert lost.signed_in_as == "alice" and lost.endpoints == ["demo"]


async def test_a_browser_without_a_sign_in_goes_to_the_sign_in_after_one_question(
    password_host: tuple[Host, str],
) -> None:
    fresh = ChatState()
    assert "document.cookie" in script_of(await ChatState.load_page.fn(fresh))
    assert LOGIN_ROUTE in script_of(await ChatState.recover_sign_in.fn(fresh, False))
    # Asked once: the next load of the same tab goes to the sign-in at once.
    assert LOGIN_ROUTE in script_of(await ChatState.load_page.fn(fresh))
