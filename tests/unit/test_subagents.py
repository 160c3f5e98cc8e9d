"""Subagents against the running loop: a `subagent` call runs a child turn whose events
join the parent's (one log, one stream), whose approvals wait in the parent turn under
the child's name, and which, self-spawned, inherits no host labels (the composition
matrix's self-spawn row)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from intent_ui.agent.pauses import Pauses, decision_from
from intent_ui.agent.providers.demo_plan import first_round, parse
from intent_ui.agent.run import TurnRun
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.subagents import ChildAgent, ChildRun, Subagents, SubagentTool
from intent_ui.config import AppConfig
from intent_ui.core.capabilities import (
    ALL_CAPABILITIES,
    apply_capabilities,
    inherit_for_self_spawn,
)
from intent_ui.core.events import (
    ApprovalRequested,
    CallSettled,
    CallStarted,
    SubagentStarted,
    TurnEvent,
    event_from_record,
    event_to_record,
)
from intent_ui.core.patches import TurnPatcher, apply_ops
from intent_ui.core.pause_cards import approval_entry
from intent_ui.core.turn import ToolGroup, TurnView
from tests.support.capability_helpers import (
    business_intent_tool,
    native,
    property_names,
    third_party,
)
from tests.support.run_loop import (
    DELETE,
    PDF_DEFERRED,
    FakeTool,
    Gate,
    ScriptedProvider,
    call,
    collect,
    delete_tool,
    end,
    make_run,
    of,
    tool_message,
)

DELEGATE = {"intent": "Delegating the OAuth audit", "task": "audit the callback router"}
AUDITOR_OPTIONS = {"*": {"describe_intent": True}, "delete_file": {"require_approval": True}}


class Children:
    """Starts each child turn on `provider` with `tools`, as the runtime would: a saved
    agent with its own options, or a copy of the parent (`inherited`)."""

    def __init__(self, provider: ScriptedProvider, tools: Sequence[Any], **parent: Any) -> None:
        self.provider = provider
        self.tools = tools
        self.parent = parent
        self.started: list[tuple[str | None, str]] = []

    def __call__(self, agent: ChildAgent | None, task: str, pauses: Pauses) -> ChildRun:
        self.started.append((agent.name if agent else None, task))
        options = agent.tool_options if agent is not None else self.parent.get("tool_options")
        run = make_run(
            self.provider,
            self.tools,
            user_message=task,
            pauses=pauses,
            inherited=agent is None,
            **({"tool_options": options} if options is not None else {}),
        )
        return ChildRun(run, "child-model")


def parent_run(
    children: Children, args: dict[str, Any], agents: Sequence[ChildAgent] = (), **kw: Any
) -> tuple[TurnRun, ScriptedProvider]:
    provider = ScriptedProvider([*call("s1", "subagent", args), end()])
    subagents = Subagents(children, (lambda: list(agents)) if agents else None)
    return make_run(provider, [SubagentTool()], subagents=subagents, **kw), provider


def properties_offered(provider: ScriptedProvider) -> list[set[str]]:
    return [set(tool["parameters"]["properties"]) for tool in provider.requests[0].tools]


async def test_a_self_spawned_child_runs_inside_the_call_and_inherits_no_labels() -> None:
    grep = FakeTool("grep_search")
    child_provider = ScriptedProvider(
        [*call("c1", "grep_search", {"pattern": "callback"}), end()],
        [*call("c2", "grep_search", {"pattern": "router"}), end()],
    )
    children = Children(child_provider, [grep])
    run, provider = parent_run(children, DELEGATE, tool_options={"*": {"describe_intent": True}})
    events = await collect(run)

    assert children.started == [(None, "audit the callback router")]
    # The inherited definitions carry neither the label nor the background flag.
    assert all("intent" not in props for props in properties_offered(child_provider))
    assert all("run_in_background" not in props for props in properties_offered(child_provider))
    assert grep.seen == [{"pattern": "callback"}, {"pattern": "router"}]
    # The child's calls are events of the parent turn, under the subagent call.
    (started,) = of(events, SubagentStarted)
    assert (started.call_id, started.agent, started.model) == ("s1", "", "child-model")
    child_starts = [e for e in of(events, CallStarted) if e.parent is not None]
    assert [(e.call_id, e.parent, e.label_bearing) for e in child_starts] == [
        ("s1~c1", "s1", False),
        ("s1~c2", "s1", False),
    ]
    seqs = [event.seq for event in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # The child's reply is what the parent's model reads as the call's result.
    assert tool_message(provider, 1, "s1")["content"] == "done"

    view = TurnView.replay(events)
    assert [p for p in view.parts if isinstance(p, ToolGroup)] == [ToolGroup(0, ("s1",))]
    assert view.children("s1") == ("s1~c1", "s1~c2")
    assert view.card_label("s1") == "Delegating the OAuth audit"
    # The child renders no label of its own: its cards read the default label.
    assert view.card_label("s1~c1") == "Ran grep_search"


async def test_a_named_childs_approval_waits_in_the_parent_turn_under_its_name() -> None:
    tool = delete_tool()
    child_provider = ScriptedProvider([*call("c1", "delete_file", DELETE), end()])
    children = Children(child_provider, [tool])
    auditor = ChildAgent("Auditor", None, AUDITOR_OPTIONS)
    args = {**DELEGATE, "agent": "auditor"}  # names match without regard to case
    run, provider = parent_run(children, args, [auditor])
    view = TurnView()
    prompts: list[str] = []
    waiting: list[tuple[str, ...]] = []

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        view.apply(event)
        if isinstance(event, ApprovalRequested):
            pause = view.pause(event.call_id)
            assert pause is not None
            prompts.append(approval_entry(view, pause, "en")["prompt"])
            waiting.append(run.pauses.waiting)
            assert tool.seen == []  # nothing ran before the decision
            assert run.pauses.decide(event.call_id, decision_from("once")).ok

    await collect(run, on_event)
    assert children.started == [("Auditor", "audit the callback router")]
    assert prompts == ["Auditor: Approve: Deleting the staging migrations"]
    assert waiting == [("s1~c1",)]
    assert tool.seen == [{"path": "migrations/staging"}]
    assert view.subagent("s1") is not None and view.subagent("s1").agent == "Auditor"  # type: ignore[union-attr]
    assert view.waiting() == ()
    assert tool_message(provider, 1, "s1")["content"] == "done"


async def test_an_unknown_agent_name_is_an_error_naming_the_saved_agents() -> None:
    children = Children(ScriptedProvider(), [])
    run, _ = parent_run(
        children, {**DELEGATE, "agent": "Nobody"}, [ChildAgent("Auditor", None, None)]
    )
    events = await collect(run)
    assert children.started == []
    (settled,) = [e for e in of(events, CallSettled) if e.call_id == "s1"]
    assert settled.state == "error"
    assert "no saved agent named 'Nobody' (saved agents: Auditor)" in (settled.error or "")


async def test_stopping_the_turn_cancels_the_childs_calls() -> None:
    gate = asyncio.Event()

    async def slow(args: dict[str, Any]) -> Any:
        await gate.wait()
        raise AssertionError("never reached")

    grep = FakeTool("grep_search", run=slow)
    child_provider = ScriptedProvider([*call("c1", "grep_search", {"pattern": "x"}), end()])
    run, _ = parent_run(Children(child_provider, [grep]), DELEGATE)

    def on_event(event: TurnEvent, run: TurnRun) -> None:
        if isinstance(event, CallStarted) and event.parent is not None:
            asyncio.get_running_loop().call_later(0.05, run.stop)

    events = await collect(run, on_event)
    states = {e.call_id: e.state for e in of(events, CallSettled)}
    assert states == {"s1~c1": "cancelled", "s1": "cancelled"}


async def test_the_subagent_call_is_not_bounded_by_the_tool_timeout() -> None:
    gate = asyncio.Event()
    child_provider = ScriptedProvider([Gate(gate), *call("c1", "grep_search", {}), end()])
    run, _ = parent_run(Children(child_provider, [FakeTool("grep_search")]), DELEGATE)
    run._tool_timeout = 0.05  # the child waits longer than this before its first call
    asyncio.get_running_loop().call_later(0.2, gate.set)
    events = await collect(run)
    (settled,) = [e for e in of(events, CallSettled) if e.call_id == "s1"]
    assert settled.state == "settled"


def test_the_child_events_survive_the_log() -> None:
    events: list[TurnEvent] = [
        CallStarted(1, "s1", "subagent", 0, label_bearing=True),
        SubagentStarted(2, "s1", "Auditor", "demo", at=5.0),
        CallStarted(3, "s1~c1", "grep_search", 0, parent="s1"),
    ]
    stored = [event_from_record(*_record(event)) for event in events]
    assert stored == events


def _record(event: TurnEvent) -> tuple[str, int, Any]:
    kind, data = event_to_record(event)
    return kind, event.seq, data


def test_the_ticker_reads_the_childs_latest_label_its_calls_and_model() -> None:
    from tests.support.turn_scripts import subagent_with_approval

    events = subagent_with_approval()
    # Live, after the child's first call settled.
    upto = next(
        i for i, e in enumerate(events) if isinstance(e, CallSettled) and e.call_id == "s1~c1"
    )
    store: dict[str, object] = {}
    apply_ops(store, TurnPatcher("m", "en").snapshot(TurnView.replay(events[: upto + 1])))
    ticker = store["ticker:s1"]
    assert isinstance(ticker, dict)
    assert (ticker["latest"], ticker["calls"], ticker["model"], ticker["live"]) == (
        "Found 3 matches for callback",
        "1 call",
        "demo",
        True,
    )
    assert ticker["ticking"] is True and ticker["started_at"] != ""
    assert store["children:s1"] == ["s1~c1"]
    assert store["cards:0"] == ["s1"]  # the child's calls are in no group of the turn
    # Stored: the child's calls are cards, the approval its record, the ticker settled.
    store = {}
    apply_ops(store, TurnPatcher("m", "en").snapshot(TurnView.replay(events)))
    assert store["children:s1"] == ["s1~c1", "s1~c2"]
    card = store["card:s1~c2"]
    assert isinstance(card, dict) and card["state"] == "settled"
    approval = store["approval:s1~c2"]
    assert isinstance(approval, dict)
    assert approval["prompt"] == "Auditor: Approve: Deleting the stale callbacks"
    ticker = store["ticker:s1"]
    assert isinstance(ticker, dict)
    assert (ticker["calls"], ticker["live"], ticker["ticking"]) == ("2 calls", False, False)
    assert ticker["elapsed"] != ""


async def test_the_demo_delegates_to_a_copy_of_itself_over_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "callbacks").mkdir()
    (tmp_path / "callbacks" / "router.py").write_text("# the callback router\n")
    config = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo", "pacing_ms": 0}], "workspace": str(tmp_path)}
    )
    async with AgentRuntime(config) as runtime:
        run = runtime.start_turn(user_message="delegate the audit of the callback router")
        events = await collect(run)
    view = TurnView.replay(events)
    (parent,) = [record for record in view.calls() if record.parent is None]
    assert (parent.tool, view.card_label(parent.call_id)) == (
        "subagent",
        "Delegating the audit of the callback router",
    )
    started = view.subagent(parent.call_id)
    assert started is not None and (started.agent, started.model) == ("", "demo")
    children = [view.call(child) for child in view.children(parent.call_id)]
    # The copy searched, then read the top hit, for real; with no labels of its own.
    assert [(c.tool, c.state, c.carries_intent) for c in children if c] == [
        ("grep_search", "settled", False),
        ("read_file", "settled", False),
    ]
    assert "callbacks/router.py" in view.arguments(view.children(parent.call_id)[1])
    assert "callback router" in view.text


def test_self_spawn_strips_labels_and_flags_from_definitions_and_registry() -> None:
    tools = [native("read_file"), third_party("search_code"), business_intent_tool()]
    options = {"*": {"describe_intent": True, "run_in_background": True}}
    options["search_code"] = {"describe_intent": True, "defer_loading": True}
    shaped = apply_capabilities(tools, options, capabilities=ALL_CAPABILITIES)
    assert shaped.registry is not None and "search_code" in shaped.registry
    assert "intent" in property_names(shaped.registry["search_code"])  # the parent's has it
    inherited = inherit_for_self_spawn(shaped)
    for tool in [*inherited.definitions, *(inherited.registry or {}).values()]:
        names = property_names(tool)
        assert "run_in_background" not in names
        # A business parameter called `intent` is the tool's own: it stays.
        assert ("intent" in names) == (tool["name"] == "classify_ticket")
    assert inherited.intent_tool_names == frozenset()
    assert inherited.background_tool_names == frozenset()
    assert inherited.deferred_names == shaped.deferred_names


async def test_a_self_spawned_child_cannot_rediscover_a_label_through_tool_search() -> None:
    pdf = FakeTool("convert_pdf", kind="mcp", server="docs", self_describing=False)
    child_provider = ScriptedProvider(
        [*call("t1", "tool_search", {"query": "pdf"}), end()],
        [*call("c1", "convert_pdf", {"pattern": "report.pdf"}), end()],
    )
    children = Children(child_provider, [FakeTool("grep_search"), pdf], tool_options=PDF_DEFERRED)
    run, _ = parent_run(children, DELEGATE, tool_options=PDF_DEFERRED)
    events = await collect(run)
    first, second = ({t["name"]: t for t in child_provider.requests[i].tools} for i in (0, 1))
    assert "convert_pdf" not in first
    assert "intent" not in second["convert_pdf"]["parameters"]["properties"]
    assert pdf.seen == [{"pattern": "report.pdf"}]
    started = {e.call_id: e for e in of(events, CallStarted)}
    assert not started["s1~t1"].label_bearing and not started["s1~c1"].label_bearing


def test_the_demo_plans_a_delegation_to_a_named_agent() -> None:
    offered = {"subagent": dict(SubagentTool().definition)}
    (planned,) = first_round(parse("delegate the audit of the callback router to Auditor"), offered)
    assert planned.name == "subagent"
    assert planned.args == {
        "intent": "Delegating the audit of the callback router",
        "task": "search for callback router, then read it",
        "agent": "Auditor",
    }
    # Any other task is passed on as written.
    (planned,) = first_round(parse("delegate: list the files"), offered)
    assert planned.args["task"] == "list the files"
