"""The offline demo model: plans, intents, streaming through the shared accumulator."""

from __future__ import annotations

import json
from typing import Any

from intent_ui.agent.providers.base import (
    ChatRequest,
    ProviderEvent,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
)
from intent_ui.agent.providers.demo import DemoProvider, choose_goal, plan_calls
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.goals import goal_registry


def tool(name: str, *, intent: bool = True, **props: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": props or {"pattern": {"type": "string"}}}
    return {
        "name": name,
        "description": name,
        "parameters": dict(with_intent(schema)) if intent else schema,
    }


FILE_TOOLS = [
    tool("grep_search"),
    tool("read_file", path={"type": "string"}),
    tool("write_file", path={"type": "string"}, content={"type": "string"}),
    tool("list_directory", path={"type": "string"}),
    tool("set_memory", key={"type": "string"}, value={"type": "string"}),
]


async def stream(request: ChatRequest) -> list[ProviderEvent]:
    return [event async for event in DemoProvider(pacing_ms=0).stream(request)]


def calls_of(events: list[ProviderEvent]) -> dict[str, dict[str, Any]]:
    """Each call's name, reassembled argument text, delta count and whether it ended."""
    calls: dict[str, dict[str, Any]] = {}
    for event in events:
        if isinstance(event, ToolCallBegin):
            calls[event.call_id] = {"name": event.name, "text": "", "deltas": 0, "ended": False}
        elif isinstance(event, ToolCallArgs):
            calls[event.call_id]["text"] += event.delta
            calls[event.call_id]["deltas"] += 1
        elif isinstance(event, ToolCallEnd):
            calls[event.call_id]["ended"] = True
    return calls


def request(message: str, tools: list[dict[str, Any]] | None = None) -> ChatRequest:
    return ChatRequest(
        model="demo",
        messages=[{"role": "user", "content": message}],
        tools=FILE_TOOLS if tools is None else tools,
    )


async def test_two_sibling_searches_stream_with_distinct_intents_written_first() -> None:
    events = await stream(request("Find where OAuth and MCP are handled?"))
    calls = list(calls_of(events).values())
    assert [c["name"] for c in calls] == ["grep_search", "grep_search"]
    args = [json.loads(c["text"]) for c in calls]
    assert [next(iter(a)) for a in args] == ["intent", "intent"]
    assert [a["intent"] for a in args] == [
        "Searching for OAuth handling",
        "Searching for MCP handling",
    ]
    assert [a["pattern"] for a in args] == ["OAuth", "MCP"]
    assert all(c["deltas"] > 5 and c["ended"] for c in calls)  # streamed, then ended
    assert events[-1] == StreamEnd("tool_use")


async def test_the_chunks_are_openai_chunks_and_replay_through_the_accumulator() -> None:
    provider = DemoProvider(pacing_ms=0)
    req = request("where are OAuth and MCP")
    chunks = provider.chunks(req)
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    accumulator = ChatCompletionsAccumulator()
    replayed = [event for chunk in chunks for event in accumulator.feed(chunk)]
    replayed += accumulator.finish()
    assert replayed == [e for e in await stream(req)]


async def test_no_intent_when_the_definition_lacks_the_marked_property() -> None:
    events = await stream(request("search for OAuth and MCP", [tool("grep_search", intent=False)]))
    args = [json.loads(c["text"]) for c in calls_of(events).values()]
    assert args == [{"pattern": "OAuth"}, {"pattern": "MCP"}]


def test_a_business_intent_property_is_not_written_as_a_label() -> None:
    business = {
        "name": "grep_search",
        "parameters": {
            "type": "object",
            "properties": {"intent": {"type": "string"}, "pattern": {"type": "string"}},
        },
    }
    (first, _) = plan_calls("search for OAuth and MCP", [business])
    assert "intent" not in first.args


def test_search_code_is_used_when_offered_and_the_repo_is_mentioned() -> None:
    search_code = tool("search_code", query={"type": "string"})
    planned = plan_calls("Search the repo for OAuth and MCP", [*FILE_TOOLS, search_code])
    assert [(c.name, c.args["query"]) for c in planned] == [
        ("search_code", "OAuth"),
        ("search_code", "MCP"),
    ]
    assert planned[0].args["intent"] != planned[1].args["intent"]


def test_grep_is_used_when_the_repo_is_not_mentioned() -> None:
    search_code = tool("search_code", query={"type": "string"})
    planned = plan_calls("search for OAuth and MCP", [*FILE_TOOLS, search_code])
    assert [c.name for c in planned] == ["grep_search", "grep_search"]


def test_a_search_pattern_escapes_what_regex_reads_and_keeps_spaces() -> None:
    """The pattern is the outcome's label ("Found 3 matches for MCP wiring"): a space
    written as an escaped space would show a stray backslash."""
    planned = plan_calls("Search the repo for MCP wiring and OAuth handling", FILE_TOOLS)
    assert [c.args["pattern"] for c in planned] == ["MCP wiring", "OAuth handling"]
    planned = plan_calls("search for app.py and (tests)", FILE_TOOLS)
    assert [c.args["pattern"] for c in planned] == [r"app\.py", r"\(tests\)"]


def test_the_verb_shapes_the_intent() -> None:
    planned = plan_calls("where are sessions and tokens defined", FILE_TOOLS)
    assert [c.args["intent"] for c in planned] == [
        "Searching for sessions definitions",
        "Searching for tokens definitions",
    ]


def test_single_tool_plans() -> None:
    assert plan_calls("read README.md", FILE_TOOLS)[0].args == {
        "intent": "Reading README.md",
        "path": "README.md",
    }
    assert plan_calls("list src", FILE_TOOLS)[0].args["path"] == "src"
    assert plan_calls("What files are there?", FILE_TOOLS)[0].args["path"] == "."
    memory = plan_calls("Remember the deadline is Friday", FILE_TOOLS)[0]
    assert (memory.name, memory.args["key"], memory.args["value"]) == (
        "set_memory",
        "deadline",
        "Friday",
    )
    write = plan_calls('write "hello world" to notes.txt', FILE_TOOLS)[0]
    assert (write.name, write.args["path"], write.args["content"]) == (
        "write_file",
        "notes.txt",
        "hello world\n",
    )


async def test_anything_else_gets_a_helpful_text_reply() -> None:
    events = await stream(request("hello there"))
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert "find where OAuth and MCP are handled" in text
    assert events[-1] == StreamEnd("end_turn")
    assert not any(isinstance(e, ToolCallBegin) for e in events)


async def test_the_next_round_quotes_the_results() -> None:
    messages = [
        {"role": "user", "content": "find where OAuth and MCP are handled"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "a", "name": "grep_search", "arguments": '{"pattern": "OAuth"}'},
                {"id": "b", "name": "grep_search", "arguments": '{"pattern": "MCP"}'},
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "a",
            "name": "grep_search",
            "content": "src/auth.py:3: OAuth\nsrc/cb.py:9: oauth",
            "is_error": False,
        },
        {
            "role": "tool",
            "tool_call_id": "b",
            "name": "grep_search",
            "content": "No matches for 'MCP'",
            "is_error": False,
        },
    ]
    events = await stream(ChatRequest(model="demo", messages=messages, tools=FILE_TOOLS))
    text = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert text.startswith("I found 2 matches for OAuth (in src/auth.py, src/cb.py)")
    assert "no matches for MCP" in text
    assert len([e for e in events if isinstance(e, TextChunk)]) > 3  # streamed word by word


