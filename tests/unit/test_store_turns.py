"""A turn's event log: written while it streams, replayed identically after a reload, a
crash or the migration from the row-per-call schema."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, select
from sqlalchemy.exc import OperationalError

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.db import StoreError, init_db
from intent_ui.store.models import LOCAL_USER_ID, Message, TurnEventRow
from intent_ui.store.turns import EventLog, load_events, mark_interrupted
from tests.support.legacy_db import write_legacy_database
from tests.support.store import record_turn, turn_session

SEARCH_ARGS = '{"intent": "Searching for OAuth", "query": "oauth"}'
READ_ARGS = '{"intent": "Reading the config file", "path": "conf/app.yaml"}'

# Two parallel label-bearing calls whose argument chunks interleave and which settle out
# of order, then a second group with a plain call that fails, a summary, the end.
STREAM: list[TurnEvent] = [
    TextDelta(1, "Looking into it. "),
    CallStarted(2, "c1", "search_code", 0, server="github", label_bearing=True),
    CallStarted(3, "c2", "read_file", 0, label_bearing=True),
    ArgsDelta(4, "c1", '{"intent": "Search'),
    ArgsDelta(5, "c2", '{"intent": "Reading the '),
    ArgsDelta(6, "c1", 'ing for OAuth", "query": "oau'),
    ArgsDelta(7, "c2", 'config file", "path": "conf/app.yaml"}'),
    ArgsComplete(8, "c2", READ_ARGS),
    ArgsDelta(9, "c1", 'th"}'),
    ArgsComplete(10, "c1", SEARCH_ARGS),
    CallSettled(
        11, "c2", "settled", output="db: sqlite", outcome_patch={"from": "Reading", "to": "Read"}
    ),
    CallSettled(12, "c1", "settled", output="3 matches", outcome="Found 3 matches for OAuth"),
    TextDelta(13, "Both done. "),
    CallStarted(14, "c3", "list_dir", 1),
    ArgsDelta(15, "c3", '{"path": "."}'),
    ArgsComplete(16, "c3", '{"path": "."}'),
    CallSettled(17, "c3", "error", error="permission denied"),
    ActivityLabel(18, 0, "Found the OAuth config"),
    TextDelta(19, "Done."),
    TurnDone(20, "end_turn"),
]


@pytest.fixture
def message_id(engine: Engine) -> str:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=LOCAL_USER_ID)
    conv.add_user_message(engine, chat.id, "Find the OAuth config")
    return conv.start_assistant_message(engine, chat.id)


def _rendered(view: TurnView) -> dict[str, Any]:
    """What a user sees: parts, each call's record and card label, each group's header."""
    return {
        "parts": view.parts,
        "calls": view.calls(),
        "arguments": {c.call_id: view.arguments(c.call_id) for c in view.calls()},
        "cards": {c.call_id: view.card_label(c.call_id, "en") for c in view.calls()},
        "headers": {b: view.group_header(b, "en") for b in view.groups()},
        "text": view.text,
        "goal": view.goal,
        "done": (view.done, view.stop_reason, view.error),
    }


def _reloaded(engine: Engine, message_id: str) -> dict[str, Any]:
    return _rendered(TurnView.replay(load_events(engine, message_id)))


def _message(engine: Engine, message_id: str) -> Any:
    with engine.connect() as connection:
        table = Message.__table__  # type: ignore[attr-defined]
        return connection.execute(select(table).where(table.c.id == message_id)).one()


def _stored_rows(engine: Engine, message_id: str) -> list[Any]:
    table = TurnEventRow.__table__  # type: ignore[attr-defined]
    with engine.connect() as connection:
        return list(
            connection.execute(
                select(table).where(table.c.message_id == message_id).order_by(table.c.seq)
            )
        )


def test_the_chosen_goal_is_stored_and_survives_a_reload(engine: Engine, message_id: str) -> None:
    goal = GoalSelected(2, "research", "Find things in the code")
    events = [*STREAM[:1], goal, *(replace(e, seq=e.seq + 1) for e in STREAM[1:])]
    session = record_turn(engine, message_id, events)
    assert session.view.goal == ("research", "Find things in the code")
    assert _reloaded(engine, message_id) == _rendered(session.view)


def test_reload_after_every_flush_renders_the_live_view(engine: Engine, message_id: str) -> None:
    session = turn_session(engine, message_id)
    for event in STREAM:
        session.publish(event)
        session.log.flush()
        assert _reloaded(engine, message_id) == _rendered(session.view), f"after {event.seq}"


@pytest.mark.parametrize("flush_after", [{3, 6, 12, 20}, {5, 9, 17, 20}, {20}, {7, 20}])
def test_reload_at_sparse_flush_points_with_merged_fragments(
    engine: Engine, message_id: str, flush_after: set[int]
) -> None:
    session = turn_session(engine, message_id)
    for event in STREAM:
        session.publish(event)
        if event.seq in flush_after:
            session.log.flush()
            assert _reloaded(engine, message_id) == _rendered(session.view), f"after {event.seq}"


def test_fragments_of_one_call_share_a_row_but_the_label_seq_survives(
    engine: Engine, message_id: str
) -> None:
    # c1's intent becomes readable at seq 3 and c2's at 4, so c2 is the live edge. Had
    # c1's fragments 3, 5 and 6 shared one row stamped 6, c1 would look the newer.
    events: list[TurnEvent] = [
        CallStarted(1, "c1", "search_code", 0, server="github", label_bearing=True),
        CallStarted(2, "c2", "read_file", 0, label_bearing=True),
        ArgsDelta(3, "c1", '{"intent": "Search'),
        ArgsDelta(4, "c2", '{"intent": "Reading the config'),
        ArgsDelta(5, "c1", "ing for OAuth"),
        ArgsDelta(6, "c1", '", "query": "oauth"}'),
        ArgsDelta(7, "c2", ' file"}'),
    ]
    record_turn(engine, message_id, events)
    rows = [(r.seq, json.loads(r.data)) for r in _stored_rows(engine, message_id)]
    deltas = [(seq, data["call_id"], data["chunk"]) for seq, data in rows if "chunk" in data]
    assert deltas == [
        (3, "c1", '{"intent": "Search'),
        (4, "c2", '{"intent": "Reading the config'),
        (6, "c1", 'ing for OAuth", "query": "oauth"}'),
        (7, "c2", ' file"}'),
    ]
    reloaded = TurnView.replay(load_events(engine, message_id))
    assert _rendered(reloaded) == _rendered(TurnView.replay(events))
    assert reloaded.group_header(0).text == "Reading the config file"


def test_text_after_a_new_group_stays_after_it(engine: Engine, message_id: str) -> None:
    events: list[TurnEvent] = [
        TextDelta(1, "First "),
        TextDelta(2, "round. "),
        CallStarted(3, "c1", "list_dir", 0),
        TextDelta(4, "Then "),
        TextDelta(5, "this."),
    ]
    record_turn(engine, message_id, events)
    kinds = [(r.kind, r.seq) for r in _stored_rows(engine, message_id)]
    assert kinds == [("TextDelta", 2), ("CallStarted", 3), ("TextDelta", 5)]
    view = TurnView.replay(load_events(engine, message_id))
    assert [type(p).__name__ for p in view.parts] == ["TextPart", "ToolGroup", "TextPart"]
    assert view.text == "First round. Then this."


def test_a_long_argument_streamed_in_small_fragments_stays_small_on_disk(
    engine: Engine, message_id: str
) -> None:
    args = json.dumps({"intent": "Writing the report", "content": "lorem ipsum " * 5000})
    session = turn_session(engine, message_id)
    session.publish(CallStarted(1, "w", "write_file", 0, label_bearing=True))
    seq = 1
    for start in range(0, len(args), 4):
        seq += 1
        session.publish(ArgsDelta(seq, "w", args[start : start + 4]))
        if seq % 250 == 0:  # the ~100 ms flush timer
            session.log.flush()
    session.publish(ArgsComplete(seq + 1, "w", args))
    session.publish(CallSettled(seq + 2, "w", "settled", output="written"))
    session.publish(TurnDone(seq + 3, "end_turn"))
    session.log.flush()
    stored = sum(len(r.data) + len(r.kind) + 40 for r in _stored_rows(engine, message_id))
    assert stored < 2 * len(args)
    assert TurnView.replay(load_events(engine, message_id)).arguments("w") == args


def test_the_summary_is_written_when_the_turn_ends(engine: Engine, message_id: str) -> None:
    record_turn(engine, message_id, STREAM)
    message = _message(engine, message_id)
    assert (message.content, message.status, message.stop_reason) == (
        "Looking into it. Both done. Done.",
        "complete",
        "end_turn",
    )


def test_a_turn_still_streaming_has_no_summary_and_no_end(engine: Engine, message_id: str) -> None:
    record_turn(engine, message_id, STREAM[:3])
    assert _message(engine, message_id).status == "streaming"
    assert not any(isinstance(e, TurnDone) for e in load_events(engine, message_id))


def test_crash_midway_reloads_as_cancelled_with_the_text_so_far(
    engine: Engine, message_id: str
) -> None:
    session = record_turn(engine, message_id, STREAM[:7])
    session.publish(ArgsComplete(8, "c2", READ_ARGS))  # never flushed: lost in the crash
    del session

    assert mark_interrupted(engine, now=lambda: 99.0) == 1

    message = _message(engine, message_id)
    assert (message.status, message.stop_reason) == ("cancelled", "interrupted")
    assert message.content == "Looking into it. "
    view = TurnView.replay(load_events(engine, message_id))
    assert [c.state for c in view.calls()] == ["cancelled", "cancelled"]
    assert view.card_label("c1") == "Cancelled: Searching for OAuth"
    assert view.card_label("c2") == "Cancelled: Reading the config file"
    assert view.done is True and view.group_header(0).live is False
    assert view.call("c1").settled_at == 99.0  # type: ignore[union-attr]


def test_mark_interrupted_leaves_finished_turns_alone(engine: Engine, message_id: str) -> None:
    record_turn(engine, message_id, STREAM)
    before = _reloaded(engine, message_id)
    assert mark_interrupted(engine) == 0
    assert _reloaded(engine, message_id) == before


@pytest.mark.parametrize(
    ("done", "status"),
    [
        (TurnDone(7, "cancelled"), "cancelled"),
        (TurnDone(7, "error", error="provider timed out"), "error"),
        (TurnDone(7, "max_tokens", error="The model hit max_tokens."), "error"),
    ],
)
def test_a_stopped_or_failed_turn_cancels_unfinished_calls(
    engine: Engine, message_id: str, done: TurnDone, status: str
) -> None:
    events: list[TurnEvent] = [*STREAM[:6], done]
    record_turn(engine, message_id, events)
    message = _message(engine, message_id)
    assert (message.status, message.error) == (status, done.error)
    view = TurnView.replay(load_events(engine, message_id))
    assert view.call("c2").state == "cancelled"  # type: ignore[union-attr]
    assert _reloaded(engine, message_id) == _rendered(TurnView.replay(events))


def test_append_does_no_database_io(tmp_path: Path, message_id: str) -> None:
    unreachable = create_engine(f"sqlite:///{tmp_path / 'missing' / 'dir.db'}")
    log = EventLog(unreachable, message_id)
    for event in STREAM:
        log.append(event)  # would raise if it touched the database
    assert log.needs_flush is True


def test_flush_with_nothing_pending_is_a_no_op(engine: Engine, message_id: str) -> None:
    log = EventLog(engine, message_id)
    assert log.needs_flush is False
    assert log.flush() is False
    log.append(TextDelta(1, "Hi"))
    assert log.flush() is True
    assert log.needs_flush is False
    assert log.flush() is False


@pytest.mark.parametrize(
    ("event", "now"),
    [
        (ArgsDelta(1, "c", "{"), False),
        (TextDelta(1, "x"), False),
        (CallStarted(1, "c", "t", 0), True),
        (ArgsComplete(1, "c", "{}"), True),
        (CallBackgrounded(1, "c"), True),
        (CallSettled(1, "c", "settled"), True),
        (ActivityLabel(1, 0, "label"), True),
        (GoalSelected(1, "research", "Find things in the code"), True),
        (TurnDone(1, "end_turn"), True),
    ],
)
def test_should_flush_now_only_on_state_changes(event: TurnEvent, now: bool) -> None:
    assert EventLog.should_flush_now(event) is now


def test_a_failed_flush_keeps_every_row_for_the_next(
    engine: Engine, message_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = turn_session(engine, message_id)
    for event in STREAM[:8]:
        session.publish(event)
    real_write = session.log._write

    def locked(*args: Any) -> bool:
        raise OperationalError("INSERT INTO turn_events ...", {}, Exception("database is locked"))

    monkeypatch.setattr(session.log, "_write", locked)
    with pytest.raises(StoreError, match="stays buffered") as excinfo:
        session.log.flush()
    assert "INSERT" not in str(excinfo.value)
    for event in STREAM[8:]:
        session.publish(event)
    monkeypatch.setattr(session.log, "_write", real_write)
    assert session.log.flush() is True
    assert _reloaded(engine, message_id) == _rendered(TurnView.replay(STREAM))


def test_flush_after_the_conversation_was_deleted_drops_the_turn(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=LOCAL_USER_ID)
    message_id = conv.start_assistant_message(engine, chat.id)
    log = EventLog(engine, message_id)
    log.append(CallStarted(1, "c1", "read_file", 0))
    conv.delete_conversation(engine, chat.id, owner=LOCAL_USER_ID)
    assert log.flush() is False
    assert log.needs_flush is False


def test_load_unknown_message_is_empty(engine: Engine) -> None:
    assert load_events(engine, "nope") == []


def test_an_unreadable_row_is_skipped_with_a_warning(
    engine: Engine, message_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    record_turn(engine, message_id, STREAM[:3])
    table = TurnEventRow.__table__  # type: ignore[attr-defined]
    with engine.begin() as connection:
        connection.execute(
            table.insert().values(message_id=message_id, seq=4, kind="Telepathy", data="{}")
        )
    with caplog.at_level(logging.WARNING):
        events = load_events(engine, message_id)
    assert [e.seq for e in events] == [1, 2, 3]
    assert "Telepathy" in caplog.text


def test_flushing_from_another_thread_while_appending_loses_nothing(
    engine: Engine, message_id: str
) -> None:
    session = turn_session(engine, message_id)
    stop = threading.Event()

    def flush_repeatedly() -> None:
        while not stop.is_set():
            session.log.flush()

    flusher = threading.Thread(target=flush_repeatedly)
    flusher.start()
    try:
        for event in STREAM:
            session.publish(event)
    finally:
        stop.set()
        flusher.join()
    session.log.flush()
    assert _reloaded(engine, message_id) == _rendered(TurnView.replay(STREAM))


def test_a_turn_stored_before_the_event_log_renders_identically_after_the_migration(
    tmp_path: Path,
) -> None:
    path = tmp_path / "legacy.db"
    fixture = write_legacy_database(path)
    engine = init_db(f"sqlite:///{path}")
    for message_id, expected in fixture["rendered"].items():
        view = TurnView.replay(load_events(engine, message_id))
        assert view.text == expected["text"]
        assert [type(p).__name__ for p in view.parts] == expected["parts"]
        assert [view.done, view.stop_reason, view.error] == expected["done"]
        for call_id, card in expected["cards"].items():
            assert (view.card_label(call_id), view.call(call_id).state) == (  # type: ignore[union-attr]
                card["label"],
                card["state"],
            )
        for group, header in expected["headers"].items():
            shown = view.group_header(int(group))
            assert (shown.text, shown.phase, shown.live) == (
                header["text"],
                header["phase"],
                header["live"],
            )
    chat_id = fixture["rows"]["conversations"][0]["id"]
    assert conv.history(engine, chat_id) == fixture["history"]
    with engine.connect() as connection:
        count = connection.execute(select(func.count()).select_from(TurnEventRow)).scalar_one()
    assert count > 0
