"""A conversation's read-only link from both sides: the owner's chat makes and revokes it;
the shared page shows the conversation while the link lives and nothing once it does not."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from intent_ui.store import conversations as conv_store
from intent_ui.store import shares as share_store
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.host import Host
from intent_ui.ui.shared_state import SharedState
from intent_ui.ui.stream_tokens import ShareGrant, read_stream_token
from tests.support.sign_in import chat_page


@pytest.fixture
def chat(demo_host: Host, monkeypatch: pytest.MonkeyPatch) -> ChatState:
    """bob's chat page."""
    return chat_page(monkeypatch, demo_host, "bob")


def _conversation(engine: Engine, owner: str, text: str) -> str:
    made = conv_store.create_conversation(engine, owner=owner, endpoint="demo", model="demo")
    conv_store.add_user_message(engine, made.id, text)
    return made.id


async def test_the_owner_shares_the_open_conversation_and_revokes_it(
    chat: ChatState, demo_host: Host, engine: Engine
) -> None:
    chat_id = _conversation(engine, "bob", "Plan the key rotation")
    await ChatState.select_chat.fn(chat, chat_id)
    assert chat.share_id == ""
    await ChatState.create_share.fn(chat)
    assert chat.share_id and share_store.find_share(engine, chat.share_id) == chat_id
    first = chat.share_id
    await ChatState.create_share.fn(chat)
    assert chat.share_id == first
    await ChatState.revoke_share.fn(chat)
    assert chat.share_id == ""
    assert share_store.find_share(engine, first) is None


async def test_opening_a_conversation_shows_its_live_link_and_leaving_forgets_it(
    chat: ChatState, demo_host: Host, engine: Engine
) -> None:
    shared = _conversation(engine, "bob", "shared one")
    private = _conversation(engine, "bob", "private one")
    link = share_store.create_share(engine, shared, owner="bob")
    await ChatState.select_chat.fn(chat, shared)
    assert chat.share_id == link
    await ChatState.select_chat.fn(chat, private)
    assert chat.share_id == ""
    await ChatState.select_chat.fn(chat, shared)
    await ChatState.new_chat.fn(chat)
    assert chat.share_id == ""


async def test_without_an_open_conversation_nothing_is_shared(
    chat: ChatState, engine: Engine
) -> None:
    await ChatState.create_share.fn(chat)
    assert chat.share_id == ""


async def test_another_users_conversation_cannot_be_shared_from_the_chat(
    chat: ChatState, engine: Engine
) -> None:
    theirs = _conversation(engine, "alice", "alice's plan")
    chat.conversation_id = theirs  # as if the browser had sent it
    await ChatState.create_share.fn(chat)
    assert chat.share_id == ""
    assert share_store.live_share(engine, theirs, owner="alice") is None


async def test_the_shared_page_lists_the_conversation_with_a_share_token(
    demo_host: Host, engine: Engine
) -> None:
    chat_id = _conversation(engine, "bob", "Plan the key rotation")
    link = share_store.create_share(engine, chat_id, owner="bob")
    assert link is not None
    page = SharedState()
    assert await page._show(demo_host, link)
    assert page.status == "shared"
    assert [(m.role, m.text) for m in page.messages] == [("user", "Plan the key rotation")]
    assert page.live_id == ""
    assert read_stream_token(demo_host.config.auth, page.stream_token) == ShareGrant(link)


async def test_a_revoked_or_unknown_link_shows_nothing(demo_host: Host, engine: Engine) -> None:
    chat_id = _conversation(engine, "bob", "Plan the key rotation")
    link = share_store.create_share(engine, chat_id, owner="bob")
    assert link is not None
    page = SharedState()
    assert not await page._show(demo_host, "no-such-link")
    assert (page.status, page.messages, page.stream_token) == ("revoked", [], "")
    assert await page._show(demo_host, link)
    share_store.revoke_share(engine, chat_id, owner="bob")
    # The page's next request is refused; asking for a new token finds the link revoked.
    await SharedState.renew_stream_token.fn(page)
    assert (page.status, page.messages, page.stream_token, page.link) == ("revoked", [], "", "")
    assert not await page._show(demo_host, link)
