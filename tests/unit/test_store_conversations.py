"""Conversations: CRUD, ordering, cascade delete, and the provider history shape."""

from __future__ import annotations

from itertools import count

import pytest
from sqlalchemy import Engine, func, select

from intent_ui.core.events import (
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    TextDelta,
    TurnDone,
)
from intent_ui.store import conversations as conv
from intent_ui.store.db import NotFoundError
from intent_ui.store.models import LOCAL_USER_ID, Clock, Message, TurnEventRow
from tests.support.store import record_turn

OWNER = LOCAL_USER_ID


@pytest.fixture
def now() -> Clock:
    """A deterministic clock: 1000.0, 1001.0, ..."""
    ticks = count(1000)
    return lambda: float(next(ticks))


def _count(engine: Engine, model: type) -> int:
    with engine.connect() as connection:
        return connection.execute(select(func.count()).select_from(model)).scalar_one()


def test_create_and_get(engine: Engine, now: Clock) -> None:
    chat = conv.create_conversation(
        engine, endpoint="demo", model="demo-1", title="OAuth bug", now=now, owner=OWNER
    )
    loaded = conv.get_conversation(engine, chat.id, owner=OWNER)
    assert loaded is not None
    assert (loaded.title, loaded.endpoint, loaded.model, loaded.agent_id) == (
        "OAuth bug",
        "demo",
        "demo-1",
        None,
    )
    assert loaded.created_at == loaded.updated_at == 1000.0


