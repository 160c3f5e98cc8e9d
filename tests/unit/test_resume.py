"""A turn waiting for the user when the server stops goes on after it starts again: the
real runtime and run loop (a scripted provider), two `TurnSessions` standing for the
process before and after the restart, one database."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sqlalchemy import Engine

from intent_ui.agent.pauses import decision_from
from intent_ui.agent.resume import resume_turns, waiting_turns
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnRequest, TurnSession, TurnSessions
from intent_ui.config import AppConfig, EndpointConfig
from intent_ui.core.events import ApprovalRequested, QuestionAsked, SubagentStarted
from intent_ui.core.pause_cards import approval_entry, pause_state
from intent_ui.core.pauses import RESTARTED_ERROR
from intent_ui.core.resume import can_resume
from intent_ui.core.states import FINAL_STATES
from intent_ui.core.turn import TurnView
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, load_events, mark_interrupted
from tests.support.loop_runtime import CAREFUL_SPEC, LoopRuntime, loop_config
from tests.support.run_loop import GUARD, ScriptedProvider, call, end
from tests.support.turn_scripts import Script

DELETE = {"intent": "Deleting the old notes", "path": "notes.txt"}
EDITED = {"intent": "Deleting the stale notes only", "path": "stale.txt"}


async def until(check: object, what: str) -> None:
    """Wait (bounded) until `check()` is true."""
    assert callable(check)
    for _ in range(int(GUARD / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def waiting_turn(
    engine: Engine, tmp_path: Path, first: ScriptedProvider, agent_id: str = CAREFUL_SPEC
) -> tuple[TurnSessions, TurnSession, str]:
    """A turn started before the restart, now waiting for the user."""
    config = loop_config(tmp_path)
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    runtime = LoopRuntime(config, first)
    await runtime.start()
    sessions = TurnSessions(engine=engine, runtime=runtime, config=config, flush_interval=0.01)
    request = TurnRequest(str(chat.id), "tidy the notes", "demo", "m", agent_id=agent_id)
    session = await sessions.start(request)
    await until(lambda: session.view.waiting(), "the approval")
    return sessions, session, str(chat.id)


async def restart(
    engine: Engine, tmp_path: Path, sessions: TurnSessions, then: ScriptedProvider
) -> TurnSessions:
    """Stop the first process (cleanly) and start the second, as the host does."""
    await asyncio.wait_for(sessions.aclose(), GUARD)
    found = waiting_turns(engine)
    assert mark_interrupted(engine, keep={t.message_id for t in found}) == 0
    config = loop_config(tmp_path)
    runtime = LoopRuntime(config, then)
    await runtime.start()
    after = TurnSessions(engine=engine, runtime=runtime, config=config, flush_interval=0.01)
    assert await resume_turns(after, found) == []
    return after


async def test_an_approval_waiting_at_a_restart_is_asked_again_and_the_turn_goes_on(
    engine: Engine, tmp_path: Path
) -> None:
    (tmp_path / "stale.txt").write_text("old")
    (tmp_path / "notes.txt").write_text("keep")
    first = ScriptedProvider([*call("c1", "delete_file", DELETE), end("tool_use")])
    sessions, before, chat_id = await waiting_turn(engine, tmp_path, first)
    await until(
        lambda: TurnView.replay(load_events(engine, before.message_id)).waiting(), "the log"
    )

    then = ScriptedProvider(
        [*call("c2", "list_directory", {"intent": "Listing", "path": "."}), end("tool_use")],
        [end()],
    )
    after = await restart(engine, tmp_path, sessions, then)
    session = after.running(chat_id)
    assert session is not None and session.message_id == before.message_id
    # Stopped cleanly, the turn was left waiting in the store, not ended.
    assert conv_store.get_message(engine, chat_id, before.message_id).status == "streaming"  # type: ignore[union-attr]
    assert [p.call_id for p in session.view.waiting()] == ["c1"]
    assert session.view.card_label("c1") == "Deleting the old notes"

    # The user rewrites the call, intent included, and approves it.
    assert session.pauses is not None
    decision = decision_from("once", arguments=json.dumps(EDITED))
    await until(lambda: "c1" in session.pauses.waiting, "the wait")
    assert session.pauses.decide("c1", decision).ok
    await asyncio.wait_for(session.wait(), GUARD)

    assert not (tmp_path / "stale.txt").exists()
    assert (tmp_path / "notes.txt").read_text() == "keep"  # the edited path ran, not the first
    events = load_events(engine, before.message_id)
    assert len([e for e in events if isinstance(e, ApprovalRequested)]) == 1  # asked once
    view = TurnView.replay(events)
    assert (view.stop_reason, view.error) == ("end_turn", None)
    c1 = view.call("c1")
    assert c1 is not None and c1.state == "settled"
    assert c1.intent == "Deleting the stale notes only"  # the rewritten intent is stored
    assert view.card_label("c1") == "Deleted stale.txt"
    pause = view.pause("c1")
    assert pause is not None and pause.edited and pause.verdict == "approved"
    # The model reads the user's words, the approved call with its edited arguments and
    # its result, then the call of the resumed round's next response.
    (resumed_request, last) = then.requests
    messages = resumed_request.messages
    assert messages[0] == {"role": "user", "content": "tidy the notes"}
    assert json.loads(messages[1]["tool_calls"][0]["arguments"]) == EDITED
    assert messages[2]["tool_call_id"] == "c1" and not messages[2]["is_error"]
    assert [m.get("tool_call_id") for m in last.messages if m["role"] == "tool"] == ["c1", "c2"]
    assert conv_store.get_message(engine, chat_id, before.message_id).status == "complete"  # type: ignore[union-attr]


async def test_a_question_waiting_at_a_restart_is_answered_after_it(
    engine: Engine, tmp_path: Path
) -> None:
    question = {"intent": "Asking which notes", "question": "Which notes?", "choices": ["old"]}
    first = ScriptedProvider([*call("q1", "ask_user_question", question), end("tool_use")])
    sessions, before, chat_id = await waiting_turn(engine, tmp_path, first, agent_id="default")
    then = ScriptedProvider([end()])
    after = await restart(engine, tmp_path, sessions, then)
    session = after.running(chat_id)
    assert session is not None and session.pauses is not None
    await until(lambda: "q1" in session.pauses.waiting, "the wait")
    assert session.pauses.answer("q1", "the old ones").ok
    await asyncio.wait_for(session.wait(), GUARD)
    events = load_events(engine, before.message_id)
    assert len([e for e in events if isinstance(e, QuestionAsked)]) == 1
    (request,) = then.requests
    assert request.messages[-1]["content"] == "the old ones"
    assert TurnView.replay(events).stop_reason == "end_turn"


def test_a_turn_with_a_call_still_running_beside_the_wait_cannot_resume() -> None:
    waiting = json.dumps(DELETE)
    script = Script().start("c1", 0, tool="delete_file").args("c1", waiting)
    script.complete("c1", waiting).start("c2", 0, tool="grep_search").args("c2", "{}")
    script.complete("c2", "{}").ask_approval("c1")
    assert not can_resume(TurnView.replay(script.events))
    # Once the other call has settled, only the person is left in flight.
    assert can_resume(TurnView.replay(script.settle("c2", output="none").events))


async def test_a_turn_left_waiting_by_a_process_that_died_resumes_and_a_denial_is_read(
    engine: Engine, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    asked = conv_store.add_user_message(engine, str(chat.id), "tidy the notes")
    message_id = conv_store.start_assistant_message(engine, str(chat.id), parent_id=asked)
    turn = {"endpoint": "demo", "model": "m", "agent_id": CAREFUL_SPEC, "user_id": LOCAL_USER_ID}
    arguments = json.dumps(DELETE)
    script = Script().text("Cleaning up.").start("c1", 0, tool="delete_file")
    script.args("c1", arguments).complete("c1", arguments).ask_approval("c1", turn=turn)
    log = EventLog(engine, message_id)
    for event in script.events:  # all the process wrote before it died
        log.append(event)
    log.flush()

    then = ScriptedProvider([end()])
    found = waiting_turns(engine)
    assert [t.message_id for t in found] == [message_id]
    config = loop_config(tmp_path)
    runtime = LoopRuntime(config, then)
    await runtime.start()
    after = TurnSessions(engine=engine, runtime=runtime, config=config, flush_interval=0.01)
    assert await resume_turns(after, found) == []
    session = after.running(str(chat.id))
    assert session is not None and session.pauses is not None
    await until(lambda: "c1" in session.pauses.waiting, "the wait")
    assert session.pauses.decide("c1", decision_from("deny", "keep them")).ok
    await asyncio.wait_for(session.wait(), GUARD)

    assert (tmp_path / "notes.txt").exists()
    (request,) = then.requests
    assistant, result = request.messages[-2:]
    assert assistant["content"] == "Cleaning up."  # the waiting round's own text
    assert result["is_error"] and "keep them" in result["content"]
    view = TurnView.replay(load_events(engine, message_id))
    assert view.stop_reason == "end_turn" and view.call("c1").state == "cancelled"  # type: ignore[union-attr]


# --- a subagent's call waiting at a restart -----------------------------------------------

AUDIT = "delegate the audit of the callback router to Auditor"


async def delegated_and_waiting(
    engine: Engine, tmp_path: Path
) -> tuple[TurnSessions, TurnSession, str]:
    """On the demo model, the agent Lead delegates an audit to the saved agent Auditor,
    whose read asks first: the parent turn waits for the child's approval."""
    (tmp_path / "callbacks").mkdir()
    (tmp_path / "callbacks" / "router.py").write_text("def route(path):  # the callback router\n")
    lead = agent_store.create_agent(engine, owner=LOCAL_USER_ID, name="Lead", tools=["subagent"])
    agent_store.create_agent(
        engine,
        owner=LOCAL_USER_ID,
        name="Auditor",
        tools=["grep_search", "read_file"],
        tool_options={"read_file": {"require_approval": True}},
    )
    config = AppConfig(workspace=tmp_path, endpoints=[EndpointConfig(kind="demo")])
    runtime = AgentRuntime(config, pacing_ms=0)
    await runtime.start()
    sessions = TurnSessions(engine=engine, runtime=runtime, config=config, flush_interval=0.01)
    chat = conv_store.create_conversation(
        engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
    )
    request = TurnRequest(str(chat.id), AUDIT, "demo", "demo", agent_id=str(lead.id))
    session = await sessions.start(request)
    await until(lambda: session.view.waiting(), "the child's approval")
    return sessions, session, str(chat.id)


