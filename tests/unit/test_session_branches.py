"""Turns placed in a conversation's tree: a reply regenerated, a message edited and sent
again, a stopped turn continued. Each reads the history of the path it goes on, and the
page shows it there; the demo model continues a stopped turn from where it stopped."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.agent.providers.base import ChatRequest
from intent_ui.agent.providers.demo import DemoProvider, resumed
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.config import AppConfig
from intent_ui.core.events import TextDelta, TurnDone
from intent_ui.core.history import CANCELLED_RESULT, CONTINUE_PROMPT
from intent_ui.store import conversations as conv
from intent_ui.store.db import NotFoundError
from intent_ui.store.models import LOCAL_USER_ID
from tests.support.scripted_runtime import ScriptedRuntime, settle


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo").id


@pytest.fixture
def runtime() -> ScriptedRuntime:
    return ScriptedRuntime()


@pytest.fixture
def sessions(engine: Engine, runtime: ScriptedRuntime) -> TurnSessions:
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    fake: Any = runtime  # stands in for an AgentRuntime: `start_turn` is all a session asks
    return TurnSessions(
        engine=engine, runtime=fake, config=config, clock=lambda: 1000.0, flush_interval=0.01
    )


async def turn(
    sessions: TurnSessions,
    runtime: ScriptedRuntime,
    request: TurnRequest,
    says: str,
    stop_reason: str = "end_turn",
) -> str:
    """Start `request`, let the model say `says` and end; returns the turn's id."""
    session = await sessions.start(request)
    run = runtime.runs[-1]
    run.emit(TextDelta, says)
    run.emit(TurnDone, stop_reason)
    await session.wait()
    await settle()
    return session.message_id


def ask(chat_id: str, text: str = "", **placed: Any) -> TurnRequest:
    return TurnRequest(chat_id, text, "demo", "demo", **placed)


def words(engine: Engine, chat_id: str) -> list[str]:
    return [m.content for m in conv.messages(engine, chat_id)]


async def test_regenerate_asks_the_same_question_after_the_same_history(
    engine: Engine, chat_id: str, sessions: TurnSessions, runtime: ScriptedRuntime
) -> None:
    await turn(sessions, runtime, ask(chat_id, "first"), "One.")
    old = await turn(sessions, runtime, ask(chat_id, "second"), "Two.")
    new = await turn(sessions, runtime, ask(chat_id, kind="regenerate", target=old), "Two, again.")
    assert runtime.calls[-1]["user_message"] == "second"
    assert runtime.calls[-1]["history"] == runtime.calls[1]["history"]
    assert words(engine, chat_id) == ["first", "One.", "second", "Two, again."]
    assert conv.thread(engine, chat_id)[-1].siblings == (old, new)


async def test_an_edit_is_asked_after_the_history_before_the_message_edited(
    engine: Engine, chat_id: str, sessions: TurnSessions, runtime: ScriptedRuntime
) -> None:
    await turn(sessions, runtime, ask(chat_id, "first"), "One.")
    await turn(sessions, runtime, ask(chat_id, "second"), "Two.")
    second = conv.messages(engine, chat_id)[2]
    await turn(
        sessions, runtime, ask(chat_id, "second, edited", kind="edit", target=second.id), "2"
    )
    assert runtime.calls[-1]["user_message"] == "second, edited"
    assert [m["content"] for m in runtime.calls[-1]["history"]] == ["first", "One."]
    assert words(engine, chat_id) == ["first", "One.", "second, edited", "2"]
    # The next message follows the edited branch, which is what the model reads.
    await turn(sessions, runtime, ask(chat_id, "third"), "Three.")
    assert [m["content"] for m in runtime.calls[-1]["history"]] == [
        "first",
        "One.",
        "second, edited",
        "2",
    ]


async def test_a_first_message_edited_starts_from_nothing(
    engine: Engine, chat_id: str, sessions: TurnSessions, runtime: ScriptedRuntime
) -> None:
    await turn(sessions, runtime, ask(chat_id, "first"), "One.")
    first = conv.messages(engine, chat_id)[0]
    await turn(sessions, runtime, ask(chat_id, "other", kind="edit", target=first.id), "Other.")
    assert runtime.calls[-1]["history"] == []
    assert words(engine, chat_id) == ["other", "Other."]


async def test_continue_reads_the_stopped_turn_and_follows_it(
    engine: Engine, chat_id: str, sessions: TurnSessions, runtime: ScriptedRuntime
) -> None:
    stopped = await turn(sessions, runtime, ask(chat_id, "explain"), "It starts", "cancelled")
    await turn(sessions, runtime, ask(chat_id, kind="continue", target=stopped), " and ends.")
    assert runtime.calls[-1]["user_message"] == CONTINUE_PROMPT
    assert runtime.calls[-1]["history"] == [
        {"role": "user", "content": "explain"},
        {"role": "assistant", "content": "It starts"},
    ]
    assert words(engine, chat_id) == ["explain", "It starts", " and ends."]


@pytest.mark.parametrize(
    ("kind", "role"), [("edit", "assistant"), ("regenerate", "user"), ("continue", "user")]
)
async def test_a_target_of_the_wrong_role_is_refused_and_nothing_is_stored(
    engine: Engine,
    chat_id: str,
    sessions: TurnSessions,
    runtime: ScriptedRuntime,
    kind: str,
    role: str,
) -> None:
    await turn(sessions, runtime, ask(chat_id, "first"), "One.")
    target = next(m for m in conv.messages(engine, chat_id) if m.role == role)
    with pytest.raises(NotFoundError):
        await sessions.start(ask(chat_id, "x", kind=kind, target=target.id))
    assert words(engine, chat_id) == ["first", "One."]
    assert sessions.running(chat_id) is None


def test_the_demo_model_continues_a_reply_from_where_it_was_cut() -> None:
    provider = DemoProvider(pacing_ms=0)
    whole = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in provider.chunks(ChatRequest(model="demo", messages=[_user("hello")]))
        if c["choices"]
    )
    cut = whole[: len(whole) // 2]
    rest = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in provider.chunks(
            ChatRequest(
                model="demo",
                messages=[
                    _user("hello"),
                    {"role": "assistant", "content": cut},
                    _user(CONTINUE_PROMPT),
                ],
            )
        )
        if c["choices"]
    )
    assert cut + rest == whole


def test_the_demo_model_makes_the_calls_stop_cancelled_again() -> None:
    messages = [
        _user("search for OAuth"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "grep_search", "arguments": "{}"}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "grep_search",
            "content": CANCELLED_RESULT,
            "is_error": True,
        },
        _user(CONTINUE_PROMPT),
    ]
    conversation, written = resumed(messages)
    assert (list(conversation), written) == ([_user("search for OAuth")], "")


async def test_a_real_demo_turn_stopped_then_continued_finishes_the_work(
    engine: Engine, chat_id: str, oauth_demo: AppConfig
) -> None:
    config = oauth_demo
    async with AgentRuntime(config) as runtime:
        sessions = TurnSessions(engine=engine, runtime=runtime, config=config)
        stopped = await sessions.start(ask(chat_id, "search for OAuth"))
        stopped.stop()
        await stopped.wait()
        assert stopped.status == "cancelled"
        continued = await sessions.start(ask(chat_id, kind="continue", target=stopped.message_id))
        await continued.wait()
    assert continued.status == "complete"
    assert [c.outcome for c in continued.view.calls()] == ["Found 1 match for OAuth"]
    assert "OAuth" in continued.view.text


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}
