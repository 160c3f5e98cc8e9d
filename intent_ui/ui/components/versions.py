"""A message's versions on the chat page (a conversation is a tree and the page shows one
path of it: `intent_ui.store.conversations`).

- Beside a finished reply: Regenerate (the conversation's last turn, when it did not
  fail: a failed one offers Retry) asks the question again, as a new version of the
  reply; Continue (the last turn, when the user stopped it) goes on from where it
  stopped, in a turn of its own below it.
- Under a sent message: Edit opens it in place (Enter or Save sends it, Shift+Enter adds
  a line, Escape or Cancel leaves it as it was and puts the focus back on its Edit
  button; `assets/intent_ui.js`); sending makes a new version of the message, answered
  by a new turn.
- On a message with versions: the previous and next buttons with "2 / 3" between them
  show another version, and the branch that followed it.

None of them is offered while a turn runs (the flips stay, disabled); the shared page,
which is read-only, is handed no `VersionActions` and shows none of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx
from reflex.vars import ObjectVar
from reflex_base.event import EventType

from intent_ui.ui.chat_state import ChatState, MessageRow
from intent_ui.ui.components.buttons import text_button

__all__ = ["VersionActions", "reply_version_actions", "user_message", "version_switch"]


@dataclass(frozen=True)
class VersionActions:
    """What a page that may change its conversation hands its messages: the message being
    edited, whether nothing runs, and the turns offering Regenerate and Continue ("")."""

    editing: rx.Var[str]
    idle: rx.Var[bool]
    regenerate_id: rx.Var[str]
    continue_id: rx.Var[str]


def _icon_button(
    icon: str,
    label: rx.Var[str],
    on_click: EventType[()],
    testid: str,
    disabled: rx.Var[bool] | bool = False,
) -> rx.Component:
    """A small button showing only an icon; its name is `label` (also its tooltip)."""
    return rx.el.button(
        rx.icon(icon, size=14, aria_hidden="true"),
        type="button",
        class_name="iu-action",
        title=label,
        disabled=disabled,
        on_click=on_click,
        custom_attrs={"data-testid": testid, "aria-label": label},
    )


def version_switch(
    labels: ObjectVar[dict[str, str]],
    version: rx.Var[int],
    versions: rx.Var[int],
    previous_id: rx.Var[str],
    next_id: rx.Var[str],
    idle: rx.Var[bool],
) -> rx.Component:
    """‹ 2 / 3 ›, on a message that has other versions."""
    return rx.cond(
        versions.to(int) > 1,
        rx.el.div(
            _icon_button(
                "chevron-left",
                labels["ui.version_previous"],
                ChatState.show_version(previous_id),
                "branch-prev",
                disabled=(previous_id == "") | ~idle,
            ),
            rx.el.span(
                version.to_string() + " / " + versions.to_string(),
                class_name="iu-versions-at",
                custom_attrs={"data-testid": "branch-position"},
            ),
            _icon_button(
                "chevron-right",
                labels["ui.version_next"],
                ChatState.show_version(next_id),
                "branch-next",
                disabled=(next_id == "") | ~idle,
            ),
            role="group",
            class_name="iu-versions",
            custom_attrs={"aria-label": labels["ui.versions"]},
        ),
    )


def reply_version_actions(
    labels: ObjectVar[dict[str, str]],
    message_id: rx.Var[str],
    offers_regenerate: rx.Var[bool],
    offers_continue: rx.Var[bool],
) -> list[rx.Component]:
    """Regenerate and Continue, for the reply's actions row."""
    return [
        rx.cond(
            offers_regenerate,
            _icon_button(
                "refresh-cw",
                labels["ui.regenerate"],
                ChatState.regenerate(message_id),
                "regenerate",
            ),
        ),
        rx.cond(
            offers_continue,
            rx.el.button(
                rx.icon("play", size=14, aria_hidden="true"),
                labels["ui.continue"],
                type="button",
                class_name="iu-btn iu-continue",
                on_click=ChatState.continue_reply(message_id),
                custom_attrs={"data-testid": "continue-button"},
            ),
        ),
    ]


def user_message(
    message: ObjectVar[MessageRow],
    labels: ObjectVar[dict[str, str]],
    actions: VersionActions | None,
) -> rx.Component:
    """A sent message; with `actions`, also its Edit button and versions, or the box it
    is edited in."""
    bubble = rx.el.div(
        message.text, class_name="iu-user", custom_attrs={"data-testid": "user-message"}
    )
    if actions is None:
        return bubble
    return rx.cond(
        actions.editing == message.id,
        _edit_form(message, labels),
        rx.el.div(
            bubble,
            rx.el.div(
                _icon_button(
                    "pencil",
                    labels["ui.edit_message"],
                    ChatState.start_edit(message.id),
                    "edit-message",
                    disabled=~actions.idle,
                ),
                version_switch(
                    labels,
                    message.version,
                    message.versions,
                    message.previous_version,
                    message.next_version,
                    actions.idle,
                ),
                class_name="iu-user-actions",
            ),
            class_name="iu-user-turn",
            custom_attrs={"data-message-id": message.id},
        ),
    )


def _edit_form(message: ObjectVar[MessageRow], labels: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.el.form(
        rx.el.textarea(
            name="message",
            default_value=message.text,
            auto_focus=True,
            rows=3,
            custom_attrs={
                "data-testid": "edit-message-input",
                "aria-label": labels["ui.edit_label"],
            },
        ),
        rx.el.div(
            text_button(labels["ui.edit_cancel"], "edit-cancel", ChatState.cancel_edit),
            text_button(labels["ui.edit_save"], "edit-save", primary=True, submit=True),
            class_name="iu-edit-buttons",
        ),
        on_submit=ChatState.save_edit,
        class_name="iu-edit",
        key=message.id,
        custom_attrs={"data-testid": "edit-form", "data-message-id": message.id},
    )
