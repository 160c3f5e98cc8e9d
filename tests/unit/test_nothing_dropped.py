"""Nothing streamed is dropped: whatever text a tool returns, the turn is stored and ends.

A file name that is not UTF-8 reaches the file tools as lone surrogates (Python's
surrogateescape); a search service's JSON may decode to them too. No database encoder
accepts them. These tests run real turns (the run loop, the session, a SQLite file) and
read them back as a reload would, and they break the store's writes on purpose: the rows
stay buffered, and the turn's end is recorded whatever failed.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from intent_ui.agent.providers.base import TextChunk
from intent_ui.agent.session import TurnRequest, TurnSessions
from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.native import file_tools
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.config import AppConfig
from intent_ui.core.events import TextDelta, TurnDone
from intent_ui.core.text import scrub_surrogates
from intent_ui.core.turn import TurnView
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.store.turns import EventLog, load_events
from tests.support.run_loop import (
    GUARD,
    FakeTool,
    RunLoopRuntime,
    call,
    end,
)
from tests.support.turn_calls import call_in

BAD_NAME = os.fsdecode(b"caf\xe9.txt")  # Latin-1 bytes: 'caf\udce9.txt' in Python
SHOWN_NAME = "caf\ufffd.txt"


def _sessions(engine: Engine, runtime: Any) -> TurnSessions:
    config = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    return TurnSessions(engine=engine, runtime=runtime, config=config, flush_interval=0.01)


async def _turn(engine: Engine, runtime: Any, text: str = "go") -> tuple[str, str]:
    """Run one turn to its end; returns (conversation id, assistant message id)."""
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    session = await _sessions(engine, runtime).start(TurnRequest(chat.id, text, "demo", "demo"))
    await asyncio.wait_for(session.wait(), GUARD)
    return chat.id, session.message_id


def _stored(engine: Engine, chat_id: str, message_id: str) -> tuple[TurnView, Any]:
    """The turn as a reload shows it: its replayed log and its message row."""
    view = TurnView.replay(load_events(engine, message_id))
    (message,) = [m for m in conv.messages(engine, chat_id) if str(m.id) == message_id]
    return view, message


# --- a workspace whose names are not UTF-8 --------------------------------------------------


@pytest.fixture
def odd_workspace(tmp_path: Path) -> Workspace:
    """A workspace folder named `ws\\xff` holding `caf\\xe9.txt` (bytes, not UTF-8)."""
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/ws\xff"))
    root.mkdir()
    (root / BAD_NAME).write_text("the needle is here\n")
    return Workspace(root)


FILE_TOOL_CALLS = {
    "list_directory": {"intent": "Listing the workspace", "path": "."},
    "glob_search": {"intent": "Finding text files", "pattern": "*.txt"},
    "grep_search": {"intent": "Searching for the needle", "pattern": "needle"},
}


@pytest.mark.parametrize("tool", list(FILE_TOOL_CALLS))
async def test_a_file_name_that_is_not_utf8_is_listed_stored_and_replayed(
    engine: Engine, odd_workspace: Workspace, tool: str
) -> None:
    runtime = RunLoopRuntime(
        file_tools(odd_workspace),
        [*call("c1", tool, FILE_TOOL_CALLS[tool]), end("tool_use")],
        [TextChunk("Done."), end()],
    )
    chat_id, message_id = await _turn(engine, runtime)
    view, message = _stored(engine, chat_id, message_id)
    assert (view.done, view.stop_reason, message.status) == (True, "end_turn", "complete")
    record = view.call("c1")
    assert record is not None and record.state == "settled", record
    assert SHOWN_NAME in record.output
    if tool == "list_directory":
        assert view.card_label("c1") == "Listed 1 entry in ws\ufffd"
    # The next round sent the model the same text, which an HTTP body can carry.
    (result,) = [m for m in runtime.provider.requests[1].messages if m["role"] == "tool"]
    assert SHOWN_NAME in result["content"]
    json.dumps(runtime.provider.requests[1].messages, ensure_ascii=False).encode("utf-8")


# --- any text a tool can return ---------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\udce9"])
CONTROLS = st.sampled_from(["\x00", "\x07", "\x1b[31m", "\r", "\u2028", "\x9b", "\ufeff"])
TOOL_TEXT = st.one_of(
    st.lists(st.one_of(st.characters(), SURROGATES, CONTROLS), max_size=40).map("".join),
    # Huge: past the 256 KB output cap the file tools apply, with a surrogate at the end.
    st.integers(300_000, 400_000).map(lambda n: "x" * n + "\udcff"),
)


@settings(
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(output=TOOL_TEXT, outcome=TOOL_TEXT, failed=st.booleans())
def test_whatever_text_a_tool_returns_the_stored_turn_ends_and_replays_it_scrubbed(
    engine: Engine, output: str, outcome: str, failed: bool
) -> None:
    async def returns(_: dict[str, Any]) -> ToolResult:
        return ToolResult(output, is_error=failed, outcome=outcome, outcome_patch={"x": output})

    tool = FakeTool("scripted_tool", run=returns)
    runtime = RunLoopRuntime(
        [tool], [*call("c1", "scripted_tool", {"intent": "Doing it"}), end("tool_use")]
    )
    chat_id, message_id = asyncio.run(_turn(engine, runtime))
    view, message = _stored(engine, chat_id, message_id)
    assert view.done and message.status == "complete"
    record = view.call("c1")
    assert record is not None
    assert record.state == ("error" if failed else "settled")
    assert record.output == scrub_surrogates(output)
    assert record.outcome == scrub_surrogates(outcome)
    assert record.outcome_patch == {"x": scrub_surrogates(output)}
    if failed:
        assert record.error == (scrub_surrogates(output) or "The tool reported an error")


# --- a store that refuses a write -----------------------------------------------------------


def test_a_flush_that_fails_with_any_error_keeps_its_rows_for_the_next(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
    message_id = str(conv.start_assistant_message(engine, chat.id))
    log = EventLog(engine, message_id)
    log.append(TextDelta(1, "kept "))
    log.append(TextDelta(2, "whole"))
    write = EventLog._write
    failures = iter([RuntimeError("the driver broke")])

    def flaky(self: EventLog, rows: Any, summary: Any) -> bool:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return write(self, rows, summary)

    monkeypatch.setattr(EventLog, "_write", flaky)
    with pytest.raises(RuntimeError, match="the driver broke"):
        log.flush()
    assert log.needs_flush
    assert log.flush()
    assert TurnView.replay(load_events(engine, message_id)).text == "kept whole"


async def test_a_turn_whose_rows_cannot_be_written_still_ends_saying_why(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row the database refuses (not an outage: the same row fails every time) costs
    that row only; the rest are stored and the turn ends as an error naming the loss."""
    write = EventLog._write

    def refuses_poison(self: EventLog, rows: Any, summary: Any) -> bool:
        if any("poison" in row["data"] for row in rows):
            raise UnicodeEncodeError("utf-8", "poison", 0, 1, "surrogates not allowed")
        return write(self, rows, summary)

    monkeypatch.setattr(EventLog, "_write", refuses_poison)

    async def returns(_: dict[str, Any]) -> ToolResult:
        return ToolResult("poison", outcome="Did it")

    runtime = RunLoopRuntime(
        [FakeTool("scripted_tool", run=returns)],
        [
            TextChunk("Before. "),
            *call("c1", "scripted_tool", {"intent": "Doing it"}),
            end("tool_use"),
        ],
        [TextChunk("After."), end()],
    )
    chat_id, message_id = await _turn(engine, runtime)
    view, message = _stored(engine, chat_id, message_id)
    assert view.done and view.text == "Before. After."
    assert view.call("c1") is not None  # the call's start and arguments were kept
    assert message.status == "error"
    assert message.content == "Before. After."
    for error in (view.error, message.error):
        assert error is not None
        assert "1 event of this turn could not be saved" in error
        assert "UnicodeEncodeError" in error


