"""The intents page: ratios as whole percents, a dash for no calls; each user's own calls
and, for a signed-in operator only, the captured ones; the period, source and scope
controls; a database problem told in plain words, its details logged."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from intent_ui.config import AppConfig, AuthConfig
from intent_ui.store import users as user_store
from intent_ui.store.capture_events import add_capture_events
from intent_ui.store.dashboard import Scope
from intent_ui.ui import intents_state as intents_module
from intent_ui.ui.host import Host
from intent_ui.ui.intents_state import (
    NO_CALLS,
    OPERATORS_ONLY,
    STORE_PROBLEM,
    IntentsState,
    agent_label,
    percent,
    sees_captured_calls,
    server_label,
)
from tests.support.dashboard_seed import DAY, Call, record_turn_with_calls
from tests.support.sign_in import sign_in_as


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
    return IntentsState()


async def test_signed_out_the_page_redirects_and_holds_no_calls(
    page: IntentsState, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_in_as(monkeypatch, None)
    redirect = await IntentsState.load_page.fn(page)
    assert "/login" in str(redirect)
    assert (page.rows, page.calls, page.loaded) == ([], 0, False)


async def test_a_user_who_is_not_an_operator_is_told_why_and_gets_no_calls(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_in_as(monkeypatch, user_store.ensure_user(engine, "alice").id)
    await IntentsState.load_page.fn(page)
    assert (page.rows, page.calls, page.restricted) == ([], 0, True)
    assert "auth.operators" in OPERATORS_ONLY


async def test_an_operator_sees_every_tool(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_in_as(monkeypatch, user_store.ensure_user(engine, "ops").id)
    await IntentsState.load_page.fn(page)
    assert [(row.tool, row.latest_intent) for row in page.rows] == [("book_car", "Ski trip")]
    assert not page.restricted


async def test_a_database_problem_is_told_plainly_and_its_details_logged(
    page: IntentsState,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    sign_in_as(monkeypatch, user_store.ensure_user(engine, "ops").id)
    raw = "(sqlite3.OperationalError) no such table: capture_events"

    def broken(engine: Engine, *args: object) -> None:
        raise OperationalError("SELECT ...", {}, Exception(raw))

    monkeypatch.setattr(intents_module, "capture_summary", broken)
    with caplog.at_level(logging.ERROR, logger=intents_module.__name__):
        await IntentsState.load_page.fn(page)
    assert page.error == STORE_PROBLEM
    assert "no such table" not in page.error and page.rows == []
    assert "no such table: capture_events" in caplog.text


# --- the dashboard over the user's own turns ---------------------------------------------------

NOW = time.time()


def _own_turns(engine: Engine, user_id: str) -> None:
    record_turn_with_calls(
        engine,
        user_id,
        [
            Call("read_file", "Reading the OAuth callback router"),
            Call("read_file", "Reading the OAuth callback router"),
            Call("search_code", "Searching", state="error"),
        ],
        at=NOW,
    )
    record_turn_with_calls(
        engine, user_id, [Call("read_file", "Reading last quarter's notes")], at=NOW - 40 * DAY
    )


async def test_every_user_sees_their_own_turns_calls(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = user_store.ensure_user(engine, "alice").id
    _own_turns(engine, alice)
    _own_turns(engine, user_store.ensure_user(engine, "bob").id)
    sign_in_as(monkeypatch, alice)
    await IntentsState.load_page.fn(page)
    assert page.restricted and page.rows == []  # not an operator: no captured calls
    assert (page.dash_calls, page.dash_failures, page.dash_duplicates) == (4, 1, 2)
    assert page.dash_coverage == "100%"
    assert [(row.label, row.calls) for row in page.tool_rows] == [
        ("read_file", 3),
        ("search_code", 1),
    ]
    assert [row.label for row in page.agent_rows] == ["Default agent"]
    assert [row.label for row in page.server_rows] == ["Built-in tools"]
    assert page.top_intents[0].text == "Reading the OAuth callback router"
    assert [(i.text, i.detail) for i in page.failure_intents] == [
        ("Searching", "1 of 1 call failed")
    ]
    assert [i.text for i in page.vague_intents] == ["Searching"]
    assert page.duplicate_intents[0].detail == "2 calls to read_file"
    assert sum(point["calls"] for point in page.chart) == 4
    # Nothing captured reached this user's page.
    assert "book_car" not in repr(page.tool_rows) + repr(page.top_intents)


async def test_an_operator_sees_captured_calls_beside_their_own(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = user_store.ensure_user(engine, "ops").id
    _own_turns(engine, ops)
    _own_turns(engine, user_store.ensure_user(engine, "bob").id)  # never shown to ops
    sign_in_as(monkeypatch, ops)
    await IntentsState.load_page.fn(page)
    assert page.dash_calls == 5  # four of their own, one captured
    assert {(row.label, row.source) for row in page.tool_rows} == {
        ("read_file", "app"),
        ("search_code", "app"),
        ("book_car", "captured"),
    }
    await IntentsState.set_source.fn(page, "captured")
    assert (page.dash_calls, [row.label for row in page.tool_rows]) == (1, ["book_car"])
    await IntentsState.set_source.fn(page, "app")
    assert page.dash_calls == 4


async def test_the_period_and_a_picked_row_narrow_the_dashboard(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = user_store.ensure_user(engine, "alice").id
    _own_turns(engine, alice)
    sign_in_as(monkeypatch, alice)
    await IntentsState.load_page.fn(page)
    await IntentsState.set_period.fn(page, "30d")
    assert page.dash_calls == 3
    assert "Reading last quarter's notes" not in [i.text for i in page.top_intents]
    await IntentsState.set_period.fn(page, "all")
    assert page.dash_calls == 4
    search = next(row for row in page.tool_rows if row.label == "search_code")
    await IntentsState.pick.fn(page, search.key)
    assert (page.dash_calls, page.scope_label) == (1, "tool search_code (this app)")
    assert [i.text for i in page.top_intents] == ["Searching"]
    assert len(page.tool_rows) == 2  # the tables stay whole
    await IntentsState.pick.fn(page, search.key)  # picked again: everything again
    assert (page.dash_calls, page.scope_label) == (4, "")
    await IntentsState.pick.fn(page, search.key)
    await IntentsState.clear_scope.fn(page)
    assert page.dash_calls == 4
    await IntentsState.pick.fn(page, '["table", "app", "x", ""]')  # not a scope the page wrote
    assert (page.scope_key, page.dash_calls) == ("", 4)
    await IntentsState.set_period.fn(page, "forever")
    assert page.period == "all"


async def test_a_captured_scope_is_refused_to_a_user_who_may_not_see_captured_calls(
    page: IntentsState, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sign_in_as(monkeypatch, user_store.ensure_user(engine, "alice").id)
    await IntentsState.load_page.fn(page)
    await IntentsState.pick.fn(page, Scope("tool", "captured", "book_car", "bookings").key())
    assert (page.scope_key, page.scope_label, page.top_intents) == ("", "", [])


@pytest.mark.parametrize(
    ("agent_id", "name", "shown"),
    [
        ("default", None, "Default agent"),
        ("spec:Reviewer", None, "Reviewer (model spec)"),
        ("0123456789abcdef", "Triage", "Triage"),
        ("0123456789abcdef", None, "Deleted agent (01234567)"),
    ],
)
def test_agent_labels(agent_id: str, name: str | None, shown: str) -> None:
    assert agent_label(agent_id, name) == shown


def test_server_labels() -> None:
    assert server_label("app", "") == "Built-in tools"
    assert server_label("app", "github") == "github"
    assert server_label("captured", "") == "(unnamed server)"
