"""The checkpoints' tables on SQLite and PostgreSQL: contents kept once by hash, read back
byte for byte, listed per conversation and per owner, gone with their conversation."""

from __future__ import annotations

import hashlib

from sqlalchemy import Engine

from intent_ui.core.checkpoints import Change, FileState
from intent_ui.store import checkpoints as store
from intent_ui.store import conversations as conv

BINARY = bytes(range(256)) * 4


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def turn(engine: Engine, owner: str) -> tuple[str, str]:
    chat = conv.create_conversation(engine, owner=owner, endpoint="demo", model="demo").id
    conv.add_user_message(engine, chat, "change it")
    return chat, conv.start_assistant_message(engine, chat)


def test_contents_are_kept_once_and_read_back_byte_for_byte(engine: Engine) -> None:
    blobs = {sha(BINARY): BINARY, sha(b"text\n"): b"text\n"}
    store.put_blobs(engine, blobs)
    store.put_blobs(engine, blobs)  # again: nothing new, nothing refused
    assert store.known_blobs(engine, [*blobs, sha(b"other")]) == set(blobs)
    assert store.read_blobs(engine, blobs) == blobs


def test_checkpoints_are_listed_per_conversation_and_owner_and_go_with_it(
    engine: Engine,
) -> None:
    store.put_blobs(engine, {sha(BINARY): BINARY, sha(b"spare"): b"spare"})
    mine, my_turn = turn(engine, "alice")
    theirs, their_turn = turn(engine, "bob")
    change = Change("logo.png", FileState(sha(BINARY), len(BINARY)), None)
    first = store.add_checkpoint(
        engine,
        conversation_id=mine,
        message_id=my_turn,
        call_id="c1",
        tool="delete_file",
        changes=[change],
        now=1.0,
    )
    store.add_checkpoint(
        engine,
        conversation_id=theirs,
        message_id=their_turn,
        call_id="c1",
        tool="bash_tool",
        changes=[],
        note="cut short",
        now=2.0,
    )
    (record,) = store.conversation_checkpoints(engine, mine)
    assert (record.id, record.call_id, record.tool, record.changes) == (
        first,
        "c1",
        "delete_file",
        (change,),
    )
    assert [r.conversation_id for r in store.all_checkpoints(engine)] == [mine, theirs]
    assert [r.note for r in store.all_checkpoints(engine, owner="bob")] == ["cut short"]

    # Deleting a conversation takes its checkpoints along, and every content no remaining
    # checkpoint names (the spare one too).
    assert conv.delete_conversation(engine, mine, owner="alice")
    assert store.conversation_checkpoints(engine, mine) == []
    assert store.known_blobs(engine, [sha(BINARY), sha(b"spare")]) == set()
    assert store.forget_unused_blobs(engine) == 0
