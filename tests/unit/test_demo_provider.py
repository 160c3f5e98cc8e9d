"""The offline demo model: plans, intents, streaming through the shared accumulator."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
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
from intent_ui.agent.providers.demo_plan import split_steps
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.tools.native import file_tools
from intent_ui.agent.tools.workspace import Workspace
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
    messages: list[dict[str, Any]] = [
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


# --- what a newcomer types: whole turns over a real workspace ---------------------------------


@dataclass
class Turn:
    """One demo turn played to its end with the real file tools: each round's calls as
    (tool, arguments without the intent), each call's intent, and the reply."""

    rounds: list[list[tuple[str, dict[str, Any]]]]
    intents: list[str]
    reply: str


def newcomer_workspace(root: Path) -> Path:
    (root / "intent_ui" / "agent").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "README.md").write_text(
        "# Intent UI\n\nIntent UI makes an AI agent's tool calls legible. It shows intents.\n\n"
        "## Running it\n\nStart it.\n\n## Configuration\n\nA file.\n"
    )
    (root / "intent_ui" / "auth.py").write_text(
        '"""OAuth sign-in."""\n\n\ndef oauth_callback():\n    return "OAuth"\n'
    )
    (root / "intent_ui" / "agent" / "mcp.py").write_text("# The MCP client.\nMCP = 1\n")
    (root / "intent_ui" / "agent" / "session.py").write_text(
        '"""A running turn is a session. Views follow it."""\n\n\n'
        "class TurnSession:\n    pass\n\n\nclass TurnSessions:\n    pass\n\n\n"
        "def agent_settings():\n    return {}  # OAuth and MCP settings\n"
    )
    (root / "tests" / "test_session.py").write_text("def test_session():\n    pass  # TODO\n")
    (root / "notes.txt").write_text("TODO: write the docs\n")
    return root


async def play(root: Path, message: str) -> Turn:
    """Run the demo like the run loop does: stream, call the tools, send the results back."""
    tools = {tool.name: tool for tool in file_tools(Workspace(root))}
    definitions = [tool.definition for tool in tools.values()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": message}]
    rounds: list[list[tuple[str, dict[str, Any]]]] = []
    intents: list[str] = []
    for _ in range(5):
        events = await stream(ChatRequest(model="demo", messages=messages, tools=definitions))
        calls = calls_of(events)
        if not calls:
            text = "".join(e.text for e in events if isinstance(e, TextChunk))
            return Turn(rounds, intents, text)
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": call_id, "name": call["name"], "arguments": call["text"]}
                    for call_id, call in calls.items()
                ],
            }
        )
        batch = []
        for call_id, call in calls.items():
            args = json.loads(call["text"])
            intents.append(args.pop("intent"))
            batch.append((call["name"], args))
            result = await tools[call["name"]].call(args)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": call["name"],
                    "content": result.output,
                    "is_error": result.is_error,
                }
            )
        rounds.append(batch)
    raise AssertionError(f"the demo kept calling tools for {message!r}")


async def test_searches_then_reading_the_named_module_then_a_summary_citing_them(
    tmp_path: Path,
) -> None:
    root = newcomer_workspace(tmp_path)
    turn = await play(
        root, "find where OAuth and MCP are handled, then read the session module and summarize"
    )
    assert turn.rounds == [
        [
            ("grep_search", {"pattern": "OAuth"}),
            ("grep_search", {"pattern": "MCP"}),
            ("glob_search", {"pattern": "**/*session*"}),
        ],
        [("read_file", {"path": "intent_ui/agent/session.py"})],
    ]
    assert turn.intents == [
        "Searching for OAuth handling",
        "Searching for MCP handling",
        "Looking for the session module",
        "Reading intent_ui/agent/session.py",
    ]
    reply = turn.reply
    assert reply.startswith(
        "I found 4 matches for OAuth (in intent_ui/auth.py, intent_ui/agent/session.py) and "
        "3 matches for MCP (in intent_ui/agent/mcp.py, intent_ui/agent/session.py)."
    )
    assert "2 files match `**/*session*`" in reply
    # The module the source defines, not its test, with what it holds.
    assert "The best match for session is `intent_ui/agent/session.py`" in reply
    assert "“A running turn is a session.”" in reply
    assert "2 classes (TurnSession, TurnSessions) and 1 function (agent_settings)" in reply
    assert reply.endswith(
        "In short: OAuth most in `intent_ui/auth.py` (3 of 4) and MCP most in "
        "`intent_ui/agent/mcp.py` (2 of 3)."
    )


