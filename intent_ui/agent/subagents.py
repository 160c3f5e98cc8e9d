"""The `subagent` host tool: a child turn with its own agent and tools, inside a call.

A call of `subagent` (its intent is the card's label: "Delegating the OAuth audit")
runs a child turn on the same machinery as any turn: a saved agent of the user's chosen
by name (`agent`), with that agent's tools, options, instructions and model, or, without
a name, a copy of the turn's own agent (self-spawn). The child reads only `task`, and
its final reply is what the parent's model reads back as the call's result.

- **One log.** The child's events become events of the parent turn: `SubagentStarted`
  (the child's name and model), then each of its calls under the id `{call}~{child id}`
  (a tilde needs no escaping in a URL) with `CallStarted.parent` set, stamped by the
  parent's seq counter. So the session
  folds, stores and streams them like its own: a reload, a second tab and a stored turn
  show the child's calls inside the parent card, and its ticker (`core/subagent_cards.py`).
  The child's reply text, summaries and goal stay the child's.
- **Approvals bubble up.** The child has its own `Pauses`, adopted by the parent's for
  as long as it runs (`Pauses.adopt`): a child's call that asks first pauses the parent
  turn under the child's name ("Auditor: Approve: Reading the callback router"), and the
  decision any of the owner's tabs sends reaches the child.
- **Self-spawn strips the host's labels.** A copy of the turn's agent inherits its tool
  definitions and deferred registry without the intent labels and background flags
  (`TurnRun(inherited=True)`, `core.capabilities.inherit_for_self_spawn`): the child
  renders no labels of its own, and tool search cannot bring one back.
- **One level.** A child turn is offered no `subagent` tool.
- **Time.** The call is not bounded by `tool_timeout_s` (the child may wait for a
  person); each of the child's calls is, and the child's rounds by `max_rounds`.
  Stopping the turn stops the child: its unfinished calls settle as cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import Field
from sqlalchemy import Engine

from intent_ui.agent.pauses import PausePolicy, Pauses
from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.agent.tools.native import Args, NativeTool
from intent_ui.core.events import (
    ActivityLabel,
    CallSettled,
    CallStarted,
    GoalSelected,
    SubagentStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.states import FINAL_STATES
from intent_ui.store import agents as agent_store

if TYPE_CHECKING:
    from intent_ui.agent.run import TurnRun

__all__ = [
    "SUBAGENT_TOOL_NAME",
    "AgentDirectory",
    "ChildAgent",
    "ChildRun",
    "StartChild",
    "SubagentTool",
    "Subagents",
    "agent_directory",
    "child_id",
]

SUBAGENT_TOOL_NAME = "subagent"

NO_REPLY = "The subagent finished without a reply."


@dataclass(frozen=True, slots=True)
class ChildAgent:
    """A saved agent a `subagent` call may name: what its child turn runs with."""

    name: str
    tool_ids: Sequence[str] | None
    tool_options: Mapping[str, Any] | None
    system: str | None = None
    endpoint: str | None = None
    model: str | None = None


AgentDirectory = Callable[[], Sequence[ChildAgent]]
"""The saved agents the turn's user may delegate to. Blocking (it reads the store)."""


def agent_directory(engine: Engine, owner: str) -> AgentDirectory:
    """The saved agents `owner` may use (their own and shared ones), read when a call
    names one."""

    def agents() -> list[ChildAgent]:
        return [
            ChildAgent(
                name=agent.name,
                tool_ids=agent.tools,
                tool_options=agent.tool_options,
                system=agent.instructions or None,
                endpoint=agent.endpoint,
                model=agent.model,
            )
            for agent in agent_store.list_agents(engine, owner=owner)
        ]

    return agents


@dataclass(frozen=True, slots=True)
class ChildRun:
    """A child turn ready to run, and the model it runs on (what its ticker shows)."""

    run: TurnRun
    model: str


StartChild = Callable[[ChildAgent | None, str, Pauses], ChildRun]
"""Prepares the child turn: the agent (None: a copy of the turn's own), the task as its
user message, and the pauses it waits in."""

Delegate = Callable[[str, str | None], Awaitable[ToolResult]]


class SubagentArgs(Args):
    task: str = Field(
        description="What the subagent should do, self-contained: it sees only this, "
        "not the conversation."
    )
    agent: str | None = Field(
        default=None,
        description="The name of a saved agent to delegate to; omit it to delegate to a "
        "copy of yourself, with your tools.",
    )


class SubagentTool(NativeTool):
    name = SUBAGENT_TOOL_NAME
    description = (
        "Delegate a self-contained task to a subagent: it runs its own turn with its own "
        "tools over the workspace and reports back its answer, which you then read."
    )
    Arguments = SubagentArgs

    def __init__(self, delegate: Delegate | None = None) -> None:
        self._delegate = delegate

    def bound(self, delegate: Delegate) -> SubagentTool:
        """This tool running its child turns through `delegate` (one call's)."""
        return SubagentTool(delegate)

    async def run(self, args: SubagentArgs) -> ToolResult:
        if self._delegate is None:
            return ToolResult(
                "Subagents can only run inside a turn of the app or of `intent_ui run`.",
                is_error=True,
            )
        return await self._delegate(args.task, args.agent)


