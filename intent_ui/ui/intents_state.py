"""The intents page's state (`/intents`): captured MCP tool calls per tool, read-only.

Reads the `capture_events` table that `intent_ui.capture.StoreSink` writes, through
`intent_ui.store.capture_events.capture_summary`; the coverage arithmetic is the pure rule
in `intent_ui.core.capture`. This module only turns the summary into display strings.

Like every page it asks who is signing in first. Captured calls come from MCP servers,
not from anyone's chats, so they belong to no user: they are shown to operators only
(`sees_captured_calls`), and a database problem is told in plain words while its details
go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import reflex as rx
from sqlalchemy.exc import SQLAlchemyError

from intent_ui.config import AuthConfig
from intent_ui.core.capture import Coverage
from intent_ui.store import users as user_store
from intent_ui.store.capture_events import capture_summary
from intent_ui.store.db import StoreError
from intent_ui.ui.auth import AuthState
from intent_ui.ui.host import Host, get_host

__all__ = [
    "OPERATORS_ONLY",
    "STORE_PROBLEM",
    "CaptureRowVM",
    "IntentsState",
    "percent",
    "sees_captured_calls",
]

logger = logging.getLogger(__name__)

NO_CALLS = "—"
"""Shown instead of a ratio when there were no calls of that kind (0% would read as a
failure)."""

OPERATORS_ONLY = (
    "Captured tool calls are shown to operators only: they come from MCP servers rather "
    "than from anyone's chats, so they belong to no user. An operator is a user named in "
    "auth.operators in the app's configuration."
)
STORE_PROBLEM = (
    "The captured calls could not be read from the database. Check that the database "
    "(DB_URL, or .data/intent_ui.db) is reachable and the app can read it, then reload "
    "this page; the app's log has the details."
)


def sees_captured_calls(auth: AuthConfig | None, user_name: str | None) -> bool:
    """Whether a user sees the captured calls: without `auth:` there is one local user,
    who does; with it, only the users named in `auth.operators`."""
    if auth is None:
        return True
    return user_name is not None and user_name in auth.operators


def percent(ratio: float | None) -> str:
    """`0.6667` -> `67%`; None -> `—`."""
    return NO_CALLS if ratio is None else f"{round(ratio * 100)}%"


def _of(hit: int, total: int, kind: str) -> str:
    noun = "call" if total == 1 else "calls"
    return f"{hit} of {total} {kind} {noun}" if total else f"no {kind} calls"


@dataclass
class CaptureRowVM:
    tool: str = ""
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    latest_intent: str = ""


def _row(tool: str, calls: int, cov: Coverage, latest: str | None) -> CaptureRowVM:
    return CaptureRowVM(
        tool=tool,
        calls=calls,
        call_coverage=percent(cov.call_coverage),
        required_detail=_of(cov.required_with_intent, cov.required_calls, "required-context"),
        optional_share=percent(cov.optional_share),
        optional_detail=_of(cov.optional_with_intent, cov.optional_calls, "optional-context"),
        latest_intent=latest or "",
    )


class IntentsState(AuthState):
    """The `/intents` page."""

    rows: list[CaptureRowVM] = []
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    loaded: bool = False
    error: str = ""
    restricted: bool = False  # signed in, but not an operator

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        self.reset()  # this page's vars: nothing from an earlier load stays
        if user is None:
            return await self.sign_in_redirect(host)
        if not await asyncio.to_thread(_sees_captured_calls, host, user):
            self.restricted = True
            self.loaded = True
            return None
        try:
            summary = await asyncio.to_thread(capture_summary, host.engine)
        except (StoreError, SQLAlchemyError):
            logger.exception("The intents page could not read the captured calls")
            self.error = STORE_PROBLEM
            self.loaded = True
            return None
        overall = _row("", summary.calls, summary.overall, None)
        self.rows = [_row(t.tool, t.calls, t.coverage, t.latest_intent) for t in summary.tools]
        self.calls = summary.calls
        self.call_coverage = overall.call_coverage
        self.required_detail = overall.required_detail
        self.optional_share = overall.optional_share
        self.optional_detail = overall.optional_detail
        self.loaded = True
        return None


def _sees_captured_calls(host: Host, user_id: str) -> bool:
    user = user_store.get_user(host.engine, user_id)
    return sees_captured_calls(host.config.auth, user.name if user is not None else None)
