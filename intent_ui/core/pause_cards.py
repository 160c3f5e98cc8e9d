"""What the page shows of a call that waits for a person: its approval or its question.

Display records like `core/cards.py`'s, held under their own keys (`core/patches.py`):
`approval:{call_id}` (`approval_entry`) and `question:{call_id}` (`question_entry`). Each
carries its texts in the reader's language, so the card needs nothing else to render;
neither carries the call's arguments, which only the owner may read: an approval card
fetches them with the call's detail (`approval_detail`).

An approval leads with the intent the model already wrote ("Approve: Deleting the
staging migrations"), then the tool and its server. Once decided it says how, as the
settled card shows it: "Approved by you · once", "Denied by you: not the prod ones". A
pause whose call ended before anyone decided (the turn was stopped) says that instead.
"""

from __future__ import annotations

import json
from typing import TypedDict

from intent_ui.core.capabilities.intent import INTENT_ARG
from intent_ui.core.locale import translate
from intent_ui.core.pauses import DENIED, Pause
from intent_ui.core.sanitize import has_label_text, sanitize_label
from intent_ui.core.states import FINAL_STATES
from intent_ui.core.turn import CallRecord, TurnView

__all__ = [
    "EDIT_LIMIT",
    "ApprovalDetail",
    "ApprovalEntry",
    "QuestionEntry",
    "approval_detail",
    "approval_entry",
    "child_name",
    "pause_key",
    "pause_state",
    "question_entry",
    "waiting_note",
]

PROMPT_LIMIT = 300
"""The most characters of an approval's first line (the whole of it is its title)."""
QUESTION_LIMIT = 1000
EDIT_LIMIT = 200_000
"""The longest argument text an approval offers to edit (longer ones are shown, cut)."""


class ApprovalEntry(TypedDict):
    """An approval (`approval:{call_id}`)."""

    state: str  # waiting | approved | denied | expired
    prompt: str
    title: str
    tool: str
    agent_scope: bool
    decision: str
    edited: bool
    approve: str
    always_conversation: str
    always_agent: str
    deny: str
    reason: str
    edit: str
    edit_submit: str
    arguments: str
    waiting: str


class QuestionEntry(TypedDict):
    """A question (`question:{call_id}`)."""

    state: str  # waiting | answered | expired
    question: str
    choices: list[str]
    answer: str
    answered: str
    placeholder: str
    submit: str


class ApprovalDetail(TypedDict):
    """What an approval card of the owner's fetches: the arguments the tool will receive
    (without the intent, which leads the card) and the whole argument text to edit."""

    tool_arguments: str
    editable: str


def pause_key(pause: Pause) -> str:
    """The key the pause's record is held under."""
    return f"{pause.kind}:{pause.call_id}"


def pause_state(pause: Pause, record: CallRecord | None) -> str:
    """`waiting` until decided; then the verdict; `expired` when the call ended first."""
    if pause.decided:
        return pause.verdict
    if record is None or record.state in FINAL_STATES:
        return "expired"
    return "waiting"


def _tool_line(record: CallRecord | None, lang: str) -> str:
    if record is None:
        return ""
    if record.server:
        return translate("card.in_server", lang, label=record.tool, server=record.server)
    return record.tool


def approval_entry(turn: TurnView, pause: Pause, lang: str) -> ApprovalEntry:
    """The approval card's record."""
    record = turn.call(pause.call_id)
    tool = _tool_line(record, lang)
    what = record.intent if record is not None and has_label_text(record.intent) else tool
    prompt = translate("approval.prompt", lang, label=what)
    if record is not None and record.parent is not None:
        # A subagent's call asks in the parent turn: the prompt names who is asking.
        prompt = translate(
            "subagent.asks", lang, name=child_name(turn, record.parent, lang), prompt=prompt
        )
    shown = sanitize_label(prompt, PROMPT_LIMIT)
    state = pause_state(pause, record)
    name = record.tool if record is not None else ""
    return {
        "state": state,
        "prompt": shown.text,
        "title": shown.title if shown.truncated else "",
        "tool": tool,
        "agent_scope": pause.agent_scope,
        "decision": _decision(pause, state, lang),
        "edited": pause.edited,
        "approve": translate("approval.approve", lang),
        "always_conversation": translate("approval.always_conversation", lang, tool=name),
        "always_agent": translate("approval.always_agent", lang, tool=name),
        "deny": translate("approval.deny", lang),
        "reason": translate("approval.reason", lang),
        "edit": translate("approval.edit", lang),
        "edit_submit": translate("approval.edit_submit", lang),
        "arguments": translate("ui.arguments", lang),
        "waiting": translate("approval.waiting", lang),
    }


def child_name(turn: TurnView, call_id: str, lang: str) -> str:
    """The name of a `subagent` call's child: the saved agent's, or "Subagent" for a copy
    of the turn's own agent."""
    found = turn.subagent(call_id)
    return found.agent if found is not None and found.agent else translate("subagent.self", lang)


def _decision(pause: Pause, state: str, lang: str) -> str:
    if state == "expired":
        return translate("approval.expired", lang)
    if state == "waiting":
        return ""
    who = "auto" if pause.by == "auto" else "you"
    if pause.verdict == DENIED:
        reason = sanitize_label(pause.reason, PROMPT_LIMIT).text
        key = f"approval.denied_{who}" + ("_reason" if reason else "")
        return translate(key, lang, reason=reason)
    said = translate(
        f"approval.approved_{who}", lang, scope=translate(f"approval.scope_{pause.scope}", lang)
    )
    return said + (translate("approval.edited", lang) if pause.edited else "")


def question_entry(turn: TurnView, pause: Pause, lang: str) -> QuestionEntry:
    """The question card's record."""
    state = pause_state(pause, turn.call(pause.call_id))
    answer = sanitize_label(pause.answer, QUESTION_LIMIT).text
    if state == "answered":
        answered = translate("question.answered", lang, answer=answer) if answer else ""
        answered = answered or translate("question.unanswered", lang)
    elif state == "expired":
        answered = translate("question.expired", lang)
    else:
        answered = ""
    return {
        "state": state,
        "question": sanitize_label(pause.question, QUESTION_LIMIT).text,
        "choices": [sanitize_label(choice).text for choice in pause.choices],
        "answer": answer,
        "answered": answered,
        "placeholder": translate("question.placeholder", lang),
        "submit": translate("question.submit", lang),
    }


def approval_detail(turn: TurnView, call_id: str) -> ApprovalDetail | None:
    """The arguments of a call with an approval, for its owner; None for any other call."""
    pause = turn.pause(call_id)
    record = turn.call(call_id)
    if pause is None or pause.kind != "approval" or record is None:
        return None
    text = turn.arguments(call_id)
    try:
        value = json.loads(text)
    except ValueError:
        return {"tool_arguments": text, "editable": text[:EDIT_LIMIT]}
    if not isinstance(value, dict):
        return {"tool_arguments": text, "editable": text[:EDIT_LIMIT]}
    given = {k: v for k, v in value.items() if k != INTENT_ARG} if record.carries_intent else value
    return {
        "tool_arguments": json.dumps(given, indent=2, ensure_ascii=False),
        "editable": json.dumps(value, indent=2, ensure_ascii=False)[:EDIT_LIMIT],
    }


def waiting_note(turn: TurnView, lang: str) -> str:
    """What the browser tab's title says while the turn waits for the user ("" when not)."""
    waiting = turn.waiting()
    if not waiting:
        return ""
    if any(pause.kind == "approval" for pause in waiting):
        return translate("approval.tab_waiting", lang)
    return translate("question.tab_waiting", lang)
