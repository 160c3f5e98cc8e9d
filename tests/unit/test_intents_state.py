"""The intents page: ratios as whole percents, a dash for no calls; captured calls only
for a signed-in operator; a database problem told in plain words, its details logged."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from intent_ui.config import AppConfig, AuthConfig
from intent_ui.store import users as user_store
from intent_ui.store.capture_events import add_capture_events
from intent_ui.ui import intents_state as intents_module
from intent_ui.ui.host import Host
from intent_ui.ui.intents_state import (
    NO_CALLS,
    OPERATORS_ONLY,
    STORE_PROBLEM,
    IntentsState,
    percent,
    sees_captured_calls,
)


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(2 / 3, "67%"), (0.0, "0%"), (1.0, "100%"), (0.25, "25%"), (None, NO_CALLS)],
)
def test_percent(ratio: float | None, shown: str) -> None:
    assert percent(ratio) == shown


def test_no_calls_is_not_shown_as_zero() -> None:
    assert percent(None) != percent(0.0)


# --- who sees the captured calls ----------------------------------------------------------

HEADER = AuthConfig(mode="header", operators=("ops",))


@pytest.mark.parametrize(
    ("auth", "name", "sees"),
    [
        (None, "local", True),  # no `auth:`: the one local user
        (HEADER, "ops", True),
        (HEADER, "alice", False),
        (HEADER, None, False),
        (AuthConfig(mode="header"), "ops", False),  # no operators named: nobody
    ],
)
def test_only_operators_see_captured_calls(
    auth: AuthConfig | None, name: str | None, sees: bool
) -> None:
    assert sees_captured_calls(auth, name) is sees


def _event(kind: str = "required") -> dict[str, Any]:
    return {
        "server": "bookings",
        "tool": "book_car",
        "intent": "Ski trip",
        "intent_context": kind,
        "intent_source": "context_parameter",
        "status": "ok",
        "duration_ms": 1.0,
        "timestamp": 1.0,
    }


@pytest.fixture
def page(engine: Engine, serve_host: Callable[..., Host], tmp_path: Path) -> IntentsState:
    """The page over a store with one captured call, for whoever `signed_in` names."""
    add_capture_events(engine, [_event()])
    config = AppConfig.model_validate(
        {
            "workspace": tmp_path,
            "auth": {"mode": "password", "secret": "s" * 40, "operators": ["ops"]},
        }
    )
    serve_host(config)
    return IntentsState()  # type: ignore[call-arg]


def signed_in(monkeypatch: pytest.MonkeyPatch, user_id: str | None) -> None:
    async def current_user(self: Any, host: Host) -> str | None:
        return user_id

    monkeypatch.setattr(IntentsState, "current_user", current_user)


async def test_signed_out_the_page_redirects_and_holds_no_calls(
    page: IntentsState, monkeypatch: pytest.MonkeyPatch
) -> None:
    signed_in(monkeypatch, None)
    redirect = await IntentsState.load_page.fn(page)
    assert "/login" in str(redirect)
    assert (page.rows, page.calls, page.loaded) == ([], 0, False)


async def test_a_user_who_is_not_an_operator_is_told_why_and_gets_no_calls(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    signed_in(monkeypatch, user_store.ensure_user(engine, "alice").id)
    await IntentsState.load_page.fn(page)
    assert (page.rows, page.calls, page.restricted) == ([], 0, True)
    assert "auth.operators" in OPERATORS_ONLY


async def test_an_operator_sees_every_tool(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    signed_in(monkeypatch, user_store.ensure_user(engine, "ops").id)
    await IntentsState.load_page.fn(page)
    assert [(row.tool, row.latest_intent) for row in page.rows] == [("book_car", "Ski trip")]
    assert not page.restricted


async def test_a_database_problem_is_told_plainly_and_its_details_logged(
    page: IntentsState,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    signed_in(monkeypatch, user_store.ensure_user(engine, "ops").id)
    raw = "(sqlite3.OperationalError) no such table: capture_events"

    def broken(engine: Engine) -> None:
        raise OperationalError("SELECT ...", {}, Exception(raw))

    monkeypatch.setattr(intents_module, "capture_summary", broken)
    with caplog.at_level(logging.ERROR, logger=intents_module.__name__):
        await IntentsState.load_page.fn(page)
    assert page.error == STORE_PROBLEM
    assert "no such table" not in page.error and page.rows == []
    assert "no such table: capture_events" in caplog.text
