"""A turn's pauses: where a call waits for a person before it runs or settles.

The run loop holds one `Pauses` per turn and asks it about every call it is about to
run (`admit`), after the call's arguments are complete and before its intent is stripped:

- a call of `ask_user_question` asks its question and settles with the answer
  (`agent/questions.py`);
- a call of a tool that asks first (`core.pauses.requires_approval`, unless the tool was
  approved "always" already) waits for the decision (`agent/approvals.py`): approved, it
  runs (with the user's edited arguments, if any); denied, it settles as cancelled, with
  the reason as what the model reads;
- any other call runs at once.

Decisions and answers arrive through `decide` and `answer`, from the turn's session
(the owner's tabs: `ui/chat_state.py`) or the command line. Whoever starts the turn
builds the `Pauses` with what it knows about the conversation and the agent
(`PausePolicy`) and hands it to the run, so it can reach it while the turn runs.

A subagent's child turn has its own `Pauses`, adopted by the parent's while the child
runs (`adopt`): the child's calls are known in the parent turn under the parent call's
id and a tilde, so a decision or an answer for one of them reaches the child.

A turn resumed after a restart (`agent/resume.py`) builds its `Pauses` with the calls it
already asked about (`asked`): they wait again without a second request in the log.

A call from code (`run_tools_with_code`) cannot wait for a person: a tool that would ask
first is refused there, saying to call it directly (`code_refusal`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from intent_ui.agent.approvals import (
    Approvals,
    Decision,
    PausedCall,
    Remember,
    Verdict,
    decision_from,
)
from intent_ui.agent.questions import Questions
from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.core.capabilities.selection import ToolOptions
from intent_ui.core.events import TurnEvent
from intent_ui.core.pauses import ASK_USER_QUESTION_NAME, requires_approval
from intent_ui.core.states import FinalState
from intent_ui.store import agents as agent_store
from intent_ui.store.approvals import approve_for_agent, conversation_approvals

__all__ = ["Decision", "PausePolicy", "Pauses", "Verdict", "decision_from", "pause_policy"]

Settle = Callable[[Any, ToolResult], None]
SettleAs = Callable[[Any, FinalState, str | None], None]

_NOT_RUNNING = Verdict(False, "This turn is not running.")


@dataclass(frozen=True, slots=True)
class PausePolicy:
    """What the turn's starter knows about approvals: the tool ids approved "always for
    this conversation" in its earlier turns, whether the agent can remember "always for
    this agent" (a saved agent of the user's), and how to write that down."""

    allowed: frozenset[str] = frozenset()
    agent_scope: bool = False
    remember: Remember | None = None


def pause_policy(
    engine: Engine, conversation_id: str, agent_id: str | None, owner: str
) -> PausePolicy:
    """The policy of a turn in a conversation of `owner`'s with a saved agent
    (`agent_id`; None for the default agent or a model spec, which keep nothing).
    Blocking (reads the store)."""
    allowed = conversation_approvals(engine, conversation_id)
    own = (
        agent_id is not None
        and agent_store.get_own_agent(engine, agent_id, owner=owner) is not None
    )
    if agent_id is None or not own:
        return PausePolicy(allowed)

    async def remember(tool_id: str) -> None:
        await asyncio.to_thread(approve_for_agent, engine, agent_id, tool_id, owner=owner)

    return PausePolicy(allowed, agent_scope=True, remember=remember)


