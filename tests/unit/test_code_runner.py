"""`run_tools_with_code` for real (bubblewrap), in the running loop: a program calls the
agent's tools through the bridge, unlabelled, and `allowed_callers` decides which."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from intent_ui.agent.providers.base import TextChunk
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.tools import code_runner
from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.code_runner import (
    RunToolsWithCodeTool,
    describe_functions,
    python_names,
)
from intent_ui.agent.tools.sandbox import Sandbox, SandboxLimits
from intent_ui.config import AppConfig, EndpointConfig
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.events import ArgsComplete, CallStarted, TextDelta
from tests.support.run_loop import (
    ALL_CAPS,
    FakeTool,
    ScriptedProvider,
    call,
    collect,
    end,
    make_run,
    of,
    settled,
)
from tests.support.sandbox import requires_sandbox

LIMITS = SandboxLimits(wall_s=3, cpu_s=2, processes=16, output_bytes=4096)
DUAL = {"allowed_callers": ["direct", "code_execution"]}
CODE_ONLY = {"allowed_callers": ["code_execution"]}


@pytest.fixture
def runner(sandbox_workspace: Path) -> RunToolsWithCodeTool:
    return RunToolsWithCodeTool(Sandbox(sandbox_workspace, limits=LIMITS))


def program(call_id: str, code: str, intent: str = "Counting TODOs with a program") -> list[Any]:
    return call(call_id, "run_tools_with_code", {INTENT_ARG: intent, "code": code})


def options(**per_tool: dict[str, Any]) -> dict[str, Any]:
    return {"*": {"describe_intent": True}, **per_tool}


def offered(provider: ScriptedProvider, round_: int = 0) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in provider.requests[round_].tools}


# --- the bridge, in the loop ------------------------------------------------------------


@requires_sandbox
async def test_a_program_calls_a_tool_through_the_bridge_with_the_intent_stripped(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    code = (
        "print(grep_search('TODO', intent='Sneaking a label in'))\n"
        "print(call_tool('grep_search', pattern='FIXME', intent='Another one'))\n"
    )
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    run = make_run(provider, [search, runner], tool_options=options(grep_search=DUAL))
    events = await collect(run)
    assert search.seen == [{"pattern": "TODO"}, {"pattern": "FIXME"}]
    result = settled(events, "r1")
    assert result.state == "settled"
    assert result.output == 'ok {"pattern": "TODO"}\nok {"pattern": "FIXME"}\n'
    # One card, the runner's, labelled by the program's intent; the inner calls have none.
    (card,) = of(events, CallStarted)
    assert (card.call_id, card.tool, card.label_bearing) == ("r1", "run_tools_with_code", True)


@requires_sandbox
async def test_the_runner_lists_what_code_may_call_without_labels(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search", properties={"pattern": {"type": "string"}})
    provider = ScriptedProvider([TextChunk("Nothing to do."), end()])
    run = make_run(provider, [search, runner], tool_options=options(grep_search=DUAL))
    await collect(run)
    tools = offered(provider)
    description = tools["run_tools_with_code"]["description"]
    assert "- grep_search(pattern=…): The grep_search tool." in description
    assert "intent" not in description.split("Functions the program can call:")[1]
    # A dual-caller tool keeps its label for direct calls, but never requires it.
    schema = tools["grep_search"]["parameters"]
    assert is_intent_label_property(schema["properties"][INTENT_ARG])
    assert INTENT_ARG not in schema.get("required", [])
    # The runner's own label describes the whole program and is required.
    runner_schema = tools["run_tools_with_code"]["parameters"]
    assert next(iter(runner_schema["properties"])) == INTENT_ARG
    assert INTENT_ARG in runner_schema["required"]


@requires_sandbox
async def test_a_code_only_tool_is_never_offered_directly_and_a_direct_call_is_refused(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    provider = ScriptedProvider(
        [
            # Written from memory: the tool is not offered, the call still comes.
            *call("d1", "grep_search", {"pattern": "direct"}),
            *program("r1", "print(grep_search(pattern='from code'))"),
            end(),
        ],
        [TextChunk("Done."), end()],
    )
    run = make_run(provider, [search, runner], tool_options=options(grep_search=CODE_ONLY))
    events = await collect(run)
    assert "grep_search" not in offered(provider)
    assert "- grep_search(pattern=…)" in offered(provider)["run_tools_with_code"]["description"]
    direct = settled(events, "d1")
    assert direct.state == "error"
    assert direct.error == (
        "'grep_search' can only be called from code, not directly: call it from a program "
        "run with run_tools_with_code."
    )
    assert search.seen == [{"pattern": "from code"}]
    started = {event.call_id: event for event in of(events, CallStarted)}
    assert started["d1"].label_bearing is False  # a code-only tool never carries a label


@requires_sandbox
async def test_a_direct_only_tool_cannot_be_called_from_code(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    code = (
        "try:\n"
        "    grep_search('x')\n"
        "except NameError:\n"
        "    print('no such function')\n"
        "try:\n"
        "    call_tool('grep_search', pattern='x')\n"
        "except ToolError as error:\n"
        "    print('refused:', error)\n"
        "try:\n"
        "    call_tool('run_tools_with_code', code='print(1)')\n"
        "except ToolError as error:\n"
        "    print('refused:', error)\n"
    )
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    run = make_run(provider, [search, runner])
    events = await collect(run)
    assert search.seen == []
    refused = "refused: '{}' cannot be called from code (tools code may call: none)."
    assert settled(events, "r1").output.splitlines() == [
        "no such function",
        refused.format("grep_search"),
        refused.format("run_tools_with_code"),
    ]
    description = offered(provider)["run_tools_with_code"]["description"]
    assert description.endswith(
        "No tools can be called from code in this conversation: the program runs alone."
    )


@requires_sandbox
async def test_a_business_intent_of_a_code_only_tool_reaches_it(
    runner: RunToolsWithCodeTool,
) -> None:
    ticket = FakeTool(
        "create_ticket",
        properties={
            "intent": {"type": "string", "description": "What the customer wants."},
            "title": {"type": "string"},
        },
        kind="mcp",
        server="tracker",
        self_describing=False,
    )
    code = "print(create_ticket(intent='refund', title='Broken kettle'))"
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    run = make_run(
        provider, [ticket, runner], tool_options=options(create_ticket_mcp_tracker=CODE_ONLY)
    )
    events = await collect(run)
    assert ticket.seen == [{"intent": "refund", "title": "Broken kettle"}]
    assert settled(events, "r1").state == "settled"


@requires_sandbox
async def test_a_failing_tool_raises_tool_error_in_the_program(
    runner: RunToolsWithCodeTool,
) -> None:
    async def missing(args: dict[str, Any]) -> ToolResult:
        return ToolResult("File 'nope.txt' does not exist", is_error=True)

    reader = FakeTool("read_file", properties={"path": {"type": "string"}}, run=missing)
    code = (
        "try:\n    read_file('nope.txt')\nexcept ToolError as error:\n    print('failed:', error)\n"
    )
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    run = make_run(provider, [reader, runner], tool_options=options(read_file=DUAL))
    events = await collect(run)
    assert settled(events, "r1").output == "failed: File 'nope.txt' does not exist\n"


@requires_sandbox
async def test_a_program_may_make_only_so_many_tool_calls(
    runner: RunToolsWithCodeTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_runner, "MAX_INNER_CALLS", 2)
    search = FakeTool("grep_search")
    code = "for n in range(3):\n    grep_search(str(n))\n"
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    run = make_run(provider, [search, runner], tool_options=options(grep_search=DUAL))
    events = await collect(run)
    result = settled(events, "r1")
    assert result.state == "error"
    assert "ToolError: this program made more than 2 tool calls" in (result.error or "")
    assert len(search.seen) == 2


@requires_sandbox
async def test_with_programmatic_tools_off_nothing_is_callable_from_code(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    provider = ScriptedProvider([TextChunk("Nothing to do."), end()])
    run = make_run(
        provider,
        [search, runner],
        tool_options=options(grep_search=CODE_ONLY),
        capabilities=ALL_CAPS - {"programmatic_tools"},
    )
    await collect(run)
    tools = offered(provider)
    assert "grep_search" in tools  # direct again rather than unreachable
    assert "No tools can be called from code" in tools["run_tools_with_code"]["description"]


@requires_sandbox
async def test_a_deferred_code_only_tool_is_never_promoted_by_tool_search(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    provider = ScriptedProvider([TextChunk("Nothing to do."), end()])
    both = {**CODE_ONLY, "defer_loading": True}
    run = make_run(provider, [search, runner], tool_options=options(grep_search=both))
    await collect(run)
    tools = offered(provider)
    assert "grep_search" not in tools and "tool_search" not in tools
    assert "- grep_search(pattern=…)" in tools["run_tools_with_code"]["description"]


async def test_a_runner_found_by_tool_search_lists_the_functions_too(
    runner: RunToolsWithCodeTool,
) -> None:
    search = FakeTool("grep_search")
    provider = ScriptedProvider(
        [
            *call(
                "s1", "tool_search", {INTENT_ARG: "Looking for a code runner", "query": "python"}
            ),
            end(),
        ],
        [TextChunk("Found it."), end()],
    )
    deferred = {"defer_loading": True}
    chosen = options(grep_search=DUAL, run_tools_with_code=deferred)
    await collect(make_run(provider, [search, runner], tool_options=chosen))
    assert "run_tools_with_code" not in offered(provider, 0)
    promoted = offered(provider, 1)["run_tools_with_code"]
    assert "- grep_search(pattern=…): The grep_search tool." in promoted["description"]


# --- escapes, each the call's error ---------------------------------------------------


@requires_sandbox
@pytest.mark.parametrize(
    ("code", "first_line", "detail"),
    [
        (
            "print(open('/etc/shadow').read())",
            "The program exited with status 1.",
            "FileNotFoundError",
        ),
        (
            "import os; print(os.listdir(os.path.expanduser('~root')))",
            "The program exited with status 1.",
            "FileNotFoundError",
        ),
        (
            "open('notes.md', 'w').write('changed')",
            "The program exited with status 1.",
            "Read-only file system",
        ),
        (
            "import socket; socket.create_connection(('1.1.1.1', 443), timeout=2)",
            "The program exited with status 1.",
            "Network is unreachable",
        ),
        (
            "import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(30)\n",
            "The program exited with status 1.",
            "BlockingIOError",
        ),
        (
            "import time; time.sleep(60)",
            "Stopped: the program ran past its 3 s time limit.",
            "",
        ),
        (
            "while True: print('flood' * 20)",
            "Stopped: the output passed 4 KB, the sandbox's output limit.",
            "floodflood",
        ),
    ],
    ids=["etc-shadow", "host-home", "write-workspace", "socket", "fork-bomb", "time", "flood"],
)
async def test_each_escape_is_refused_and_reported_as_the_calls_error(
    runner: RunToolsWithCodeTool, sandbox_workspace: Path, code: str, first_line: str, detail: str
) -> None:
    provider = ScriptedProvider([*program("r1", code), end()], [TextChunk("Done."), end()])
    events = await collect(make_run(provider, [runner]))
    result = settled(events, "r1")
    assert result.state == "error"
    assert (result.error or "").splitlines()[0] == first_line
    assert detail in (result.error or "")
    assert (sandbox_workspace / "notes.md").read_text() == "TODO write the notes\n"


@requires_sandbox
async def test_a_program_reads_the_workspace_and_writes_its_scratch(
    runner: RunToolsWithCodeTool,
) -> None:
    code = (
        "import os\n"
        "open(os.path.expanduser('~/copy.txt'), 'w').write(open('notes.md').read())\n"
        "print(open('/scratch/copy.txt').read(), end='')\n"
    )
    result = await runner.call({"code": code})
    assert (result.is_error, result.output) == (False, "TODO write the notes\n")


# --- the offline demo ----------------------------------------------------------------


@requires_sandbox
@pytest.mark.parametrize("bridged", [False, True], ids=["reads-itself", "through-grep"])
async def test_the_demo_counts_the_todos_with_a_program(
    sandbox_workspace: Path, bridged: bool
) -> None:
    """The prompt the browser test uses: without a code-callable search the program reads
    the workspace itself; with one it calls it through the bridge."""
    (sandbox_workspace / "src").mkdir()
    (sandbox_workspace / "src" / "app.py").write_text("x = 1  # TODO one\n# TODO two\n")
    config = AppConfig(workspace=sandbox_workspace, endpoints=[EndpointConfig(kind="demo")])
    chosen = options(grep_search=DUAL) if bridged else options()
    async with AgentRuntime(config, pacing_ms=0) as runtime:
        run = runtime.start_turn(user_message="count the TODOs with code", tool_options=chosen)
        events = await collect(run)
    (card,) = of(events, CallStarted)
    assert (card.tool, card.label_bearing) == ("run_tools_with_code", True)
    (written,) = of(events, ArgsComplete)
    args = json.loads(written.arguments)
    assert args[INTENT_ARG] == "Counting the lines that mention TODO with a program"
    assert ("grep_search(" in args["code"]) is bridged
    printed = "3 lines mention TODO in 2 files\n- src/app.py: 2\n- notes.md: 1\n"
    assert settled(events, card.call_id).output == printed
    reply = "".join(event.text for event in of(events, TextDelta))
    assert reply == f"It printed:\n\n```\n{printed.rstrip()}\n```"


@requires_sandbox
async def test_the_demo_runs_a_quoted_line_of_python_and_an_escape_is_its_error(
    sandbox_workspace: Path,
) -> None:
    """The prompt the browser test uses for an escape: the line runs as written, and
    reading outside the workspace settles the call as an error the reply names."""
    config = AppConfig(workspace=sandbox_workspace, endpoints=[EndpointConfig(kind="demo")])
    code = "print(open('/etc/shadow').read())"
    async with AgentRuntime(config, pacing_ms=0) as runtime:
        run = runtime.start_turn(user_message=f"run `{code}` in python", tool_options=options())
        events = await collect(run)
    (card,) = of(events, CallStarted)
    (written,) = of(events, ArgsComplete)
    args = json.loads(written.arguments)
    assert args == {INTENT_ARG: f"Running {code} in the Python sandbox", "code": code}
    result = settled(events, card.call_id)
    assert result.state == "error"
    assert (result.error or "").splitlines()[0] == "The program exited with status 1."
    assert "FileNotFoundError" in (result.error or "")
    reply = "".join(event.text for event in of(events, TextDelta))
    assert reply == "The run_tools_with_code call failed: The program exited with status 1."


# --- names the program calls tools by -------------------------------------------------


def test_python_names_are_unique_identifiers_that_shadow_nothing() -> None:
    names = ["print", "class", "search-code", "search_code", "1x", "call_tool", "plain"]
    assert python_names([{"name": name} for name in names]) == {
        "print": "print_tool",
        "class": "class_tool",
        "search-code": "search_code",
        "search_code": "search_code_2",
        "1x": "_1x",
        "call_tool": "call_tool_tool",
        "plain": "plain",
    }


def test_functions_list_required_parameters_first_and_name_a_renamed_tool() -> None:
    definition = {
        "name": "search-code",
        "description": "Search the code of a repository. Returns paths.",
        "parameters": {
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}},
            "required": ["query"],
        },
    }
    assert describe_functions([definition]) == (
        "Functions the program can call:\n"
        "- search_code(query, limit=…) [tool search-code]: Search the code of a repository."
    )
