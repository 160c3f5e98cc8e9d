"""A tool-call card, a tool-call group and a turn's call timeline, at each display density
(`intent_ui.core.display`). Their `data-testid` names and `data-state` values are what the
browser tests (`tests/e2e`) select on: keep them. What the labels say: docs/labels.md.

Each is a memoized React component that reads what it shows from the page's turn store
by key (`components/turn_hooks.py`): a card by its call id, a group by its number. A
frame of the turn's stream that changed one card re-renders that card alone, whether the
turn is live or was loaded from the log: both fill the same store. Densities are a
render switch over the same records, so switching one fetches nothing and keeps every
label identical. Opening a card or a group is the page's own business (no round trip);
an opened card fetches its arguments and result.

A call that waits for the reader shows its approval or its question under its line, in
every density (`components/pauses.py`); its group stays open meanwhile, and its
timeline mark says it waits.

A `subagent` call's card has a ticker under its line (`subagent-ticker`: the child's
latest label, running time, calls so far and model), the approvals and questions its
child waits on, and, opened, the child's calls as cards of their own (`child_card`).
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.core.states import CallState
from intent_ui.ui.components.pauses import pause_block
from intent_ui.ui.components.rewind import rewind_button, trace_line
from intent_ui.ui.components.turn_hooks import (
    call_view,
    group_view,
    js_call,
    mark_view,
    subagent_view,
)

STATE_ICONS: dict[CallState, str] = {
    "streaming": "loader",
    "running": "loader",
    "background": "clock",
    "settled": "check",
    "error": "circle-alert",
    "cancelled": "circle-slash",
}

GLYPHS = {"tools": "wrench", "subagents": "users", "questions": "circle-help"}


def elapsed(testid: str, timing: ObjectVar[dict[str, Any]]) -> rx.Component:
    """A running time. While `ticking`, the browser's ticker (`assets/intent_ui.js`)
    writes the time counted from `data-started-at` into the empty span, so no frame is
    needed per tick; a settled one shows the duration fixed on the server. The two are
    separate elements (keys) so React never reconciles one into the other's text."""
    started_at = timing["started_at"].to(str)
    return rx.cond(
        started_at != "",
        rx.cond(
            timing["ticking"],
            rx.el.span(
                key="ticking",
                class_name="iu-elapsed",
                custom_attrs={"data-testid": testid, "data-started-at": started_at},
            ),
            rx.el.span(
                timing["elapsed"].to(str),
                key="settled",
                class_name="iu-elapsed",
                custom_attrs={
                    "data-testid": testid,
                    "data-started-at": started_at,
                    "data-settled-at": timing["settled_at"].to(str),
                },
            ),
        ),
    )


def _state_icon(state: rx.Var[str], live: rx.Var[bool]) -> rx.Component:
    return rx.el.span(
        rx.match(
            state,
            *((name, rx.icon(icon, size=14)) for name, icon in STATE_ICONS.items()),
            rx.icon("wrench", size=14),
        ),
        class_name=rx.cond(live, "iu-icon iu-pulse", "iu-icon"),
        custom_attrs={"aria-hidden": "true"},
    )


def _label(
    testid: str, text: rx.Var[str], title: rx.Var[str], live: rx.Var[bool], key: rx.Var[str]
) -> rx.Component:
    """A label line: the visible (capped) text; the whole text in `title` when capped.
    A new key when the call settles remounts it, so the crossfade plays once."""
    return rx.el.span(
        text,
        key=key,
        title=rx.cond(title != "", title, text),
        class_name=rx.cond(live, "iu-label iu-live", "iu-label iu-settled-label"),
        custom_attrs={"data-testid": testid},
    )


def _chevron(is_open: rx.Var[bool]) -> rx.Component:
    return rx.el.span(
        rx.icon("chevron-down", size=14),
        class_name="iu-chevron",
        custom_attrs={"data-open": is_open.to_string(), "aria-hidden": "true"},
    )