def test_blank_title_becomes_default(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", title="  ", owner=OWNER)
    assert chat.title == conv.DEFAULT_TITLE


def test_get_unknown_is_none(engine: Engine) -> None:
    assert conv.get_conversation(engine, "nope", owner=OWNER) is None


def test_list_is_most_recent_first(engine: Engine, now: Clock) -> None:
    first = conv.create_conversation(
        engine, endpoint="demo", model="m", title="first", now=now, owner=OWNER
    )
    second = conv.create_conversation(
        engine, endpoint="demo", model="m", title="second", now=now, owner=OWNER
    )
    assert [c.title for c in conv.list_conversations(engine, owner=OWNER)] == ["second", "first"]
    conv.add_user_message(engine, first.id, "hello again", now=now)
    assert [c.id for c in conv.list_conversations(engine, owner=OWNER)] == [first.id, second.id]
    assert [c.id for c in conv.list_conversations(engine, limit=1, owner=OWNER)] == [first.id]


def test_rename(engine: Engine, now: Clock) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", now=now, owner=OWNER)
    renamed = conv.rename_conversation(engine, chat.id, "  Fix the router ", now=now, owner=OWNER)
    assert renamed is not None and renamed.title == "Fix the router"
    loaded = conv.get_conversation(engine, chat.id, owner=OWNER)
    assert loaded is not None and loaded.title == "Fix the router"
    assert loaded.updated_at > chat.updated_at


def test_rename_blank_is_refused(engine: Engine) -> None:
    chat = conv.create_conversation(
        engine, endpoint="demo", model="m", title="Keep me", owner=OWNER
    )
    with pytest.raises(ValueError, match="cannot be blank"):
        conv.rename_conversation(engine, chat.id, "   ", owner=OWNER)
    loaded = conv.get_conversation(engine, chat.id, owner=OWNER)
    assert loaded is not None and loaded.title == "Keep me"


def test_rename_unknown_is_none(engine: Engine) -> None:
    assert conv.rename_conversation(engine, "nope", "title", owner=OWNER) is None


def test_update_switches_agent_and_detaches_it(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", agent_id="a1", owner=OWNER)
    updated = conv.update_conversation(engine, chat.id, model="m2", agent_id="a2", owner=OWNER)
    assert updated is not None and (updated.model, updated.agent_id) == ("m2", "a2")
    detached = conv.update_conversation(engine, chat.id, agent_id=None, owner=OWNER)
    assert detached is not None and detached.agent_id is None
    assert detached.model == "m2"


def test_delete_cascades_messages_and_their_event_logs(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    other = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    conv.add_user_message(engine, chat.id, "hi")
    conv.add_user_message(engine, other.id, "keep me")
    message_id = conv.start_assistant_message(engine, chat.id)
    record_turn(engine, message_id, [CallStarted(1, "c1", "read_file", 0)])
    assert _count(engine, TurnEventRow) == 1

    assert conv.delete_conversation(engine, chat.id, owner=OWNER) is True
    assert conv.get_conversation(engine, chat.id, owner=OWNER) is None
    assert _count(engine, TurnEventRow) == 0
    assert [m.content for m in conv.messages(engine, other.id)] == ["keep me"]
    assert _count(engine, Message) == 1


def test_delete_unknown_is_false(engine: Engine) -> None:
    assert conv.delete_conversation(engine, "nope", owner=OWNER) is False


def test_add_message_to_unknown_conversation_raises_clearly(engine: Engine) -> None:
    with pytest.raises(NotFoundError, match="No conversation 'gone'"):
        conv.add_user_message(engine, "gone", "hello")


def test_messages_are_in_order_with_their_status(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    conv.add_user_message(engine, chat.id, "one")
    assistant = conv.start_assistant_message(engine, chat.id)
    conv.add_user_message(engine, chat.id, "two")
    rows = conv.messages(engine, chat.id)
    assert [(m.position, m.role, m.content, m.status) for m in rows] == [
        (0, "user", "one", "complete"),
        (1, "assistant", "", "streaming"),
        (2, "user", "two", "complete"),
    ]
    assert rows[1].id == assistant


def test_history_with_an_errored_and_an_unfinished_call(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    conv.add_user_message(engine, chat.id, "Find the OAuth bug")
    message_id = conv.start_assistant_message(engine, chat.id)
    search_args = '{"intent": "Searching for OAuth", "query": "oauth"}'
    record_turn(
        engine,
        message_id,
        [
            TextDelta(1, "Let me look."),
            CallStarted(2, "call_a", "search_code", 0, server="github", label_bearing=True),
            CallStarted(3, "call_b", "read_file", 0, label_bearing=True),
            ArgsDelta(4, "call_a", search_args),
            ArgsComplete(5, "call_a", search_args),
            ArgsDelta(6, "call_b", '{"intent": "Reading the conf'),
            CallSettled(7, "call_a", "error", error="rate limited"),
        ],
    )
    assert conv.history(engine, chat.id) == [
        {"role": "user", "content": "Find the OAuth bug"},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {"id": "call_a", "name": "search_code", "arguments": search_args},
                # The half-streamed arguments are not JSON; providers need an object.
                {"id": "call_b", "name": "read_file", "arguments": "{}"},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_a",
            "name": "search_code",
            "content": "rate limited",
            "is_error": True,
        },
        {
            "role": "tool",
            "tool_call_id": "call_b",
            "name": "read_file",
            "content": "The tool call did not finish; it was interrupted.",
            "is_error": True,
        },
    ]


def test_history_splits_a_turn_into_its_rounds(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    conv.add_user_message(engine, chat.id, "What is in the repo?")
    message_id = conv.start_assistant_message(engine, chat.id)
    record_turn(
        engine,
        message_id,
        [
            TextDelta(1, "First the root. "),
            CallStarted(2, "c1", "list_dir", 0),
            ArgsComplete(3, "c1", '{"path": "."}'),
            CallSettled(4, "c1", "settled", output="src README.md"),
            TextDelta(5, "Now the readme. "),
            CallStarted(6, "c2", "read_file", 1),
            ArgsComplete(7, "c2", '{"path": "README.md"}'),
            CallSettled(8, "c2", "settled", output="# Demo"),
            TextDelta(9, "It is a demo."),
            TurnDone(10, "end_turn"),
        ],
    )
    history = conv.history(engine, chat.id)
    assert [(m["role"], m.get("content")) for m in history] == [
        ("user", "What is in the repo?"),
        ("assistant", "First the root. "),
        ("tool", "src README.md"),
        ("assistant", "Now the readme. "),
        ("tool", "# Demo"),
        ("assistant", "It is a demo."),
    ]
    assert history[1]["tool_calls"] == [
        {"id": "c1", "name": "list_dir", "arguments": '{"path": "."}'}
    ]
    assert history[4]["is_error"] is False
    assert "tool_calls" not in history[5]


def test_history_skips_an_empty_failed_turn(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    conv.add_user_message(engine, chat.id, "hello")
    message_id = conv.start_assistant_message(engine, chat.id)
    record_turn(engine, message_id, [TurnDone(1, "error", error="provider unreachable")])
    assert conv.history(engine, chat.id) == [{"role": "user", "content": "hello"}]


def test_history_of_unknown_conversation_is_empty(engine: Engine) -> None:
    assert conv.history(engine, "nope") == []


# --- ownership -------------------------------------------------------------------------


def test_another_users_conversation_is_absent_to_every_function(engine: Engine) -> None:
    mine = conv.create_conversation(engine, owner="alice", endpoint="demo", model="m", title="A")
    conv.add_user_message(engine, mine.id, "alice's secret")
    assert conv.get_conversation(engine, mine.id, owner="bob") is None
    assert conv.list_conversations(engine, owner="bob") == []
    assert conv.rename_conversation(engine, mine.id, "pwned", owner="bob") is None
    assert conv.update_conversation(engine, mine.id, owner="bob", model="x") is None
    assert conv.delete_conversation(engine, mine.id, owner="bob") is False
    kept = conv.get_conversation(engine, mine.id, owner="alice")
    assert kept is not None and (kept.title, kept.model) == ("A", "m")
    assert [m.content for m in conv.messages(engine, mine.id)] == ["alice's secret"]


def test_each_user_lists_only_their_own_conversations(engine: Engine, now: Clock) -> None:
    conv.create_conversation(engine, owner="alice", endpoint="demo", model="m", title="a1", now=now)
    conv.create_conversation(engine, owner="bob", endpoint="demo", model="m", title="b1", now=now)
    conv.create_conversation(engine, owner="alice", endpoint="demo", model="m", title="a2", now=now)
    assert [c.title for c in conv.list_conversations(engine, owner="alice")] == ["a2", "a1"]
    assert [c.title for c in conv.list_conversations(engine, owner="bob")] == ["b1"]


# --- search ----------------------------------------------------------------------------


def _titles(found: list[conv.Conversation]) -> list[str]:
    return [c.title for c in found]


def test_search_matches_titles_ignoring_case(engine: Engine, now: Clock) -> None:
    conv.create_conversation(
        engine, owner=OWNER, endpoint="d", model="m", title="OAuth bug", now=now
    )
    conv.create_conversation(engine, owner=OWNER, endpoint="d", model="m", title="Lunch", now=now)
    assert _titles(conv.search_conversations(engine, "oauth", owner=OWNER)) == ["OAuth bug"]
    assert _titles(conv.search_conversations(engine, "  AUTH B ", owner=OWNER)) == ["OAuth bug"]


def test_search_matches_the_text_of_questions_and_replies(engine: Engine, now: Clock) -> None:
    asked = conv.create_conversation(
        engine, owner=OWNER, endpoint="d", model="m", title="A", now=now
    )
    conv.add_user_message(engine, asked.id, "Where is the MCP client wired?", now=now)
    answered = conv.create_conversation(
        engine, owner=OWNER, endpoint="d", model="m", title="B", now=now
    )
    conv.add_user_message(engine, answered.id, "Summarise the repo", now=now)
    reply = conv.start_assistant_message(engine, answered.id, now=now)
    record_turn(
        engine,
        reply,
        [TextDelta(1, "The session module owns a Running turn."), TurnDone(2, "stop")],
    )
    conv.create_conversation(engine, owner=OWNER, endpoint="d", model="m", title="C", now=now)
    assert _titles(conv.search_conversations(engine, "mcp CLIENT", owner=OWNER)) == ["A"]
    assert _titles(conv.search_conversations(engine, "running TURN", owner=OWNER)) == ["B"]
    # Several matching messages still list their conversation once, newest first.
    conv.add_user_message(engine, asked.id, "And the session module?", now=now)
    assert _titles(conv.search_conversations(engine, "session module", owner=OWNER)) == ["A", "B"]


def test_search_finds_only_the_owners_conversations(engine: Engine) -> None:
    mine = conv.create_conversation(engine, owner="alice", endpoint="d", model="m", title="Keys")
    conv.add_user_message(engine, mine.id, "alice's rotation plan")
    theirs = conv.create_conversation(engine, owner="bob", endpoint="d", model="m", title="Keys")
    conv.add_user_message(engine, theirs.id, "bob's rotation plan")
    assert [c.id for c in conv.search_conversations(engine, "rotation", owner="alice")] == [mine.id]
    assert [c.id for c in conv.search_conversations(engine, "keys", owner="bob")] == [theirs.id]
    assert conv.search_conversations(engine, "alice", owner="bob") == []


def test_search_treats_wildcards_as_text(engine: Engine, now: Clock) -> None:
    for title in ("100% done", "1000 rows", "snake_case", "snakeXcase", r"C:\temp", "C:Xtemp"):
        conv.create_conversation(engine, owner=OWNER, endpoint="d", model="m", title=title, now=now)
    assert _titles(conv.search_conversations(engine, "100%", owner=OWNER)) == ["100% done"]
    assert _titles(conv.search_conversations(engine, "e_c", owner=OWNER)) == ["snake_case"]
    assert _titles(conv.search_conversations(engine, "C:\\t", owner=OWNER)) == [r"C:\temp"]


def test_search_is_bounded(engine: Engine, now: Clock) -> None:
    for index in range(5):
        conv.create_conversation(
            engine, owner=OWNER, endpoint="d", model="m", title=f"Plan {index}", now=now
        )
    assert _titles(conv.search_conversations(engine, "plan", owner=OWNER, limit=2)) == [
        "Plan 4",
        "Plan 3",
    ]
    assert len(conv.search_conversations(engine, "", owner=OWNER)) == 5
    with pytest.raises(ValueError, match="at most 200 characters; this one has 201"):
        conv.search_conversations(engine, "x" * 201, owner=OWNER)
