"""A tool-call card and a tool-call group, per DESIGN.md's browser contract."""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.viewmodels import CardVM, GroupVM

STATE_ICONS = {
    "streaming": "loader",
    "running": "loader",
    "background": "clock",
    "settled": "check",
    "error": "circle-alert",
    "cancelled": "circle-slash",
}


def _state_icon(card: CardVM) -> rx.Component:
    return rx.el.span(
        rx.match(
            card.state,
            *((state, rx.icon(name, size=14)) for state, name in STATE_ICONS.items()),
            rx.icon("wrench", size=14),
        ),
        class_name=rx.cond(card.live, "iu-icon iu-pulse", "iu-icon"),
        custom_attrs={"aria-hidden": "true"},
    )


def _label(card: CardVM) -> rx.Component:
    return rx.el.span(
        card.label,
        key=card.label_key,
        title=rx.cond(card.title != "", card.title, card.label),
        class_name=rx.cond(card.live, "iu-label iu-live", "iu-label iu-settled-label"),
        custom_attrs={"data-testid": "tool-call-label"},
    )


def tool_card(card: CardVM, toggle: rx.EventHandler, labels: rx.Var) -> rx.Component:
    """One call: a one-line header button; expanding shows arguments and result."""
    return rx.el.div(
        rx.el.button(
            _state_icon(card),
            _label(card),
            rx.el.span(
                rx.icon("chevron-down", size=14),
                class_name="iu-chevron",
                custom_attrs={"data-open": card.expanded.to_string(), "aria-hidden": "true"},
            ),
            type="button",
            class_name="iu-card-head",
            on_click=toggle(card.call_id),
            custom_attrs={"aria-expanded": card.expanded.to_string()},
        ),
        rx.cond(
            card.expanded,
            rx.el.div(
                rx.el.div(
                    rx.cond(card.title != "", card.title, card.label),
                    class_name="iu-full-label",
                ),
                rx.el.h4(labels["ui.arguments"]),
                rx.el.pre(card.args_preview, custom_attrs={"data-testid": "tool-call-args"}),
                rx.cond(
                    card.result != "",
                    rx.fragment(
                        rx.el.h4(labels["ui.result"]),
                        rx.el.pre(card.result, custom_attrs={"data-testid": "tool-call-result"}),
                    ),
                ),
                class_name="iu-card-body",
            ),
        ),
        class_name="iu-card",
        custom_attrs={
            "data-testid": "tool-call",
            "data-state": card.state,
            "data-call-id": card.call_id,
        },
    )


GLYPHS = {"tools": "wrench", "subagents": "users", "questions": "circle-help"}


def tool_group(
    group: GroupVM,
    toggle_group: rx.EventHandler,
    toggle_card: rx.EventHandler,
    labels: rx.Var,
) -> rx.Component:
    """Two or more calls: a header button tracking the live edge, then the cards."""
    return rx.el.div(
        rx.el.button(
            rx.el.span(
                rx.match(
                    group.glyph,
                    *((glyph, rx.icon(name, size=14)) for glyph, name in GLYPHS.items()),
                    rx.icon("wrench", size=14),
                ),
                class_name=rx.cond(group.live, "iu-icon iu-pulse", "iu-icon"),
                custom_attrs={"aria-hidden": "true"},
            ),
            rx.el.span(
                group.header,
                key=group.header_key,
                title=rx.cond(group.header_title != "", group.header_title, group.header),
                class_name=rx.cond(group.live, "iu-label iu-live", "iu-label iu-settled-label"),
                custom_attrs={"data-testid": "tool-group-label"},
            ),
            rx.cond(group.suffix != "", rx.el.span(group.suffix, class_name="iu-suffix")),
            rx.el.span(
                rx.icon("chevron-down", size=14),
                class_name="iu-chevron",
                custom_attrs={"data-open": group.open.to_string(), "aria-hidden": "true"},
            ),
            type="button",
            class_name="iu-group-head",
            on_click=toggle_group(group.key, group.open),
            custom_attrs={
                "data-testid": "tool-group-header",
                "aria-expanded": group.open.to_string(),
                "aria-label": group.aria_label,
            },
        ),
        rx.cond(
            group.open,
            rx.el.div(
                rx.foreach(group.cards, lambda card: tool_card(card, toggle_card, labels)),
                class_name="iu-group-cards",
            ),
        ),
        class_name="iu-group",
        custom_attrs={
            "data-testid": "tool-group",
            "data-phase": group.phase,
            "data-calm": group.calm.to_string(),
        },
    )


def tool_part(
    group: GroupVM,
    toggle_group: rx.EventHandler,
    toggle_card: rx.EventHandler,
    labels: rx.Var,
) -> rx.Component:
    """A single call renders as a card; two or more as a group."""
    return rx.cond(
        group.single,
        rx.foreach(group.cards, lambda card: tool_card(card, toggle_card, labels)),
        tool_group(group, toggle_group, toggle_card, labels),
    )
