"""What a card shows while its call waits for the reader: an approval or a question.

Part of the card memo (`components/tool_call.py`), reading the records the turn store
holds under `approval:{call_id}` and `question:{call_id}` (`core/pause_cards.py`) through
the card's hook (`assets/turn_views.js`). Their `data-testid` names are the browser
contract (`approval-*`, `question-*`).

An approval leads with the intent ("Approve: Deleting the staging migrations"), then the
tool and its server, then the exact arguments its tool will receive (fetched with the
card's detail, for the owner only). Each button names its scope in words. Deny sends the
optional reason, which the model reads; Edit opens the arguments (intent included) to
rewrite before approving. A question shows its text, a button per offered answer and a
box for any other. Answers go to the chat state (`decide_approval`, `answer_question`),
which checks the owner and hands them to the running turn; the first answer from any of
the owner's tabs wins, and every tab then shows the settled card ("Approved by you ·
once"). A shared page shows the same cards without the buttons.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.components.turn_hooks import js_call, store_function

__all__ = ["pause_block"]


def _field(prefix: str, call_id: rx.Var[str]) -> rx.Var[str]:
    """The id of one of the card's fields (unique per call on the page)."""
    return (rx.Var.create(prefix) + call_id.to(str)).to(str)


def _value_of(field_id: rx.Var[str]) -> rx.Var[str]:
    """What the field holds when its button is pressed (read in the page)."""
    return store_function("fieldValue").call(field_id).to(str)


def _decide(
    message_id: rx.Var[str],
    call_id: rx.Var[str],
    decision: str,
    reason: str | rx.Var[str] = "",
    arguments: str | rx.Var[str] = "",
) -> Any:
    from intent_ui.ui.chat_state import ChatState

    # Reflex's stubs type event calls of up to four arguments; the handler takes five.
    return ChatState.decide_approval(  # type: ignore[call-overload]
        message_id, call_id, decision, reason, arguments
    )


def _text_row(
    field_id: rx.Var[str], placeholder: rx.Var[str], testid: str, button: rx.Component
) -> rx.Component:
    """A one-line box and the button that sends what it holds (deny's reason, an answer)."""
    return rx.el.div(
        rx.el.input(
            id=field_id,
            type="text",
            placeholder=placeholder,
            class_name="iu-pause-input",
            custom_attrs={"data-testid": testid, "aria-label": placeholder},
        ),
        button,
        class_name="iu-pause-actions",
    )


def _settled_line(text: rx.Var[str], testid: str) -> rx.Component:
    """What was decided or answered, once it was (empty while the call waits)."""
    return rx.cond(
        text != "",
        rx.el.p(text, class_name="iu-pause-decision", custom_attrs={"data-testid": testid}),
    )


def _pause_card(
    kind: str, state: rx.Var[str], name: rx.Var[str], *children: rx.Component
) -> rx.Component:
    """The card's frame: `approval-card` or `question-card`, with its state and name."""
    return rx.el.div(
        *children,
        role="group",
        class_name=f"iu-pause iu-{kind}",
        custom_attrs={"data-testid": f"{kind}-card", "data-state": state, "aria-label": name},
    )


