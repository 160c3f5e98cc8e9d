"""The shared page at `/share/{id}`: a conversation read through its read-only link.

The same message and turn components as the chat (`pages/chat.py`), filled by the same
turn store through a share token, so a shared turn renders as its owner sees it, live
too. Nothing here acts on the conversation: no composer, no Stop, no Retry, no sidebar.
Cards are shown at the intents density, as lines that do not open: a share token gets
no call's arguments or result (`ui.turn_routes`).
"""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.components.copy import copy_labels
from intent_ui.ui.components.turn_feed import TurnFeed, live_region
from intent_ui.ui.components.turn_hooks import text_view
from intent_ui.ui.pages.chat import message_item, message_thread, turn_ids
from intent_ui.ui.shared_state import SharedState

__all__ = ["shared_page"]

SHARED_DENSITY = "intents"
"""Cards as lines with no way to open them: what a read-only viewer may see of a call."""


@rx.memo
def stream_revoked(message_id: rx.Var[str]) -> rx.Component:
    """The live turn's stream ended because the link was revoked (the turn store marks
    it): ask the state at once, which then forgets the conversation."""
    revoked = text_view(message_id, rx.Var.create("revoked")).to(bool)
    return rx.cond(
        revoked,
        rx.el.span(hidden=True, on_mount=SharedState.renew_stream_token),
    )


def _thread() -> rx.Component:
    return message_thread(
        SharedState.messages,
        lambda message: message_item(
            message,
            density=rx.Var.create(SHARED_DENSITY),
            labels=SharedState.t,
            retry_id=rx.Var.create(""),
        ),
        TurnFeed.create(
            conversation=SharedState.link,
            token=SharedState.stream_token,
            lang=SharedState.lang,
            ids=turn_ids(SharedState.messages),
            live=SharedState.live_id,
            on_expired=SharedState.renew_stream_token,
        ),
        stream_revoked(message_id=SharedState.live_id),
    )


def _notice() -> rx.Component:
    return rx.el.div(
        rx.icon("eye", size=16, aria_hidden="true"),
        rx.el.span(SharedState.t["ui.shared_notice"]),
        class_name="iu-topbar",
        role="note",
        custom_attrs={"data-testid": "share-notice"},
    )


def _revoked() -> rx.Component:
    return rx.el.div(
        rx.el.p(SharedState.t["ui.share_revoked"], style={"margin": "0"}),
        role="alert",
        class_name="iu-error-note",
        style={"padding": "24px"},
        custom_attrs={"data-testid": "share-revoked"},
    )


def shared_page() -> rx.Component:
    return rx.el.div(
        rx.el.link(rel="stylesheet", href="/everyday.css"),
        rx.el.link(rel="stylesheet", href="/pauses.css"),
        rx.el.link(rel="stylesheet", href="/rewind.css"),
        copy_labels(SharedState.t),
        rx.el.main(
            rx.match(
                SharedState.status,
                (
                    "shared",
                    rx.fragment(
                        _notice(),
                        _thread(),
                        live_region(message_id=SharedState.live_id),
                    ),
                ),
                ("revoked", _revoked()),
                rx.fragment(),
            ),
            class_name="iu-main",
        ),
        class_name="iu-shell",
        custom_attrs={"data-testid": "shared-page"},
    )
