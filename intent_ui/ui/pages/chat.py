"""The chat page at `/`: conversations, the message list, the composer."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ArrayVar, ObjectVar
from reflex_base.event import EventCallback

from intent_ui.store.conversations import SEARCH_MAX_CHARS
from intent_ui.ui.components.copy import copy_labels, copy_reply_button
from intent_ui.ui.components.markdown import reply_markdown
from intent_ui.ui.components.shortcuts import shortcuts_button, shortcuts_dialog
from intent_ui.ui.components.theme import ThemeFollower
from intent_ui.ui.components.tool_call import group_or_card, live_title_feed, timeline
from intent_ui.ui.pages.login import account, auth_note
from intent_ui.ui.state import ChatState, LiveState
from intent_ui.ui.viewmodels import MessageVM, PartVM


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
        rx.el.button(
            rx.icon("pencil", size=13),
            type="button",
            class_name="iu-btn",
            style={"padding": "4px 6px"},
            on_click=ChatState.start_rename(conv["id"]),
            custom_attrs={
                "aria-label": ChatState.t["ui.rename"],
                "data-testid": "conversation-rename",
            },
        ),
        rx.el.button(
            rx.icon("trash-2", size=13),
            type="button",
            class_name="iu-btn iu-btn-danger",
            style={"padding": "4px 6px"},
            on_click=ChatState.delete_chat(conv["id"]),
            custom_attrs={
                "aria-label": ChatState.t["ui.delete"],
                "data-testid": "conversation-delete",
            },
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


@rx.memo
def reply_text(text: rx.Var[str]) -> rx.Component:
    """Reply text as markdown, memoized: a push that changes only a label elsewhere in
    the turn does not parse the reply again."""
    return reply_markdown(text)


def _part(part: ObjectVar[PartVM], slotted: bool = False) -> rx.Component:
    return rx.cond(
        part.kind == "text",
        reply_text(text=part.text),
        group_or_card(part.group, ChatState.t, ChatState.density, slotted),
    )


def _failure(message: ObjectVar[MessageVM]) -> rx.Component:
    """A failed turn says what happened, what to do and the error as recorded (never a
    traceback: core/failures.py); the conversation's last turn offers Retry, which asks
    its question again as a new turn."""
    return rx.el.div(
        rx.el.p(message.failure, class_name="iu-error-note", style=_FAILURE_LINE),
        rx.el.p(message.failure_hint, style={"margin": "4px 0 0"}),
        rx.cond(
            message.error != "",
            rx.el.p(
                ChatState.t["ui.error_detail"] + ": " + message.error,
                style={"margin": "4px 0 0", "color": "var(--iu-muted)", "fontSize": "0.85em"},
            ),
        ),
        rx.cond(
            message.id == ChatState.retry_id,
            rx.el.button(
                rx.icon("rotate-ccw", size=14, aria_hidden="true"),
                ChatState.t["ui.retry"],
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


def _assistant(
    message: ObjectVar[MessageVM], parts: ArrayVar[list[PartVM]] | None = None
) -> rx.Component:
    """An assistant turn; `parts` for the live turn, whose settled head is a var of its
    own and whose current round's cards travel in live slots (`each_card`). One list, so
    a part moving from one var to the other keeps its place, and nothing is mounted
    again."""
    slotted = parts is not None
    parts = message.parts if parts is None else parts
    return rx.el.div(
        # The "why" of the turn, above its tool groups: the goal the model chose.
        rx.cond(
            message.goal != "",
            rx.el.div(
                rx.icon("target", size=14, aria_hidden="true"),
                rx.el.span(ChatState.t["ui.goal"], class_name="iu-goal-kicker"),
                rx.el.span(message.goal, custom_attrs={"data-testid": "goal-line"}),
                class_name="iu-goal",
            ),
        ),
        rx.cond(message.timeline, timeline(parts, ChatState.t, slotted)),
        rx.foreach(parts, lambda part: _part(part, slotted)),
        rx.cond(message.failure != "", _failure(message)),
        # A finished turn's actions; the live turn gets them when it ends.
        rx.fragment() if slotted else _reply_actions(message),
        class_name="iu-assistant",
        custom_attrs={
            "data-testid": "assistant-message",
            "data-message-id": message.id,
            "data-status": message.status,
            "data-density": ChatState.density,
        },
    )


def _reply_actions(message: ObjectVar[MessageVM]) -> rx.Component:
    return rx.el.div(copy_reply_button(message.parts), class_name="iu-reply-actions")


def _message(message: ObjectVar[MessageVM]) -> rx.Component:
    return rx.cond(
        message.role == "user",
        rx.el.div(message.text, class_name="iu-user", custom_attrs={"data-testid": "user-message"}),
        _assistant(message),
    )


def message_list() -> rx.Component:
    return rx.el.div(
        rx.el.div(
            rx.foreach(ChatState.messages, _message),
            live_title_feed(),
            rx.cond(
                LiveState.live_active,
                _assistant(LiveState.live, LiveState.live_head + LiveState.live.parts),
            ),
            class_name="iu-thread",
        ),
        id="iu-messages",
        class_name="iu-messages",
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
                rx.el.button(
                    ChatState.t["ui.stop"],
                    type="button",
                    class_name="iu-btn iu-btn-danger",
                    on_click=ChatState.stop,
                    custom_attrs={"data-testid": "stop-button"},
                ),
                rx.el.button(
                    ChatState.t["ui.send"],
                    type="submit",
                    class_name="iu-btn iu-btn-primary",
                    custom_attrs={"data-testid": "send-button"},
                ),
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
        copy_labels(ChatState.t),
        shortcuts_dialog(ChatState.t),
        sidebar(),
        # Covers the chat while the drawer is open; a tap on it closes the drawer.
        rx.el.div(class_name="iu-scrim", custom_attrs={"aria-hidden": "true"}),
        rx.el.main(
            topbar(),
            auth_note(),
            message_list(),
            rx.cond(
                ChatState.error != "",
                rx.el.div(
                    ChatState.error,
                    class_name="iu-error-note",
                    role="alert",
                    style={"padding": "0 24px"},
                ),
            ),
            composer(),
            rx.el.div(
                LiveState.announcement,
                class_name="iu-sr-only",
                custom_attrs={"aria-live": "polite", "data-testid": "live-region"},
            ),
            class_name="iu-main",
        ),
        class_name="iu-shell",
        custom_attrs={"data-testid": "chat-page"},
    )
