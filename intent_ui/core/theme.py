"""The colour theme, a per-user setting: `light`, `dark`, or `system` (whatever the
browser's `prefers-color-scheme` says, following it when it changes). Every colour of the
app is a CSS custom property with a light and a dark value (`assets/intent_ui.css`); the
theme only picks which set the page uses."""

from __future__ import annotations

from typing import Literal

from intent_ui.core.choices import Choice

__all__ = ["DEFAULT_THEME", "THEME", "THEMES", "Theme"]

Theme = Literal["light", "dark", "system"]
THEMES: tuple[Theme, ...] = ("light", "dark", "system")
DEFAULT_THEME: Theme = "system"


THEME: Choice[Theme] = Choice("colour theme", THEMES, DEFAULT_THEME)
"""The per-user setting; `THEME.parse` refuses anything but the three themes."""
