"""The colour theme, a per-user setting: `light`, `dark`, or `system` (whatever the
browser's `prefers-color-scheme` says, following it when it changes). Every colour of the
app is a CSS custom property with a light and a dark value (`assets/intent_ui.css`); the
theme only picks which set the page uses."""

from __future__ import annotations

from typing import Literal

__all__ = ["DEFAULT_THEME", "THEMES", "Theme", "parse_theme"]

Theme = Literal["light", "dark", "system"]
THEMES: tuple[Theme, ...] = ("light", "dark", "system")
DEFAULT_THEME: Theme = "system"


def parse_theme(value: object) -> Theme:
    """`value` as a theme; anything else is refused with the accepted values."""
    for theme in THEMES:
        if value == theme:
            return theme
    raise ValueError(f"Unknown colour theme {value!r}: use one of {', '.join(THEMES)}.")
