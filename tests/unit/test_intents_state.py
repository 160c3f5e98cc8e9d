"""The intents page's display strings: ratios as whole percents, a dash for no calls."""

from __future__ import annotations

import pytest

from intent_ui.ui.intents_state import NO_CALLS, percent


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(2 / 3, "67%"), (0.0, "0%"), (1.0, "100%"), (0.25, "25%"), (None, NO_CALLS)],
)
def test_percent(ratio: float | None, shown: str) -> None:
    assert percent(ratio) == shown


def test_no_calls_is_not_shown_as_zero() -> None:
    assert percent(None) != percent(0.0)
