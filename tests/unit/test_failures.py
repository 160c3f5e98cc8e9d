"""A failed turn in words a person can act on: the kind the run loop records for each
provider failure (a real provider against the loopback server), and what a turn of
each kind shows (`describe_failure`)."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from intent_ui.agent.providers.openai import OpenAIProvider
from intent_ui.agent.run import run_turn
from intent_ui.agent.tools.base import ToolResult
from intent_ui.core.events import CallSettled, CallStarted, TextDelta, TurnDone, TurnEvent
from intent_ui.core.failures import FAILURE_KINDS, describe_failure, failure_detail
from intent_ui.core.locale import translate
from intent_ui.core.turn import TurnView
from tests.support.loopback import free_port
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks


async def turn_done(base_url: str) -> TurnDone:
    provider = OpenAIProvider(base_url, "sk-test", max_retries=0)
    run = run_turn(
        provider=provider,
        model="gpt-4o-mini",
        history=[],
        user_message="hi",
        tools=[],
        tool_options={},
        capabilities=frozenset(),
        system=None,
    )
    try:
        events = [event async for event in run]
    finally:
        await provider.aclose()
    done = events[-1]
    assert isinstance(done, TurnDone)
    return done


@pytest.mark.parametrize(
    ("status", "kind"),
    [(401, "auth"), (403, "auth"), (404, "not_found"), (429, "rate_limit"), (500, "provider")],
)
async def test_a_status_answer_ends_the_turn_with_its_kind(status: int, kind: str) -> None:
    body = {"error": {"message": "No way"}}
    with ReplayServer([Script.json(status, body)]) as server:
        done = await turn_done(f"{server.base_url}/v1")
    assert (done.stop_reason, done.error_kind) == ("error", kind)
    assert done.error is not None and "No way" in done.error


async def test_a_refused_connection_ends_the_turn_as_unreachable() -> None:
    done = await turn_done(f"http://127.0.0.1:{free_port()}/v1")
    assert (done.stop_reason, done.error_kind) == ("error", "unreachable")


async def test_a_turn_that_ends_well_has_no_kind() -> None:
    chunks = openai_chunks(text="Hello", finish_reason="stop")
    with ReplayServer([Script.sse(chunks)]) as server:
        done = await turn_done(f"{server.base_url}/v1")
    assert (done.stop_reason, done.error, done.error_kind) == ("end_turn", None, None)


def replayed(*events: TurnEvent) -> TurnView:
    return TurnView.replay(list(events))


@pytest.mark.parametrize("kind", sorted(FAILURE_KINDS - {"tool", "failed", "empty"}))
def test_each_kind_says_what_happened_and_what_to_do(kind: str) -> None:
    turn = replayed(TurnDone(1, "error", "The model provider failed: details", error_kind=kind))
    note = describe_failure(turn, "en")
    assert note is not None
    assert (note.kind, note.message, note.hint) == (
        kind,
        translate(f"error.{kind}", "en"),
        translate(f"error.{kind}_hint", "en"),
    )
    assert note.message != f"error.{kind}" and "retry" in note.hint.lower()
    assert note.detail == "The model provider failed: details"


def test_the_messages_speak_the_users_language() -> None:
    turn = replayed(TurnDone(1, "error", "x", error_kind="rate_limit"))
    note = describe_failure(turn, "es")
    assert note is not None
    assert (
        note.message
        == "El proveedor del modelo está limitando las solicitudes, o se agotó la cuota."
    )


def test_a_cut_off_reply_and_the_round_limit_are_told_from_the_stop_reason() -> None:
    cut = describe_failure(replayed(TurnDone(1, "max_tokens", "The model hit max_tokens")))
    rounds = describe_failure(replayed(TurnDone(1, "max_rounds", "Stopped after 8 rounds")))
    assert cut is not None and cut.kind == "cut_off"
    assert rounds is not None and rounds.kind == "max_rounds"


def test_an_error_of_no_known_kind_still_shows_a_message() -> None:
    """Turns stored before kinds were recorded, or a crash outside the run loop."""
    note = describe_failure(replayed(TurnDone(1, "error", "The turn failed: KeyError: 'x'")))
    assert note is not None and note.kind == "failed"
    assert note.message == "The turn ended with an error."


def test_a_failed_tool_is_named_with_its_server_when_the_turn_itself_ended_well() -> None:
    turn = replayed(
        CallStarted(1, "c1", "search_code", 0, server="github"),
        CallSettled(2, "c1", "error", error="Error executing tool search_code: rate limited"),
        CallStarted(3, "c2", "read_file", 0),
        CallSettled(4, "c2", "settled"),
        TurnDone(5, "end_turn"),
    )
    note = describe_failure(turn, "en")
    assert note is not None
    assert note.kind == "tool"
    assert note.message == "A tool failed: search_code in github."
    assert note.detail == "Error executing tool search_code: rate limited"


def test_an_answer_with_neither_words_nor_calls_is_not_a_silent_stop() -> None:
    note = describe_failure(replayed(TurnDone(1, "end_turn")), "en")
    assert note is not None and note.kind == "empty"
    assert note.message == "The model ended its turn without an answer."


def test_nothing_to_show_for_a_turn_that_went_well_or_was_stopped_or_still_runs() -> None:
    assert describe_failure(replayed(TextDelta(1, "Hello"), TurnDone(2, "end_turn"))) is None
    assert describe_failure(replayed(TurnDone(1, "cancelled"))) is None
    assert describe_failure(replayed(CallStarted(1, "c1", "read_file", 0))) is None


def test_the_detail_never_carries_a_traceback() -> None:
    recorded = (
        "search_code failed: RuntimeError: boom\n"
        "Traceback (most recent call last):\n"
        '  File "server.py", line 3, in handler\n'
        "RuntimeError: boom"
    )
    assert failure_detail(recorded) == "search_code failed: RuntimeError: boom"
    assert len(failure_detail("x" * 5000)) == 400


async def test_a_tool_that_raises_is_a_tool_failure_of_the_turn() -> None:
    """The run loop turns the exception into the call's error; the turn goes on."""

    class Broken:
        name = tool_id = "broken"
        kind: Literal["native"] = "native"
        server = None
        definition: dict[str, Any] = {
            "name": "broken",
            "description": "fails",
            "parameters": {"type": "object", "properties": {}},
        }

        async def call(self, args: dict[str, Any]) -> ToolResult:
            raise RuntimeError("disk on fire")

    first = openai_chunks(tool_calls=[("c1", "broken", "{}")])
    reply = openai_chunks(text="Sorry.", finish_reason="stop")
    with ReplayServer([Script.sse(first), Script.sse(reply)]) as server:
        provider = OpenAIProvider(f"{server.base_url}/v1", "sk-test", max_retries=0)
        run = run_turn(
            provider=provider,
            model="gpt-4o-mini",
            history=[],
            user_message="go",
            tools=[Broken()],
            tool_options={},
            capabilities=frozenset(),
            system=None,
        )
        events = [event async for event in run]
        await provider.aclose()
    note = describe_failure(TurnView.replay(events), "en")
    assert note is not None and note.kind == "tool"
    assert note.message == "A tool failed: broken."
    assert "disk on fire" in note.detail
