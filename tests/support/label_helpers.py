"""The call factory and texts shared by the card label and group header tests."""

from __future__ import annotations

from typing import Any

from intent_ui.core.labels import CallView, tool_category

OAUTH = "Searching for OAuth handling"
MCP = "Searching for MCP wiring"
SEARCHED = {"from": "Searching", "to": "Searched"}


def call(
    call_id: str = "a",
    state: Any = "streaming",
    *,
    tool: str = "search_code",
    server: str | None = "github",
    carries_intent: bool = True,
    **fields: Any,
) -> CallView:
    return CallView(
        call_id=call_id,
        tool=tool,
        state=state,
        server=server,
        carries_intent=carries_intent,
        category=tool_category(tool),
        **fields,
    )
