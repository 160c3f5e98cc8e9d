"""Turn sessions: one run, one seq counter, one view, a log, and any number of feeds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import (
    ORPHAN_ERROR,
    TurnAlreadyRunning,
    TurnRequest,
    TurnSession,
    TurnSessions,
)
from intent_ui.config import AppConfig
from intent_ui.core.events import (
    ArgsComplete,
    CallBackgrounded,
    CallStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, load_events
from tests.support.scripted_runtime import ScriptedRuntime, settle
from tests.support.turn_calls import call_in

ARGS = '{"intent": "Searching for OAuth", "query": "oauth"}'


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


def _sessions(engine: Engine, runtime: Any) -> TurnSessions:
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    return TurnSessions(
        engine=engine, runtime=runtime, config=config, clock=lambda: 1000.0, flush_interval=0.01
    )


async def _started(engine: Engine, chat_id: str) -> tuple[ScriptedRuntime, TurnSession]:
    """A turn ("hi") started on a scripted runtime, which holds its run."""
    runtime = ScriptedRuntime()
    session = await _sessions(engine, runtime).start(TurnRequest(chat_id, "hi", "demo", "demo"))
    return runtime, session


async def test_every_seq_comes_from_the_session_and_times_are_stamped(
    engine: Engine, chat_id: str
) -> None:
    runtime, session = await _started(engine, chat_id)
    run = runtime.runs[0]
    assert runtime.calls[0]["seq"] is session.seq
    run.emit(CallStarted, "c1", "search_code", 0, label_bearing=True)
    run.fail(RuntimeError("provider adapter exploded"))
    await session.wait()
    seqs = [e.seq for e in load_events(engine, session.message_id)]
    assert seqs == [1, 2]
    view = TurnView.replay(load_events(engine, session.message_id))
    assert call_in(view, "c1").started_at == 1000.0
    assert view.stop_reason == "error"
    assert "provider adapter exploded" in (view.error or "")


async def test_a_crashed_run_still_ends_the_turn_for_every_view(
    engine: Engine, chat_id: str
) -> None:
    runtime = ScriptedRuntime()
    sessions = _sessions(engine, runtime)
    session = await sessions.start(TurnRequest(chat_id, "hi", "demo", "demo"))
    events: list[TurnEvent] = []
    session.observers.append(lambda event, _view: events.append(event))
    runtime.runs[0].emit(TextDelta, "Working")
    runtime.runs[0].fail(ValueError("boom"))
    await session.wait()
    assert isinstance(events[-1], TurnDone) and events[-1].stop_reason == "error"
    await session.wait()
    message = conv.messages(engine, chat_id)[-1]
    assert (message.status, message.content) == ("error", "Working")
    assert sessions.running(chat_id) is None


async def test_a_run_that_stops_without_an_end_is_ended(engine: Engine, chat_id: str) -> None:
    runtime, session = await _started(engine, chat_id)
    runtime.runs[0].close()
    await session.wait()
    assert session.view.done and session.view.stop_reason == "error"


async def test_a_background_call_left_at_the_end_is_cancelled_not_left_in_flight(
    engine: Engine, chat_id: str
) -> None:
    runtime, session = await _started(engine, chat_id)
    run = runtime.runs[0]
    run.emit(CallStarted, "bg", "run_tests", 0, label_bearing=True)
    run.emit(ArgsComplete, "bg", '{"intent": "Running the test suite"}')
    run.emit(CallBackgrounded, "bg")
    run.emit(TurnDone, "end_turn")
    await session.wait()
    view = TurnView.replay(load_events(engine, session.message_id))
    orphan = call_in(view, "bg")
    assert (orphan.state, orphan.error) == ("cancelled", ORPHAN_ERROR)
    assert [e.seq for e in load_events(engine, session.message_id)] == [1, 2, 3, 5, 6]


async def test_one_turn_per_conversation_and_stop_from_any_view(
    engine: Engine, chat_id: str
) -> None:
    runtime = ScriptedRuntime()
    sessions = _sessions(engine, runtime)
    first = sessions.start(TurnRequest(chat_id, "one", "demo", "demo"))
    second = sessions.start(TurnRequest(chat_id, "two", "demo", "demo"))
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[1], TurnAlreadyRunning)
    session = results[0]
    assert isinstance(session, TurnSession)
    assert sessions.running(chat_id) is session
    # Another tab finds the same session by conversation and stops it.
    found = sessions.running(chat_id)
    assert found is not None
    found.stop()
    assert runtime.runs[0].stop.is_set()
    runtime.runs[0].emit(TurnDone, "cancelled")
    await session.wait()
    await settle()
    assert sessions.running(chat_id) is None
    assert [m.role for m in conv.messages(engine, chat_id)] == ["user", "assistant"]


async def test_the_history_sent_to_the_model_comes_from_the_stored_turns(
    engine: Engine, chat_id: str
) -> None:
    runtime = ScriptedRuntime()
    sessions = _sessions(engine, runtime)
    session = await sessions.start(TurnRequest(chat_id, "first", "demo", "demo"))
    runtime.runs[0].emit(TextDelta, "Answer one.")
    runtime.runs[0].emit(TurnDone, "end_turn")
    await session.wait()
    await settle()
    await sessions.start(TurnRequest(chat_id, "second", "demo", "demo"))
    assert runtime.calls[1]["history"] == [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "Answer one."},
    ]
    assert runtime.calls[1]["user_message"] == "second"


async def test_a_real_demo_turn_is_stored_and_replays_as_it_streamed(
    engine: Engine, chat_id: str, oauth_demo: AppConfig
) -> None:
    config = oauth_demo
    async with AgentRuntime(config) as runtime:
        sessions = TurnSessions(engine=engine, runtime=runtime, config=config)
        session = await sessions.start(
            TurnRequest(chat_id, "search for OAuth and MCP", "demo", "demo")
        )
        await session.wait()
    stored = TurnView.replay(load_events(engine, session.message_id))
    assert [stored.card_label(c.call_id) for c in stored.calls()] == [
        session.view.card_label(c.call_id) for c in session.view.calls()
    ]
    assert sorted(c.outcome or "" for c in stored.calls()) == [
        "Found 1 match for OAuth",
        "No matches for MCP",
    ]
    assert stored.text == session.view.text and stored.done


def test_the_log_writer_merges_nothing_across_a_state_change(engine: Engine) -> None:
    log = EventLog(engine, "m")
    log.append(TextDelta(1, "a"))
    log.append(CallStarted(2, "c", "t", 0))
    log.append(TextDelta(3, "b"))
    assert [(row.seq, row.kind) for row in log._rows] == [
        (1, "TextDelta"),
        (2, "CallStarted"),
        (3, "TextDelta"),
    ]


async def test_a_lone_surrogate_in_the_message_is_replaced_before_anything_stores_it(
    engine: Engine, chat_id: str
) -> None:
    runtime = ScriptedRuntime()
    session = await _sessions(engine, runtime).start(
        TurnRequest(chat_id, "broken \ud800 text", "demo", "demo")
    )
    assert runtime.calls[0]["user_message"] == "broken \ufffd text"
    runtime.runs[0].emit(TurnDone, "end_turn")
    await session.wait()
    assert conv.messages(engine, chat_id)[0].content == "broken \ufffd text"
