"""The run loop against a scripted model and fake tools, for the tests of the run loop and
of what runs on it (tools, sessions, pauses): no network, no files.

`ScriptedProvider` plays one script of provider events per model request (a `Gate` holds
the stream until its event is set, a `Do` runs a callback, an exception is raised there);
`call` and `end` build a script's steps; `make_run` starts a real `TurnRun` over fake
tools with every capability on; `RunLoopRuntime` is the runtime `TurnSessions` starts
such runs on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from intent_ui.agent.providers.base import (
    ChatRequest,
    ProviderEvent,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
)
from intent_ui.agent.run import TurnRun, run_turn
from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.core.capabilities.intent import with_intent
from intent_ui.core.events import CallSettled, TurnDone, TurnEvent

ALL_CAPS = frozenset({"tool_intents", "run_in_background", "deferred_tools", "programmatic_tools"})
EventT = TypeVar("EventT", bound=TurnEvent)

GUARD = 10  # seconds: a safety net against hangs, never an assertion about speed
DELETE = {"intent": "Deleting the staging migrations", "path": "migrations/staging"}
"""The arguments of a `delete_tool()` call."""
PDF_DEFERRED = {"*": {"describe_intent": True}, "convert_pdf_mcp_docs": {"defer_loading": True}}
"""Every tool describes its intent; `convert_pdf` (of the `docs` server) is deferred."""


# --- fakes ------------------------------------------------------------------------------


@dataclass
class Gate:
    """A script step that blocks the stream until `event` is set."""

    event: asyncio.Event


@dataclass
class Do:
    """A script step that runs a callback (e.g. opening another gate)."""

    action: Callable[[], None]


Step = ProviderEvent | Exception | Gate | Do


class ScriptedProvider:
    """Plays one script per `stream()` call and records every request."""

    def __init__(self, *scripts: Sequence[Step]) -> None:
        self.scripts = list(scripts)
        self.requests: list[ChatRequest] = []
        self.closed = 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        script: Sequence[Step] = self.scripts.pop(0) if self.scripts else [TextChunk("done"), end()]
        try:
            for step in script:
                await asyncio.sleep(0)
                if isinstance(step, Exception):
                    raise step
                if isinstance(step, Gate):
                    await step.event.wait()
                elif isinstance(step, Do):
                    step.action()
                else:
                    yield step
        finally:
            self.closed += 1


@dataclass
class FakeTool:
    name: str
    properties: dict[str, Any] = field(default_factory=lambda: {"pattern": {"type": "string"}})
    kind: ToolKind = "native"
    server: str | None = None
    self_describing: bool = True
    run: Callable[[dict[str, Any]], Awaitable[ToolResult]] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tool_id(self) -> str:
        return self.name if self.kind == "native" else f"{self.name}_mcp_{self.server}"

    @property
    def definition(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": dict(self.properties)}
        if self.self_describing:
            return {
                "name": self.name,
                "description": f"The {self.name} tool.",
                "parameters": dict(with_intent(schema)),
                "intent": True,
            }
        return {"name": self.name, "description": f"The {self.name} tool.", "parameters": schema}

    async def call(self, args: dict[str, Any]) -> ToolResult:
        self.seen.append(dict(args))
        if self.run is not None:
            return await self.run(args)
        return ToolResult(f"ok {json.dumps(args)}", outcome=f"Did {self.name}")


def delete_tool() -> FakeTool:
    return FakeTool("delete_file", properties={"path": {"type": "string"}})


def call(call_id: str, name: str, args: dict[str, Any] | str, *, pieces: int = 3) -> list[Step]:
    """A complete tool call: begin, the argument text in `pieces` fragments, end."""
    text = args if isinstance(args, str) else json.dumps(args)
    size = max(1, len(text) // pieces)
    fragments = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        ToolCallBegin(0, call_id, name),
        *(ToolCallArgs(call_id, f) for f in fragments),
        ToolCallEnd(call_id),
    ]


def end(reason: str = "end_turn") -> StreamEnd:
    return StreamEnd(reason)


def make_run(provider: ScriptedProvider, tools: Sequence[Any], **overrides: Any) -> TurnRun:
    kwargs: dict[str, Any] = {
        "provider": provider,
        "model": "fake",
        "history": [],
        "user_message": "go",
        "tools": tools,
        "tool_options": {"*": {"describe_intent": True}},
        "capabilities": ALL_CAPS,
        "system": None,
    }
    kwargs.update(overrides)
    return run_turn(**kwargs)


OnEvent = Callable[[TurnEvent, TurnRun], None]


async def collect(run: TurnRun, on_event: OnEvent | None = None) -> list[TurnEvent]:
    """Every event of the turn, read as a turn session reads them; `on_event` sees each
    as it arrives (and may decide or answer)."""

    async def read() -> list[TurnEvent]:
        events = []
        async for event in run:
            events.append(event)
            if on_event is not None:
                on_event(event, run)
        return events

    return await asyncio.wait_for(read(), GUARD)


def of(events: Sequence[TurnEvent], kind: type[EventT]) -> list[EventT]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]


def settled(events: Sequence[TurnEvent], call_id: str) -> CallSettled:
    (found,) = [e for e in of(events, CallSettled) if e.call_id == call_id]
    return found


def tool_message(provider: ScriptedProvider, request: int, call_id: str) -> dict[str, Any]:
    """The tool result for `call_id` that the provider's `request`-th request carried."""
    messages = provider.requests[request].messages
    (found,) = [m for m in messages if m.get("role") == "tool" and m["tool_call_id"] == call_id]
    return dict(found)


def ending(events: Sequence[TurnEvent]) -> TurnDone:
    """The `TurnDone` a turn's events end with; fails the test if they end otherwise."""
    last = events[-1]
    assert isinstance(last, TurnDone), f"the turn ended with {last!r}, not TurnDone"
    return last


def hangs(cancelled: asyncio.Event) -> Callable[[dict[str, Any]], Awaitable[ToolResult]]:
    """A tool's run that never returns; `cancelled` is set when the run loop cancels it."""

    async def run(args: dict[str, Any]) -> ToolResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ToolResult("unreachable")

    return run


class RunLoopRuntime:
    """The runtime `TurnSessions` asks for a run: the real run loop over `tools` with a
    scripted model, keeping each run so a test can read its live history."""

    def __init__(self, tools: Sequence[Any], *scripts: Sequence[Step]) -> None:
        self.tools = list(tools)
        self.provider = ScriptedProvider(*scripts)
        self.runs: list[TurnRun] = []

    def start_turn(self, **kwargs: Any) -> TurnRun:
        run = make_run(
            self.provider,
            self.tools,
            user_message=kwargs["user_message"],
            history=kwargs["history"],
            stop=kwargs["stop"],
            seq=kwargs["seq"],
        )
        self.runs.append(run)
        return run
