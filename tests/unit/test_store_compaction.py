"""A compaction in the store: recorded once as a message where it happened, kept by every
later history, and only on the path it was made on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from intent_ui.config import AppConfig
from intent_ui.core.compaction import LEDGER_HEADER, ContextBudget
from intent_ui.core.events import ArgsComplete, CallSettled, CallStarted, TextDelta, TurnDone
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui.chat_state import message_rows
from intent_ui.ui.host import Host
from tests.support.store import record_turn

OWNER = LOCAL_USER_ID
TIGHT = ContextBudget(50, len)
"""Less than any turn below that made a call (one token per character)."""
ROOMY = ContextBudget(100_000, len)

README_LINE = "read_file [success]: Reading the readme → Read README.md · files: README.md"


def ask_and_read(engine: Engine, chat_id: str, question: str, path: str) -> str:
    """A user message, then a turn that reads `path` (a long result) and answers."""
    conv.add_user_message(engine, chat_id, question)
    message_id = conv.start_assistant_message(engine, chat_id)
    intent = "Reading the readme" if path == "README.md" else f"Reading {path}"
    args = f'{{"intent": "{intent}", "path": "{path}"}}'
    record_turn(
        engine,
        message_id,
        [
            CallStarted(1, "c", "read_file", 0, label_bearing=True),
            ArgsComplete(2, "c", args),
            CallSettled(3, "c", "settled", output="x" * 500, outcome=f"Read {path}"),
            TextDelta(4, f"{path} looks fine."),
            TurnDone(5, "end_turn"),
        ],
    )
    return message_id


def test_a_compaction_is_recorded_once_where_it_happened(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    ask_and_read(engine, chat.id, "Check the readme", "README.md")
    assert conv.history(engine, chat.id, budget=ROOMY)[2]["role"] == "tool"
    assert [m.role for m in conv.messages(engine, chat.id)] == ["user", "assistant"]

    compacted = conv.history(engine, chat.id, budget=TIGHT)
    assert compacted == [
        {"role": "system", "content": f"{LEDGER_HEADER}\n{README_LINE}"},
        {"role": "user", "content": "Check the readme"},
        {"role": "assistant", "content": "README.md looks fine."},
    ]
    shown = conv.messages(engine, chat.id)
    assert [(m.role, m.content) for m in shown[2:]] == [(conv.COMPACTION_ROLE, README_LINE)]
    # The compaction is the path's end: the next message goes after it.
    assert conv.path_end(engine, chat.id) == shown[2].id
    asked = conv.add_user_message(engine, chat.id, "And now?")
    message = conv.get_message(engine, chat.id, asked)
    assert message is not None and message.parent_id == shown[2].id
    # Every later history reads the same, with or without a budget; nothing new to record.
    assert conv.history(engine, chat.id)[:3] == compacted
    assert conv.history(engine, chat.id, budget=TIGHT)[:3] == compacted
    assert [m.role for m in conv.messages(engine, chat.id)].count(conv.COMPACTION_ROLE) == 1


def test_a_later_compaction_adds_its_lines_below_the_pinned_ones(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    ask_and_read(engine, chat.id, "Check the readme", "README.md")
    conv.history(engine, chat.id, budget=TIGHT)
    ask_and_read(engine, chat.id, "And the app", "app.py")
    history = conv.history(engine, chat.id, budget=TIGHT)
    assert history[0]["content"].split("\n") == [
        LEDGER_HEADER,
        README_LINE,
        "read_file [success]: Reading app.py → Read app.py · files: app.py",
    ]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user", "assistant"]
    roles = [m.role for m in conv.messages(engine, chat.id)]
    assert roles == ["user", "assistant", "compaction", "user", "assistant", "compaction"]


def test_reading_up_to_an_earlier_message_compacts_without_recording(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    first = ask_and_read(engine, chat.id, "Check the readme", "README.md")
    ask_and_read(engine, chat.id, "And the app", "app.py")
    # What an edit of the second question reads: the path up to the first reply.
    history = conv.history(engine, chat.id, through=first, budget=TIGHT)
    assert history[0] == {"role": "system", "content": f"{LEDGER_HEADER}\n{README_LINE}"}
    assert conv.COMPACTION_ROLE not in [m.role for m in conv.messages(engine, chat.id)]


def test_deleting_the_conversation_deletes_its_compactions(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    ask_and_read(engine, chat.id, "Check the readme", "README.md")
    conv.history(engine, chat.id, budget=TIGHT)
    assert conv.delete_conversation(engine, chat.id, owner=OWNER)
    assert conv.messages(engine, chat.id) == []


def test_the_chat_lists_a_compaction_as_a_divider_row(
    engine: Engine, serve_host: Callable[..., Host], tmp_path: Path
) -> None:
    host = serve_host(
        AppConfig.model_validate({"endpoints": [{"kind": "demo"}], "workspace": tmp_path})
    )
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER)
    ask_and_read(engine, chat.id, "Check the readme", "README.md")
    conv.history(engine, chat.id, budget=TIGHT)
    conv.add_user_message(engine, chat.id, "And now?")
    rows = message_rows(host, chat.id, "")
    assert [(row.role, row.text) for row in rows[2:]] == [
        ("compaction", README_LINE),
        ("user", "And now?"),
    ]
