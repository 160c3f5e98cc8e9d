"""A tool-call card, a tool-call group and a turn's call timeline, at each display density
(`intent_ui.core.display`). Their `data-testid` names and `data-state` values are what the
browser tests (`tests/e2e`) select on: keep them. What the labels say: docs/labels.md.

A card is a memoized React component (`@rx.memo`) taking its fields as plain props, so a
push re-renders only the cards whose fields changed, not every card of the turn. Densities
are a render switch: every density reads the same view models, so switching one fetches
nothing and keeps every label identical.
"""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx
from reflex.vars import ArrayVar, ObjectVar
from reflex_base.vars.base import VarData

from intent_ui.core.states import CallState
from intent_ui.ui.state import ChatState, LiveSlots, LiveTitles
from intent_ui.ui.viewmodels import CardVM, GroupVM, PartVM

STATE_ICONS: dict[CallState, str] = {
    "streaming": "loader",
    "running": "loader",
    "background": "clock",
    "settled": "check",
    "error": "circle-alert",
    "cancelled": "circle-slash",
}


def elapsed(
    testid: str, started_at: rx.Var, settled_at: rx.Var, text: rx.Var, ticking: rx.Var
) -> rx.Component:
    """A running time. While `ticking`, the browser's ticker (`assets/intent_ui.js`)
    writes the time counted from `data-started-at` into the empty span, so no push is
    needed per tick; a settled one shows the duration fixed on the server. The two are
    separate elements (keys) so React never reconciles one into the other's text."""
    return rx.cond(
        started_at != "",
        rx.cond(
            ticking,
            rx.el.span(
                key="ticking",
                class_name="iu-elapsed",
                custom_attrs={"data-testid": testid, "data-started-at": started_at},
            ),
            rx.el.span(
                text,
                key="settled",
                class_name="iu-elapsed",
                custom_attrs={
                    "data-testid": testid,
                    "data-started-at": started_at,
                    "data-settled-at": settled_at,
                },
            ),
        ),
    )


@rx.memo
def state_icon(state: rx.Var[str], live: rx.Var[bool]) -> rx.Component:
    """The state glyph: its own component, so a label growing beside it never re-renders
    the icon."""
    return rx.el.span(
        rx.match(
            state,
            *((name, rx.icon(icon, size=14)) for name, icon in STATE_ICONS.items()),
            rx.icon("wrench", size=14),
        ),
        class_name=rx.cond(live, "iu-icon iu-pulse", "iu-icon"),
        custom_attrs={"aria-hidden": "true"},
    )


LIVE_TITLES_MODULE = "$/public/live_titles.js"
"""`assets/live_titles.js`: the page's side of streaming titles (`ui.live_titles`)."""


class LiveLabel(rx.Component):
    """A card label span whose `title` is the streamed title under `title_key` while the
    server streams it (see `LiveTitleFeed`), else `title`, else the label."""

    library = LIVE_TITLES_MODULE
    tag = "LiveLabel"

    label: rx.Var[str]
    title: rx.Var[str]
    title_key: rx.Var[str]


class LiveTitleFeed(rx.Component):
    """Applies every push of `LiveTitles` to the page's streamed titles. Once per page."""

    library = LIVE_TITLES_MODULE
    tag = "LiveTitleFeed"

    state_name: rx.Var[str]
    turn_field: rx.Var[str]
    ops_field: rx.Var[str]


def _state_and_field(var: rx.Var) -> tuple[str, str]:
    """A state var's page expression split in two: the state object's name and the
    field's name in it (the compiler may suffix field names)."""
    state, field_name = str(var).rsplit(".", 1)
    return state, field_name


def live_title_feed() -> rx.Component:
    return LiveTitleFeed.create(
        state_name=LiveTitles.get_full_name(),
        turn_field=_state_and_field(LiveTitles.title_turn)[1],
        ops_field=_state_and_field(LiveTitles.title_ops)[1],
    )


@rx.memo
def card_label(
    label: rx.Var[str],
    title: rx.Var[str],
    title_key: rx.Var[str],
    live: rx.Var[bool],
    label_key: rx.Var[str],
) -> rx.Component:
    """The label: while intents stream this is the only part of a card that changes, so
    a push re-renders one span per changed card (and a title growing by appends, only
    that span, from the page's title store)."""
    return LiveLabel.create(
        label=label,
        title=title,
        title_key=title_key,
        key=label_key,
        class_name=rx.cond(live, "iu-label iu-live", "iu-label iu-settled-label"),
        custom_attrs={"data-testid": "tool-call-label"},
    )


@rx.memo
def chevron(is_open: rx.Var[bool]) -> rx.Component:
    """The open/closed chevron, rendered again only when that changes."""
    return rx.el.span(
        rx.icon("chevron-down", size=14),
        class_name="iu-chevron",
        custom_attrs={"data-open": is_open.to_string(), "aria-hidden": "true"},
    )


