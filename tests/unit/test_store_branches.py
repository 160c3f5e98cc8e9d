"""A conversation as a tree: the shown path, siblings (a reply regenerated, a message
edited), flipping between them, continuing a stopped turn, and what follows the path:
the history the model reads, search, the title. Also the migration of conversations
stored before messages had parents."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, text

from intent_ui.core.events import TextDelta, TurnDone
from intent_ui.core.history import CONTINUE_PROMPT
from intent_ui.store import conversations as conv
from intent_ui.store.db import NotFoundError, dispose_engines, init_db, migration_config
from intent_ui.store.models import LOCAL_USER_ID, Clock
from tests.support.store import record_turn

OWNER = LOCAL_USER_ID


@pytest.fixture
def now() -> Clock:
    ticks = count(1000)
    return lambda: float(next(ticks))


@pytest.fixture
def chat(engine: Engine) -> str:
    created = conv.create_conversation(
        engine, owner=OWNER, endpoint="demo", model="demo", title="Where is OAuth handled?"
    )
    return str(created.id)


def reply(engine: Engine, chat: str, text: str, *, parent_id: str | None = None) -> str:
    """A finished assistant turn saying `text` (after the path's end, or `parent_id`)."""
    if parent_id is None:
        message_id = conv.start_assistant_message(engine, chat)
    else:
        message_id = conv.start_assistant_message(engine, chat, parent_id=parent_id)
    record_turn(engine, message_id, [TextDelta(1, text), TurnDone(2, "end_turn")])
    return message_id


def title(engine: Engine, chat: str) -> str:
    """The conversation's title, as its owner's sidebar shows it."""
    conversation = conv.get_conversation(engine, chat, owner=OWNER)
    assert conversation is not None
    return conversation.title


def shown(engine: Engine, chat: str) -> list[str]:
    """The shown path as the messages' words."""
    return [m.content for m in conv.messages(engine, chat)]


def asked(engine: Engine, chat: str) -> list[tuple[str, str]]:
    """The history the model reads next, as (role, content)."""
    return [(m["role"], m["content"]) for m in conv.history(engine, chat)]


def test_a_conversation_without_branches_is_one_line(engine: Engine, chat: str) -> None:
    first = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    answer = reply(engine, chat, "In auth.py.")
    second = conv.add_user_message(engine, chat, "And MCP?")
    assert shown(engine, chat) == ["Where is OAuth handled?", "In auth.py.", "And MCP?"]
    parents = [m.parent_id for m in conv.messages(engine, chat)]
    assert parents == [None, first, answer]
    assert [t.siblings for t in conv.thread(engine, chat)] == [(first,), (answer,), (second,)]
    assert conv.path_end(engine, chat) == second


def test_a_regenerated_reply_is_a_sibling_shown_in_place_of_the_old_one(
    engine: Engine, chat: str
) -> None:
    question = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    old = reply(engine, chat, "In auth.py.")
    new = reply(engine, chat, "In src/auth.py, in oauth_callback.", parent_id=question)
    assert shown(engine, chat) == ["Where is OAuth handled?", "In src/auth.py, in oauth_callback."]
    assert conv.thread(engine, chat)[1].siblings == (old, new)
    # The model reads the version shown, and only that one.
    assert asked(engine, chat) == [
        ("user", "Where is OAuth handled?"),
        ("assistant", "In src/auth.py, in oauth_callback."),
    ]
    assert conv.choose_branch(engine, chat, old)
    assert shown(engine, chat) == ["Where is OAuth handled?", "In auth.py."]
    assert asked(engine, chat)[-1] == ("assistant", "In auth.py.")


def test_an_edited_message_forks_and_each_branch_keeps_what_followed_it(
    engine: Engine, chat: str
) -> None:
    conv.add_user_message(engine, chat, "Where is OAuth handled?")
    first_answer = reply(engine, chat, "In auth.py.")
    old_question = conv.add_user_message(engine, chat, "And MCP?")
    reply(engine, chat, "In server.py.")
    edited = conv.add_user_message(engine, chat, "And the session module?", parent_id=first_answer)
    reply(engine, chat, "In session.py.")
    assert shown(engine, chat)[2:] == ["And the session module?", "In session.py."]
    assert conv.thread(engine, chat)[2].siblings == (old_question, edited)
    # A message added now goes at the end of the path shown.
    conv.add_user_message(engine, chat, "Thanks")
    assert shown(engine, chat)[-1] == "Thanks"
    # Flipping back shows the old branch as it was, and the new one keeps its end too.
    conv.choose_branch(engine, chat, old_question)
    assert shown(engine, chat)[2:] == ["And MCP?", "In server.py."]
    conv.choose_branch(engine, chat, edited)
    assert shown(engine, chat)[2:] == ["And the session module?", "In session.py.", "Thanks"]


def test_the_history_of_a_point_in_the_tree_is_the_path_to_it(engine: Engine, chat: str) -> None:
    question = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    answer = reply(engine, chat, "In auth.py.")
    conv.add_user_message(engine, chat, "And MCP?")
    assert [m["content"] for m in conv.history(engine, chat, through=answer)] == [
        "Where is OAuth handled?",
        "In auth.py.",
    ]
    assert [m["content"] for m in conv.history(engine, chat, through=question)] == [
        "Where is OAuth handled?"
    ]
    assert conv.history(engine, chat, through=None) == []
    with pytest.raises(NotFoundError):
        conv.history(engine, chat, through="not-a-message")


def test_a_continued_turn_reads_the_stopped_one_then_the_continue_prompt(
    engine: Engine, chat: str
) -> None:
    conv.add_user_message(engine, chat, "Summarize the session module")
    stopped = conv.start_assistant_message(engine, chat)
    record_turn(
        engine, stopped, [TextDelta(1, "The session module keeps"), TurnDone(2, "cancelled")]
    )
    continued = reply(engine, chat, " the running turn.", parent_id=stopped)
    assert [m.id for m in conv.messages(engine, chat)][1:] == [stopped, continued]
    assert asked(engine, chat) == [
        ("user", "Summarize the session module"),
        ("assistant", "The session module keeps"),
        ("user", CONTINUE_PROMPT),
        ("assistant", " the running turn."),
    ]


def test_a_first_message_edited_takes_the_title_unless_it_was_renamed(
    engine: Engine, chat: str
) -> None:
    first = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    reply(engine, chat, "In auth.py.")
    edited = conv.add_user_message(engine, chat, "Where is MCP handled?", parent_id=None)
    assert shown(engine, chat) == ["Where is MCP handled?"]
    assert title(engine, chat) == "Where is MCP handled?"
    conv.choose_branch(engine, chat, first)
    assert title(engine, chat) == "Where is OAuth handled?"
    conv.rename_conversation(engine, chat, "Auth notes", owner=OWNER)
    conv.choose_branch(engine, chat, edited)
    assert title(engine, chat) == "Auth notes"


def test_search_finds_text_on_the_shown_path_only(engine: Engine, chat: str) -> None:
    question = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    old = reply(engine, chat, "Look in the callback router.")
    reply(engine, chat, "In auth.py.", parent_id=question)

    def found(query: str) -> list[str]:
        return [str(c.id) for c in conv.search_conversations(engine, query, owner=OWNER)]

    assert found("auth.py") == [chat]
    assert found("callback router") == []
    conv.choose_branch(engine, chat, old)
    assert found("callback router") == [chat]
    assert found("OAuth") == [chat]  # the title, whatever is shown


def test_search_stops_at_its_limit_in_activity_order(engine: Engine, now: Clock) -> None:
    chats = []
    for n in range(3):
        made = conv.create_conversation(
            engine, owner=OWNER, endpoint="demo", model="demo", title=f"chat {n}", now=now
        )
        conv.add_user_message(engine, made.id, "the needle", now=now)
        chats.append(str(made.id))
    found = conv.search_conversations(engine, "needle", owner=OWNER, limit=2)
    assert [str(c.id) for c in found] == chats[:0:-1]


def test_a_parent_from_elsewhere_is_refused(engine: Engine, chat: str) -> None:
    other = conv.create_conversation(engine, owner=OWNER, endpoint="demo", model="demo")
    stranger = conv.add_user_message(engine, other.id, "elsewhere")
    with pytest.raises(NotFoundError):
        conv.add_user_message(engine, chat, "hi", parent_id=stranger)
    assert not conv.choose_branch(engine, chat, stranger)
    assert conv.get_message(engine, chat, stranger) is None
    assert shown(engine, chat) == []


def test_every_turn_of_every_branch_is_a_turn_of_the_conversation(
    engine: Engine, chat: str
) -> None:
    question = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    old = reply(engine, chat, "In auth.py.")
    new = reply(engine, chat, "In src/auth.py.", parent_id=question)
    assert conv.turn_ids(engine, chat) == {old, new}


def test_deleting_a_conversation_deletes_every_branch(engine: Engine, chat: str) -> None:
    question = conv.add_user_message(engine, chat, "Where is OAuth handled?")
    old = reply(engine, chat, "In auth.py.")
    reply(engine, chat, "In src/auth.py.", parent_id=question)
    assert conv.delete_conversation(engine, chat, owner=OWNER)
    assert conv.get_message(engine, chat, old) is None
    assert conv.turn_ids(engine, chat) == frozenset()


BEFORE_BRANCHES = "0010_intents_dashboard"


def test_conversations_stored_before_branches_become_one_line(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    old = create_engine(url)
    with old.begin() as connection:
        command.upgrade(migration_config(connection), BEFORE_BRANCHES)
        connection.execute(
            text(
                "INSERT INTO conversations (id, owner_id, title, endpoint, model, created_at,"
                " updated_at) VALUES ('c1', 'local', 'Old chat', 'demo', 'demo', 1, 1),"
                " ('c2', 'local', 'Other chat', 'demo', 'demo', 1, 1)"
            )
        )
        rows = [
            ("m1", "c1", 0, "user", "Where is OAuth handled?"),
            ("m2", "c1", 1, "assistant", "In auth.py."),
            ("n1", "c2", 0, "user", "Unrelated"),
            ("m3", "c1", 3, "user", "And MCP?"),  # positions may have gaps
        ]
        for message_id, chat_id, position, role, content in rows:
            connection.execute(
                text(
                    "INSERT INTO messages (id, conversation_id, position, role, content, status,"
                    " created_at, updated_at) VALUES (:id, :chat, :position, :role, :content,"
                    " 'complete', 1, 1)"
                ),
                {
                    "id": message_id,
                    "chat": chat_id,
                    "position": position,
                    "role": role,
                    "content": content,
                },
            )
        # The old reply's event log, which the migration must leave alone.
        for seq, kind, data in ((1, "TextDelta", '{"text":"In auth.py."}'), (2, "TurnDone", "{}")):
            connection.execute(
                text(
                    "INSERT INTO turn_events (message_id, seq, kind, data)"
                    " VALUES ('m2', :seq, :kind, :data)"
                ),
                {"seq": seq, "kind": kind, "data": data},
            )
    old.dispose()
    engine = init_db(url)
    try:
        messages = conv.messages(engine, "c1")
        assert [(m.id, m.parent_id, m.chosen) for m in messages] == [
            ("m1", None, True),
            ("m2", "m1", True),
            ("m3", "m2", True),
        ]
        assert [m.parent_id for m in conv.messages(engine, "c2")] == [None]
        assert [m["content"] for m in conv.history(engine, "c1")] == [
            "Where is OAuth handled?",
            "In auth.py.",
            "And MCP?",
        ]
        # And they branch like any other.
        conv.add_user_message(engine, "c1", "And the session module?", parent_id="m2")
        assert [m.content for m in conv.messages(engine, "c1")][-1] == "And the session module?"
    finally:
        dispose_engines()
