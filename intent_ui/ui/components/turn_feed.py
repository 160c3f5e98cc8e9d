"""What fills the page's turn store: the open conversation's stored turns, read once, and
the live one's stream of keyed patches (docs/turns.md), with the polite live region that
says what the live turn is doing."""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.components.turn_hooks import store_hook

__all__ = ["TurnFeed", "live_region"]

TURN_STORE = "$/public/turn_store.js"
"""`assets/turn_store.js`: the page's turn store and its feed."""


class TurnFeed(rx.Component):
    """Fetches the snapshots of the turns `ids` (comma-separated message ids) it does not
    hold and follows `live`'s stream; everything again when `lang` or `conversation`
    changes. Renders nothing. `on_expired` asks the state for a new `token`; `decide`
    lets the page's approval and question cards take answers."""

    library = TURN_STORE
    tag = "TurnFeed"

    conversation: rx.Var[str]
    token: rx.Var[str]
    lang: rx.Var[str]
    ids: rx.Var[str]
    live: rx.Var[str]
    # The reader may answer approvals and questions (the owner's chat page).
    decide: rx.Var[bool]
    # Reflex's own event props are declared this way; its stubs do not type the spec.
    on_expired: rx.EventHandler[rx.event.no_args_event_spec]  # type: ignore[type-arg,valid-type]


@rx.memo
def live_region(message_id: rx.Var[str]) -> rx.Component:
    """What the live turn is doing, for screen readers: a call started, a call settled."""
    said = store_hook("iu_announcement", "useAnnouncement", message_id).to(str)
    return rx.el.div(
        said,
        class_name="iu-sr-only",
        custom_attrs={"aria-live": "polite", "data-testid": "live-region"},
    )
