"""ChatCompletionsAccumulator: hand-built chunk dicts in, provider events out (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

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
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]}


def call(index: int | None, **fields: Any) -> dict[str, Any]:
    delta: dict[str, Any] = {
        "tool_calls": [{**({"index": index} if index is not None else {}), **fields}]
    }
    return chunk(delta)


def run(*chunks: dict[str, Any]) -> list[ProviderEvent]:
    accumulator = ChatCompletionsAccumulator()
    events: list[ProviderEvent] = []
    for item in chunks:
        events.extend(accumulator.feed(item))
    return events + accumulator.finish()


def test_first_delta_opens_the_call_and_fragments_follow() -> None:
    events = run(
        call(0, id="c1", type="function", function={"name": "f", "arguments": ""}),
        call(0, function={"arguments": '{"a"'}),
        call(0, function={"arguments": ": 1}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert events == [
        ToolCallBegin(0, "c1", "f"),
        ToolCallArgs("c1", '{"a"'),
        ToolCallArgs("c1", ": 1}"),
        ToolCallEnd("c1"),
        StreamEnd("tool_use"),
    ]


def test_missing_id_gets_a_stable_generated_id() -> None:
    events = run(
        call(0, function={"name": "f", "arguments": "{}"}), chunk(finish_reason="tool_calls")
    )
    assert events[0] == ToolCallBegin(0, "call_0", "f")
    assert ToolCallEnd("call_0") in events


def test_repeated_id_on_every_delta_stays_one_call() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": "{"}),
        call(0, id="c1", function={"arguments": "}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [ToolCallBegin(0, "c1", "f")]


def test_new_id_at_a_used_index_opens_a_new_call() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": "{}"}),
        call(0, id="c2", function={"name": "g", "arguments": "{}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [
        ToolCallBegin(0, "c1", "f"),
        ToolCallBegin(1, "c2", "g"),
    ]
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [
        ToolCallEnd("c1"),
        ToolCallEnd("c2"),
    ]


def test_an_id_repeated_at_a_new_index_is_a_second_call_with_its_own_id() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": '{"a"'}),
        call(1, id="c1", function={"name": "g", "arguments": '{"b"'}),
        call(0, function={"arguments": ": 1}"}),
        call(1, id="c1", function={"arguments": ": 2}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert [e for e in events if isinstance(e, ToolCallBegin)] == [
        ToolCallBegin(0, "c1", "f"),
        ToolCallBegin(1, "c1_2", "g"),
    ]
    args: dict[str, str] = {}
    for event in events:
        if isinstance(event, ToolCallArgs):
            args[event.call_id] = args.get(event.call_id, "") + event.delta
    assert args == {"c1": '{"a": 1}', "c1_2": '{"b": 2}'}
    assert [e for e in events if isinstance(e, ToolCallEnd)] == [
        ToolCallEnd("c1"),
        ToolCallEnd("c1_2"),
    ]


def test_delta_without_index_continues_the_last_call() -> None:
    events = run(
        call(None, id="c1", function={"name": "f", "arguments": "{"}),
        call(None, function={"arguments": "}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert "".join(e.delta for e in events if isinstance(e, ToolCallArgs)) == "{}"


def test_arguments_before_the_name_are_held_until_begin() -> None:
    events = run(
        call(0, id="c1", function={"arguments": "{"}),
        call(0, function={"name": "f", "arguments": "}"}),
        chunk(finish_reason="tool_calls"),
    )
    assert events[:3] == [
        ToolCallBegin(0, "c1", "f"),
        ToolCallArgs("c1", "{"),
        ToolCallArgs("c1", "}"),
    ]


def test_a_call_that_never_gets_a_name_is_a_stream_error() -> None:
    accumulator = ChatCompletionsAccumulator()
    accumulator.feed(call(0, id="c1", function={"arguments": "{}"}))
    with pytest.raises(ProviderStreamError, match="without a function name"):
        accumulator.feed(chunk(finish_reason="tool_calls"))


def test_arguments_sent_as_an_object_become_json_text() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": {"a": 1}}),
        chunk(finish_reason="tool_calls"),
    )
    assert ToolCallArgs("c1", '{"a": 1}') in events


def test_content_becomes_text_chunks() -> None:
    assert run(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi"}),
        chunk(finish_reason="stop"),
    ) == [
        TextChunk("Hi"),
        StreamEnd("end_turn"),
    ]


def test_content_in_the_finish_chunk_is_kept() -> None:
    assert run(chunk({"content": "bye"}, finish_reason="stop"))[0] == TextChunk("bye")


def test_length_emits_no_tool_call_end() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": '{"a'}), chunk(finish_reason="length")
    )
    assert events[-1] == StreamEnd("max_tokens")
    assert not any(isinstance(e, ToolCallEnd) for e in events)


def test_stop_with_tool_calls_normalises_to_tool_use() -> None:
    events = run(
        call(0, id="c1", function={"name": "f", "arguments": "{}"}), chunk(finish_reason="stop")
    )
    assert events[-2:] == [ToolCallEnd("c1"), StreamEnd("tool_use")]


def test_content_filter_passes_through() -> None:
    assert run(chunk(finish_reason="content_filter"))[-1] == StreamEnd("content_filter")


def test_usage_chunk_reports_immediately() -> None:
    accumulator = ChatCompletionsAccumulator()
    accumulator.feed(chunk(finish_reason="stop"))
    usage = {
        "choices": [],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }
    assert accumulator.feed(usage) == [UsageReport(3, 4)]
    assert accumulator.finish() == [StreamEnd("end_turn")]


def test_usage_riding_on_other_chunks_is_reported_once_at_the_end() -> None:
    first = {**chunk({"content": "a"}), "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    last = {**chunk(finish_reason="stop"), "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    assert run(first, last) == [TextChunk("a"), UsageReport(3, 2), StreamEnd("end_turn")]


def test_no_finish_reason_makes_finish_raise_partial() -> None:
    accumulator = ChatCompletionsAccumulator(source="http://x/v1/chat/completions")
    accumulator.feed(call(0, id="c1", function={"name": "f", "arguments": "{}"}))
    with pytest.raises(ProviderStreamError, match="before finish_reason") as caught:
        accumulator.finish()
    assert caught.value.partial is True
    assert "http://x/v1/chat/completions" in str(caught.value)


def test_error_payload_raises_with_the_providers_message() -> None:
    with pytest.raises(ProviderStreamError, match="model overloaded") as caught:
        ChatCompletionsAccumulator().feed(
            {"error": {"message": "model overloaded", "type": "server_error"}}
        )
    assert caught.value.error_type == "server_error"
    assert caught.value.partial is False


def test_non_object_chunk_raises_a_stream_error() -> None:
    with pytest.raises(ProviderStreamError, match="expected a JSON object"):
        ChatCompletionsAccumulator().feed([1, 2])


def test_other_choices_are_ignored() -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "other"}, "finish_reason": None}]}
    assert run(other, chunk(finish_reason="stop")) == [StreamEnd("end_turn")]


def test_finish_twice_returns_nothing_more() -> None:
    accumulator = ChatCompletionsAccumulator()
    accumulator.feed(chunk(finish_reason="stop"))
    assert accumulator.finish() == [StreamEnd("end_turn")]
    assert accumulator.finish() == []
