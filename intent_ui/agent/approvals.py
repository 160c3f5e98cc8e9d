"""Approvals: a call of a tool that asks first waits here until the user decides.

One `Approvals` per turn, reached through the turn's `Pauses` (`agent/pauses.py`):

- `gate(call, tool, args)` emits `ApprovalRequested` and waits. The wait is not the
  tool's: it does not count against `tool_timeout_s`, and stopping the turn ends it
  (the call settles as cancelled, as any call in flight does).
- `decide(call_id, decision)` is how a decision arrives (a tab of the owner's, the
  command line). The first one wins: it is emitted as `ApprovalDecided` at once, so every
  tab, the log and a reload see the settled card, and any later one is refused.
- Approve runs the call; with edited arguments (a JSON object, intent included) it runs
  with those, and the call's argument text becomes them (the history the model reads
  back, and the card's label when the intent was rewritten). Deny settles the call as
  cancelled, with the reason as the result the model reads.
- "Always" approves this call and every later call of the tool: `conversation` for the
  rest of the conversation (later turns read the decision back from the log), `agent`
  for the agent (`remember(tool_id)` writes it into its `tool_options`). Other calls of
  the same tool waiting beside it are approved with it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.core.events import ApprovalDecided, ApprovalRequested, TurnEvent
from intent_ui.core.pauses import (
    APPROVED,
    DENIED,
    MAX_DENY_REASON_CHARS,
    SCOPES,
    denial_result,
)
from intent_ui.core.text import scrub_decoded

__all__ = ["CHOICES", "Approvals", "Decision", "PausedCall", "Remember", "Verdict", "decision_from"]

logger = logging.getLogger(__name__)

Remember = Callable[[str], Awaitable[None]]
"""Writes "always approve this tool" (its id) into the turn's agent."""


class PausedCall(Protocol):
    """What a pause reads and changes of the run loop's call."""

    call_id: str
    name: str
    chunks: list[str]


@dataclass(frozen=True, slots=True)
class Decision:
    """A user's decision on a waiting call (see `ApprovalDecided` for the fields)."""

    verdict: str
    scope: str = "once"
    reason: str = ""
    arguments: str = ""
    by: str = "user"


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a decision or an answer was taken, and why not when it was not; `stale`
    when the call no longer waits (another tab answered first, or the turn ended)."""

    ok: bool
    problem: str = ""
    stale: bool = False


CHOICES = ("once", "conversation", "agent", "deny")
"""What a page sends: approve for a scope, or deny."""


def decision_from(choice: str, reason: str = "", arguments: str = "", by: str = "user") -> Decision:
    """The `Decision` a page's choice stands for (`CHOICES`; anything else is refused by
    `Approvals.decide` as an unknown decision)."""
    if choice == "deny":
        return Decision(DENIED, reason=reason, by=by)
    if choice in SCOPES:
        return Decision(APPROVED, choice, arguments=arguments, by=by)
    return Decision(choice, by=by)


@dataclass(slots=True)
class _Waiting:
    call: PausedCall
    tool_id: str
    future: asyncio.Future[Decision]
    args: dict[str, Any] | None = None


@dataclass(slots=True)
class Approvals:
    """One turn's approvals. `allowed` are the tool ids approved "always" so far."""

    emit: Callable[[TurnEvent], None]
    next_seq: Callable[[], int]
    allowed: set[str] = field(default_factory=set)
    agent_scope: bool = False
    remember: Remember | None = None
    asked: set[str] = field(default_factory=set)
    """Calls already asked about before a restart: their wait emits no second request."""
    _waiting: dict[str, _Waiting] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def waiting(self) -> tuple[str, ...]:
        """The ids of the calls waiting for a decision."""
        return tuple(self._waiting)

    async def gate(
        self, call: PausedCall, tool: Tool, args: dict[str, Any]
    ) -> dict[str, Any] | ToolResult:
        """Wait for the decision: the arguments to run with, or the denial's result."""
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._waiting[call.call_id] = _Waiting(call, tool.tool_id, future)
        if call.call_id in self.asked:
            self.asked.discard(call.call_id)
        else:
            self.emit(
                ApprovalRequested(
                    self.next_seq(), call.call_id, tool.tool_id, agent_scope=self.agent_scope
                )
            )
        try:
            decision = await future
        finally:
            waiting = self._waiting.pop(call.call_id, None)
        if decision.verdict == DENIED:
            return ToolResult(denial_result(decision.reason), is_error=True)
        if decision.arguments and waiting is not None and waiting.args is not None:
            call.chunks[:] = [decision.arguments]
            return waiting.args
        return args

    def decide(self, call_id: str, decision: Decision) -> Verdict:
        """Take the first decision on a waiting call (module rules)."""
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting.future.done():
            return Verdict(False, "This call is not waiting for a decision (any more).", True)
        if decision.verdict not in (APPROVED, DENIED):
            return Verdict(False, f"Unknown decision {decision.verdict!r}.")
        scope = decision.scope if decision.verdict == APPROVED else "once"
        if scope not in SCOPES or (scope == "agent" and not self.agent_scope):
            return Verdict(False, f"This call cannot be approved for {scope!r}.")
        arguments = decision.arguments if decision.verdict == APPROVED else ""
        if arguments:
            parsed = _edited(arguments)
            if isinstance(parsed, str):
                return Verdict(False, parsed)
            waiting.args = parsed
        reason = (
            decision.reason.strip()[:MAX_DENY_REASON_CHARS] if decision.verdict == DENIED else ""
        )
        self._settle(waiting, Decision(decision.verdict, scope, reason, arguments, decision.by))
        if scope != "once":
            self.allowed.add(waiting.tool_id)
            # Calls of the same tool waiting beside this one are covered by it too.
            for other in list(self._waiting.values()):
                if other.tool_id == waiting.tool_id and not other.future.done():
                    self._settle(other, Decision(APPROVED, scope, by=decision.by))
            if scope == "agent" and self.remember is not None:
                self._remember(waiting.tool_id)
        return Verdict(True)

    def _settle(self, waiting: _Waiting, decision: Decision) -> None:
        self.emit(
            ApprovalDecided(
                self.next_seq(),
                waiting.call.call_id,
                decision.verdict,
                scope=decision.scope,
                reason=decision.reason,
                arguments=decision.arguments,
                by=decision.by,
            )
        )
        waiting.future.set_result(decision)

    def _remember(self, tool_id: str) -> None:
        assert self.remember is not None
        remember = self.remember

        async def write() -> None:
            try:
                await remember(tool_id)
            except Exception:  # the turn goes on; the next one asks again
                logger.exception("Could not remember the approval of %s for the agent", tool_id)

        task = asyncio.get_running_loop().create_task(write())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _edited(text: str) -> dict[str, Any] | str:
    """Rewritten arguments as the object to run with, or what is wrong with them."""
    try:
        value = scrub_decoded(json.loads(text))
    except (ValueError, RecursionError) as exc:
        return f"The edited arguments are not valid JSON ({exc})."
    if not isinstance(value, Mapping):
        return "The edited arguments must be one JSON object."
    return dict(value)