def _line(
    state: rx.Var[str],
    label: rx.Var[str],
    title: rx.Var[str],
    title_key: rx.Var[str],
    live: rx.Var[bool],
    label_key: rx.Var[str],
) -> list[rx.Component]:
    """The line every density shows: state glyph and label."""
    return [
        state_icon(state=state, live=live),
        card_label(label=label, title=title, title_key=title_key, live=live, label_key=label_key),
    ]


@rx.memo
def call_card(
    call_id: rx.Var[str],
    state: rx.Var[str],
    label: rx.Var[str],
    title: rx.Var[str],
    title_key: rx.Var[str],
    live: rx.Var[bool],
    label_key: rx.Var[str],
    expanded: rx.Var[bool],
    args_preview: rx.Var[str],
    result: rx.Var[str],
    started_at: rx.Var[str],
    settled_at: rx.Var[str],
    elapsed_text: rx.Var[str],
    ticking: rx.Var[bool],
    density: rx.Var[str],
    arguments_heading: rx.Var[str],
    result_heading: rx.Var[str],
) -> rx.Component:
    """One call. Full and header-only: a one-line button; expanding shows arguments and
    result. Intents: the line alone, no previews. The running time sits beside the line,
    outside the button, so the button's name does not change every tenth of a second."""
    return rx.el.div(
        rx.el.div(
            rx.cond(
                density == "intents",
                rx.el.div(
                    *_line(state, label, title, title_key, live, label_key),
                    class_name="iu-card-head iu-card-line",
                ),
                rx.el.button(
                    *_line(state, label, title, title_key, live, label_key),
                    chevron(is_open=expanded),
                    type="button",
                    class_name="iu-card-head",
                    on_click=ChatState.toggle_card(call_id),
                    custom_attrs={"aria-expanded": expanded.to_string()},
                ),
            ),
            elapsed("call-elapsed", started_at, settled_at, elapsed_text, ticking),
            class_name="iu-row",
        ),
        rx.cond(
            expanded & (density != "intents"),
            rx.el.div(
                rx.el.div(rx.cond(title != "", title, label), class_name="iu-full-label"),
                rx.el.h4(arguments_heading),
                # Focusable: a long preview scrolls, and the keyboard must reach it.
                rx.el.pre(
                    args_preview, tab_index=0, custom_attrs={"data-testid": "tool-call-args"}
                ),
                rx.cond(
                    result != "",
                    rx.fragment(
                        rx.el.h4(result_heading),
                        rx.el.pre(
                            result, tab_index=0, custom_attrs={"data-testid": "tool-call-result"}
                        ),
                    ),
                ),
                class_name="iu-card-body",
            ),
        ),
        class_name="iu-card",
        custom_attrs={"data-testid": "tool-call", "data-state": state, "data-call-id": call_id},
    )


def tool_card(
    card: ObjectVar[CardVM], labels: ObjectVar[dict[str, str]], density: rx.Var[str]
) -> rx.Component:
    return call_card(
        call_id=card.call_id,
        state=card.state,
        label=card.label,
        title=card.title,
        title_key=card.title_key,
        live=card.live,
        label_key=card.label_key,
        expanded=card.expanded,
        args_preview=card.args_preview,
        result=card.result,
        started_at=card.started_at,
        settled_at=card.settled_at,
        elapsed_text=card.elapsed,
        ticking=card.ticking,
        density=density,
        arguments_heading=labels["ui.arguments"],
        result_heading=labels["ui.result"],
    )


def slot_card(index: rx.Var[int]) -> ObjectVar[CardVM]:
    """The card in live slot `index` (`LiveSlots`): one var per card, picked by number in
    the browser, so the page subscribes to the slots once and each delta carries only
    the cards that changed."""
    first = LiveSlots.slot_0  # type: ignore[attr-defined]  # made by type() in ui/state.py
    state, field_name = _state_and_field(first)
    suffix = field_name.removeprefix("slot_0")  # how the compiled state names its fields
    card = rx.Var(
        _js_expr=f'{state}["slot_" + ({index}) + "{suffix}"]',
        _var_type=CardVM,
        _var_data=VarData.merge(first._get_all_var_data(), index._get_all_var_data()),
    ).guess_type()
    assert isinstance(card, ObjectVar)  # what a dataclass-typed var guesses to
    return card


def each_card(
    group: ObjectVar[GroupVM], render: Callable[[ObjectVar[CardVM]], rx.Component], slotted: bool
) -> rx.Component:
    """`render` for each card of the group, in order. `slotted` (the live turn only): a
    group whose cards travel in live slots reads them from there."""
    embedded = rx.foreach(group.cards, render)
    if not slotted:
        return embedded
    return rx.cond(
        group.first_slot >= 0,
        rx.foreach(
            rx.Var.range(group.slot_count),
            lambda offset: render(slot_card(group.first_slot + offset)),
        ),
        embedded,
    )


