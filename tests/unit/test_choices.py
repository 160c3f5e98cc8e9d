"""Settings a user picks from a list (display density, colour theme): each value parses as
itself, anything else is refused naming the accepted values, or read as the default."""

from __future__ import annotations

import pytest

from intent_ui.core.choices import Choice
from intent_ui.core.display import DENSITY
from intent_ui.core.theme import THEME

CHOICES = pytest.mark.parametrize(
    ("choice", "accepted"),
    [(DENSITY, "full, intents, header"), (THEME, "light, dark, system")],
    ids=["density", "theme"],
)


@CHOICES
def test_each_value_parses_as_itself(choice: Choice[str], accepted: str) -> None:
    for value in accepted.split(", "):
        assert choice.parse(value) == value
        assert choice.or_default(value) == value


@CHOICES
@pytest.mark.parametrize("value", ["", "Full", "Dark", "auto", None, 1])
def test_an_unknown_value_is_refused_naming_the_accepted_ones(
    choice: Choice[str], accepted: str, value: object
) -> None:
    with pytest.raises(ValueError, match=f"use one of {accepted}"):
        choice.parse(value)
    assert choice.or_default(value) == choice.default
