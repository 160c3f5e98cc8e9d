"""Approvals and questions against the running loop: a call that asks first waits for the
decision, a question for its answer; what the model then reads, what the tool receives,
and what the log replays (the HITL rows of the composition matrix among them)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.pauses import Decision, PausePolicy, Pauses, decision_from, pause_policy
from intent_ui.agent.questions import NO_ANSWER
from intent_ui.agent.run import TurnRun
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.agent.tools.base import ToolResult
from intent_ui.config import AppConfig
from intent_ui.core.events import (
    ApprovalDecided,
    ApprovalRequested,
    ArgsComplete,
    CallSettled,
    QuestionAnswered,
    QuestionAsked,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.failures import describe_failure
from intent_ui.core.pauses import DENIAL_LEAD, RESTARTED_ERROR
from intent_ui.core.turn import TurnView
from intent_ui.store import agents as agent_store
from intent_ui.store import conversations as conv_store
from intent_ui.store.approvals import conversation_approvals
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, load_events, mark_interrupted
from tests.support.run_loop import (
    DELETE,
    GUARD,
    FakeTool,
    OnEvent,
    ScriptedProvider,
    call,
    collect,
    delete_tool,
    end,
    make_run,
    of,
    tool_message,
)
from tests.support.scripted_runtime import ScriptedRuntime, restamped, settle
from tests.support.turn_scripts import Script

ASKS_FIRST = {"*": {"describe_intent": True}, "delete_file": {"require_approval": True}}


def deciding(*decisions: Decision) -> OnEvent:
    """Answers each approval request, in order, with the next decision."""
    queue = list(decisions)

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested) and queue:
            assert run.pauses.decide(event.call_id, queue.pop(0)).ok

    return on_event


def rounds(*calls: Sequence[Any]) -> ScriptedProvider:
    """One provider response per call list, then a short reply."""
    return ScriptedProvider(*([*c, end()] for c in calls))


async def test_a_call_that_asks_first_waits_and_the_request_carries_its_intent() -> None:
    tool = delete_tool()
    seen: list[tuple[int, str | None]] = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            # The payload of the interrupt: the call's intent, which already streamed.
            seen.append((len(tool.seen), view.card_label(event.call_id)))
            run.pauses.decide(event.call_id, decision_from("once"))

    view = TurnView()
    run = make_run(rounds(call("c1", "delete_file", DELETE)), [tool], tool_options=ASKS_FIRST)

    def both(event: TurnEvent, r: TurnRun) -> None:
        view.apply(event)
        on_event(event, r)

    events = await collect(run, both)
    assert seen == [(0, "Deleting the staging migrations")]  # nothing ran before the decision
    (request,) = of(events, ApprovalRequested)
    assert (request.tool_id, request.agent_scope) == ("delete_file", False)
    kinds = [type(e) for e in events]
    assert kinds.index(ArgsComplete) < kinds.index(ApprovalRequested) < kinds.index(CallSettled)
    # Approved: the tool ran with what it declares, the intent stripped as ever.
    assert tool.seen == [{"path": "migrations/staging"}]


async def test_other_tools_run_without_asking() -> None:
    tool, other = delete_tool(), FakeTool("grep_search")
    provider = rounds([*call("g", "grep_search", {"intent": "Searching", "pattern": "x"})])
    events = await collect_plain(make_run(provider, [tool, other], tool_options=ASKS_FIRST))
    assert of(events, ApprovalRequested) == [] and other.seen == [{"pattern": "x"}]


async def collect_plain(run: TurnRun) -> list[TurnEvent]:
    return await collect(run, lambda event, run: None)


async def test_deny_sends_the_reason_to_the_model_and_runs_nothing() -> None:
    tool = delete_tool()
    provider = rounds(call("c1", "delete_file", DELETE))
    run = make_run(provider, [tool], tool_options=ASKS_FIRST)
    events = await collect(run, deciding(decision_from("deny", "not the staging ones")))
    assert tool.seen == []
    (settled,) = of(events, CallSettled)
    assert settled.state == "cancelled"
    result = tool_message(provider, 1, "c1")
    assert result["content"] == f"{DENIAL_LEAD} Their reason: not the staging ones"
    assert result["is_error"] is True
    (decided,) = of(events, ApprovalDecided)
    assert (decided.verdict, decided.reason) == ("denied", "not the staging ones")


async def test_an_edited_call_runs_with_the_new_arguments_and_its_new_intent() -> None:
    tool = delete_tool()
    edited = {"intent": "Deleting only the old migrations", "path": "migrations/old"}
    provider = rounds(call("c1", "delete_file", DELETE))
    run = make_run(provider, [tool], tool_options=ASKS_FIRST)
    events = await collect(run, deciding(decision_from("once", arguments=json.dumps(edited))))
    assert tool.seen == [{"path": "migrations/old"}]
    # The rewritten intent is the label, live and replayed from the log.
    replayed = TurnView.replay(events).call("c1")
    assert replayed is not None and replayed.intent == "Deleting only the old migrations"
    # And what the model reads back is the call as it ran.
    (assistant,) = [m for m in provider.requests[1].messages if m.get("tool_calls")]
    assert json.loads(assistant["tool_calls"][0]["arguments"]) == edited


async def test_edited_arguments_that_are_not_one_object_are_refused_and_the_call_waits() -> None:
    tool = delete_tool()
    answers: list[bool] = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            answers.append(
                run.pauses.decide(event.call_id, decision_from("once", arguments="[1]")).ok
            )
            answers.append(run.pauses.decide(event.call_id, decision_from("once")).ok)

    run = make_run(rounds(call("c1", "delete_file", DELETE)), [tool], tool_options=ASKS_FIRST)
    await collect(run, on_event)
    assert answers == [False, True] and tool.seen == [{"path": "migrations/staging"}]


@pytest.mark.parametrize("scope", ["conversation", "agent"])
async def test_always_skips_later_approvals_of_the_tool(scope: str) -> None:
    tool = delete_tool()
    remembered: list[str] = []

    async def remember(tool_id: str) -> None:
        remembered.append(tool_id)

    policy = PausePolicy(agent_scope=True, remember=remember)
    provider = rounds(
        call("c1", "delete_file", DELETE),
        call("c2", "delete_file", {**DELETE, "path": "b"}),
    )
    run = make_run(provider, [tool], tool_options=ASKS_FIRST, pauses=Pauses(policy))
    events = await collect(run, deciding(decision_from(scope)))
    assert [e.call_id for e in of(events, ApprovalRequested)] == ["c1"]
    assert [e.scope for e in of(events, ApprovalDecided)] == [scope]
    assert len(tool.seen) == 2
    assert remembered == (["delete_file"] if scope == "agent" else [])


async def test_always_covers_the_calls_of_the_tool_waiting_beside_it() -> None:
    tool = delete_tool()
    provider = rounds(
        [*call("c1", "delete_file", DELETE), *call("c2", "delete_file", {**DELETE, "path": "b"})]
    )
    decided: list[str] = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested) and event.call_id == "c2":
            run.pauses.decide("c1", decision_from("conversation"))
        if isinstance(event, ApprovalDecided):
            decided.append(event.call_id)

    run = make_run(provider, [tool], tool_options=ASKS_FIRST)
    await collect(run, on_event)
    assert sorted(decided) == ["c1", "c2"] and len(tool.seen) == 2


async def test_the_agent_scope_is_refused_where_the_agent_cannot_remember() -> None:
    verdicts = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            verdicts.append(run.pauses.decide(event.call_id, decision_from("agent")).ok)
            verdicts.append(run.pauses.decide(event.call_id, decision_from("once")).ok)

    run = make_run(
        rounds(call("c1", "delete_file", DELETE)), [delete_tool()], tool_options=ASKS_FIRST
    )
    await collect(run, on_event)
    assert verdicts == [False, True]


async def test_the_first_answer_wins() -> None:
    verdicts = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            # Two tabs answer the same card.
            verdicts.append(run.pauses.decide(event.call_id, decision_from("deny", "no")))
            verdicts.append(run.pauses.decide(event.call_id, decision_from("once")))

    tool = delete_tool()
    run = make_run(rounds(call("c1", "delete_file", DELETE)), [tool], tool_options=ASKS_FIRST)
    events = await collect(run, on_event)
    assert [v.ok for v in verdicts] == [True, False] and verdicts[1].stale
    assert len(of(events, ApprovalDecided)) == 1 and tool.seen == []


async def test_waiting_does_not_count_against_the_tool_timeout() -> None:
    tool = delete_tool()
    requested = asyncio.Event()

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            requested.set()

    run = make_run(
        rounds(call("c1", "delete_file", DELETE)),
        [tool],
        tool_options=ASKS_FIRST,
        tool_timeout=0.05,
    )
    driving = asyncio.create_task(collect(run, on_event))
    await asyncio.wait_for(requested.wait(), GUARD)
    await asyncio.sleep(0.2)  # four times the tool's timeout, spent waiting for the user
    assert run.pauses.decide("c1", decision_from("once")).ok
    events = await driving
    (settled,) = of(events, CallSettled)
    assert settled.state == "settled" and tool.seen


async def test_stopping_the_turn_while_it_waits_cancels_the_call() -> None:
    tool = delete_tool()

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, ApprovalRequested):
            run.stop()

    run = make_run(rounds(call("c1", "delete_file", DELETE)), [tool], tool_options=ASKS_FIRST)
    events = await collect(run, on_event)
    assert of(events, CallSettled)[0].state == "cancelled" and tool.seen == []
    assert of(events, TurnDone)[0].stop_reason == "cancelled"
    view = TurnView.replay(events)
    assert view.waiting() == ()
    assert not run.pauses.decide("c1", decision_from("once")).ok


async def test_a_question_waits_for_the_answer_which_the_model_reads() -> None:
    ask = FakeTool(
        "ask_user_question",
        properties={"question": {"type": "string"}, "choices": {"type": "array"}},
    )
    question = {"intent": "Asking which database", "question": "Which?", "choices": ["A", "B"]}
    provider = rounds(call("q1", "ask_user_question", question))

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, QuestionAsked):
            assert (event.question, event.choices) == ("Which?", ["A", "B"])
            assert run.pauses.answer(event.call_id, "  B  ").ok

    events = await collect(make_run(provider, [ask]), on_event)
    assert ask.seen == []  # the body never runs: the pause answers the call
    assert [e.answer for e in of(events, QuestionAnswered)] == ["B"]
    assert tool_message(provider, 1, "q1")["content"] == "B"
    assert TurnView.replay(events).card_label("q1") == "Asking which database"


async def test_an_empty_answer_tells_the_model_so() -> None:
    ask = FakeTool("ask_user_question", properties={"question": {"type": "string"}})
    provider = rounds(call("q1", "ask_user_question", {"intent": "Asking", "question": "Ok?"}))

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, QuestionAsked):
            run.pauses.answer(event.call_id, "")

    await collect(make_run(provider, [ask]), on_event)
    assert tool_message(provider, 1, "q1")["content"] == NO_ANSWER


async def test_code_cannot_call_a_tool_that_asks_first() -> None:
    tool = delete_tool()
    run = make_run(ScriptedProvider(), [tool], tool_options=ASKS_FIRST)
    refused = run.pauses.code_refusal("delete_file", tool)
    assert isinstance(refused, ToolResult) and refused.is_error
    assert run.pauses.code_refusal("grep_search", FakeTool("grep_search")) is None


# --- what "always" leaves behind -------------------------------------------------------------


def stored_turn(engine: Engine, conversation_id: str, events: Sequence[TurnEvent]) -> None:
    message_id = conv_store.start_assistant_message(engine, conversation_id)
    log = EventLog(engine, message_id)
    for event in events:
        log.append(event)
    log.flush()


async def test_always_in_a_conversation_is_read_back_from_its_log(engine: Engine) -> None:
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    policy = PausePolicy(agent_scope=False)
    run = make_run(
        rounds(call("c1", "delete_file", DELETE)),
        [delete_tool()],
        tool_options=ASKS_FIRST,
        pauses=Pauses(policy),
    )
    events = await collect(run, deciding(decision_from("conversation")))
    stored_turn(engine, str(chat.id), events)
    assert conversation_approvals(engine, str(chat.id)) == {"delete_file"}
    # The next turn of the conversation does not ask again; another conversation does.
    assert pause_policy(engine, str(chat.id), None, LOCAL_USER_ID).allowed == {"delete_file"}
    other = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    assert pause_policy(engine, str(other.id), None, LOCAL_USER_ID).allowed == frozenset()


async def test_always_for_an_agent_is_written_into_its_tool_options(engine: Engine) -> None:
    agent = agent_store.create_agent(
        engine, owner=LOCAL_USER_ID, name="Cleaner", tool_options={"*": {"require_approval": True}}
    )
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    policy = pause_policy(engine, str(chat.id), str(agent.id), LOCAL_USER_ID)
    assert policy.agent_scope and policy.remember is not None
    await policy.remember("delete_file")
    stored = agent_store.get_agent(engine, str(agent.id), owner=LOCAL_USER_ID)
    assert stored is not None
    assert stored.tool_options["delete_file"] == {"require_approval": False}
    # Someone else's agent cannot be changed from their turn.
    assert not pause_policy(engine, str(chat.id), str(agent.id), "someone-else").agent_scope


# --- a turn waiting when its process stops -----------------------------------------------------


def waiting_events() -> list[TurnEvent]:
    arguments = json.dumps(DELETE)
    script = Script().start("c1", 0, tool="delete_file").args("c1", arguments)
    return script.complete("c1", arguments).ask_approval("c1").events


async def test_a_turn_waiting_when_the_server_stops_ends_saying_so(engine: Engine) -> None:
    """Unless it can resume (tests/unit/test_resume.py): here a call still runs beside the
    wait, which the next process could not finish."""
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    runtime = ScriptedRuntime()
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    fake: Any = runtime  # stands in for an AgentRuntime: `start_turn` is all a session asks
    sessions = TurnSessions(engine=engine, runtime=fake, config=config, flush_interval=0.01)
    session = await sessions.start(TurnRequest(str(chat.id), "clean up", "demo", "demo"))
    assert runtime.calls[0]["pauses"] is session.pauses
    run = runtime.runs[0]
    running = Script().start("c2", 0, tool="grep_search").complete("c2", "{}").events
    events = [*waiting_events(), *running]
    run.send([restamped(event) for event in events])
    await settle()
    assert session.view.waiting()
    closing = asyncio.create_task(sessions.aclose())
    await settle()
    assert session.stop_requested.is_set()
    run.emit(TurnDone, "cancelled")  # what the run loop ends with once stopped
    await asyncio.wait_for(closing, GUARD)
    stored = TurnView.replay(load_events(engine, session.message_id))
    assert (stored.error, stored.error_kind) == (RESTARTED_ERROR, "restarted")
    assert stored.waiting() == ()
    note = describe_failure(stored)
    assert (
        note is not None and note.message == "The server restarted while this turn waited for you."
    )


def test_a_turn_left_waiting_by_a_process_that_died_ends_saying_so(engine: Engine) -> None:
    chat = conv_store.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    stored_turn(engine, str(chat.id), waiting_events())
    assert mark_interrupted(engine) == 1
    (message,) = [m for m in conv_store.messages(engine, str(chat.id)) if m.role == "assistant"]
    view = TurnView.replay(load_events(engine, str(message.id)))
    assert (view.stop_reason, view.error_kind) == ("interrupted", "restarted")
    pause = view.pause("c1")
    assert pause is not None and not pause.decided and view.waiting() == ()
