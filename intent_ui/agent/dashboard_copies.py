"""How a turn's calls are copied for the intents dashboard (docs/dashboard.md).

A turn's event log copies its calls when the turn ends (`intent_ui.store.dashboard`); this
module tells it, from the tools the turn was offered, which of them ask for the intent as
a required argument (their own schema declares it: the app's native tools) rather than an
optional one (injected into MCP and imported tools), and which ones the operator opted out
of intent copies (`dashboard.omit_intents`, by tool id or name).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from intent_ui.agent.tools.base import Tool
from intent_ui.core.dashboard import declares_required_intent
from intent_ui.store.dashboard import TurnCopies

__all__ = ["turn_copies"]

logger = logging.getLogger(__name__)


def turn_copies(
    runtime: Any,
    *,
    owner_id: str,
    agent_id: str,
    agent_tool_ids: Sequence[str] | None,
    omit: Iterable[str] = (),
) -> TurnCopies:
    """The copy rules of one turn of `owner_id` with `agent_id`'s tools.

    A tool the turn was not offered under its name (the run loop's own `tool_search`, a
    goal's `select_intent`, an unknown name the model made up), or every tool when the
    runtime cannot list them, counts as required when it has no server, as the host's own
    tools declare it, and optional otherwise.
    """
    tools: list[Tool] = []
    listing = getattr(runtime, "tools_for", None)  # a stand-in runtime may have none
    if listing is not None:
        try:
            tools = list(listing(agent_tool_ids, owner_id))
        except Exception:  # the fallback rule decides; the turn must start regardless
            logger.exception("Could not list the turn's tools for the intents dashboard")
    declared = {
        (tool.name, tool.server): declares_required_intent(tool.definition.get("parameters"))
        for tool in tools
    }
    wanted = set(omit)
    omitted_pairs = {
        (tool.name, tool.server) for tool in tools if tool.tool_id in wanted or tool.name in wanted
    }

    def required(tool: str, server: str | None) -> bool:
        return declared.get((tool, server), server is None)

    def omitted(tool: str, server: str | None) -> bool:
        return (tool, server) in omitted_pairs or tool in wanted

    return TurnCopies(owner_id=owner_id, agent_id=agent_id, required=required, omitted=omitted)