def assert_ended_saying_the_server_restarted(view: TurnView, waited: str) -> None:
    """The turn ended with the restart message; the child's waiting call did not run and
    its approval card reads as not decided; the parent call settled too."""
    assert view.done and view.error_kind == "restarted"
    assert (view.stop_reason, view.error) == ("interrupted", RESTARTED_ERROR)
    assert not view.waiting()
    child = view.call(waited)
    assert child is not None and child.state == "cancelled" and child.parent is not None
    parent = view.call(child.parent)
    assert parent is not None and parent.state in FINAL_STATES
    pause = view.pause(waited)
    assert pause is not None and pause_state(pause, child) == "expired"
    assert approval_entry(view, pause, "en")["decision"] == "Not decided: the turn ended first"


async def test_a_subagents_approval_waiting_at_a_clean_stop_ends_the_turn_saying_so(
    engine: Engine, tmp_path: Path
) -> None:
    sessions, session, chat_id = await delegated_and_waiting(engine, tmp_path)
    (waited,) = [pause.call_id for pause in session.view.waiting()]
    assert "~" in waited  # the child's call, waiting in the parent turn
    # A child's wait cannot be rebuilt: its child turn lived in the process.
    assert not can_resume(session.view)

    await asyncio.wait_for(sessions.aclose(), GUARD)  # never hangs on the child's wait
    assert waiting_turns(engine) == []
    assert mark_interrupted(engine) == 0  # the stop itself ended the turn
    events = load_events(engine, session.message_id)
    stored = TurnView.replay(events)
    assert_ended_saying_the_server_restarted(stored, waited)
    # Nothing the session published is missing from the log: the child's start, its
    # calls and its approval request replay as the session saw them.
    assert stored.last_seq == session.view.last_seq
    assert [(c.call_id, c.state) for c in stored.calls()] == [
        (c.call_id, c.state) for c in session.view.calls()
    ]
    assert len([e for e in events if isinstance(e, SubagentStarted)]) == 1
    assert [e.call_id for e in events if isinstance(e, ApprovalRequested)] == [waited]
    message = conv_store.get_message(engine, chat_id, session.message_id)
    assert message is not None and message.status == "error"


