"""What an "always" approval leaves behind, read back when a later turn starts.

- "Always for this tool in this conversation" is nothing but the decision in the
  conversation's event log: `conversation_approvals` reads the tool ids so approved from
  the conversation's stored turns (`ApprovalRequested` names the tool, `ApprovalDecided`
  the verdict and its scope). Deleting the conversation forgets them with it.
- "Always for this tool for this agent" is written into the agent:
  `approve_for_agent` stores `require_approval: false` for the tool in its
  `tool_options`, which outranks the agent's default for the tools that change the
  workspace (`core.pauses.requires_approval`) and shows in the builder.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from intent_ui.core.pauses import APPROVED, REQUIRE_APPROVAL_OPTION
from intent_ui.store import agents as agent_store
from intent_ui.store.db import store_errors
from intent_ui.store.models import Message, TurnEventRow, decode_json

__all__ = ["approve_for_agent", "conversation_approvals"]

_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_EVENTS = TurnEventRow.__table__  # type: ignore[attr-defined]
_KINDS = ("ApprovalRequested", "ApprovalDecided")


@store_errors("read the conversation's approvals")
def conversation_approvals(engine: Engine, conversation_id: str) -> frozenset[str]:
    """The tool ids approved "always for this conversation" in its stored turns."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(_EVENTS.c.message_id, _EVENTS.c.kind, _EVENTS.c.data)
            .join(_MESSAGES, _MESSAGES.c.id == _EVENTS.c.message_id)
            .where(_MESSAGES.c.conversation_id == conversation_id, _EVENTS.c.kind.in_(_KINDS))
            .order_by(_EVENTS.c.message_id, _EVENTS.c.seq)
        ).all()
    tools: dict[tuple[str, str], str] = {}
    approved: set[str] = set()
    for message_id, kind, raw in rows:
        data = decode_json(raw, {})
        if not isinstance(data, dict) or not isinstance(data.get("call_id"), str):
            continue
        call = (str(message_id), data["call_id"])
        if kind == "ApprovalRequested":
            tool_id = data.get("tool_id")
            if isinstance(tool_id, str) and tool_id:
                tools[call] = tool_id
        elif data.get("verdict") == APPROVED and data.get("scope") == "conversation":
            tool_id = tools.get(call)
            if tool_id is not None:
                approved.add(tool_id)
    return frozenset(approved)


def approve_for_agent(engine: Engine, agent_id: str, tool_id: str, *, owner: str) -> bool:
    """Store that the agent runs `tool_id` without asking; False when the agent is not
    `owner`'s (any more). Blocking."""
    agent = agent_store.get_own_agent(engine, agent_id, owner=owner)
    if agent is None:
        return False
    options = agent.tool_options
    options[tool_id] = {**options.get(tool_id, {}), REQUIRE_APPROVAL_OPTION: False}
    return agent_store.update_agent(engine, agent_id, owner=owner, tool_options=options) is not None
