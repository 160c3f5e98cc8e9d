"""`intent_ui.agent.providers` re-exports its public API with a sorted `__all__`."""

from __future__ import annotations

import intent_ui.agent.providers as providers


def _ruff_order(name: str) -> tuple[int, str]:
    # Constants first, then classes, then functions (ruff's RUF022 order).
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_unique() -> None:
    assert providers.__all__ == sorted(set(providers.__all__), key=_ruff_order)


def test_every_exported_name_exists() -> None:
    assert [name for name in providers.__all__ if not hasattr(providers, name)] == []
