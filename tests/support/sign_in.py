"""Who a page's state takes the request to be from, for the tests of the page states."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.ui.auth import AuthState
from intent_ui.ui.chat_state import ChatState
from intent_ui.ui.host import Host

__all__ = ["chat_page", "sign_in_as"]


def sign_in_as(monkeypatch: pytest.MonkeyPatch, user_id: str | None) -> None:
    """Every page's state (each is an `AuthState`) takes the request as `user_id`'s, None
    for signed out, without a cookie or a proxy header; a later call changes who."""

    async def current_user(self: Any, host: Host) -> str | None:
        return user_id

    monkeypatch.setattr(AuthState, "current_user", current_user)


def chat_page(monkeypatch: pytest.MonkeyPatch, host: Host, user_id: str) -> ChatState:
    """`user_id`'s chat page on `host`, signed in (see `sign_in_as`), its endpoint and
    model pickers loaded as the page does on load."""
    sign_in_as(monkeypatch, user_id)
    chat = ChatState()
    chat._load_pickers(host, user_id)
    return chat