async def test_max_tokens_cuts_the_arguments_like_a_provider() -> None:
    req = ChatRequest(
        model="demo",
        messages=[{"role": "user", "content": "find where OAuth and MCP are handled"}],
        tools=FILE_TOOLS,
        max_tokens=5,
    )
    events = await stream(req)
    assert events[-1] == StreamEnd("max_tokens")
    assert not any(isinstance(e, ToolCallEnd) for e in events)


async def test_the_same_request_streams_the_same_events() -> None:
    req = request("find where OAuth and MCP are handled")
    assert await stream(req) == await stream(req)


GOAL_TOOL = goal_registry(
    [
        {"id": "remember", "description": "Remember a fact about the user"},
        {"id": "research", "description": "Search the code for where things are handled"},
    ]
).with_intent()


def test_the_demo_chooses_the_goal_sharing_the_most_words_with_the_message() -> None:
    chosen = choose_goal("search for OAuth and MCP", GOAL_TOOL)
    assert chosen is not None and chosen.name == "select_intent"
    assert chosen.args == {
        "intent": "Choosing the goal: Search the code for where things are handled",
        "intent_id": "research",
        "input": {},
    }
    remembered = choose_goal("remember tone is brief", GOAL_TOOL)
    assert remembered is not None and remembered.args["intent_id"] == "remember"
    tie = choose_goal("hello there", GOAL_TOOL)
    assert tie is not None and tie.args["intent_id"] == "remember"  # the first goal on a tie


def test_after_choosing_a_goal_the_demo_plans_with_the_goals_tools() -> None:
    grep = tool("grep_search", pattern={"type": "string"})
    request = ChatRequest(
        model="demo",
        messages=[
            {"role": "user", "content": "search for OAuth and MCP"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "g", "name": "select_intent", "arguments": "{}"}],
            },
            {"role": "tool", "tool_call_id": "g", "name": "select_intent", "content": "{}"},
        ],
        tools=[grep],
    )
    chunks = DemoProvider(pacing_ms=0).chunks(request)
    names = [
        call["function"]["name"]
        for chunk in chunks
        for choice in chunk.get("choices", [])
        for call in (choice.get("delta") or {}).get("tool_calls") or []
        if call.get("function", {}).get("name")
    ]
    assert names == ["grep_search", "grep_search"]
