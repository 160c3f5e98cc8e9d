"""A lone surrogate from a provider or a tool never crashes anything downstream.

`json.loads('"\\ud800"')` gives a string no UTF-8 encoder accepts; printing it, storing it
or sending it back to the provider would raise. Each place where decoded provider or tool
text enters the system replaces it with U+FFFD, and these tests feed it at each one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp import types

from intent_ui.agent.providers.anthropic import messages_body
from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import ChatRequest, ProviderEvent, TextChunk, ToolCallArgs
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.tools.mcp import McpTool, _ServerWorker, _to_tool_result
from intent_ui.config import McpServerConfig
from intent_ui.core.events import ArgsComplete
from tests.support.run_loop import FakeTool, ScriptedProvider, call, collect, end, make_run, of

LONE = json.loads('"a\\ud800b\\udc00"')  # what a provider's JSON escape decodes to
CLEAN = "a\ufffdb\ufffd"


def openai_stream() -> list[ProviderEvent]:
    acc = ChatCompletionsAccumulator()
    events = acc.feed({"choices": [{"index": 0, "delta": {"content": LONE}}]})
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}
    events += acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    more = {"index": 0, "function": {"arguments": '{"q": "' + LONE + '"}'}}
    events += acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]})
    events += acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return events + acc.finish()


def anthropic_stream() -> list[ProviderEvent]:
    acc = MessagesAccumulator()
    feed = acc.feed
    events = feed("message_start", {"message": {"usage": {"input_tokens": 1}}})
    events += feed("content_block_start", {"index": 0, "content_block": {"type": "text"}})
    events += feed(
        "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": LONE}}
    )
    events += feed("content_block_stop", {"index": 0})
    tool = {"type": "tool_use", "id": "c1", "name": "f", "input": {}}
    events += feed("content_block_start", {"index": 1, "content_block": tool})
    delta = {"type": "input_json_delta", "partial_json": '{"q": "' + LONE + '"}'}
    events += feed("content_block_delta", {"index": 1, "delta": delta})
    events += feed("content_block_stop", {"index": 1})
    events += feed("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {}})
    events += feed("message_stop", {})
    return events + acc.finish()


@pytest.mark.parametrize("stream", [openai_stream, anthropic_stream], ids=["openai", "anthropic"])
def test_stream_text_and_arguments_carry_the_replacement_character(
    stream: Callable[[], list[ProviderEvent]],
) -> None:
    events = stream()
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    args = "".join(e.delta for e in events if isinstance(e, ToolCallArgs))
    assert text == CLEAN
    assert json.loads(args) == {"q": CLEAN}
    for event in events:
        for field in dataclasses.fields(event):
            value = getattr(event, field.name)
            if isinstance(value, str):
                value.encode("utf-8")


async def test_escaped_surrogates_in_arguments_reach_the_tool_as_replacement_characters() -> None:
    tool = FakeTool("grep_search")
    # The model wrote JSON escapes for lone surrogates in its argument text.
    text = '{"intent": "Searching \\ud800", "pattern": "x\\udc00y"}'
    events = await collect(
        make_run(ScriptedProvider([*call("c1", "grep_search", text), end()]), [tool])
    )
    assert tool.seen == [{"pattern": "x\ufffdy"}]
    assert of(events, ArgsComplete)[0].arguments == text  # the model's text stays as written


def test_the_next_anthropic_round_sends_escaped_surrogates_as_replacement_characters() -> None:
    arguments = '{"intent": "Searching \\ud800", "pattern": "x"}'
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "grep_search", "arguments": arguments}],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "grep_search", "content": "ok"},
    ]
    body = messages_body(ChatRequest(model="m", messages=history))
    (tool_use,) = body["messages"][1]["content"]
    assert tool_use["input"] == {"intent": "Searching \ufffd", "pattern": "x"}
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # what httpx sends


def test_an_mcp_tool_result_with_a_lone_surrogate_is_clean_text() -> None:
    content: list[Any] = [types.TextContent(type="text", text=LONE)]
    result = _to_tool_result(types.CallToolResult(content=content))
    assert result.output == CLEAN


def test_an_mcp_tool_definition_with_lone_surrogates_can_be_sent_to_a_provider() -> None:
    spec = types.Tool(
        name="search",
        description=f"Search {LONE}",
        inputSchema={"type": "object", "properties": {"q": {"description": LONE}}},
    )
    config = McpServerConfig(command="unused")
    worker = _ServerWorker("github", config, connect_timeout=1, call_timeout=1)
    definition = McpTool(spec, worker).definition
    assert definition["description"] == f"Search {CLEAN}"
    json.dumps(definition, ensure_ascii=False).encode("utf-8")  # what httpx sends