def _card(
    message_id: rx.Var[str],
    call_id: rx.Var[str],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
    *,
    child: bool,
) -> rx.Component:
    """A card's body, for `call_card` and `child_card` (a child's waits show under its
    parent's card, and a child has no child turn of its own)."""
    view = call_view(message_id, call_id)
    card = view["card"].to(dict)
    state = card["state"].to(str)
    live = card["live"].to(bool)
    label = card["label"].to(str)
    title = view["title"].to(str)
    expanded = view["expanded"].to(bool)
    detail = view["detail"].to(dict)
    line = [
        _state_icon(state, live),
        _label("tool-call-label", label, title, live, card["label_key"].to(str)),
    ]
    return rx.el.div(
        rx.el.div(
            rx.cond(
                density == "intents",
                rx.el.div(*line, class_name="iu-card-head iu-card-line"),
                rx.el.button(
                    *line,
                    _chevron(expanded),
                    type="button",
                    class_name="iu-card-head",
                    on_click=js_call("toggleCard", message_id, call_id),
                    custom_attrs={"aria-expanded": expanded.to_string()},
                ),
            ),
            elapsed("call-elapsed", card),
            # A child's calls take no checkpoint: only the turn's own calls rewind.
            *(() if child else (rewind_button(message_id, call_id, label),)),
            class_name="iu-row",
        ),
        *(
            # While it waits, a child's approval or question shows under its parent's card
            # (`child_pause`), never twice on the page; once answered, in its own card.
            (rx.cond(~view["waiting"].to(bool), pause_block(message_id, call_id, view)),)
            if child
            else (
                pause_block(message_id, call_id, view),
                _subagent(
                    message_id, call_id, expanded, density, arguments_heading, result_heading
                ),
            )
        ),
        rx.cond(
            expanded & (density != "intents"),
            rx.el.div(
                rx.el.div(
                    rx.cond(
                        detail["label"].to(str) != "",
                        detail["label"].to(str),
                        rx.cond(title != "", title, label),
                    ),
                    class_name="iu-full-label",
                ),
                trace_line(detail["trace_id"].to(str)),
                rx.el.h4(arguments_heading),
                # Focusable: a long preview scrolls, and the keyboard must reach it.
                rx.el.pre(
                    detail["arguments"].to(str),
                    tab_index=0,
                    custom_attrs={"data-testid": "tool-call-args"},
                ),
                rx.cond(
                    detail["result"].to(str) != "",
                    rx.fragment(
                        rx.el.h4(result_heading),
                        rx.el.pre(
                            detail["result"].to(str),
                            tab_index=0,
                            custom_attrs={"data-testid": "tool-call-result"},
                        ),
                    ),
                ),
                class_name="iu-card-body",
            ),
        ),
        class_name="iu-card",
        custom_attrs={
            "data-testid": "tool-call",
            "data-state": state,
            "data-call-id": call_id,
            "data-waiting": view["waiting"].to(bool).to_string(),
        },
    )


