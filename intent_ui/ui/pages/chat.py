"""The chat page at `/`: conversations, the message list, the composer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import reflex as rx
from reflex.config import get_config
from reflex.vars import ObjectVar
from reflex_base.event import EventCallback

from intent_ui.store.conversations import SEARCH_MAX_CHARS
from intent_ui.ui.chat_state import ChatState, MessageRow
from intent_ui.ui.components.buttons import text_button
from intent_ui.ui.components.compaction import compaction_divider
from intent_ui.ui.components.copy import copy_labels, copy_reply_button
from intent_ui.ui.components.markdown import reply_markdown
from intent_ui.ui.components.notes import error_note
from intent_ui.ui.components.rewind import rewind_note, rewind_panel
from intent_ui.ui.components.shortcuts import shortcuts_button, shortcuts_dialog
from intent_ui.ui.components.theme import ThemeFollower
from intent_ui.ui.components.tool_call import timeline, tool_group
from intent_ui.ui.components.turn_feed import TurnFeed, live_region
from intent_ui.ui.components.turn_hooks import text_view, turn_view
from intent_ui.ui.components.versions import (
    VersionActions,
    reply_version_actions,
    user_message,
    version_switch,
)
from intent_ui.ui.pages.login import account, auth_note


def _conversation_action(
    icon: str, label: rx.Var[str], on_click: Any, action: str, *, danger: bool = False
) -> rx.Component:
    """A conversation row's small icon button (`conversation-<action>`), named by `label`."""
    return rx.el.button(
        rx.icon(icon, size=13),
        type="button",
        class_name="iu-btn iu-btn-danger" if danger else "iu-btn",
        style={"padding": "4px 6px"},
        on_click=on_click,
        custom_attrs={"aria-label": label, "data-testid": f"conversation-{action}"},
    )


