"""MessagesAccumulator: Messages API events in, provider events out (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import (
    ProviderEvent,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
    UsageReport,
)
from intent_ui.agent.providers.errors import ProviderStreamError


def start_tool(
    index: int, call_id: str, name: str, tool_input: Any = None
) -> tuple[str, dict[str, Any]]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": tool_input or {}}
    return "content_block_start", {"index": index, "content_block": block}


def json_delta(index: int, text: str) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return "content_block_stop", {"index": index}


def message_delta(reason: str, output: int = 5) -> tuple[str, dict[str, Any]]:
    return "message_delta", {"delta": {"stop_reason": reason}, "usage": {"output_tokens": output}}


MESSAGE_STOP = ("message_stop", {"type": "message_stop"})


def run(*events: tuple[str, dict[str, Any]]) -> list[ProviderEvent]:
    accumulator = MessagesAccumulator()
    out: list[ProviderEvent] = []
    for event_type, data in events:
        out.extend(accumulator.feed(event_type, data))
    return out + accumulator.finish()


def test_tool_block_streams_begin_args_and_end() -> None:
    events = run(
        start_tool(0, "t1", "f"),
        json_delta(0, ""),
        json_delta(0, '{"a": 1}'),
        stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    assert events == [
        ToolCallBegin(0, "t1", "f"),
        ToolCallArgs("t1", '{"a": 1}'),
        ToolCallEnd("t1"),
        UsageReport(0, 5),
        StreamEnd("tool_use"),
    ]


def test_end_is_released_when_the_next_block_starts() -> None:
    accumulator = MessagesAccumulator()
    for event in (start_tool(0, "t1", "f"), json_delta(0, "{}")):
        accumulator.feed(*event)
    assert accumulator.feed(*stop(0)) == []
    assert accumulator.feed(*start_tool(1, "t2", "g")) == [
        ToolCallEnd("t1"),
        ToolCallBegin(1, "t2", "g"),
    ]


def test_an_id_repeated_by_a_second_block_gets_its_own_id() -> None:
    events = run(
        start_tool(0, "t1", "f"),
        json_delta(0, '{"a": 1}'),
        stop(0),
        start_tool(1, "t1", "g"),
        json_delta(1, '{"b": 2}'),
        stop(1),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    assert events[:6] == [
        ToolCallBegin(0, "t1", "f"),
        ToolCallArgs("t1", '{"a": 1}'),
        ToolCallEnd("t1"),
        ToolCallBegin(1, "t1_2", "g"),
        ToolCallArgs("t1_2", '{"b": 2}'),
        ToolCallEnd("t1_2"),
    ]


def test_max_tokens_withholds_the_end_of_the_last_block() -> None:
    events = run(
        start_tool(0, "t1", "f"),
        json_delta(0, '{"a'),
        stop(0),
        message_delta("max_tokens"),
        MESSAGE_STOP,
    )
    assert not any(isinstance(e, ToolCallEnd) for e in events)
    assert events[-1] == StreamEnd("max_tokens")


@pytest.mark.parametrize("reason", ["end_turn", "stop_sequence", "pause_turn", "refusal"])
def test_stop_reasons_pass_through(reason: str) -> None:
    assert run(message_delta(reason), MESSAGE_STOP)[-1] == StreamEnd(reason)


def test_missing_message_delta_infers_the_reason() -> None:
    events = run(start_tool(0, "t1", "f"), json_delta(0, "{}"), stop(0), MESSAGE_STOP)
    assert events[-3:] == [ToolCallEnd("t1"), UsageReport(0, 0), StreamEnd("tool_use")]


def test_input_in_the_start_block_is_sent_when_no_delta_follows() -> None:
    events = run(
        start_tool(0, "t1", "f", {"a": 1}), stop(0), message_delta("tool_use"), MESSAGE_STOP
    )
    assert ToolCallArgs("t1", '{"a": 1}') in events


def test_usage_counts_cache_tokens_as_input() -> None:
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 10,
        "cache_creation_input_tokens": 2,
        "output_tokens": 1,
    }
    events = run(
        ("message_start", {"message": {"usage": usage}}), message_delta("end_turn", 7), MESSAGE_STOP
    )
    assert UsageReport(15, 7) in events


def test_text_and_thinking_deltas() -> None:
    events = run(
        (
            "content_block_start",
            {"index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        ),
        (
            "content_block_delta",
            {"index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
        ),
        stop(0),
        ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
        stop(1),
        message_delta("end_turn"),
        MESSAGE_STOP,
    )
    assert [e for e in events if isinstance(e, TextChunk)] == [TextChunk("Hi")]


def test_ping_and_unknown_events_are_ignored() -> None:
    assert run(
        ("ping", {"type": "ping"}), ("brand_new_event", {}), message_delta("end_turn"), MESSAGE_STOP
    )[-1] == StreamEnd("end_turn")


def test_error_event_raises_with_type_and_message() -> None:
    accumulator = MessagesAccumulator(source="http://x/v1/messages")
    with pytest.raises(ProviderStreamError, match="Overloaded") as caught:
        accumulator.feed(
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    assert caught.value.error_type == "overloaded_error"
    assert "http://x/v1/messages" in str(caught.value)


def test_json_delta_for_an_unknown_block_is_a_stream_error() -> None:
    with pytest.raises(ProviderStreamError, match="not a tool_use"):
        MessagesAccumulator().feed(*json_delta(3, "{}"))


def test_block_event_without_index_is_a_stream_error() -> None:
    with pytest.raises(ProviderStreamError, match="without an integer index"):
        MessagesAccumulator().feed("content_block_stop", {})


def test_tool_block_without_name_is_a_stream_error() -> None:
    with pytest.raises(ProviderStreamError, match="has no name"):
        MessagesAccumulator().feed(*start_tool(0, "t1", ""))


def test_end_of_body_before_message_stop_raises_partial() -> None:
    accumulator = MessagesAccumulator()
    accumulator.feed(*start_tool(0, "t1", "f"))
    with pytest.raises(ProviderStreamError, match="before message_stop") as caught:
        accumulator.finish()
    assert caught.value.partial is True


def test_done_after_message_stop() -> None:
    accumulator = MessagesAccumulator()
    assert not accumulator.done
    accumulator.feed(*MESSAGE_STOP)
    assert accumulator.done
    assert accumulator.feed(*MESSAGE_STOP) == []