class Pauses:
    """One turn's approvals and questions (module docstring)."""

    def __init__(self, policy: PausePolicy | None = None, asked: Collection[str] = ()) -> None:
        self.policy = policy or PausePolicy()
        self._asked = frozenset(asked)
        """Calls whose request the log already holds (a turn resumed after a restart):
        they wait again without asking again."""
        self._options: ToolOptions = {}
        self._approvals: Approvals | None = None
        self._questions: Questions | None = None
        self._settle: Settle | None = None
        self._settle_as: SettleAs | None = None
        self.abandoned = False
        """Set when the process stops while the turn waits for the user (`abandon`)."""
        self._children: dict[str, Pauses] = {}

    def bind(
        self,
        tool_options: ToolOptions,
        emit: Callable[[TurnEvent], None],
        next_seq: Callable[[], int],
        settle: Settle,
        settle_as: SettleAs,
    ) -> Pauses:
        """Attach to the run loop that owns the turn (its options, events and settling)."""
        self._options = tool_options
        self._approvals = Approvals(
            emit,
            next_seq,
            allowed=set(self.policy.allowed),
            agent_scope=self.policy.agent_scope,
            remember=self.policy.remember,
            asked=set(self._asked),
        )
        self._questions = Questions(emit, next_seq, asked=set(self._asked))
        self._settle, self._settle_as = settle, settle_as
        return self

    # --- the run loop's side ----------------------------------------------------------------

    def asks_first(self, tool: Tool) -> bool:
        """Whether a call of `tool` waits for the user's approval now."""
        if self._approvals is not None and tool.tool_id in self._approvals.allowed:
            return False
        return requires_approval(self._options, tool.tool_id, tool.definition)

    async def admit(
        self, call: PausedCall, tool: Tool, args: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The arguments to run the call with, or None when the pause settled it."""
        assert self._approvals is not None and self._questions is not None
        assert self._settle is not None and self._settle_as is not None
        if tool.kind == "native" and tool.name == ASK_USER_QUESTION_NAME:
            self._settle(call, await self._questions.ask(call, args))
            return None
        if not self.asks_first(tool):
            return args
        admitted = await self._approvals.gate(call, tool, args)
        if isinstance(admitted, ToolResult):
            self._settle_as(call, "cancelled", admitted.output)
            return None
        return admitted

    def code_refusal(self, name: str, tool: Tool) -> ToolResult | None:
        """The error for an inner call from code of a tool that would ask first."""
        if not self.asks_first(tool) and tool.name != ASK_USER_QUESTION_NAME:
            return None
        return ToolResult(
            f"'{name}' waits for the user before it runs, which code cannot do: call it "
            "directly instead.",
            is_error=True,
        )

    # --- the user's side --------------------------------------------------------------------

    @property
    def waiting(self) -> tuple[str, ...]:
        """The ids of the calls waiting for a decision or an answer."""
        if self._approvals is None or self._questions is None:
            return ()
        children = (
            prefix + call_id
            for prefix, child in self._children.items()
            for call_id in child.waiting
        )
        return (*self._approvals.waiting, *self._questions.waiting, *children)

    def decide(self, call_id: str, decision: Decision) -> Verdict:
        """A decision on a waiting call; the first one wins."""
        child, child_id = self._child(call_id)
        if child is not None:
            return child.decide(child_id, decision)
        if self._approvals is None:
            return _NOT_RUNNING
        return self._approvals.decide(call_id, decision)

    def answer(self, call_id: str, text: str, by: str = "user") -> Verdict:
        """An answer to a waiting question; the first one wins."""
        child, child_id = self._child(call_id)
        if child is not None:
            return child.answer(child_id, text, by)
        if self._questions is None:
            return _NOT_RUNNING
        return self._questions.answer(call_id, text, by)

    def adopt(self, prefix: str, child: Pauses) -> Callable[[], None]:
        """Route the decisions and answers of ids starting with `prefix` to a child turn's
        pauses, until the returned function is called (the child ended)."""
        self._children[prefix] = child

        def release() -> None:
            self._children.pop(prefix, None)

        return release

    def _child(self, call_id: str) -> tuple[Pauses | None, str]:
        for prefix, child in self._children.items():
            if call_id.startswith(prefix):
                return child, call_id[len(prefix) :]
        return None, call_id

    def abandon(self) -> None:
        """The process is stopping while the turn waits for the user: its end says so."""
        self.abandoned = True
