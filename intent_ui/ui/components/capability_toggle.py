"""The one capability switch, reused for every capability and every tool kind (§12).

A real `<button>` (so Tab, Enter and Space work) with `aria-pressed`, `aria-disabled` when
the tool cannot take the capability (it stays focusable so its tooltip still explains why,
and its stored state stays visible), a distinct glyph and colour per capability, a tooltip
written for a non-technical admin, and, for the intent switch, what it costs: the intent
property's schema tokens on every request that offers the tool.

The same component renders the per-group "Describe all tools" switch (`testid` and `attrs`
differ). Its texts live in `BUILDER_TEXT`, keyed like the `com_ui_mcp_*` family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import reflex as rx

from intent_ui.core.locale import Catalog

__all__ = [
    "BUILDER_TEXT",
    "CAPABILITY_STYLES",
    "CapabilityStyle",
    "builder_text",
    "capability_toggle",
]


@dataclass(frozen=True, slots=True)
class CapabilityStyle:
    """How one capability's switch looks: glyph (lucide), colour, short visible label."""

    glyph: str
    color: str
    short_key: str
    testid: str


CAPABILITY_STYLES: Mapping[str, CapabilityStyle] = MappingProxyType(
    {
        "describe_intent": CapabilityStyle(
            "message_square_text",
            "violet",
            "com_ui_mcp_describe_intent_short",
            "describe-intent-toggle",
        ),
        "run_in_background": CapabilityStyle(
            "hourglass", "blue", "com_ui_mcp_background_short", "run-in-background-toggle"
        ),
        "defer_loading": CapabilityStyle(
            "clock", "amber", "com_ui_mcp_defer_short", "defer-loading-toggle"
        ),
        "allowed_callers": CapabilityStyle(
            "code_xml", "teal", "com_ui_mcp_code_only_short", "code-only-toggle"
        ),
    }
)
"""Glyph and colour per capability; `defer_loading` keeps the family's Clock / amber."""

BUILDER_TEXT: Mapping[str, str] = MappingProxyType(
    {
        "com_ui_mcp_describe_intent_short": "Describe",
        "com_ui_mcp_background_short": "Background",
        "com_ui_mcp_defer_short": "On demand",
        "com_ui_mcp_code_only_short": "Code only",
        "com_ui_mcp_describe_intent_label": "Show what {tool} is doing",
        "com_ui_mcp_background_label": "Let {tool} run in the background",
        "com_ui_mcp_defer_label": "Load {tool} only when needed",
        "com_ui_mcp_code_only_label": "Let only code call {tool}",
        "com_ui_mcp_describe_intent_info": (
            "Show what this tool is doing. Before it runs, the assistant writes one short "
            "sentence, like “Searching for the login code”, and people see it on the tool's "
            "card while it works. This adds about {tokens} tokens to every request."
        ),
        "com_ui_mcp_describe_intent_code_only": (
            "Not available: this tool is only called from code the assistant runs, so no card "
            "ever shows a sentence for it. Your setting is kept for when that changes."
        ),
        "com_ui_mcp_describe_intent_own_param": (
            "Not available: this tool already has its own field called “intent”, so a "
            "description can't be added without confusing the two."
        ),
        "com_ui_mcp_describe_intent_not_object": (
            "Not available: this tool doesn't take named fields, so a description can't be added."
        ),
        "com_ui_mcp_describe_intent_excluded": (
            "Not available: this is a behind-the-scenes helper that never shows a card."
        ),
        "com_ui_mcp_background_info": (
            "Let this tool keep working in the background while the conversation carries on. "
            "The assistant checks back for the result later."
        ),
        "com_ui_mcp_background_unavailable": (
            "Not available: this tool has to finish before the assistant can go on."
        ),
        "com_ui_mcp_defer_info": (
            "Keep this tool out of every request and let the assistant find it by searching "
            "when it needs it. Requests get smaller; the first use takes a moment longer."
        ),
        "com_ui_mcp_defer_unavailable": (
            "Not available: the assistant needs this tool to find the others."
        ),
        "com_ui_mcp_code_only_info": (
            "Only code the assistant runs may use this tool; the assistant can't call it "
            "directly. Useful for tools called many times in a row."
        ),
        "com_ui_mcp_code_only_unavailable": (
            "Not available: this tool is how the assistant runs code."
        ),
        "com_ui_mcp_describe_all": "Describe all tools",
        "com_ui_mcp_describe_all_label": "Describe what every tool of {group} is doing",
        "com_ui_mcp_describe_all_info": (
            "Turn “Describe” on for every tool in this group that can use it; click again to "
            "turn them all off. Together they add about {tokens} tokens to every request."
        ),
        "com_ui_mcp_describe_all_none": (
            "None of these tools can describe what it is doing, so there is nothing to turn on."
        ),
        "com_ui_mcp_tokens": "+{n} tokens",
    }
)

_CATALOG = Catalog({"en": BUILDER_TEXT})


def builder_text(key: str, lang: str = "en", **params: object) -> str:
    """A builder string (English fallback; the key itself when unknown)."""
    return _CATALOG.translate(key, lang, **params)


def capability_toggle(
    option: str,
    *,
    pressed: rx.Var[bool] | bool,
    disabled: rx.Var[bool] | bool,
    tooltip: rx.Var[str] | str,
    label: rx.Var[str] | str,
    on_click: Any,
    cost: rx.Var[str] | str = "",
    text: rx.Var[str] | str | None = None,
    testid: str | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> rx.Component:
    """One switch for `option` (a `tool_options` key).

    `label` is the accessible name, `tooltip` the explanation shown on hover and focus,
    `cost` the token cost shown beside the glyph ("" hides it). `on_click` fires even when
    disabled; handlers ignore clicks on ineligible tools, so the state cannot drift.
    """
    style = CAPABILITY_STYLES[option]
    visible = builder_text(style.short_key) if text is None else text
    button = rx.el.button(
        rx.icon(style.glyph, size=14, class_name="iu-cap-glyph"),
        rx.el.span(visible, class_name="iu-cap-text"),
        rx.cond(cost != "", rx.el.span(cost, class_name="iu-cap-cost")),
        type="button",
        class_name="iu-cap-toggle",
        on_click=on_click,
        custom_attrs={
            "data-testid": testid or style.testid,
            "data-capability": option,
            "data-color": style.color,
            "aria-pressed": rx.cond(pressed, "true", "false"),
            "aria-disabled": rx.cond(disabled, "true", "false"),
            "aria-label": label,
            **(attrs or {}),
        },
    )
    return rx.tooltip(button, content=tooltip, delay_duration=300)
