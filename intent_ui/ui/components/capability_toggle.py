"""The one capability switch, reused for every capability and every tool kind.

What each switch shows and what a click writes are the builder's rules, in
`intent_ui.core.builder`; this is only their rendering.

A real `<button>` (so Tab, Enter and Space work) with `aria-pressed`, `aria-disabled` when
the tool cannot take the capability (it stays focusable so its tooltip still explains why,
and its stored state stays visible), a distinct glyph and colour per capability, a tooltip
written for a non-technical admin, and, for the intent switch, what it costs: the intent
property's schema tokens on every request that offers the tool.

The same component renders each tool source's "Describe all tools" switch (`testid` and
`attrs` differ). Its state and texts are one `ToggleVM` (`ui.builder_view`), built from the
locale catalogue (`builder.*`) in the reader's language; the accessible name always starts
with the visible text, so a speech user can say what they see.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import reflex as rx
from reflex.vars import ObjectVar

from intent_ui.ui.builder_view import ToggleVM

__all__ = [
    "CAPABILITY_STYLES",
    "CapabilityStyle",
    "capability_toggle",
]


@dataclass(frozen=True, slots=True)
class CapabilityStyle:
    """How one capability's switch looks: glyph (lucide) and colour."""

    glyph: str
    color: str
    testid: str


CAPABILITY_STYLES: Mapping[str, CapabilityStyle] = MappingProxyType(
    {
        "describe_intent": CapabilityStyle(
            "message_square_text", "violet", "describe-intent-toggle"
        ),
        "run_in_background": CapabilityStyle("hourglass", "blue", "run-in-background-toggle"),
        "defer_loading": CapabilityStyle("clock", "amber", "defer-loading-toggle"),
        "allowed_callers": CapabilityStyle("code_xml", "teal", "code-only-toggle"),
        # Not a capability the admin enables, but the same switch: ask before running.
        "require_approval": CapabilityStyle("shield_check", "amber", "approval-toggle"),
    }
)
"""Glyph and colour per capability; `defer_loading` keeps the family's Clock / amber."""


def capability_toggle(
    option: str,
    toggle: ObjectVar[ToggleVM],
    *,
    on_click: Any,
    testid: str | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> rx.Component:
    """One switch for `option` (a `tool_options` key), showing `toggle`.

    `toggle.text` is the short visible text, `label` the accessible name (it starts with
    the visible text and the cost), `tooltip` the explanation shown on hover and focus,
    `cost` the token cost shown beside the glyph ("" hides it). `on_click` fires even when
    disabled; handlers ignore clicks on ineligible tools, so the state cannot drift.
    """
    style = CAPABILITY_STYLES[option]
    button = rx.el.button(
        rx.icon(style.glyph, size=14, class_name="iu-cap-glyph"),
        rx.el.span(toggle.text, class_name="iu-cap-text"),
        rx.cond(toggle.cost != "", rx.el.span(toggle.cost, class_name="iu-cap-cost")),
        type="button",
        class_name="iu-cap-toggle",
        on_click=on_click,
        custom_attrs={
            "data-testid": testid or style.testid,
            "data-capability": option,
            "data-color": style.color,
            "aria-pressed": rx.cond(toggle.pressed, "true", "false"),
            "aria-disabled": rx.cond(toggle.disabled, "true", "false"),
            "aria-label": toggle.label,
            **(attrs or {}),
        },
    )
    return rx.tooltip(button, content=toggle.tooltip, delay_duration=300)