# `call_card` and `child_card` take the same props and share their body (`_card`): two
# memoized components on purpose, since a child's card (inside its parent's) has no
# rewind and no child turn of its own, and its waits show under its parent's card.
@rx.memo
def call_card(
    message_id: rx.Var[str],
    call_id: rx.Var[str],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    """One call. Full and header-only: a one-line button; expanding shows arguments and
    result. Intents: the line alone, no previews. The running time sits beside the line,
    outside the button, so the button's name does not change every tenth of a second."""
    return _card(message_id, call_id, density, arguments_heading, result_heading, child=False)


@rx.memo
def child_card(
    message_id: rx.Var[str],
    call_id: rx.Var[str],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    """One call of a subagent's child turn, inside its parent's opened card."""
    return _card(message_id, call_id, density, arguments_heading, result_heading, child=True)


@rx.memo
def child_pause(message_id: rx.Var[str], call_id: rx.Var[str]) -> rx.Component:
    """A child's approval or question, under its parent's card while it waits."""
    return pause_block(message_id, call_id, call_view(message_id, call_id))


def _ticker(ticker: ObjectVar[dict[str, Any]]) -> rx.Component:
    """The child's latest label · running time · calls so far · model."""
    sep = rx.el.span(" · ", class_name="iu-ticker-sep", custom_attrs={"aria-hidden": "true"})
    return rx.el.div(
        rx.el.span(
            ticker["latest"].to(str),
            class_name="iu-ticker-latest",
            custom_attrs={"data-testid": "subagent-latest"},
        ),
        sep,
        elapsed("subagent-elapsed", ticker),
        sep,
        rx.el.span(ticker["calls"].to(str), custom_attrs={"data-testid": "subagent-calls"}),
        rx.cond(
            ticker["model"].to(str) != "",
            rx.fragment(sep, rx.el.span(ticker["model"].to(str))),
        ),
        class_name=rx.cond(ticker["live"].to(bool), "iu-ticker iu-live", "iu-ticker"),
        custom_attrs={
            "data-testid": "subagent-ticker",
            "data-live": ticker["live"].to(bool).to_string(),
        },
    )


def _subagent(
    message_id: rx.Var[str],
    call_id: rx.Var[str],
    expanded: rx.Var[bool],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    """What a `subagent` call's card adds: its ticker, its child's waits and, opened, the
    child's calls."""
    sub = subagent_view(message_id, call_id)
    ticker = sub["ticker"].to(dict)
    children = sub["children"].to(list[str])
    return rx.cond(
        ticker["name"].to(str) != "",
        rx.fragment(
            _ticker(ticker),
            rx.foreach(
                ticker["waiting"].to(list[str]),
                lambda child: child_pause(message_id=message_id, call_id=child, key=child),
            ),
            rx.cond(
                expanded & (density != "intents"),
                rx.el.div(
                    rx.foreach(
                        children,
                        lambda child: child_card(
                            message_id=message_id,
                            call_id=child,
                            density=density,
                            arguments_heading=arguments_heading,
                            result_heading=result_heading,
                            key=child,
                        ),
                    ),
                    class_name="iu-subagent-calls",
                    custom_attrs={"data-testid": "subagent-children"},
                ),
            ),
        ),
    )


def _cards(
    message_id: rx.Var[str],
    cards: rx.Var[list[str]],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    return rx.foreach(
        cards,
        lambda call_id: call_card(
            message_id=message_id,
            call_id=call_id,
            density=density,
            arguments_heading=arguments_heading,
            result_heading=result_heading,
            key=call_id,
        ),
    )


@rx.memo
def tool_group(
    message_id: rx.Var[str],
    part_key: rx.Var[str],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    """A round's calls. One call renders as its card; two or more as a group: a header
    button tracking the live edge, then the cards. Intents keeps every group open;
    header-only shows the header line until it is opened there."""
    view = group_view(message_id, part_key)
    group = view["group"].to(dict)
    cards = view["cards"].to(list[str])
    full_open = view["open"].to(bool)
    compact_open = view["compactOpen"].to(bool)
    is_open = rx.match(density, ("intents", True), ("header", compact_open), full_open)
    live = group["live"].to(bool)
    body = _cards(message_id, cards, density, arguments_heading, result_heading)
    return rx.cond(
        group["single"].to(bool),
        body,
        rx.el.div(
            rx.el.div(
                rx.el.button(
                    rx.el.span(
                        rx.match(
                            group["glyph"].to(str),
                            *((glyph, rx.icon(name, size=14)) for glyph, name in GLYPHS.items()),
                            rx.icon("wrench", size=14),
                        ),
                        class_name=rx.cond(live, "iu-icon iu-pulse", "iu-icon"),
                        custom_attrs={"aria-hidden": "true"},
                    ),
                    _label(
                        "tool-group-label",
                        group["header"].to(str),
                        view["title"].to(str),
                        live,
                        group["header_key"].to(str),
                    ),
                    rx.cond(
                        group["suffix"].to(str) != "",
                        rx.el.span(group["suffix"].to(str), class_name="iu-suffix"),
                    ),
                    _chevron(is_open),
                    type="button",
                    class_name="iu-group-head",
                    on_click=js_call("toggleGroup", group.to(dict), density, is_open),
                    custom_attrs={
                        "data-testid": "tool-group-header",
                        "aria-expanded": is_open.to_string(),
                        "aria-label": group["aria_label"].to(str),
                    },
                ),
                elapsed("group-elapsed", group),
                class_name="iu-row",
            ),
            rx.cond(is_open, rx.el.div(body, class_name="iu-group-cards")),
            class_name="iu-group",
            custom_attrs={
                "data-testid": "tool-group",
                "data-phase": group["phase"].to(str),
                "data-calm": group["calm"].to(bool).to_string(),
                "data-lazy": group["lazy"].to(bool).to_string(),
            },
        ),
    )


@rx.memo
def timeline_mark(
    message_id: rx.Var[str], call_id: rx.Var[str], group_key: rx.Var[str]
) -> rx.Component:
    """One call's mark, named by its card's visible label: a frame re-renders only the
    marks whose state or visible label changed, and a label still growing past its cap
    changes none."""
    view = mark_view(message_id, call_id)
    card = view["card"].to(dict)
    name = card["label"].to(str)
    return rx.el.span(
        rx.el.button(
            type="button",
            title=name,
            class_name="iu-mark",
            on_click=js_call("openCard", message_id, call_id, group_key),
            custom_attrs={
                "data-testid": "timeline-mark",
                "data-call-id": call_id,
                "data-state": card["state"].to(str),
                "data-waiting": view["waiting"].to(bool).to_string(),
                "aria-label": name,
            },
        ),
        rewind_button(message_id, call_id, name),
        role="listitem",
        class_name="iu-mark-item",
    )


@rx.memo
def timeline_group(message_id: rx.Var[str], part_key: rx.Var[str]) -> rx.Component:
    """The marks of one round's calls."""
    view = group_view(message_id, part_key)
    group_key = view["group"].to(dict)["key"].to(str)
    return rx.foreach(
        view["cards"].to(list[str]),
        lambda call_id: timeline_mark(
            message_id=message_id, call_id=call_id, group_key=group_key, key=call_id
        ),
    )


def timeline(
    message_id: rx.Var[str], parts: rx.Var[list[dict[str, str]]], name: rx.Var[str]
) -> rx.Component:
    """One mark per call in order, coloured by state; choosing one opens its card and
    its group, then scrolls to it (the scroll is `assets/intent_ui.js`'s: it waits for
    the card to be rendered open)."""
    return rx.el.div(
        rx.foreach(
            parts,
            lambda part: rx.cond(
                part["kind"] == "group",
                timeline_group(message_id=message_id, part_key=part["key"], key=part["key"]),
            ),
        ),
        role="list",
        class_name="iu-timeline",
        custom_attrs={"data-testid": "timeline", "aria-label": name},
    )