GLYPHS = {"tools": "wrench", "subagents": "users", "questions": "circle-help"}


def tool_group(
    group: ObjectVar[GroupVM],
    labels: ObjectVar[dict[str, str]],
    density: rx.Var[str],
    slotted: bool = False,
) -> rx.Component:
    """Two or more calls: a header button tracking the live edge, then the cards. Intents
    keeps every group open; header-only shows the header line until it is opened there."""
    is_open = rx.match(density, ("intents", True), ("header", group.compact_open), group.open)
    return rx.el.div(
        rx.el.div(
            _group_head(group, is_open),
            elapsed(
                "group-elapsed", group.started_at, group.settled_at, group.elapsed, group.ticking
            ),
            class_name="iu-row",
        ),
        rx.cond(
            is_open,
            rx.el.div(
                each_card(group, lambda card: tool_card(card, labels, density), slotted),
                class_name="iu-group-cards",
            ),
        ),
        class_name="iu-group",
        custom_attrs={
            "data-testid": "tool-group",
            "data-phase": group.phase,
            "data-calm": group.calm.to_string(),
            "data-lazy": group.lazy.to_string(),
        },
    )


def _group_head(group: ObjectVar[GroupVM], is_open: rx.Var[bool]) -> rx.Component:
    """The header button: glyph, the live or settled header, the server, the chevron."""
    return rx.el.button(
        rx.el.span(
            rx.match(
                group.glyph,
                *((glyph, rx.icon(name, size=14)) for glyph, name in GLYPHS.items()),
                rx.icon("wrench", size=14),
            ),
            class_name=rx.cond(group.live, "iu-icon iu-pulse", "iu-icon"),
            custom_attrs={"aria-hidden": "true"},
        ),
        LiveLabel.create(
            label=group.header,
            title=group.header_title,
            title_key=group.title_key,
            key=group.header_key,
            class_name=rx.cond(group.live, "iu-label iu-live", "iu-label iu-settled-label"),
            custom_attrs={"data-testid": "tool-group-label"},
        ),
        rx.cond(group.suffix != "", rx.el.span(group.suffix, class_name="iu-suffix")),
        chevron(is_open=is_open),
        type="button",
        class_name="iu-group-head",
        on_click=ChatState.toggle_group(group.key, is_open),
        custom_attrs={
            "data-testid": "tool-group-header",
            "aria-expanded": is_open.to_string(),
            "aria-label": group.aria_label,
        },
    )


def group_or_card(
    group: ObjectVar[GroupVM],
    labels: ObjectVar[dict[str, str]],
    density: rx.Var[str],
    slotted: bool = False,
) -> rx.Component:
    """A single call renders as a card; two or more as a group. `slotted`: see
    `each_card`."""
    return rx.cond(
        group.single,
        each_card(group, lambda card: tool_card(card, labels, density), slotted),
        tool_group(group, labels, density, slotted),
    )


@rx.memo
def timeline_mark(
    call_id: rx.Var[str], state: rx.Var[str], name: rx.Var[str], group_key: rx.Var[str]
) -> rx.Component:
    """One call's mark, named by its card's visible label: a push re-renders only the
    marks whose state or visible label changed, and a label still growing past its cap
    changes none."""
    return rx.el.span(
        rx.el.button(
            type="button",
            title=name,
            class_name="iu-mark",
            on_click=ChatState.open_card(call_id, group_key),
            custom_attrs={
                "data-testid": "timeline-mark",
                "data-call-id": call_id,
                "data-state": state,
                "aria-label": name,
            },
        ),
        role="listitem",
        class_name="iu-mark-item",
    )


def _mark(card: ObjectVar[CardVM], group_key: rx.Var[str]) -> rx.Component:
    return timeline_mark(
        call_id=card.call_id, state=card.state, name=card.label, group_key=group_key
    )


def timeline(
    parts: ArrayVar[list[PartVM]], labels: ObjectVar[dict[str, str]], slotted: bool = False
) -> rx.Component:
    """One mark per call in order, coloured by state; choosing one opens its card and
    scrolls to it (the scroll is `assets/intent_ui.js`'s: it waits for the card to be
    rendered open)."""
    return rx.el.div(
        rx.foreach(
            parts,
            lambda part: each_card(part.group, lambda card: _mark(card, part.group.key), slotted),
        ),
        role="list",
        class_name="iu-timeline",
        custom_attrs={"data-testid": "timeline", "aria-label": labels["ui.timeline"]},
    )