def _approval(
    message_id: rx.Var[str], call_id: rx.Var[str], view: ObjectVar[dict[str, Any]]
) -> rx.Component:
    approval = view["approval"].to(dict)
    detail = view["detail"].to(dict)
    state = approval["state"].to(str)
    prompt = approval["prompt"].to(str)
    title = approval["title"].to(str)
    reason_id = _field("iu-reason-", call_id)
    edit_id = _field("iu-edit-", call_id)
    editable = detail["editable"].to(str)
    actions = rx.el.div(
        rx.el.div(
            rx.el.span(approval["arguments"].to(str), class_name="iu-pause-heading"),
            rx.el.pre(
                detail["tool_arguments"].to(str),
                tab_index=0,
                custom_attrs={"data-testid": "approval-arguments"},
            ),
            class_name="iu-approval-args",
        ),
        rx.el.div(
            text_button(
                approval["approve"].to(str),
                "approval-approve",
                _decide(message_id, call_id, "once"),
                primary=True,
            ),
            text_button(
                approval["always_conversation"].to(str),
                "approval-always-conversation",
                _decide(message_id, call_id, "conversation"),
            ),
            rx.cond(
                approval["agent_scope"].to(bool),
                text_button(
                    approval["always_agent"].to(str),
                    "approval-always-agent",
                    _decide(message_id, call_id, "agent"),
                ),
            ),
            text_button(
                approval["edit"].to(str),
                "approval-edit",
                js_call("toggleEdit", message_id, call_id),
            ),
            class_name="iu-pause-actions",
        ),
        rx.cond(
            view["editing"].to(bool) & (editable != ""),
            rx.el.div(
                rx.el.textarea(
                    default_value=editable,
                    id=edit_id,
                    rows=8,
                    spell_check=False,
                    class_name="iu-approval-edit",
                    custom_attrs={
                        "data-testid": "approval-edit-arguments",
                        "aria-label": approval["edit"].to(str),
                    },
                ),
                text_button(
                    approval["edit_submit"].to(str),
                    "approval-edit-submit",
                    _decide(message_id, call_id, "once", arguments=_value_of(edit_id)),
                    primary=True,
                ),
                class_name="iu-pause-editor",
            ),
        ),
        _text_row(
            reason_id,
            approval["reason"].to(str),
            "approval-reason",
            text_button(
                approval["deny"].to(str),
                "approval-deny",
                _decide(message_id, call_id, "deny", reason=_value_of(reason_id)),
            ),
        ),
        class_name="iu-pause-body",
    )
    return _pause_card(
        "approval",
        state,
        prompt,
        rx.el.p(
            prompt,
            title=rx.cond(title != "", title, prompt),
            class_name="iu-pause-lead",
            custom_attrs={"data-testid": "approval-intent"},
        ),
        rx.el.p(approval["tool"].to(str), class_name="iu-pause-tool"),
        rx.cond(
            state == "waiting",
            rx.cond(
                view["canDecide"].to(bool),
                actions,
                rx.el.p(approval["waiting"].to(str), class_name="iu-pause-note"),
            ),
        ),
        _settled_line(approval["decision"].to(str), "approval-decision"),
    )


def _question(
    message_id: rx.Var[str], call_id: rx.Var[str], view: ObjectVar[dict[str, Any]]
) -> rx.Component:
    from intent_ui.ui.chat_state import ChatState

    question = view["question"].to(dict)
    state = question["state"].to(str)
    text = question["question"].to(str)
    answer_id = _field("iu-answer-", call_id)
    answering = rx.el.div(
        rx.el.div(
            rx.foreach(
                question["choices"].to(list[str]),
                lambda choice: text_button(
                    choice,
                    "question-choice",
                    ChatState.answer_question(message_id, call_id, choice),
                ),
            ),
            class_name="iu-pause-actions",
        ),
        _text_row(
            answer_id,
            question["placeholder"].to(str),
            "question-answer",
            text_button(
                question["submit"].to(str),
                "question-submit",
                ChatState.answer_question(message_id, call_id, _value_of(answer_id)),
                primary=True,
            ),
        ),
        class_name="iu-pause-body",
    )
    return _pause_card(
        "question",
        state,
        text,
        rx.el.p(text, class_name="iu-pause-lead", custom_attrs={"data-testid": "question-text"}),
        rx.cond((state == "waiting") & view["canDecide"].to(bool), answering),
        _settled_line(question["answered"].to(str), "question-answered"),
    )


def pause_block(
    message_id: rx.Var[str], call_id: rx.Var[str], view: ObjectVar[dict[str, Any]]
) -> rx.Component:
    """The call's approval or question, when it has one (inside the card memo)."""
    return rx.fragment(
        rx.cond(
            view["approval"].to(dict)["state"].to(str) != "",
            _approval(message_id, call_id, view),
        ),
        rx.cond(
            view["question"].to(dict)["state"].to(str) != "",
            _question(message_id, call_id, view),
        ),
    )
