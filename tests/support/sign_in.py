"""Who a page's state takes the request to be from, for the tests of the page states."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.ui.auth import AuthState
from intent_ui.ui.host import Host

__all__ = ["sign_in_as"]


def sign_in_as(monkeypatch: pytest.MonkeyPatch, user_id: str | None) -> None:
    """Every page's state (each is an `AuthState`) takes the request as `user_id`'s, None
    for signed out, without a cookie or a proxy header; a later call changes who."""

    async def current_user(self: Any, host: Host) -> str | None:
        return user_id

    monkeypatch.setattr(AuthState, "current_user", current_user)
