"""Recording a streaming turn and rebuilding an identical view after a reload or a crash."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.ledger import derive_anchors
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.db import dispose_engines
from intent_ui.store.models import LOCAL_USER_ID, Message, ToolCall
from intent_ui.store.turns import (
    TurnRecorder,
    load_turn_events,
    mark_interrupted,
    settled_times,
)
from tests.unit._store_helpers import migrated_engine

SEARCH_ARGS = '{"intent": "Searching for OAuth", "query": "oauth"}'
READ_ARGS = '{"intent": "Reading the config file", "path": "conf/app.yaml"}'

# Two parallel label-bearing calls whose argument chunks interleave and which settle out
# of order, then a second block with a plain call that fails, an activity label, the end.
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
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.delenv("DB_URL", raising=False)
    yield migrated_engine(tmp_path)
    dispose_engines()


@pytest.fixture
def message_id(engine: Engine) -> str:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=LOCAL_USER_ID)
    conv.add_user_message(engine, chat.id, "Find the OAuth config")
    return conv.start_assistant_message(engine, chat.id)


def _recorder(engine: Engine, message_id: str) -> TurnRecorder:
    ticks = iter(range(10_000))
    return TurnRecorder(engine, message_id, now=lambda: float(next(ticks)))


def _rendered(view: TurnView) -> dict[str, Any]:
    """What a user sees: parts, each call's record and card label, each block's header."""
    return {
        "parts": view.parts,
        "calls": view.calls(),
        "cards": {c.call_id: view.card_label(c.call_id, "en") for c in view.calls()},
        "headers": {b: view.block_header(b, "en") for b in view.blocks()},
        "text": view.text,
        "done": (view.done, view.stop_reason, view.error),
    }


def _reloaded(engine: Engine, message_id: str) -> dict[str, Any]:
    return _rendered(TurnView.replay(load_turn_events(engine, message_id)))


def _row(engine: Engine, model: type, **where: str) -> Any:
    table = model.__table__  # type: ignore[attr-defined]
    statement = select(table)
    for name, value in where.items():
        statement = statement.where(table.c[name] == value)
    with engine.connect() as connection:
        return connection.execute(statement).one()


def test_reload_after_every_flush_renders_the_same_view(engine: Engine, message_id: str) -> None:
    recorder = _recorder(engine, message_id)
    live = TurnView()
    for event in STREAM:
        recorder.apply(event)
        live.apply(event)
        recorder.flush()
        assert _reloaded(engine, message_id) == _rendered(live), f"after seq {event.seq}"


@pytest.mark.parametrize("flush_after", [{3, 6, 12, 20}, {5, 9, 17, 20}, {20}])
def test_reload_at_sparse_flush_points_including_mid_argument(
    engine: Engine, message_id: str, flush_after: set[int]
) -> None:
    recorder = _recorder(engine, message_id)
    live = TurnView()
    for event in STREAM:
        recorder.apply(event)
        live.apply(event)
        if event.seq in flush_after:
            recorder.flush()
            assert _reloaded(engine, message_id) == _rendered(live), f"after seq {event.seq}"


def test_reload_mid_argument_shows_the_partial_intent_and_live_header(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM[:6]:  # up to c1's second fragment
        recorder.apply(event)
    recorder.flush()
    view = TurnView.replay(load_turn_events(engine, message_id))
    assert view.card_label("c1") == "Searching for OAuth"
    assert view.card_label("c2") == "Reading the "
    # c2's intent showed up after c1's (seq 5 > 4): it is the live edge of the block.
    assert view.block_header(0).text == "Reading the "
    assert view.block_header(0).live is True


def test_out_of_order_settlement_does_not_rewind_the_header_after_reload(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM[:12]:  # c2 settles at 11, c1 at 12
        recorder.apply(event)
    recorder.flush()
    view = TurnView.replay(load_turn_events(engine, message_id))
    assert view.block_header(0).text == "Found 3 matches for OAuth"
    assert view.card_label("c2") == "Read the config file"


def test_stored_rows_keep_the_raw_arguments_and_label_sequence(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM:
        recorder.apply(event)
    recorder.flush()
    c1 = _row(engine, ToolCall, call_id="c1")
    assert (c1.args_text, c1.status, c1.outcome, c1.server) == (
        SEARCH_ARGS,
        "settled",
        "Found 3 matches for OAuth",
        "github",
    )
    assert c1.args_json == '{"intent":"Searching for OAuth","query":"oauth"}'
    assert (c1.started_seq, c1.intent_seq, c1.seq, c1.settled_seq) == (2, 4, 12, 12)
    c3 = _row(engine, ToolCall, call_id="c3")
    assert (c3.status, c3.error, c3.label_bearing, c3.intent_seq) == (
        "error",
        "permission denied",
        False,
        None,
    )
    message = _row(engine, Message, id=message_id)
    assert message.content == "Looking into it. Both done. Done."
    assert message.status == "complete"
    assert message.activity_labels_json == '{"0":"Found the OAuth config"}'


def test_crash_midway_reloads_as_cancelled_with_the_text_so_far(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM[:7]:
        recorder.apply(event)
    recorder.flush()
    recorder.apply(ArgsComplete(8, "c2", READ_ARGS))  # never flushed: lost in the crash
    del recorder

    assert mark_interrupted(engine, now=lambda: 99.0) == 1

    message = _row(engine, Message, id=message_id)
    assert (message.status, message.stop_reason) == ("cancelled", "interrupted")
    view = TurnView.replay(load_turn_events(engine, message_id))
    assert view.text == "Looking into it. "
    assert [c.state for c in view.calls()] == ["cancelled", "cancelled"]
    assert view.card_label("c1") == "Cancelled: Searching for OAuth"
    assert view.card_label("c2") == "Cancelled: Reading the config file"
    assert view.done is True
    assert view.block_header(0).live is False


def test_mark_interrupted_leaves_finished_turns_alone(engine: Engine, message_id: str) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM:
        recorder.apply(event)
    recorder.flush()
    before = _reloaded(engine, message_id)
    assert mark_interrupted(engine) == 0
    assert _reloaded(engine, message_id) == before


def test_mark_interrupted_cancels_an_orphaned_background_call(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    for event in [
        CallStarted(1, "bg", "run_tests", 0, label_bearing=True),
        ArgsComplete(2, "bg", '{"intent": "Running the test suite"}'),
        CallBackgrounded(3, "bg"),
        TurnDone(4, "end_turn"),
    ]:
        recorder.apply(event)
    recorder.flush()
    assert TurnView.replay(load_turn_events(engine, message_id)).call("bg").state == "background"  # type: ignore[union-attr]

    mark_interrupted(engine)
    view = TurnView.replay(load_turn_events(engine, message_id))
    assert view.card_label("bg") == "Cancelled: Running the test suite"


def test_background_call_settling_after_the_turn_reloads_identically(
    engine: Engine, message_id: str
) -> None:
    events: list[TurnEvent] = [
        CallStarted(1, "bg", "run_tests", 0, label_bearing=True),
        ArgsDelta(2, "bg", '{"intent": "Running the test suite"}'),
        ArgsComplete(3, "bg", '{"intent": "Running the test suite"}'),
        CallBackgrounded(4, "bg"),
        CallStarted(5, "fg", "read_file", 0, label_bearing=True),
        ArgsComplete(6, "fg", '{"intent": "Reading the log"}'),
        CallSettled(7, "fg", "settled", output="ok"),
        TurnDone(8, "end_turn"),
        CallSettled(9, "bg", "settled", output="42 passed", outcome="42 tests passed"),
    ]
    recorder = _recorder(engine, message_id)
    live = TurnView()
    for event in events:
        recorder.apply(event)
        live.apply(event)
        if recorder.should_flush_now(event):
            recorder.flush()
            assert _reloaded(engine, message_id) == _rendered(live), f"after seq {event.seq}"


def test_stopped_turn_cancels_unfinished_calls(engine: Engine, message_id: str) -> None:
    events: list[TurnEvent] = [*STREAM[:6], TurnDone(7, "cancelled")]
    recorder = _recorder(engine, message_id)
    live = TurnView.replay(events)
    for event in events:
        recorder.apply(event)
    recorder.flush()
    assert _row(engine, Message, id=message_id).status == "cancelled"
    assert _row(engine, ToolCall, call_id="c1").status == "cancelled"
    assert _reloaded(engine, message_id) == _rendered(live)


def test_errored_turn_records_the_error(engine: Engine, message_id: str) -> None:
    events: list[TurnEvent] = [*STREAM[:6], TurnDone(7, "error", error="provider timed out")]
    recorder = _recorder(engine, message_id)
    for event in events:
        recorder.apply(event)
    recorder.flush()
    message = _row(engine, Message, id=message_id)
    assert (message.status, message.error) == ("error", "provider timed out")
    call = _row(engine, ToolCall, call_id="c2")
    assert (call.status, call.error) == ("cancelled", "provider timed out")
    assert _reloaded(engine, message_id) == _rendered(TurnView.replay(events))


def test_apply_does_no_database_io(tmp_path: Path, message_id: str) -> None:
    unreachable = create_engine(f"sqlite:///{tmp_path / 'missing' / 'dir.db'}")
    recorder = TurnRecorder(unreachable, message_id)
    for event in STREAM:
        recorder.apply(event)  # would raise if it touched the database
    assert recorder.needs_flush is True


def test_flush_with_nothing_pending_is_a_no_op(engine: Engine, message_id: str) -> None:
    recorder = _recorder(engine, message_id)
    assert recorder.needs_flush is False
    assert recorder.flush() is False
    recorder.apply(TextDelta(1, "Hi"))
    assert recorder.needs_flush is True
    assert recorder.flush() is True
    assert recorder.needs_flush is False
    assert recorder.flush() is False


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
        (TurnDone(1, "end_turn"), True),
    ],
)
def test_should_flush_now_only_on_state_changes(event: TurnEvent, now: bool) -> None:
    assert TurnRecorder.should_flush_now(event) is now


def test_events_for_unknown_calls_are_ignored(engine: Engine, message_id: str) -> None:
    recorder = _recorder(engine, message_id)
    for event in [
        ArgsDelta(1, "ghost", '{"intent": "Boo"}'),
        ArgsComplete(2, "ghost", "{}"),
        CallBackgrounded(3, "ghost"),
        CallSettled(4, "ghost", "settled"),
    ]:
        recorder.apply(event)
    recorder.flush()
    assert load_turn_events(engine, message_id) == []


def test_flush_after_the_conversation_was_deleted_drops_the_turn(engine: Engine) -> None:
    chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=LOCAL_USER_ID)
    message_id = conv.start_assistant_message(engine, chat.id)
    recorder = _recorder(engine, message_id)
    recorder.apply(CallStarted(1, "c1", "read_file", 0))
    conv.delete_conversation(engine, chat.id, owner=LOCAL_USER_ID)
    assert recorder.flush() is False
    assert recorder.needs_flush is False


def test_load_unknown_message_is_empty(engine: Engine) -> None:
    assert load_turn_events(engine, "nope") == []


def test_streaming_turn_has_no_turn_done(engine: Engine, message_id: str) -> None:
    recorder = _recorder(engine, message_id)
    for event in STREAM[:3]:
        recorder.apply(event)
    recorder.flush()
    assert not any(isinstance(e, TurnDone) for e in load_turn_events(engine, message_id))


def test_flushing_from_another_thread_while_applying_loses_nothing(
    engine: Engine, message_id: str
) -> None:
    recorder = _recorder(engine, message_id)
    stop = threading.Event()

    def flush_repeatedly() -> None:
        while not stop.is_set():
            recorder.flush()

    flusher = threading.Thread(target=flush_repeatedly)
    flusher.start()
    try:
        for event in STREAM:
            recorder.apply(event)
    finally:
        stop.set()
        flusher.join()
    recorder.flush()
    assert _reloaded(engine, message_id) == _rendered(TurnView.replay(STREAM))


def test_anchor_ledger_derives_from_stored_rows(engine: Engine, message_id: str) -> None:
    recorder = TurnRecorder(engine, message_id, now=lambda: 42.0)
    for event in STREAM:
        recorder.apply(event)
    recorder.flush()
    view = TurnView.replay(load_turn_events(engine, message_id))
    anchors = derive_anchors(view, timestamps=settled_times(engine, message_id))
    assert [(a.tool_call_id, a.intent, a.outcome, a.status, a.ts) for a in anchors] == [
        ("c2", "Reading the config file", "Read the config file", "success", 42.0),
        ("c1", "Searching for OAuth", "Found 3 matches for OAuth", "success", 42.0),
    ]
