"""Colour themes: the three a user may choose, anything else refused by name."""

from __future__ import annotations

import pytest

from intent_ui.core.theme import DEFAULT_THEME, THEMES, parse_theme


@pytest.mark.parametrize("value", ["light", "dark", "system"])
def test_each_theme_parses_as_itself(value: str) -> None:
    assert parse_theme(value) == value


def test_a_user_who_never_chose_follows_the_system() -> None:
    assert DEFAULT_THEME == "system"
    assert set(THEMES) == {"light", "dark", "system"}


@pytest.mark.parametrize("value", ["", "Dark", "auto", "inherit", None, 1])
def test_an_unknown_theme_is_refused_naming_the_accepted_values(value: object) -> None:
    with pytest.raises(ValueError, match="use one of light, dark, system"):
        parse_theme(value)