async def test_a_subagents_approval_left_waiting_by_a_process_that_died_ends_saying_so(
    engine: Engine, tmp_path: Path
) -> None:
    sessions, session, chat_id = await delegated_and_waiting(engine, tmp_path)
    (waited,) = [pause.call_id for pause in session.view.waiting()]
    await until(
        lambda: TurnView.replay(load_events(engine, session.message_id)).waiting(), "the log"
    )
    flushed = load_events(engine, session.message_id)
    # What the process wrote before it died, as another turn's log (this process goes on
    # and ends its own turn).
    asked = conv_store.add_user_message(engine, chat_id, AUDIT)
    message_id = conv_store.start_assistant_message(engine, chat_id, parent_id=asked)
    log = EventLog(engine, message_id)
    for event in flushed:
        log.append(event)
    log.flush()
    await asyncio.wait_for(sessions.aclose(), GUARD)

    assert message_id not in {t.message_id for t in waiting_turns(engine)}
    assert mark_interrupted(engine) == 1
    ended = TurnView.replay(load_events(engine, message_id))
    assert_ended_saying_the_server_restarted(ended, waited)
    # The end comes after everything that was flushed, which replays as it was written.
    before = TurnView.replay(flushed)
    assert ended.last_seq > before.last_seq
    assert [c.call_id for c in ended.calls()] == [c.call_id for c in before.calls()]
    for record in before.calls():
        assert ended.arguments(record.call_id) == before.arguments(record.call_id)
