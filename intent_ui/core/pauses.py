"""Calls that wait for a person: approvals before a tool runs, and questions the model asks.

Pure rules shared by the run loop (`intent_ui.agent.pauses`), the reducer
(`intent_ui.core.turn`) and the builder (`intent_ui.core.builder`); docs/capabilities.md
(Approvals and questions) says the same in words.

Which calls ask first (`requires_approval`), per tool id in an agent's `tool_options`:

1. the tool's own `require_approval` entry, `true` or `false`, wins;
2. otherwise a tool that changes the workspace (its definition carries
   `"changes_workspace": true`: `write_file`, `edit_file`, `delete_file`) follows the
   agent's default for such tools, the `require_approval` of the `"*"` entry;
3. every other tool runs without asking.

A model spec's `require_approval` (true, or a list of tool ids) is written into these
options like its `describe_intent` (`agent.runtime.AgentRuntime.spec_tool_options`).

An approval is `once` (this call), `conversation` (this tool, for the rest of the
conversation: read back from the conversation's stored decisions at each turn's start) or
`agent` (this tool, for every later turn of the agent: written into its `tool_options`
as `require_approval: false`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from intent_ui.core.capabilities.selection import (
    TOOL_SELECTION_WILDCARD,
    ToolOptions,
    resolve_tool_option,
)

__all__ = [
    "ANSWERED",
    "APPROVED",
    "ASK_USER_QUESTION_NAME",
    "CHANGES_WORKSPACE_FLAG",
    "DENIAL_LEAD",
    "DENIED",
    "MAX_ANSWER_CHARS",
    "MAX_DENY_REASON_CHARS",
    "REQUIRE_APPROVAL_OPTION",
    "RESTARTED_ERROR",
    "SCOPES",
    "Pause",
    "PauseKind",
    "Scope",
    "changes_workspace",
    "denial_result",
    "requires_approval",
]

REQUIRE_APPROVAL_OPTION = "require_approval"
"""Per-tool `tool_options` key: ask the user before each call of the tool runs."""

CHANGES_WORKSPACE_FLAG = "changes_workspace"
"""Definition-level flag of the tools that change files in the workspace."""

ASK_USER_QUESTION_NAME = "ask_user_question"
"""The native tool the model asks the user a question with."""

APPROVED = "approved"
DENIED = "denied"
ANSWERED = "answered"

Scope = Literal["once", "conversation", "agent"]
SCOPES: tuple[Scope, ...] = ("once", "conversation", "agent")
"""How long an approval holds, narrowest first."""

PauseKind = Literal["approval", "question"]

MAX_DENY_REASON_CHARS = 2000
"""The longest reason a denial passes on to the model."""
MAX_ANSWER_CHARS = 8000
"""The longest answer to a question the model receives."""

RESTARTED_ERROR = (
    "The server restarted while this turn waited for you, so it ended there: the waiting "
    "call did not run."
)
"""The error of a turn that was waiting for a decision or an answer when its process
stopped: it cannot resume, so it ends saying so."""


def changes_workspace(definition: Mapping[str, Any]) -> bool:
    """Whether the tool changes files in the workspace (its definition says so)."""
    return definition.get(CHANGES_WORKSPACE_FLAG) is True


def requires_approval(
    tool_options: ToolOptions | None, tool_id: str, definition: Mapping[str, Any]
) -> bool:
    """Whether a call of the tool waits for the user's approval (module rules)."""
    resolved = resolve_tool_option(tool_options, REQUIRE_APPROVAL_OPTION, tool_id)
    if resolved is None:
        return False
    if resolved.source == TOOL_SELECTION_WILDCARD:
        # The agent's default speaks only for the tools that change the workspace.
        return resolved.value and changes_workspace(definition)
    return resolved.value


DENIAL_LEAD = "The user denied this tool call, so it did not run."
"""How the result of a denied call begins."""


def denial_result(reason: str) -> str:
    """What the model reads as the result of a call the user denied."""
    reason = " ".join(reason.split())[:MAX_DENY_REASON_CHARS]
    return f"{DENIAL_LEAD} Their reason: {reason}" if reason else DENIAL_LEAD


@dataclass(frozen=True, slots=True)
class Pause:
    """A call that waited (or waits) for a person, as the turn's events tell it.

    `verdict` is "" while it waits, then `approved`, `denied` or `answered`. For an
    approval: `tool_id`, `agent_scope` (whether "always for this agent" was offered),
    then `scope`, `reason`, `edited` (the user rewrote the arguments) and `by` (`user`,
    or `auto` for the command line's flags). For a question: `question`, `choices` and
    then `answer`.
    """

    call_id: str
    kind: PauseKind
    requested_seq: int = 0
    tool_id: str = ""
    agent_scope: bool = False
    question: str = ""
    choices: tuple[str, ...] = ()
    verdict: str = ""
    scope: str = "once"
    reason: str = ""
    answer: str = ""
    edited: bool = False
    by: str = "user"
    decided_seq: int = 0

    @property
    def decided(self) -> bool:
        return bool(self.verdict)
