"""The run loop against a scripted provider and fake tools (no network, no files)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from intent_ui.agent.activity import ModelSummarizer, SummaryEntry
from intent_ui.agent.providers.base import (
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
)
from intent_ui.agent.providers.errors import ProviderStreamError
from intent_ui.agent.run import BACKGROUND_TIMEOUT_ERROR, CUT_OFF_ERROR
from intent_ui.agent.tools.base import ToolResult
from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.goals import goal_registry, scope_registry
from tests.support.run_loop import (
    GUARD,
    PDF_DEFERRED,
    Do,
    FakeTool,
    Gate,
    ScriptedProvider,
    Step,
    call,
    collect,
    end,
    ending,
    hangs,
    make_run,
    of,
    settled,
)

# --- tests ------------------------------------------------------------------------------


async def test_intent_is_stripped_before_the_tool_sees_the_args() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider(
        [*call("c1", "grep_search", {"intent": "Searching for OAuth", "pattern": "OAuth"}), end()],
    )
    events = await collect(make_run(provider, [grep]))
    assert grep.seen == [{"pattern": "OAuth"}]
    assert of(events, CallStarted)[0].label_bearing is True
    assert settled(events, "c1").state == "settled"


async def test_business_intent_on_a_tool_without_a_label_passes_through() -> None:
    crm = FakeTool(
        "create_ticket",
        properties={"intent": {"type": "string", "description": "billing or support"}},
        kind="mcp",
        server="crm",
        self_describing=False,
    )
    provider = ScriptedProvider(
        [*call("c1", "create_ticket", {"intent": "billing_inquiry"}), end()],
    )
    events = await collect(make_run(provider, [crm]))
    started = of(events, CallStarted)[0]
    assert started.label_bearing is False
    assert started.server == "crm"
    assert crm.seen == [{"intent": "billing_inquiry"}]


async def test_capability_off_sends_no_intent_and_marks_no_call_label_bearing() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider([*call("c1", "grep_search", {"pattern": "x"}), end()])
    events = await collect(make_run(provider, [grep], capabilities=frozenset()))
    (definition,) = provider.requests[0].tools
    assert INTENT_ARG not in definition["parameters"]["properties"]
    assert of(events, CallStarted)[0].label_bearing is False


async def test_capability_on_offers_intent_as_the_first_property() -> None:
    provider = ScriptedProvider([TextChunk("hi"), end()])
    await collect(make_run(provider, [FakeTool("grep_search")]))
    (definition,) = provider.requests[0].tools
    first, prop = next(iter(definition["parameters"]["properties"].items()))
    assert first == INTENT_ARG
    assert is_intent_label_property(prop)
    json.dumps(provider.requests[0].tools)  # plain JSON-ready data, no read-only proxies


async def test_parallel_calls_run_concurrently() -> None:
    a_started, b_started = asyncio.Event(), asyncio.Event()

    async def run_a(args: dict[str, Any]) -> ToolResult:
        a_started.set()
        await b_started.wait()  # would deadlock if the tools ran one after the other
        return ToolResult("a")

    async def run_b(args: dict[str, Any]) -> ToolResult:
        b_started.set()
        await a_started.wait()
        return ToolResult("b")

    tools = [FakeTool("tool_a", run=run_a), FakeTool("tool_b", run=run_b)]
    provider = ScriptedProvider(
        [*call("a", "tool_a", {"pattern": "1"}), *call("b", "tool_b", {"pattern": "2"}), end()],
    )
    events = await collect(make_run(provider, tools))
    assert {e.call_id: e.state for e in of(events, CallSettled)} == {"a": "settled", "b": "settled"}
    assert {e.block for e in of(events, CallStarted)} == {0}


async def test_a_tool_starts_at_its_end_signal_while_the_stream_continues() -> None:
    tool_ran = asyncio.Event()

    async def run(args: dict[str, Any]) -> ToolResult:
        tool_ran.set()
        return ToolResult("ok")

    provider = ScriptedProvider(
        [*call("a", "tool_a", {"pattern": "1"}), Gate(tool_ran), TextChunk("after"), end()],
    )
    events = await collect(make_run(provider, [FakeTool("tool_a", run=run)]))
    kinds = [type(e) for e in events]
    assert kinds.index(CallSettled) < kinds.index(TextDelta)


async def test_a_tool_that_raises_settles_as_error_and_the_turn_continues() -> None:
    async def boom(args: dict[str, Any]) -> ToolResult:
        raise RuntimeError("disk on fire")

    provider = ScriptedProvider(
        [*call("c1", "broken", {"pattern": "x"}), end("tool_use")],
        [TextChunk("Sorry, that failed."), end()],
    )
    run = make_run(provider, [FakeTool("broken", run=boom)])
    events = await collect(run)
    result = settled(events, "c1")
    assert result.state == "error"
    assert "RuntimeError: disk on fire" in (result.error or "")
    assert events[-1] == TurnDone(events[-1].seq, "end_turn")
    tool_message = provider.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["is_error"] is True
    assert "disk on fire" in tool_message["content"]


async def test_a_tool_past_the_call_timeout_settles_as_error_and_the_turn_goes_on() -> None:
    cancelled = asyncio.Event()
    provider = ScriptedProvider(
        [*call("c1", "stuck", {"pattern": "x"}), end("tool_use")],
        [TextChunk("That search hung; trying something else."), end()],
    )
    run = make_run(provider, [FakeTool("stuck", run=hangs(cancelled))], tool_timeout=0.05)
    events = await collect(run)
    result = settled(events, "c1")
    assert result.state == "error"
    assert result.error == (
        "Timed out after 0.05 s; raise tool_timeout_s in intent_ui.yaml to allow longer calls"
    )
    assert cancelled.is_set()
    assert events[-1] == TurnDone(events[-1].seq, "end_turn")
    assert provider.requests[1].messages[-1]["is_error"] is True


async def test_a_timeout_error_raised_by_the_tool_is_its_own_failure() -> None:
    async def refused(args: dict[str, Any]) -> ToolResult:
        raise TimeoutError("upstream took too long")

    provider = ScriptedProvider([*call("c1", "remote", {"pattern": "x"}), end("tool_use")])
    events = await collect(make_run(provider, [FakeTool("remote", run=refused)]))
    assert settled(events, "c1").error == (
        "Tool 'remote' failed: TimeoutError: upstream took too long"
    )


async def test_a_repeated_call_id_in_a_later_round_gets_its_own_card_and_arguments() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider(
        [*call("call_0", "grep_search", {"pattern": "first"}), end("tool_use")],
        [*call("call_0", "grep_search", {"pattern": "second"}), end("tool_use")],
    )
    events = await collect(make_run(provider, [grep]))
    started = [e.call_id for e in of(events, CallStarted)]
    assert started == ["call_0", "call_0_2"]
    assert grep.seen == [{"pattern": "first"}, {"pattern": "second"}]
    assert settled(events, "call_0_2").state == "settled"
    second_round = provider.requests[2].messages
    assert [m["tool_call_id"] for m in second_round if m["role"] == "tool"] == [
        "call_0",
        "call_0_2",
    ]


async def test_a_repeated_call_id_in_one_response_never_merges_arguments() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider(
        [
            *call("c1", "grep_search", {"pattern": "first"}),
            *call("c1", "grep_search", {"pattern": "second"}),
            end("tool_use"),
        ],
    )
    events = await collect(make_run(provider, [grep]))
    completed = {e.call_id: json.loads(e.arguments) for e in of(events, ArgsComplete)}
    assert completed == {"c1": {"pattern": "first"}, "c1_2": {"pattern": "second"}}
    assert grep.seen == [{"pattern": "first"}, {"pattern": "second"}]


async def test_an_unknown_tool_gets_a_card_and_an_error_result() -> None:
    provider = ScriptedProvider([*call("c1", "nope", {"pattern": "x"}), end("tool_use")])
    events = await collect(make_run(provider, [FakeTool("grep_search")]))
    assert of(events, CallStarted)[0].tool == "nope"
    result = settled(events, "c1")
    assert result.state == "error"
    assert (result.error or "").startswith("Unknown tool 'nope'")


async def test_invalid_json_arguments_settle_as_an_error_naming_the_problem() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider([*call("c1", "grep_search", '{"pattern": "x",'), end("tool_use")])
    events = await collect(make_run(provider, [grep]))
    result = settled(events, "c1")
    assert result.state == "error"
    assert "not valid JSON" in (result.error or "")
    assert grep.seen == []


async def test_stop_mid_stream_cancels_the_stream_and_settles_calls_cancelled() -> None:
    never = asyncio.Event()
    stop = asyncio.Event()
    provider = ScriptedProvider(
        [
            ToolCallBegin(0, "c1", "grep_search"),
            ToolCallArgs("c1", '{"intent": "Searching'),
            Gate(never),
            end(),
        ]
    )
    run = make_run(provider, [FakeTool("grep_search")], stop=stop)
    events: list[TurnEvent] = []

    async def consume() -> None:
        async for event in run:
            events.append(event)
            if isinstance(event, ArgsDelta):
                stop.set()

    await asyncio.wait_for(consume(), GUARD)
    assert settled(events, "c1").state == "cancelled"
    assert isinstance(events[-1], TurnDone)
    assert events[-1].stop_reason == "cancelled"
    assert provider.closed == 1
    # What streamed before the stop is kept in the history too.
    assert run.new_messages[1]["tool_calls"][0]["id"] == "c1"


async def test_stop_cancels_a_running_tool() -> None:
    cancelled = asyncio.Event()
    provider = ScriptedProvider([*call("c1", "slow", {"pattern": "x"}), end("tool_use")])
    run = make_run(provider, [FakeTool("slow", run=hangs(cancelled))])
    events: list[TurnEvent] = []

    async def consume() -> None:
        async for event in run:
            events.append(event)
            if isinstance(event, ArgsComplete):
                await asyncio.sleep(0)  # let the tool start before stopping
                run.stop()

    await asyncio.wait_for(consume(), GUARD)
    assert cancelled.is_set()
    assert settled(events, "c1").state == "cancelled"
    assert ending(events).stop_reason == "cancelled"


async def test_provider_error_mid_stream_settles_unfinished_calls_and_ends_with_error() -> None:
    provider = ScriptedProvider(
        [
            TextChunk("Let me look."),
            ToolCallBegin(0, "c1", "grep_search"),
            ToolCallArgs("c1", '{"intent": "Sear'),
            ProviderStreamError("The stream broke off: upstream overloaded", partial=True),
        ]
    )
    run = make_run(provider, [FakeTool("grep_search")])
    events = await collect(run)
    result = settled(events, "c1")
    assert result.state == "error"
    assert "upstream overloaded" in (result.error or "")
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.stop_reason == "error"
    assert "upstream overloaded" in (done.error or "")
    assert of(events, TextDelta)[0].text == "Let me look."  # kept


async def test_provider_error_before_streaming_ends_the_turn_with_error() -> None:
    provider = ScriptedProvider([ProviderStreamError("401 Unauthorized: check api_key")])
    events = await collect(make_run(provider, []))
    assert len(events) == 1
    done = ending(events)
    assert done.stop_reason == "error"
    assert "check api_key" in (done.error or "")


async def test_max_tokens_cuts_off_the_call_whose_arguments_did_not_complete() -> None:
    grep = FakeTool("grep_search")
    provider = ScriptedProvider(
        [
            *call("c1", "grep_search", {"intent": "Searching for A", "pattern": "A"}),
            ToolCallBegin(1, "c2", "grep_search"),
            ToolCallArgs("c2", '{"intent": "Searching for B", "patt'),
            end("max_tokens"),
        ]
    )
    run = make_run(provider, [grep])
    events = await collect(run)
    assert settled(events, "c1").state == "settled"
    cut = settled(events, "c2")
    assert (cut.state, cut.error) == ("error", CUT_OFF_ERROR)
    assert ending(events).stop_reason == "max_tokens"
    assert len(provider.requests) == 1  # the turn ends
    assert grep.seen == [{"pattern": "A"}]


async def test_background_dispatch_answers_at_once_and_harvest_settles_the_call() -> None:
    release = asyncio.Event()

    async def slow(args: dict[str, Any]) -> ToolResult:
        await release.wait()
        return ToolResult("12 results", outcome="Found 12 results")

    tool = FakeTool("bash_tool", run=slow)
    provider = ScriptedProvider(
        [
            *call(
                "c1",
                "bash_tool",
                {"intent": "Running the tests", "pattern": "x", "run_in_background": True},
            ),
            end("tool_use"),
        ],
        [TextChunk("Started it."), Do(release.set), end()],
    )
    run = make_run(provider, [tool], tool_options={"bash_tool": {"run_in_background": True}})
    events = await collect(run)
    kinds = [type(e) for e in events]
    assert CallBackgrounded in kinds
    assert kinds.index(CallBackgrounded) < kinds.index(TextDelta) < kinds.index(CallSettled)
    result = settled(events, "c1")
    assert (result.state, result.outcome) == ("settled", "Found 12 results")
    assert tool.seen == [{"pattern": "x"}]  # neither intent nor run_in_background
    handle = provider.requests[1].messages[-1]
    assert "running_in_background" in handle["content"]
    assert isinstance(events[-1], TurnDone)
    assert events[-1].stop_reason == "end_turn"


async def test_background_timeout_settles_as_error() -> None:
    provider = ScriptedProvider(
        [*call("c1", "bash_tool", {"pattern": "x", "run_in_background": True}), end("tool_use")],
    )
    run = make_run(
        provider,
        [FakeTool("bash_tool", run=hangs(asyncio.Event()))],
        tool_options={"bash_tool": {"run_in_background": True}},
        background_timeout=0.01,
    )
    events = await collect(run)
    result = settled(events, "c1")
    assert (result.state, result.error) == ("error", BACKGROUND_TIMEOUT_ERROR)
    assert ending(events).stop_reason == "end_turn"


async def test_seq_is_strictly_increasing_across_every_event() -> None:
    provider = ScriptedProvider(
        [
            TextChunk("Looking."),
            *call("a", "tool_a", {"intent": "Doing A", "pattern": "1"}),
            *call("b", "tool_b", {"intent": "Doing B", "pattern": "2"}),
            end("tool_use"),
        ],
        [*call("c", "tool_a", {"intent": "Doing C", "pattern": "3"}), end("tool_use")],
        [TextChunk("All done."), end()],
    )
    run = make_run(provider, [FakeTool("tool_a"), FakeTool("tool_b")])
    events = await collect(run)
    seqs = [e.seq for e in events]
    assert seqs == sorted(set(seqs))
    assert [e.block for e in of(events, CallStarted)] == [0, 0, 1]


async def test_new_messages_hold_the_user_message_assistant_calls_and_results() -> None:
    provider = ScriptedProvider(
        [TextChunk("Searching."), *call("c1", "grep_search", {"pattern": "x"}), end("tool_use")],
        [TextChunk("Found it."), end()],
    )
    run = make_run(provider, [FakeTool("grep_search")], history=[{"role": "user", "content": "hi"}])
    await collect(run)
    roles = [m["role"] for m in run.new_messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert run.new_messages[1]["content"] == "Searching."
    assert run.new_messages[1]["tool_calls"] == [
        {"id": "c1", "name": "grep_search", "arguments": '{"pattern": "x"}'}
    ]
    assert run.new_messages[-1] == {"role": "assistant", "content": "Found it."}
    assert provider.requests[1].messages[0] == {"role": "user", "content": "hi"}


async def test_the_round_limit_ends_the_turn() -> None:
    provider = ScriptedProvider(
        *([*call(f"c{i}", "grep_search", {"pattern": "x"}), end("tool_use")] for i in range(3))
    )
    events = await collect(make_run(provider, [FakeTool("grep_search")], max_rounds=2))
    assert ending(events).stop_reason == "max_rounds"
    assert len(provider.requests) == 2


class RecordingSummarizer:
    def __init__(self) -> None:
        self.entries: list[list[SummaryEntry]] = []

    async def summarize(self, entries: Sequence[SummaryEntry]) -> str | None:
        self.entries.append(list(entries))
        return "Searched the code"


async def test_summary_entries_keep_the_intent_and_arrive_before_turn_done() -> None:
    summarizer = RecordingSummarizer()
    grep = FakeTool("grep_search")
    provider = ScriptedProvider(
        [
            *call("c1", "grep_search", {"intent": "Searching for OAuth", "pattern": "x"}),
            *call("c2", "grep_search", {"intent": "Searching for MCP", "pattern": "y"}),
            end(),
        ],
        [TextChunk("Done."), end()],
    )
    events = await collect(make_run(provider, [grep], summarizer=summarizer))
    (entries,) = summarizer.entries
    assert json.loads(entries[0].tool_input)["intent"] == "Searching for OAuth"
    assert [e.intent for e in entries] == ["Searching for OAuth", "Searching for MCP"]
    assert grep.seen == [{"pattern": "x"}, {"pattern": "y"}]  # the strip is for tool bodies
    summaries = of(events, ActivityLabel)
    assert [(e.block, e.label) for e in summaries] == [(0, "Searched the code")]
    assert events.index(summaries[0]) < len(events) - 1


async def test_a_single_call_group_requests_no_summary() -> None:
    # A lone call shows no group header, so a summary of it would be paid for and never
    # shown; a later group of two calls in the same turn still gets one.
    summarizer = RecordingSummarizer()
    provider = ScriptedProvider(
        [*call("c1", "grep_search", {"intent": "Searching for OAuth", "pattern": "x"}), end()],
        [
            *call("c2", "grep_search", {"pattern": "y"}),
            *call("c3", "grep_search", {"pattern": "z"}),
            end(),
        ],
        [TextChunk("Done."), end()],
    )
    events = await collect(make_run(provider, [FakeTool("grep_search")], summarizer=summarizer))
    assert [[e.tool_input for e in entries] for entries in summarizer.entries] == [
        ['{"pattern": "y"}', '{"pattern": "z"}']
    ]
    assert [e.block for e in of(events, ActivityLabel)] == [1]


async def test_model_summarizer_prompt_keeps_the_intent() -> None:
    summarizer_provider = ScriptedProvider([TextChunk('"Located the OAuth callback."'), end()])
    summarizer = ModelSummarizer(summarizer_provider, "fast-model")
    entry = SummaryEntry(
        tool_name="grep_search",
        tool_input='{"intent": "Searching for OAuth handling", "pattern": "OAuth"}',
        status="settled",
        output="auth.py:1: oauth",
        outcome="Found 1 match for OAuth",
    )
    assert await summarizer.summarize([entry]) == "Located the OAuth callback"
    (request,) = summarizer_provider.requests
    assert request.model == "fast-model"
    assert "Searching for OAuth handling" in request.messages[0]["content"]


async def test_a_failing_summarizer_leaves_no_summary_and_the_turn_ends_normally() -> None:
    class Broken:
        async def summarize(self, entries: Sequence[SummaryEntry]) -> str | None:
            raise RuntimeError("summarizer down")

    provider = ScriptedProvider(
        [
            *call("c1", "grep_search", {"pattern": "x"}),
            *call("c2", "grep_search", {"pattern": "y"}),
            end(),
        ]
    )
    events = await collect(make_run(provider, [FakeTool("grep_search")], summarizer=Broken()))
    assert of(events, ActivityLabel) == []
    assert ending(events).stop_reason == "end_turn"


async def test_events_can_only_be_consumed_once() -> None:
    run = make_run(ScriptedProvider([TextChunk("hi"), end()]), [])
    await collect(run)
    with pytest.raises(RuntimeError, match="can only be consumed once"):
        await collect(run)


async def test_cancelling_the_consumer_cancels_the_turn_and_keeps_the_history() -> None:
    never = asyncio.Event()
    provider = ScriptedProvider(
        [TextChunk("Partial"), ToolCallBegin(0, "c1", "grep_search"), Gate(never), end()]
    )
    run = make_run(provider, [FakeTool("grep_search")])
    seen = asyncio.Event()

    async def consume() -> None:
        async for event in run:
            if isinstance(event, CallStarted):
                seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(seen.wait(), GUARD)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run.stop_reason == "cancelled"
    assert provider.closed == 1
    assert run.new_messages[1]["content"] == "Partial"
    assert run.new_messages[2]["role"] == "tool"


async def test_check_background_task_reports_a_running_task_then_harvest_settles_it() -> None:
    release = asyncio.Event()

    async def slow(args: dict[str, Any]) -> ToolResult:
        await release.wait()
        return ToolResult("finished")

    provider = ScriptedProvider(
        [*call("c1", "bash_tool", {"pattern": "x", "run_in_background": True}), end("tool_use")],
        [*call("c2", "check_background_task", {"background_task_id": "c1"}), end("tool_use")],
        [Do(release.set), TextChunk("Waiting on it."), end()],
    )
    run = make_run(
        provider,
        [FakeTool("bash_tool", run=slow)],
        tool_options={"bash_tool": {"run_in_background": True}},
    )
    events = await collect(run)
    assert "check_background_task" in {d["name"] for d in provider.requests[0].tools}
    poll = settled(events, "c2")
    assert poll.state == "settled"
    assert json.loads(poll.output) == {
        "background_task_id": "c1",
        "tool": "bash_tool",
        "status": "running",
    }
    assert settled(events, "c1").output == "finished"


async def test_deferred_tool_is_found_by_tool_search_and_offered_with_intent_first() -> None:
    pdf = FakeTool("convert_pdf", kind="mcp", server="docs", self_describing=False)
    pdf_args = {"intent": "Converting the report to text", "pattern": "report.pdf"}
    provider = ScriptedProvider(
        [*call("s1", "tool_search", {"intent": "Looking for a PDF tool", "query": "pdf"}), end()],
        [*call("c1", "convert_pdf", pdf_args), end()],
        [TextChunk("Converted."), end()],
    )
    run = make_run(provider, [FakeTool("grep_search"), pdf], tool_options=PDF_DEFERRED)
    events = await asyncio.wait_for(collect(run), GUARD)
    first, second = ({t["name"]: t for t in provider.requests[i].tools} for i in (0, 1))
    assert "convert_pdf" not in first and "tool_search" in first
    assert next(iter(first["tool_search"]["parameters"]["properties"])) == INTENT_ARG
    assert next(iter(second["convert_pdf"]["parameters"]["properties"])) == INTENT_ARG
    assert settled(events, "s1").outcome == "Found 1 tool for pdf"
    assert settled(events, "c1").state == "settled"
    assert pdf.seen == [{"pattern": "report.pdf"}]
    started = {e.call_id: e for e in of(events, CallStarted)}
    assert started["s1"].label_bearing and started["c1"].label_bearing


async def test_tool_search_with_no_match_lists_what_is_deferred() -> None:
    pdf = FakeTool("convert_pdf", self_describing=False, kind="mcp", server="docs")
    provider = ScriptedProvider(
        [*call("s1", "tool_search", {"query": "weather"}), end()],
        [TextChunk("None."), end()],
    )
    run = make_run(
        provider,
        [pdf],
        tool_options={"convert_pdf_mcp_docs": {"defer_loading": True}},
    )
    events = await asyncio.wait_for(collect(run), GUARD)
    result = settled(events, "s1")
    assert "convert_pdf" in result.output and result.outcome == "No tools found for weather"


async def test_tool_search_once_every_deferred_tool_is_loaded_says_so_and_is_withdrawn() -> None:
    pdf = FakeTool("convert_pdf", kind="mcp", server="docs", self_describing=False)
    search = {"intent": "Looking for a PDF tool", "query": "pdf"}
    provider = ScriptedProvider(
        [*call("s1", "tool_search", search), end("tool_use")],
        # The model asks again from memory, though nothing is left to find.
        [*call("s2", "tool_search", {**search, "query": "pdf to text"}), end("tool_use")],
        [TextChunk("Done."), end()],
    )
    run = make_run(provider, [FakeTool("grep_search"), pdf], tool_options=PDF_DEFERRED)
    events = await collect(run)
    again = settled(events, "s2")
    assert (again.state, again.outcome) == ("settled", "Every tool is already loaded")
    assert again.output == "Every deferred tool is already loaded (convert_pdf); call it directly."
    assert of(events, CallStarted)[1].label_bearing is True
    offered = [[tool["name"] for tool in request.tools] for request in provider.requests]
    assert offered[0] == ["grep_search", "tool_search"]
    assert offered[1] == offered[2] == ["grep_search", "convert_pdf"]


# --- turn-level goals -----------------------------------------------------------------

GOALS = goal_registry(
    [
        {"id": "research", "description": "Find things in the code", "delegates": ["read"]},
        {"id": "remember", "description": "Remember a fact", "delegates": ["memory"]},
    ]
)
FAMILIES = {"grep_search": "read", "set_memory": "memory"}


def choose(call_id: str, goal: str) -> list[Step]:
    return call(
        call_id,
        "select_intent",
        {"intent": f"Choosing {goal}", "intent_id": goal, "input": {}},
    )


async def test_a_goal_turn_offers_only_the_selection_tool_then_the_goals_tools() -> None:
    grep, memory = FakeTool("grep_search"), FakeTool("set_memory")
    provider = ScriptedProvider(
        [*choose("g1", "research"), end()],
        [*call("c1", "grep_search", {"intent": "Searching for OAuth", "pattern": "oauth"}), end()],
        [TextChunk("Found it."), end()],
    )
    run = make_run(provider, [grep, memory], goals=GOALS, families=FAMILIES)
    events = await collect(run)
    offered = [[tool["name"] for tool in request.tools] for request in provider.requests]
    assert offered == [["select_intent"], ["grep_search"], ["grep_search"]]
    first = provider.requests[0].tools[0]["parameters"]["properties"]
    assert next(iter(first)) == INTENT_ARG
    (goal,) = of(events, GoalSelected)
    assert (goal.goal_id, goal.label) == ("research", "Find things in the code")
    selection = settled(events, "g1")
    assert selection.state == "settled" and selection.outcome == "Goal: Find things in the code"
    assert goal.seq < selection.seq
    assert grep.seen == [{"pattern": "oauth"}] and memory.seen == []
    assert run.goal == "research"
    assert of(events, CallStarted)[0].label_bearing


async def test_an_unknown_goal_gets_an_error_listing_the_goals_and_the_model_may_retry() -> None:
    provider = ScriptedProvider(
        [*choose("g1", "shopping"), end()],
        [*choose("g2", "remember"), end()],
        [TextChunk("Ok."), end()],
    )
    run = make_run(
        provider, [FakeTool("grep_search"), FakeTool("set_memory")], goals=GOALS, families=FAMILIES
    )
    events = await collect(run)
    wrong = settled(events, "g1")
    assert wrong.state == "error"
    assert "'shopping'" in wrong.output and "research" in wrong.output
    assert "remember" in wrong.output
    assert [t["name"] for t in provider.requests[1].tools] == ["select_intent"]
    assert [t["name"] for t in provider.requests[2].tools] == ["set_memory"]
    assert [e.goal_id for e in of(events, GoalSelected)] == ["remember"]


async def test_a_tool_outside_the_goal_or_before_any_goal_is_refused() -> None:
    grep, memory = FakeTool("grep_search"), FakeTool("set_memory")
    provider = ScriptedProvider(
        [*call("c0", "grep_search", {"pattern": "x"}), end()],
        [*choose("g1", "research"), end()],
        [*call("c1", "set_memory", {"pattern": "x"}), end()],
        [TextChunk("Ok."), end()],
    )
    run = make_run(provider, [grep, memory], goals=GOALS, families=FAMILIES)
    events = await collect(run)
    early, outside = settled(events, "c0"), settled(events, "c1")
    assert early.state == "error" and "select_intent" in early.output
    assert outside.state == "error"
    assert "'research'" in outside.output and "grep_search" in outside.output
    assert grep.seen == [] and memory.seen == []


async def test_a_second_selection_in_the_same_turn_is_refused() -> None:
    provider = ScriptedProvider(
        [*choose("g1", "research"), *choose("g2", "remember"), end()],
        [TextChunk("Ok."), end()],
    )
    run = make_run(
        provider, [FakeTool("grep_search"), FakeTool("set_memory")], goals=GOALS, families=FAMILIES
    )
    events = await collect(run)
    assert [e.goal_id for e in of(events, GoalSelected)] == ["research"]
    assert settled(events, "g2").state == "error"
    assert "already 'research'" in settled(events, "g2").output


async def test_with_intents_off_the_selection_tool_carries_no_intent_label() -> None:
    provider = ScriptedProvider(
        [*call("g1", "select_intent", {"intent_id": "research", "input": {}}), end()],
        [TextChunk("Ok."), end()],
    )
    run = make_run(
        provider,
        [FakeTool("grep_search")],
        goals=GOALS,
        families=FAMILIES,
        capabilities=frozenset(),
    )
    events = await collect(run)
    properties = provider.requests[0].tools[0]["parameters"]["properties"]
    assert INTENT_ARG not in properties
    assert not of(events, CallStarted)[0].label_bearing
    assert [e.goal_id for e in of(events, GoalSelected)] == ["research"]


async def test_without_goals_every_tool_is_offered_from_the_first_round() -> None:
    provider = ScriptedProvider([TextChunk("Hi."), end()])
    run = make_run(provider, [FakeTool("grep_search"), FakeTool("set_memory")])
    events = await collect(run)
    assert [t["name"] for t in provider.requests[0].tools] == ["grep_search", "set_memory"]
    assert of(events, GoalSelected) == []


async def test_a_goal_may_name_one_tool_by_the_name_it_is_offered_as() -> None:
    search = FakeTool("search_code", kind="mcp", server="github")
    goals = goal_registry([{"id": "look", "description": "Look", "delegates": ["search_code"]}])
    provider = ScriptedProvider([*choose("g1", "look"), end()], [TextChunk("Ok."), end()])
    run = make_run(
        provider,
        [search, FakeTool("grep_search")],
        goals=goals,
        families={"search_code_mcp_github": "mcp:github", "grep_search": "read"},
    )
    await collect(run)
    assert [t["name"] for t in provider.requests[1].tools] == ["search_code"]


async def test_the_choice_lists_the_scopes_serving_the_chosen_goal() -> None:
    scopes = scope_registry(
        [
            {
                "id": "code",
                "description": "The repository",
                "category": "source",
                "goal_ids": ["research"],
                "aliases": ["repo"],
            },
            {"id": "notes", "description": "Notes", "category": "memory", "goal_ids": ["remember"]},
        ],
        GOALS.ids(),
    )
    provider = ScriptedProvider([*choose("g1", "research"), end()], [TextChunk("Ok."), end()])
    run = make_run(
        provider, [FakeTool("grep_search")], goals=GOALS, families=FAMILIES, scopes=scopes
    )
    events = await collect(run)
    assert json.loads(settled(events, "g1").output)["scopes"] == [
        {"id": "code", "description": "The repository", "category": "source", "aliases": ["repo"]}
    ]
