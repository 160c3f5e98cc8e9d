"""The chat's versions: each listed message knows which of its versions it is, the last
ended turn offers Regenerate (and Continue when it was stopped), and a flip shows
another version of a message of the open conversation only."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from intent_ui.core.events import TextDelta, TurnDone
from intent_ui.store import conversations as conv_store
from intent_ui.ui.chat_state import ChatState, MessageRow, message_rows
from intent_ui.ui.host import Host
from tests.support.sign_in import chat_page
from tests.support.store import record_turn


@pytest.fixture
def state(demo_host: Host, monkeypatch: pytest.MonkeyPatch) -> ChatState:
    """bob's chat page."""
    return chat_page(monkeypatch, demo_host, "bob")


def answered_twice(engine: Engine, owner: str) -> tuple[str, str, str]:
    """A chat whose question was answered, then regenerated: (chat, old, new)."""
    chat = conv_store.create_conversation(engine, owner=owner, endpoint="demo", model="demo").id
    question = conv_store.add_user_message(engine, chat, "Where is OAuth handled?")
    turns = []
    for text in ("In auth.py.", "In src/auth.py."):
        turn = conv_store.start_assistant_message(engine, chat, parent_id=question)
        record_turn(engine, turn, [TextDelta(1, text), TurnDone(2, "end_turn")])
        turns.append(turn)
    return chat, turns[0], turns[1]


def test_each_row_knows_its_place_among_its_versions(demo_host: Host, engine: Engine) -> None:
    chat, old, new = answered_twice(engine, "bob")
    question, reply = message_rows(demo_host, chat, "")
    assert (question.version, question.versions) == (1, 1)
    assert (reply.id, reply.version, reply.versions) == (new, 2, 2)
    assert (reply.previous_version, reply.next_version) == (old, "")
    conv_store.choose_branch(engine, chat, old)
    reply = message_rows(demo_host, chat, "")[1]
    assert (reply.id, reply.version, reply.previous_version, reply.next_version) == (
        old,
        1,
        "",
        new,
    )


async def test_a_flip_shows_another_version_of_the_open_conversation_only(
    state: ChatState, engine: Engine
) -> None:
    chat, old, new = answered_twice(engine, "bob")
    alices, alices_old, _ = answered_twice(engine, "alice")
    state.conversation_id = chat
    await ChatState.show_version.fn(state, old)
    assert [m.id for m in state.messages][1] == old
    # Another user's message, named from this tab: nothing changes anywhere.
    await ChatState.show_version.fn(state, alices_old)
    assert [m.id for m in state.messages][1] == old
    assert conv_store.messages(engine, alices)[1].id != alices_old
    # Nor while a turn runs: its reply would leave the page.
    state.running = True
    await ChatState.show_version.fn(state, new)
    assert conv_store.messages(engine, chat)[1].id == old


def rows(*rows: MessageRow) -> list[MessageRow]:
    return [MessageRow(id="q", role="user", text="?"), *rows]


@pytest.mark.parametrize(
    ("last", "regenerate", "resume"),
    [
        (MessageRow(id="a", status="complete"), "a", ""),
        (MessageRow(id="a", status="cancelled"), "a", "a"),
        (MessageRow(id="a", status="error", failed=True), "", ""),  # it offers Retry
        (MessageRow(id="a", status="streaming"), "", ""),
    ],
)
def test_the_last_ended_turn_offers_regenerate_and_a_stopped_one_continue(
    state: ChatState, last: MessageRow, regenerate: str, resume: str
) -> None:
    state.messages = rows(last)
    assert (state.regenerate_id, state.continue_id) == (regenerate, resume)
    state.running = True
    assert (state.regenerate_id, state.continue_id) == ("", "")


def test_only_the_last_turn_offers_them(state: ChatState) -> None:
    state.messages = [
        *rows(MessageRow(id="a", status="cancelled")),
        MessageRow(id="u", role="user"),
    ]
    assert (state.regenerate_id, state.continue_id) == ("", "")


async def test_an_edit_opens_on_a_listed_message_of_the_user_only(state: ChatState) -> None:
    state.messages = rows(MessageRow(id="a"))
    ChatState.start_edit.fn(state, "a")
    assert state.editing == ""
    ChatState.start_edit.fn(state, "q")
    assert state.editing == "q"
    ChatState.cancel_edit.fn(state)
    assert state.editing == ""