async def test_what_does_this_project_do_lists_the_workspace_then_reads_its_readme(
    tmp_path: Path,
) -> None:
    turn = await play(newcomer_workspace(tmp_path), "what does this project do?")
    assert turn.rounds == [
        [("list_directory", {"path": "."})],
        [("read_file", {"path": "README.md"})],
    ]
    assert turn.reply.startswith(
        "`README.md` has 11 lines, titled “Intent UI”. It begins: “Intent UI makes an AI "
        "agent's tool calls legible.” Its sections: Running it, Configuration."
    )
    assert turn.reply.endswith(
        "The workspace contains 4 entries: intent_ui/, tests/, notes.txt, README.md"
    )


async def test_list_the_files_lists_the_workspace(tmp_path: Path) -> None:
    turn = await play(newcomer_workspace(tmp_path), "list the files")
    assert turn.rounds == [[("list_directory", {"path": "."})]]
    assert (
        turn.reply == "The workspace contains 4 entries: intent_ui/, tests/, notes.txt, README.md"
    )


async def test_read_a_named_file_shows_its_start(tmp_path: Path) -> None:
    turn = await play(newcomer_workspace(tmp_path), "read README.md")
    assert turn.rounds == [[("read_file", {"path": "README.md"})]]
    assert turn.reply.startswith("`README.md` has 11 lines; here is the start:\n\n```\n# Intent UI")


async def test_search_for_one_word_is_one_search_and_the_reply_names_the_files(
    tmp_path: Path,
) -> None:
    turn = await play(newcomer_workspace(tmp_path), "search for TODO")
    assert turn.rounds == [[("grep_search", {"pattern": "TODO"})]]
    assert turn.intents == ["Searching for TODO"]
    assert turn.reply == "I found 2 matches for TODO (in notes.txt, tests/test_session.py)."


async def test_read_it_reads_the_top_search_hit_outside_the_tests(tmp_path: Path) -> None:
    root = newcomer_workspace(tmp_path)
    (root / "tests" / "test_oauth.py").write_text("# OAuth\n" * 5)
    turn = await play(root, "Find where OAuth is handled and read it.")
    assert turn.rounds == [
        [("grep_search", {"pattern": "OAuth"})],
        [("read_file", {"path": "intent_ui/auth.py"})],
    ]
    assert "The top search hit outside the tests is `intent_ui/auth.py` (3 matches)." in turn.reply
    assert "It begins: “OAuth sign-in.”" in turn.reply


async def test_a_module_nothing_is_named_after_is_read_nowhere_and_said_so(
    tmp_path: Path,
) -> None:
    turn = await play(newcomer_workspace(tmp_path), "read the billing module")
    assert turn.rounds == [[("glob_search", {"pattern": "**/*billing*"})]]
    assert "No file matches `**/*billing*`." in turn.reply
    assert "I found no file about billing, so I read nothing for it." in turn.reply


def test_a_message_splits_into_steps_on_then_commas_and_and_but_not_between_topics() -> None:
    assert split_steps("find where OAuth and MCP are handled, then read the session module") == [
        "find where OAuth and MCP are handled",
        "read the session module",
    ]
    assert split_steps("list the files, read README.md and summarize it.") == [
        "list the files",
        "read README.md",
        "summarize it",
    ]
    assert split_steps('search for "read and then write"; list src') == [
        'search for "read and then write"',
        "list src",
    ]


def test_the_same_message_plans_the_same_calls() -> None:
    message = "find where OAuth and MCP are handled, then read the session module and summarize"
    assert plan_calls(message, FILE_TOOLS) == plan_calls(message, FILE_TOOLS)


def test_questions_about_a_part_read_the_file_about_it_and_summarise() -> None:
    tools = [*FILE_TOOLS, tool("glob_search")]
    (lookup,) = plan_calls("What does the session module do?", tools)
    assert (lookup.name, lookup.args["pattern"]) == ("glob_search", "**/*session*")
    (read,) = plan_calls("how does intent_ui/agent/run.py work?", tools)
    assert (read.name, read.args["path"]) == ("read_file", "intent_ui/agent/run.py")
    (listing,) = plan_calls("What is this?", tools)
    assert (listing.name, listing.args["path"]) == ("list_directory", ".")
