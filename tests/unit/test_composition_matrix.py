"""The composition matrix: intents with every other capability, one test per row, each
driving the running loop (a scripted provider, the run loop, its pauses and code
bridge) and reading what a user would see of the turn (its view, its cards' labels) or
what the model and the tools received. The pure-logic cases are
tests/unit/test_capability_composition.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema

from intent_ui.agent.activity import SummaryEntry
from intent_ui.agent.pauses import decision_from
from intent_ui.agent.tokenizer import get_tokenizer
from intent_ui.agent.tools.base import ToolResult
from intent_ui.agent.tools.code_runner import RunToolsWithCodeTool
from intent_ui.agent.tools.sandbox import Sandbox, SandboxLimits
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.capabilities.output_references import MAX_REFERENCE_CHARS
from intent_ui.core.compaction import ledger_lines
from intent_ui.core.events import (
    ApprovalRequested,
    ArgsComplete,
    CallBackgrounded,
    CallSettled,
    TurnEvent,
)
from intent_ui.core.pause_cards import approval_entry
from intent_ui.core.tokens import count_definition
from intent_ui.core.turn import TurnView
from tests.support.run_loop import (
    GUARD,
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

SEARCH = {INTENT_ARG: "Searching for OAuth handling", "pattern": "oauth"}


def opts(**per_tool: dict[str, Any]) -> dict[str, Any]:
    return {"*": {"describe_intent": True}, **per_tool}


def offered(provider: ScriptedProvider, round_: int = 0) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in provider.requests[round_].tools}


def labels(events: list[TurnEvent], call_id: str) -> list[str]:
    """The card's label after each event of the turn from its arguments' end on (before,
    it may show the tool's name), without repeats."""
    view, complete = TurnView(), False
    seen: list[str] = []
    for event in events:
        view.apply(event)
        complete = complete or (isinstance(event, ArgsComplete) and event.call_id == call_id)
        label = view.card_label(call_id)
        if complete and label and (not seen or seen[-1] != label):
            seen.append(label)
    return seen


def properties(definition: dict[str, Any]) -> list[str]:
    return list(definition["parameters"]["properties"])


# 1. intent + run_in_background ---------------------------------------------------------


async def test_intent_with_run_in_background_is_first_and_the_flag_last_in_every_round() -> None:
    provider = ScriptedProvider([*call("c1", "grep_search", SEARCH), end("tool_use")], [end()])
    tool = FakeTool("grep_search")
    await collect(
        make_run(provider, [tool], tool_options=opts(grep_search={"run_in_background": True}))
    )
    for round_ in (0, 1):
        names = properties(offered(provider, round_)["grep_search"])
        assert names[0] == INTENT_ARG and names[-1] == "run_in_background"
    assert tool.seen == [{"pattern": "oauth"}]


# 2. intent + backgrounded dispatch ------------------------------------------------------


async def test_a_backgrounded_dispatch_keeps_the_intent_until_the_harvest_settles_it() -> None:
    release = asyncio.Event()

    async def slow(args: dict[str, Any]) -> ToolResult:
        await release.wait()
        return ToolResult("12 matches", outcome="Found 12 matches for OAuth")

    tool = FakeTool("grep_search", run=slow)
    args = {**SEARCH, "run_in_background": True}
    provider = ScriptedProvider([*call("c1", "grep_search", args), end("tool_use")], [end()])
    run = make_run(provider, [tool], tool_options=opts(grep_search={"run_in_background": True}))
    events: list[TurnEvent] = []

    async def read() -> None:
        async for event in run:
            events.append(event)
            if isinstance(event, CallBackgrounded):
                release.set()

    await asyncio.wait_for(read(), GUARD)
    assert labels(events, "c1") == [
        "Searching for OAuth handling",
        "Searching for OAuth handling · in background",
        "Found 12 matches for OAuth",
    ]


# 3. intent + background timeout ---------------------------------------------------------


async def test_a_background_call_reaped_at_its_timeout_settles_as_an_error_label() -> None:
    async def never(args: dict[str, Any]) -> ToolResult:
        await asyncio.Event().wait()
        return ToolResult("unreachable")

    args = {**SEARCH, "run_in_background": True}
    provider = ScriptedProvider([*call("c1", "grep_search", args), end("tool_use")], [end()])
    run = make_run(
        provider,
        [FakeTool("grep_search", run=never)],
        tool_options=opts(grep_search={"run_in_background": True}),
        background_timeout=0.05,
    )
    events = await collect(run)
    assert settled(events, "c1").state == "error"
    assert labels(events, "c1")[-1] == "Failed: Searching for OAuth handling"


# 4. intent + defer_loading --------------------------------------------------------------


async def test_a_discovered_deferred_tool_arrives_with_its_intent_and_counts_it() -> None:
    found = {INTENT_ARG: "Finding a PDF tool", "query": "pdf"}
    provider = ScriptedProvider(
        [*call("s1", "tool_search", found), end("tool_use")],
        [
            *call("c1", "convert_pdf", {INTENT_ARG: "Converting the report", "pattern": "a"}),
            end("tool_use"),
        ],
        [end()],
    )
    tool = FakeTool("convert_pdf", self_describing=False)
    events = await collect(
        make_run(provider, [tool], tool_options=opts(convert_pdf={"defer_loading": True}))
    )
    assert "convert_pdf" not in offered(provider, 0)
    promoted = offered(provider, 1)["convert_pdf"]
    assert properties(promoted)[0] == INTENT_ARG
    assert is_intent_label_property(promoted["parameters"]["properties"][INTENT_ARG])
    count = get_tokenizer().count
    bare = {**promoted, "parameters": {**promoted["parameters"], "properties": {"pattern": {}}}}
    assert count_definition(promoted, count) > count_definition(bare, count)
    assert labels(events, "c1")[0] == "Converting the report"  # its first call is labelled
    assert tool.seen == [{"pattern": "a"}]


# 5. intent + allowed_callers ['code_execution'] ------------------------------------------


async def test_a_code_only_tool_is_not_injected_nor_offered() -> None:
    provider = ScriptedProvider([end()])
    tool = FakeTool("grep_search", self_describing=False)
    run = make_run(
        provider, [tool], tool_options=opts(grep_search={"allowed_callers": ["code_execution"]})
    )
    await collect(run)
    assert "grep_search" not in offered(provider)
    assert "grep_search" not in run.intent_tool_names


# 6. intent + ['direct', 'code_execution'] ----------------------------------------------


async def test_a_dual_caller_tool_has_an_optional_intent_and_runs_without_one() -> None:
    bare = {"pattern": "oauth"}
    provider = ScriptedProvider([*call("c1", "grep_search", bare), end("tool_use")], [end()])
    tool = FakeTool("grep_search", self_describing=False)
    dual = {"allowed_callers": ["direct", "code_execution"]}
    events = await collect(make_run(provider, [tool], tool_options=opts(grep_search=dual)))
    schema = offered(provider)["grep_search"]["parameters"]
    assert next(iter(schema["properties"])) == INTENT_ARG
    assert INTENT_ARG not in schema.get("required", [])
    assert settled(events, "c1").state == "settled" and tool.seen == [bare]


# 7. intent + PTC inner call -------------------------------------------------------------


@requires_sandbox
async def test_an_inner_call_from_code_reaches_the_tool_body_without_an_intent(
    sandbox_workspace: Path,
) -> None:
    runner = RunToolsWithCodeTool(Sandbox(sandbox_workspace, limits=SandboxLimits(wall_s=5)))
    code = "print(grep_search('TODO', intent='Sneaking a label in'))"
    program = {INTENT_ARG: "Counting TODOs with a program", "code": code}
    provider = ScriptedProvider([*call("r1", "run_tools_with_code", program), end()], [end()])
    tool = FakeTool("grep_search")
    dual = {"allowed_callers": ["direct", "code_execution"]}
    events = await collect(make_run(provider, [tool, runner], tool_options=opts(grep_search=dual)))
    assert tool.seen == [{"pattern": "TODO"}]
    assert labels(events, "r1")[0] == "Counting TODOs with a program"  # the one card


# 8. intent + HITL ask -------------------------------------------------------------------


DELETE = {INTENT_ARG: "Deleting the staging migrations", "path": "migrations/staging"}
ASKS_FIRST = opts(delete_file={"require_approval": True})


async def approved_turn(decision: Any, tool: FakeTool) -> tuple[list[TurnEvent], ScriptedProvider]:
    provider = ScriptedProvider([*call("c1", "delete_file", DELETE), end("tool_use")], [end()])
    run = make_run(provider, [tool], tool_options=ASKS_FIRST)
    events: list[TurnEvent] = []

    async def read() -> None:
        async for event in run:
            events.append(event)
            if isinstance(event, ApprovalRequested):
                assert run.pauses.decide(event.call_id, decision).ok

    await asyncio.wait_for(read(), GUARD)
    return events, provider


async def test_the_approval_request_leads_with_the_intent() -> None:
    events, _ = await approved_turn(decision_from("once"), FakeTool("delete_file"))
    view = TurnView()
    for event in events:
        view.apply(event)
        if isinstance(event, ApprovalRequested):
            (pause,) = view.waiting()
            assert approval_entry(view, pause, "en")["prompt"] == (
                "Approve: Deleting the staging migrations"
            )


# 9. intent + HITL updatedInput ----------------------------------------------------------


async def test_an_intent_rewritten_at_approval_is_the_label_and_what_the_model_reads() -> None:
    edited = {INTENT_ARG: "Deleting only the users migration", "path": "0001.sql"}
    tool = FakeTool("delete_file")
    events, provider = await approved_turn(
        decision_from("once", arguments=json.dumps(edited)), tool
    )
    assert tool.seen == [{"path": "0001.sql"}]
    view = TurnView.replay(events)
    record = view.call("c1")
    assert record is not None and record.intent == "Deleting only the users migration"
    assistant = provider.requests[1].messages[1]
    assert json.loads(assistant["tool_calls"][0]["arguments"]) == edited


# 10. intent + self-spawn subagent --------------------------------------------------------


async def test_a_self_spawned_turn_offers_and_finds_its_tools_without_labels() -> None:
    """The definitions and the deferred registry alike (tool_search's finds): the child
    run of `subagent` is this (tests/unit/test_subagents.py runs it inside a call)."""
    provider = ScriptedProvider(
        [*call("s1", "tool_search", {"query": "pdf"}), end("tool_use")], [end()]
    )
    tools = [FakeTool("grep_search"), FakeTool("convert_pdf", self_describing=False)]
    run = make_run(
        provider,
        tools,
        tool_options=opts(convert_pdf={"defer_loading": True}),
        inherited=True,
    )
    await collect(run)
    for round_ in (0, 1):
        for definition in offered(provider, round_).values():
            assert INTENT_ARG not in properties(definition), definition["name"]
    assert "convert_pdf" in offered(provider, 1)
    assert not run.intent_tool_names


# 11. intent + tool output references ----------------------------------------------------


async def test_an_output_reference_fills_arguments_but_never_the_intent() -> None:
    big = "x" * MAX_REFERENCE_CHARS

    async def read(args: dict[str, Any]) -> ToolResult:
        return ToolResult(big, outcome="Read 400 KB")

    async def write(args: dict[str, Any]) -> ToolResult:
        return ToolResult("ok", outcome=f"Wrote {args['content']}")  # echoes its argument

    reader = FakeTool("read_file", run=read)
    writer = FakeTool("write_file", properties={"content": {"type": "string"}}, run=write)
    second = {INTENT_ARG: "Copying {{tool0turn0}} over", "content": "{{tool0turn0}}"}
    provider = ScriptedProvider(
        [
            *call("c1", "read_file", {INTENT_ARG: "Reading the dump", "pattern": "a"}),
            end("tool_use"),
        ],
        [*call("c2", "write_file", second), end("tool_use")],
        [end()],
    )
    events = await collect(make_run(provider, [reader, writer]))
    assert writer.seen == [{"content": big}]  # the tool got the output
    view = TurnView.replay(events)
    # The label, the stored arguments and the settled card keep the placeholder.
    assert labels(events, "c2") == ["Copying {{tool0turn0}} over", "Wrote {{tool0turn0}}"]
    assert view.arguments("c2") == json.dumps(second)
    assert all(len(e.arguments) < 200 for e in of(events, ArgsComplete))
    assert all(len(e.outcome or "") < 200 for e in of(events, CallSettled))
    # Its ledger line, once the turn is compacted, names the reference, not the output.
    (copied,) = [line for line in ledger_lines(view) if line.startswith("write_file")]
    assert "{{tool0turn0}}" in copied and len(copied) < 300
    # The model read the first result's reference, and its own call back as it wrote it.
    first_result = provider.requests[1].messages[-1]["content"]
    assert first_result.endswith("[Output reference: {{tool0turn0}}]")
    assistant = provider.requests[2].messages[-2]
    assert json.loads(assistant["tool_calls"][0]["arguments"]) == second


# 12. intent + activity label ------------------------------------------------------------


class RecordingSummarizer:
    def __init__(self) -> None:
        self.entries: list[SummaryEntry] = []

    async def summarize(self, entries: list[SummaryEntry]) -> str:
        self.entries = list(entries)
        return "Looked into OAuth"


async def test_the_header_goes_intent_outcome_summary_and_the_batch_keeps_intents() -> None:
    async def found(args: dict[str, Any]) -> ToolResult:
        return ToolResult("3", outcome=f"Found 3 matches for {args['pattern']}")

    summarizer = RecordingSummarizer()
    other = {INTENT_ARG: "Searching for MCP wiring", "pattern": "mcp"}
    provider = ScriptedProvider(
        [*call("c1", "grep_search", SEARCH), *call("c2", "grep_search", other), end("tool_use")],
        [end()],
    )
    tool = FakeTool("grep_search", run=found)
    events = await collect(make_run(provider, [tool], summarizer=summarizer))
    view, streamed = TurnView(), False
    headers: list[str] = []
    for event in events:
        view.apply(event)
        streamed = streamed or (isinstance(event, ArgsComplete) and event.call_id == "c2")
        if streamed:
            text = view.group_header(0).text
            if text and (not headers or headers[-1] != text):
                headers.append(text)
    assert headers[0].startswith("Searching for")  # a live intent first
    assert "Found 3 matches for" in " ".join(headers[1:-1])  # then a settled outcome
    assert headers[-1] == "Looked into OAuth"  # the summary wins once it arrives
    assert [e.intent for e in summarizer.entries] == [
        "Searching for OAuth handling",
        "Searching for MCP wiring",
    ]
    assert all(INTENT_ARG in json.loads(e.tool_input) for e in summarizer.entries)


# 13. intent + all three other capabilities ----------------------------------------------


async def test_one_tool_with_every_capability_is_valid_with_intent_first() -> None:
    everything = {
        "run_in_background": True,
        "defer_loading": True,
        "allowed_callers": ["direct", "code_execution"],
    }
    args = {INTENT_ARG: "Converting the report", "pattern": "a", "run_in_background": False}
    provider = ScriptedProvider(
        [
            *call("s1", "tool_search", {INTENT_ARG: "Finding it", "query": "convert"}),
            end("tool_use"),
        ],
        [*call("c1", "convert_pdf", args), end("tool_use")],
        [end()],
    )
    tool = FakeTool("convert_pdf", self_describing=False)
    await collect(make_run(provider, [tool], tool_options=opts(convert_pdf=everything)))
    schema = offered(provider, 1)["convert_pdf"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(args, schema)
    assert next(iter(schema["properties"])) == INTENT_ARG
    assert list(schema["properties"])[-1] == "run_in_background"
    assert INTENT_ARG not in schema.get("required", [])
    assert tool.seen == [{"pattern": "a"}]