def child_id(parent_call_id: str, call_id: str) -> str:
    """The id a child's call has in the parent turn."""
    return f"{parent_call_id}~{call_id}"


class Subagents:
    """One turn's `subagent` calls (module docstring). The run loop attaches it (`attach`)
    and binds each call of the tool to it (`bind`)."""

    def __init__(self, start: StartChild, agents: AgentDirectory | None = None) -> None:
        self._start = start
        self._agents = agents
        self._emit: Callable[[TurnEvent], None] | None = None
        self._next_seq: Callable[[], int] | None = None
        self._pauses: Pauses | None = None

    def attach(
        self, emit: Callable[[TurnEvent], None], next_seq: Callable[[], int], pauses: Pauses
    ) -> Subagents:
        """Attach to the run loop that owns the turn (its events, seqs and pauses)."""
        self._emit, self._next_seq, self._pauses = emit, next_seq, pauses
        return self

    def bind(self, tool: Tool, call_id: str) -> Tool:
        """The tool to run for call `call_id`: a `subagent` bound to this turn."""
        if isinstance(tool, SubagentTool):
            return tool.bound(lambda task, agent: self._delegate(call_id, task, agent))
        return tool

    @staticmethod
    def timeout(tool: Tool, default: float | None) -> float | None:
        """The call's time limit: none for a subagent (its child may wait for a person)."""
        return None if isinstance(tool, SubagentTool) else default

    async def _delegate(self, call_id: str, task: str, name: str | None) -> ToolResult:
        assert self._emit is not None and self._next_seq is not None
        assert self._pauses is not None
        if not task.strip():
            return ToolResult("subagent: `task` is empty; say what the subagent should do.", True)
        agent = None
        if name is not None and name.strip():
            agent, problem = await self._find(name.strip())
            if agent is None:
                return ToolResult(problem, is_error=True)
        pauses = Pauses(PausePolicy(self._pauses.policy.allowed))
        try:
            child = self._start(agent, task, pauses)
        except Exception as exc:  # an agent that cannot run: the model hears why
            return ToolResult(f"The subagent could not start: {exc}", is_error=True)
        release = self._pauses.adopt(child_id(call_id, ""), pauses)
        self._emit(
            SubagentStarted(
                self._next_seq(), call_id, agent=agent.name if agent else "", model=child.model
            )
        )
        try:
            return await self._follow(call_id, child.run)
        finally:
            release()

    async def _find(self, name: str) -> tuple[ChildAgent | None, str]:
        agents = list(await asyncio.to_thread(self._agents)) if self._agents else []
        wanted = name.casefold()
        for agent in agents:
            if agent.name.casefold() == wanted:
                return agent, ""
        known = ", ".join(agent.name for agent in agents) or "none"
        return None, (
            f"subagent: there is no saved agent named {name!r} (saved agents: {known}); "
            "omit `agent` to delegate to a copy of yourself."
        )

    async def _follow(self, call_id: str, run: TurnRun) -> ToolResult:
        """Forward the child's events into the parent turn; the child's reply is the result."""
        assert self._emit is not None and self._next_seq is not None
        text: list[str] = []
        unsettled: dict[str, None] = {}
        done: TurnDone | None = None
        events = run.events()
        try:
            async for event in events:
                if isinstance(event, TurnDone):
                    done = event
                    break
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    continue
                if isinstance(event, ActivityLabel | GoalSelected | SubagentStarted):
                    continue  # the child's own: its summaries, its goal
                forwarded = self._forward(call_id, event)
                if isinstance(forwarded, CallStarted):
                    unsettled[forwarded.call_id] = None
                elif isinstance(forwarded, CallSettled) and forwarded.state in FINAL_STATES:
                    unsettled.pop(forwarded.call_id, None)
                self._emit(forwarded)
        except asyncio.CancelledError:
            for open_id in unsettled:  # stopped: the child's calls end with the turn
                self._emit(CallSettled(self._next_seq(), open_id, "cancelled"))
            raise
        finally:
            closer = getattr(events, "aclose", None)  # ends the child's run if it still runs
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
        reply = "".join(text).strip()
        if done is None or done.error:
            why = done.error if done is not None else "it ended without saying how"
            said = f"\n\nWhat it wrote before: {reply}" if reply else ""
            return ToolResult(f"The subagent's turn failed: {why}{said}", is_error=True)
        return ToolResult(reply or NO_REPLY)

    def _forward(self, call_id: str, event: TurnEvent) -> TurnEvent:
        assert self._next_seq is not None
        inner = getattr(event, "call_id", "")
        changes: dict[str, Any] = {"seq": self._next_seq(), "call_id": child_id(call_id, inner)}
        if isinstance(event, CallStarted):
            changes["parent"] = call_id
        return replace(event, **changes)