def _conversation_row(conv: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.el.div(
        rx.cond(
            ChatState.renaming == conv["id"],
            rx.el.form(
                rx.el.input(
                    name="title",
                    default_value=conv["title"],
                    auto_focus=True,
                    class_name="iu-conv-title",
                    custom_attrs={"data-testid": "conversation-rename-input"},
                ),
                on_submit=ChatState.rename_chat,
                reset_on_submit=True,
                style={"flex": "1"},
            ),
            rx.el.button(
                conv["title"],
                type="button",
                title=conv["title"],
                class_name="iu-conv-title",
                on_click=ChatState.select_chat(conv["id"]),
                custom_attrs={"data-testid": "conversation-title"},
            ),
        ),
        _conversation_action(
            "pencil", ChatState.t["ui.rename"], ChatState.start_rename(conv["id"]), "rename"
        ),
        _conversation_action(
            "trash-2",
            ChatState.t["ui.delete"],
            ChatState.delete_chat(conv["id"]),
            "delete",
            danger=True,
        ),
        class_name="iu-conv-row",
        custom_attrs={
            "data-testid": "conversation-row",
            "data-conversation-id": conv["id"],
            "data-active": (conv["id"] == ChatState.conversation_id).to_string(),
        },
    )


def _conversation_search() -> rx.Component:
    """Filters the list below to conversations whose title or messages contain the
    text; sent to the server once typing pauses."""
    return rx.fragment(
        rx.debounce_input(
            rx.el.input(
                type="search",
                value=ChatState.conversation_query,
                on_change=ChatState.search_chats,
                placeholder=ChatState.t["ui.search"],
                max_length=SEARCH_MAX_CHARS,
                class_name="iu-search",
                custom_attrs={
                    "data-testid": "conversation-search",
                    "aria-label": ChatState.t["ui.search"],
                },
            ),
            debounce_timeout=250,
        ),
        rx.el.p(
            rx.cond(
                (ChatState.conversation_query.strip() != "")
                & (ChatState.conversations.length() == 0),
                ChatState.t["ui.search_none"],
                "",
            ),
            role="status",
            class_name="iu-conv-none",
        ),
    )


def sidebar() -> rx.Component:
    return rx.el.aside(
        rx.el.div(
            rx.el.button(
                rx.icon("plus", size=14),
                ChatState.t["ui.new_chat"],
                type="button",
                class_name="iu-btn",
                style={"display": "flex", "gap": "6px", "alignItems": "center", "flex": "1"},
                on_click=ChatState.new_chat,
                custom_attrs={"data-testid": "new-chat"},
            ),
            # The drawer's own way out (narrow screens only), for those who cannot
            # see the scrim or press Escape.
            rx.el.button(
                rx.icon("x", size=16, aria_hidden="true"),
                type="button",
                class_name="iu-btn iu-menu-close",
                title=ChatState.t["ui.menu_close"],
                custom_attrs={"aria-label": ChatState.t["ui.menu_close"]},
            ),
            class_name="iu-sidebar-head",
        ),
        _conversation_search(),
        rx.el.nav(
            rx.foreach(ChatState.conversations, _conversation_row), class_name="iu-conv-list"
        ),
        rx.el.a(ChatState.t["ui.agents"], href="/agents", class_name="iu-btn"),
        rx.el.a(
            ChatState.t["ui.intents"],
            href="/intents",
            class_name="iu-btn",
            custom_attrs={"data-testid": "intents-link"},
        ),
        shortcuts_button(ChatState.t),
        id="iu-sidebar",
        class_name="iu-sidebar",
    )


def menu_toggle() -> rx.Component:
    """Opens and closes the sidebar, which is a drawer on a narrow screen (shown there
    only; assets/intent_ui.js keeps `aria-expanded` and the drawer in step)."""
    return rx.el.button(
        rx.icon("menu", size=18, aria_hidden="true"),
        type="button",
        class_name="iu-btn iu-menu-toggle",
        title=ChatState.t["ui.menu"],
        custom_attrs={
            "data-testid": "menu-toggle",
            "aria-label": ChatState.t["ui.menu"],
            "aria-controls": "iu-sidebar",
            "aria-expanded": "false",
        },
    )


def theme_select() -> rx.Component:
    """Light, dark, or the system's. Until the user's own arrives with the page, it shows
    the mode the browser remembers."""
    return rx.el.select(
        rx.el.option(ChatState.t["ui.theme_light"], value="light"),
        rx.el.option(ChatState.t["ui.theme_dark"], value="dark"),
        rx.el.option(ChatState.t["ui.theme_system"], value="system"),
        value=rx.cond(ChatState.theme != "", ChatState.theme, rx.color_mode),
        on_change=ChatState.set_theme,
        custom_attrs={"data-testid": "theme-select", "aria-label": ChatState.t["ui.theme"]},
    )


def _select(
    value: rx.Var[str],
    options: rx.Var[list[str]],
    on_change: EventCallback[str],
    testid: str,
    label: str,
) -> rx.Component:
    return rx.el.select(
        rx.foreach(options, lambda o: rx.el.option(o, value=o)),
        value=value,
        on_change=on_change,
        custom_attrs={"data-testid": testid, "aria-label": label},
    )


def topbar() -> rx.Component:
    return rx.el.header(
        menu_toggle(),
        _select(
            ChatState.endpoint,
            ChatState.endpoints,
            ChatState.set_endpoint,
            "endpoint-select",
            "Endpoint",
        ),
        _select(ChatState.model, ChatState.models, ChatState.set_model, "model-select", "Model"),
        rx.el.select(
            rx.foreach(ChatState.agents, lambda a: rx.el.option(a["name"], value=a["id"])),
            value=ChatState.agent_id,
            on_change=ChatState.set_agent,
            custom_attrs={"data-testid": "agent-select", "aria-label": "Agent"},
        ),
        rx.el.div(class_name="iu-topbar-gap", style={"flex": "1"}),
        share_control(),
        rx.el.select(
            rx.el.option(ChatState.t["ui.density_full"], value="full"),
            rx.el.option(ChatState.t["ui.density_intents"], value="intents"),
            rx.el.option(ChatState.t["ui.density_header"], value="header"),
            value=ChatState.density,
            on_change=ChatState.set_density,
            custom_attrs={"data-testid": "density-select", "aria-label": ChatState.t["ui.density"]},
        ),
        theme_select(),
        rx.el.select(
            rx.el.option("Auto", value=""),
            rx.foreach(ChatState.languages, lambda code: rx.el.option(code, value=code)),
            value=ChatState.lang_override,
            on_change=ChatState.set_lang,
            custom_attrs={
                "data-testid": "language-select",
                "aria-label": ChatState.t["ui.language"],
            },
        ),
        account(),
        class_name="iu-topbar",
    )


def share_url(share_id: rx.Var[str]) -> rx.Var[str]:
    """The absolute address of the read-only link `share_id`, on the origin the page was
    opened at (the server cannot know it behind a proxy)."""
    path = json.dumps(get_config().prepend_frontend_path("/share/"))
    origin = "(typeof window === 'undefined' ? '' : window.location.origin)"
    return rx.Var(
        _js_expr=f"({origin} + {path} + encodeURIComponent({share_id!s}))",
        _var_type=str,
        _var_data=share_id._get_all_var_data(),
    )


def share_control() -> rx.Component:
    """The open conversation's read-only link: Share makes one; while it lives, its
    address (to copy) and Revoke, which ends it for everyone holding it."""
    return rx.cond(
        ChatState.conversation_id != "",
        rx.el.div(
            rx.cond(
                ChatState.share_id == "",
                rx.el.button(
                    rx.icon("link", size=14, aria_hidden="true"),
                    ChatState.t["ui.share"],
                    type="button",
                    class_name="iu-btn",
                    style={"display": "inline-flex", "gap": "6px", "alignItems": "center"},
                    on_click=ChatState.create_share,
                    custom_attrs={"data-testid": "share-create"},
                ),
                rx.fragment(
                    rx.el.input(
                        value=share_url(ChatState.share_id),
                        read_only=True,
                        type="url",
                        class_name="iu-share-url",
                        style={"width": "18em", "maxWidth": "40vw", "font": "inherit"},
                        custom_attrs={
                            "data-testid": "share-url",
                            "aria-label": ChatState.t["ui.share_url"],
                        },
                    ),
                    text_button(
                        ChatState.t["ui.share_revoke"],
                        "share-revoke",
                        ChatState.revoke_share,
                        danger=True,
                    ),
                ),
            ),
            class_name="iu-share",
            style={"display": "flex", "gap": "6px", "alignItems": "center"},
        ),
    )


@rx.memo
def reply_part(message_id: rx.Var[str], part_key: rx.Var[str]) -> rx.Component:
    """Reply text as markdown, read from the turn store by key: a frame that changes a
    label elsewhere in the turn does not parse the reply again."""
    return reply_markdown(text_view(message_id, part_key))


def _failure(
    labels: ObjectVar[dict[str, str]], turn: ObjectVar[dict[str, Any]], offers_retry: rx.Var[bool]
) -> rx.Component:
    """A failed turn says what happened, what to do and the error as recorded (never a
    traceback: core/failures.py); the conversation's last turn offers Retry, which asks
    its question again as a new turn."""
    error = turn["error"].to(str)
    return rx.el.div(
        rx.el.p(turn["failure"].to(str), class_name="iu-error-note", style=_FAILURE_LINE),
        rx.el.p(turn["failure_hint"].to(str), style={"margin": "4px 0 0"}),
        rx.cond(
            error != "",
            rx.el.p(
                labels["ui.error_detail"] + ": " + error,
                style={"margin": "4px 0 0", "color": "var(--iu-muted)", "fontSize": "0.85em"},
            ),
        ),
        rx.cond(
            offers_retry,
            rx.el.button(
                rx.icon("rotate-ccw", size=14, aria_hidden="true"),
                labels["ui.retry"],
                type="button",
                class_name="iu-btn",
                style={
                    "marginTop": "8px",
                    "display": "inline-flex",
                    "gap": "6px",
                    "alignItems": "center",
                },
                on_click=ChatState.retry,
                custom_attrs={"data-testid": "chat-retry"},
            ),
        ),
        role="alert",
        style=_FAILURE_BOX,
        custom_attrs={"data-testid": "chat-error"},
    )


_FAILURE_LINE = {"fontWeight": "600", "margin": "0", "fontSize": "1em"}
_FAILURE_BOX = {
    "border": "1px solid var(--iu-error)",
    "borderRadius": "8px",
    "padding": "10px 12px",
    "marginTop": "8px",
    "background": "var(--iu-panel)",
    "color": "var(--iu-text)",
}


@rx.memo
def assistant_turn(
    message_id: rx.Var[str],
    listed_status: rx.Var[str],
    density: rx.Var[str],
    labels_var: rx.Var[dict[str, str]],
    offers_retry: rx.Var[bool],
    offers_regenerate: rx.Var[bool],
    offers_continue: rx.Var[bool],
    shows_versions: rx.Var[bool],
    idle: rx.Var[bool],
    version: rx.Var[int],
    versions: rx.Var[int],
    previous_version: rx.Var[str],
    next_version: rx.Var[str],
) -> rx.Component:
    """An assistant turn, live or stored: both read the page's turn store
    (docs/turns.md). While the conversation lists it as running, the status is the
    stream's; once listed as ended, the list's. Its versions and their actions show
    where the page offers them (`shows_versions`; `components/versions.py`)."""
    labels = _labels(labels_var)
    view = turn_view(message_id)
    turn = view["turn"].to(dict)
    parts = turn["parts"].to(list[dict[str, str]])
    streamed = turn["status"].to(str)
    status = rx.cond(
        listed_status == "streaming", rx.cond(streamed != "", streamed, "streaming"), listed_status
    )
    goal = turn["goal"].to(str)
    return rx.el.div(
        # The "why" of the turn, above its tool groups: the goal the model chose.
        rx.cond(
            goal != "",
            rx.el.div(
                rx.icon("target", size=14, aria_hidden="true"),
                rx.el.span(labels["ui.goal"], class_name="iu-goal-kicker"),
                rx.el.span(goal, custom_attrs={"data-testid": "goal-line"}),
                class_name="iu-goal",
            ),
        ),
        rx.cond(turn["timeline"].to(bool), timeline(message_id, parts, labels["ui.timeline"])),
        rx.foreach(
            parts,
            lambda part: rx.cond(
                part["kind"] == "text",
                reply_part(message_id=message_id, part_key=part["key"], key=part["key"]),
                tool_group(
                    message_id=message_id,
                    part_key=part["key"],
                    density=density,
                    arguments_heading=labels["ui.arguments"],
                    result_heading=labels["ui.result"],
                    key=part["key"],
                ),
            ),
        ),
        rx.cond(turn["failure"].to(str) != "", _failure(labels, turn, offers_retry)),
        # A finished turn's actions; the live turn gets them when it ends.
        rx.cond(
            status != "streaming",
            rx.el.div(
                copy_reply_button(view["reply"].to(str)),
                *reply_version_actions(labels, message_id, offers_regenerate, offers_continue),
                rx.cond(
                    shows_versions,
                    version_switch(labels, version, versions, previous_version, next_version, idle),
                ),
                class_name="iu-reply-actions",
            ),
        ),
        class_name="iu-assistant",
        custom_attrs={
            "data-testid": "assistant-message",
            "data-message-id": message_id,
            "data-status": status,
            "data-density": density,
        },
    )


def message_item(
    message: ObjectVar[MessageRow],
    *,
    density: rx.Var[str],
    labels: rx.Var[dict[str, str]],
    retry_id: rx.Var[str],
    versions: VersionActions | None = None,
) -> rx.Component:
    """One listed message, of whichever page's state hands in its density, labels and
    the turn offering Retry ("" for none), and when it may change the conversation, what
    its messages' versions need (none: read-only)."""
    offers = versions or _READ_ONLY
    return rx.cond(
        message.role == "user",
        user_message(message, _labels(labels), versions),
        rx.cond(
            message.role == "compaction",
            compaction_divider(message_id=message.id, lines=message.text, labels=_labels(labels)),
            rx.cond(
                message.role == "rewind",
                rewind_note(message.id, message.text),
                assistant_turn(
                    message_id=message.id,
                    listed_status=message.status,
                    density=density,
                    labels_var=labels,
                    offers_retry=message.id == retry_id,
                    offers_regenerate=message.id == offers.regenerate_id,
                    offers_continue=message.id == offers.continue_id,
                    shows_versions=rx.Var.create(versions is not None),
                    idle=offers.idle,
                    version=message.version,
                    versions=message.versions,
                    previous_version=message.previous_version,
                    next_version=message.next_version,
                    key=message.id,
                ),
            ),
        ),
    )


def _labels(labels: rx.Var[dict[str, str]]) -> ObjectVar[dict[str, str]]:
    """A memo's translated labels, as the object var they are."""
    assert isinstance(labels, ObjectVar)  # a dict-typed var is one
    return labels


_READ_ONLY = VersionActions(
    editing=rx.Var.create(""),
    idle=rx.Var.create(False),
    regenerate_id=rx.Var.create(""),
    continue_id=rx.Var.create(""),
)


def _message(message: ObjectVar[MessageRow]) -> rx.Component:
    return message_item(
        message,
        density=ChatState.density,
        labels=ChatState.t,
        retry_id=ChatState.retry_id,
        versions=VersionActions(
            editing=ChatState.editing,
            idle=~ChatState.running,
            regenerate_id=ChatState.regenerate_id,
            continue_id=ChatState.continue_id,
        ),
    )


def turn_ids(messages: rx.Var[list[MessageRow]]) -> rx.Var[str]:
    """The open conversation's assistant turns, as the turn store's feed takes them."""
    return rx.Var(
        _js_expr=(f"{messages!s}.filter((m) => m.role === 'assistant').map((m) => m.id).join(',')"),
        _var_type=str,
        _var_data=messages._get_all_var_data(),
    )


def message_thread(
    messages: rx.Var[list[MessageRow]],
    item: Callable[[ObjectVar[MessageRow]], rx.Component],
    feed: rx.Component,
    *also: rx.Component,
) -> rx.Component:
    """A conversation's messages, each rendered by `item`, with the `TurnFeed` that fills
    the page's turn store for them (and whatever else the page needs beside them)."""
    return rx.el.div(
        rx.el.div(rx.foreach(messages, item), feed, *also, class_name="iu-thread"),
        id="iu-messages",
        class_name="iu-messages",
    )


def message_list() -> rx.Component:
    return message_thread(
        ChatState.messages,
        _message,
        TurnFeed.create(
            conversation=ChatState.conversation_id,
            token=ChatState.stream_token,
            lang=ChatState.lang,
            ids=turn_ids(ChatState.messages),
            live=ChatState.live_id,
            on_expired=ChatState.renew_stream_token,
            # The owner's page: its turns' approvals and questions take answers here.
            decide=True,
        ),
    )


def composer() -> rx.Component:
    return rx.el.div(
        rx.el.form(
            rx.el.textarea(
                name="message",
                placeholder=ChatState.t["ui.placeholder"],
                rows=1,
                custom_attrs={
                    "data-testid": "chat-input",
                    "aria-label": ChatState.t["ui.placeholder"],
                },
            ),
            rx.cond(
                ChatState.running,
                text_button(ChatState.t["ui.stop"], "stop-button", ChatState.stop, danger=True),
                text_button(ChatState.t["ui.send"], "send-button", primary=True, submit=True),
            ),
            on_submit=ChatState.send,
            reset_on_submit=True,
        ),
        class_name="iu-composer",
    )


def chat_page() -> rx.Component:
    return rx.el.div(
        ThemeFollower.create(theme=ChatState.theme),
        rx.el.link(rel="stylesheet", href="/everyday.css"),
        rx.el.link(rel="stylesheet", href="/pauses.css"),
        rx.el.link(rel="stylesheet", href="/rewind.css"),
        copy_labels(ChatState.t),
        shortcuts_dialog(ChatState.t),
        sidebar(),
        # Covers the chat while the drawer is open; a tap on it closes the drawer.
        rx.el.div(class_name="iu-scrim", custom_attrs={"aria-hidden": "true"}),
        rx.el.main(
            topbar(),
            auth_note(),
            message_list(),
            error_note(ChatState.error, style={"padding": "0 24px"}),
            rewind_panel(),
            composer(),
            live_region(message_id=ChatState.announced_id),
            class_name="iu-main",
        ),
        class_name="iu-shell",
        custom_attrs={"data-testid": "chat-page"},
    )