async def test_a_turn_whose_end_cannot_be_written_still_ends(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = EventLog._write

    def refuses_the_end(self: EventLog, rows: Any, summary: Any) -> bool:
        if any(row["kind"] == "TurnDone" and "end_turn" in row["data"] for row in rows):
            raise TypeError("this end cannot be encoded")
        return write(self, rows, summary)

    monkeypatch.setattr(EventLog, "_write", refuses_the_end)
    runtime = RunLoopRuntime([], [TextChunk("Hello."), end()])
    chat_id, message_id = await _turn(engine, runtime)
    view, message = _stored(engine, chat_id, message_id)
    assert view.done and view.text == "Hello."
    assert message.status == "error"
    assert "TypeError: this end cannot be encoded" in (view.error or "")
    assert isinstance(load_events(engine, message_id)[-1], TurnDone)


async def test_a_write_that_fails_once_with_any_error_loses_nothing(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = EventLog._write
    failures = iter([RuntimeError("the driver hiccupped")])

    def fails_once(self: EventLog, rows: Any, summary: Any) -> bool:
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return write(self, rows, summary)

    monkeypatch.setattr(EventLog, "_write", fails_once)

    async def returns(_: dict[str, Any]) -> ToolResult:
        return ToolResult("all of it", outcome="Did it")

    runtime = RunLoopRuntime(
        [FakeTool("scripted_tool", run=returns)],
        [*call("c1", "scripted_tool", {"intent": "Doing it"}), end("tool_use")],
        [TextChunk("Done."), end()],
    )
    chat_id, message_id = await _turn(engine, runtime)
    view, message = _stored(engine, chat_id, message_id)
    assert (view.text, view.stop_reason, view.error) == ("Done.", "end_turn", None)
    assert call_in(view, "c1").output == "all of it"
    assert (message.status, message.content) == ("complete", "Done.")


async def test_a_turn_whose_reply_text_is_refused_in_its_summary_still_ends(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = EventLog._write

    def refuses_the_content(self: EventLog, rows: Any, summary: Any) -> bool:
        if summary is not None and "content" in summary:
            raise ValueError("this reply text cannot be stored")
        return write(self, rows, summary)

    monkeypatch.setattr(EventLog, "_write", refuses_the_content)
    runtime = RunLoopRuntime([], [TextChunk("Hello."), end()])
    chat_id, message_id = await _turn(engine, runtime)
    view, message = _stored(engine, chat_id, message_id)
    assert view.done and view.text == "Hello."  # the log has the text
    assert message.status == "complete"  # and the message is no longer streaming
