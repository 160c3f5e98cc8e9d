"""The intents page's state (`/intents`): the dashboard over the app's own turns and the
captured MCP servers, read-only (docs/dashboard.md).

Every number comes from `intent_ui.store.dashboard.dashboard` (SQL sums and groupings) and
`intent_ui.store.capture_events.capture_summary` (the captured servers' panel); the
coverage arithmetic is the pure rule in `intent_ui.core.capture`. This module only picks
the query from the page's controls (period, source, the row picked) and turns the answer
into display strings.

Like every page it asks who is signing in first, on every event. Each user sees the calls
of their own turns and nobody else's. Captured calls come from MCP servers, not from
anyone's chats, so they belong to no user: they are shown to operators only
(`sees_captured_calls`), in full, beside the operator's own calls; an operator does not
see other users' turns. A database problem is told in plain words while its details go to
the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import reflex as rx
from sqlalchemy.exc import SQLAlchemyError

from intent_ui.config import AuthConfig
from intent_ui.core.capture import Coverage
from intent_ui.core.dashboard import PERIODS, day_label, since_day, utc_day
from intent_ui.store import users as user_store
from intent_ui.store.capture_events import capture_summary
from intent_ui.store.dashboard import (
    APP,
    CAPTURED,
    NO_SERVER,
    Breakdown,
    Counts,
    Dashboard,
    DashboardQuery,
    IntentCount,
    Scope,
    Source,
    dashboard,
    parse_scope,
)
from intent_ui.store.db import StoreError
from intent_ui.ui.auth import AuthState
from intent_ui.ui.host import Host, get_host

__all__ = [
    "DEFAULT_PERIOD",
    "OPERATORS_ONLY",
    "PERIOD_LABELS",
    "SOURCE_LABELS",
    "STORE_PROBLEM",
    "BreakdownVM",
    "CaptureRowVM",
    "IntentVM",
    "IntentsState",
    "agent_label",
    "percent",
    "sees_captured_calls",
    "server_label",
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
    "The intents dashboard could not be read from the database. Check that the database "
    "(DB_URL, or .data/intent_ui.db) is reachable and the app can read it, then reload "
    "this page; the app's log has the details."
)

DEFAULT_PERIOD = "all"
PERIOD_LABELS: dict[str, str] = {
    "1d": "Today (UTC)",
    "7d": "Last 7 days",
    "30d": "Last 30 days",
    "90d": "Last 90 days",
    "all": "All time",
}
SOURCE_LABELS: dict[str, str] = {
    "all": "All sources",
    APP: "This app's turns",
    CAPTURED: "Captured servers",
}
_BUCKETS = {1: "day", 7: "week", 30: "30 days"}


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


@dataclass(frozen=True, slots=True)
class _Shares:
    """Call Coverage and the optional share as shown, each with the counts behind it."""

    coverage: str
    coverage_detail: str
    optional: str
    optional_detail: str


def _shares(cov: Coverage, kind: str) -> _Shares:
    """`kind` follows required/optional in the details: "-context" for captured calls
    ("2 of 3 required-context calls"), "-intent" for the totals, "" in the tables."""
    return _Shares(
        coverage=percent(cov.call_coverage),
        coverage_detail=_of(cov.required_with_intent, cov.required_calls, f"required{kind}"),
        optional=percent(cov.optional_share),
        optional_detail=_of(cov.optional_with_intent, cov.optional_calls, f"optional{kind}"),
    )


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def server_label(source: str, server: str) -> str:
    """How a server reads in the tables: the app's tools without one are built in."""
    if server != NO_SERVER:
        return server
    return "Built-in tools" if source == APP else "(unnamed server)"


def agent_label(agent_id: str, name: str | None) -> str:
    """The default agent, a model spec (`spec:NAME`), a saved agent by its name, or one
    deleted since (its calls stay)."""
    if agent_id == "default":
        return "Default agent"
    if agent_id.startswith("spec:"):
        return f"{agent_id[len('spec:') :]} (model spec)"
    return name or f"Deleted agent ({agent_id[:8]})"


@dataclass
class CaptureRowVM:
    tool: str = ""
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    latest_intent: str = ""


@dataclass
class BreakdownVM:
    """One row of the per-tool, per-server or per-agent table."""

    key: str = ""  # the row's scope (`Scope.key`), handed back when it is picked
    label: str = ""
    source: str = ""
    source_label: str = ""
    server: str = ""
    calls: int = 0
    coverage: str = NO_CALLS
    coverage_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    vague: int = 0
    duplicates: int = 0
    failures: int = 0


@dataclass
class IntentVM:
    """One intent of a list: its text, its count, and a detail (the tool, or how many of
    its calls failed)."""

    text: str = ""
    count: int = 0
    detail: str = ""


def _capture_row(tool: str, calls: int, cov: Coverage, latest: str | None) -> CaptureRowVM:
    shares = _shares(cov, "-context")
    return CaptureRowVM(
        tool=tool,
        calls=calls,
        call_coverage=shares.coverage,
        required_detail=shares.coverage_detail,
        optional_share=shares.optional,
        optional_detail=shares.optional_detail,
        latest_intent=latest or "",
    )


def _breakdown(row: Breakdown) -> BreakdownVM:
    scope, counts = row.scope, row.counts
    shares = _shares(counts.coverage, "")
    if scope.kind == "tool":
        label = scope.name
    elif scope.kind == "server":
        label = server_label(scope.source, scope.server)
    else:
        label = agent_label(scope.name, row.agent_name)
    return BreakdownVM(
        key=scope.key(),
        label=label,
        source=scope.source,
        source_label="this app" if scope.source == APP else "captured",
        server=scope.server,
        calls=counts.calls,
        coverage=shares.coverage,
        coverage_detail=shares.coverage_detail,
        optional_share=shares.optional,
        optional_detail=shares.optional_detail,
        vague=counts.vague,
        duplicates=counts.duplicates,
        failures=counts.failures,
    )


def _intents(found: list[IntentCount], kind: str) -> list[IntentVM]:
    if kind == "failed":
        return [
            IntentVM(i.text, i.failures, f"{i.failures} of {_calls(i.calls)} failed") for i in found
        ]
    if kind == "duplicate":
        return [IntentVM(i.text, i.calls, f"{_calls(i.calls)} to {i.tool}") for i in found]
    return [IntentVM(i.text, i.calls, _calls(i.calls)) for i in found]


def _scope_label(scope: Scope, rows: list[BreakdownVM]) -> str:
    named = next((row.label for row in rows if row.key == scope.key()), None)
    where = "this app" if scope.source == APP else "captured"
    if scope.kind == "tool":
        return f"tool {scope.name} ({where})"
    if scope.kind == "server":
        return f"server {named or server_label(scope.source, scope.server)} ({where})"
    return f"agent {named or agent_label(scope.name, None)}"


class IntentsState(AuthState):
    """The `/intents` page."""

    # The captured servers' panel (operators only). Its totals and the dashboard's below
    # repeat the figures of a row (`CaptureRowVM`, `BreakdownVM`) on purpose, as fields
    # of their own that the page reads by name; `_shares` words rows and totals alike.
    rows: list[CaptureRowVM] = []
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    loaded: bool = False
    error: str = ""
    restricted: bool = False  # signed in, but not an operator: no captured calls

    # The dashboard's controls.
    period: str = DEFAULT_PERIOD
    source: str = "all"
    scope_key: str = ""
    scope_label: str = ""

    # The dashboard over the chosen period, sources and scope.
    dash_calls: int = 0
    dash_coverage: str = NO_CALLS
    dash_coverage_detail: str = ""
    dash_optional: str = NO_CALLS
    dash_optional_detail: str = ""
    dash_vague: int = 0
    dash_duplicates: int = 0
    dash_failures: int = 0
    dash_with_intent: int = 0
    any_calls: bool = False  # anything at all in the period, before the scope narrows it
    tool_rows: list[BreakdownVM] = []
    server_rows: list[BreakdownVM] = []
    agent_rows: list[BreakdownVM] = []
    top_intents: list[IntentVM] = []
    vague_intents: list[IntentVM] = []
    duplicate_intents: list[IntentVM] = []
    failure_intents: list[IntentVM] = []
    chart: list[dict[str, Any]] = []
    chart_unit: str = "day"

    @rx.event
    async def load_page(self) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        self.reset()  # this page's vars: nothing from an earlier load stays
        if user is None:
            return await self.sign_in_redirect(host)
        await self._refresh(host, user)
        return None

    @rx.event
    async def set_period(self, period: str) -> Any:
        self.period = period if period in PERIODS else DEFAULT_PERIOD
        return await self._reload()

    @rx.event
    async def set_source(self, source: str) -> Any:
        self.source = source if source in SOURCE_LABELS else "all"
        self.scope_key = ""
        return await self._reload()

    @rx.event
    async def pick(self, key: str) -> Any:
        """Narrow the totals, the chart and the intent lists to one row's tool, server or
        agent; picking the row already picked widens them again."""
        self.scope_key = "" if key == self.scope_key or parse_scope(key) is None else key
        return await self._reload()

    @rx.event
    async def clear_scope(self) -> Any:
        self.scope_key = ""
        return await self._reload()

    async def _reload(self) -> Any:
        host = await get_host()
        user = await self.current_user(host)
        if user is None:
            self._forget_data()
            return await self.sign_in_redirect(host)
        await self._refresh(host, user)
        return None

    def _forget_data(self) -> None:
        """Every number and intent of the page goes; the controls stay as chosen."""
        kept = (self.period, self.source, self.scope_key)
        self.reset()
        self.period, self.source, self.scope_key = kept

    async def _refresh(self, host: Host, user_id: str) -> None:
        sees = await asyncio.to_thread(_sees_captured_calls, host, user_id)
        self.restricted = not sees
        sources = self._sources(sees)
        today = utc_day(time.time())
        since = since_day(self.period, today)
        scope = parse_scope(self.scope_key)
        if scope is not None and scope.source not in sources:
            scope, self.scope_key = None, ""
        query = DashboardQuery(user_id, sources, today, since, scope)
        try:
            found = await asyncio.to_thread(dashboard, host.engine, query)
            summary = await asyncio.to_thread(capture_summary, host.engine, since) if sees else None
        except (StoreError, SQLAlchemyError):
            logger.exception("The intents page could not read the dashboard")
            self._forget_data()
            self.error = STORE_PROBLEM
            self.loaded = True
            return
        self.error = ""
        self._show(found, scope)
        if summary is None:
            self.rows, self.calls = [], 0
        else:
            overall = _capture_row("", summary.calls, summary.overall, None)
            self.rows = [
                _capture_row(t.tool, t.calls, t.coverage, t.latest_intent) for t in summary.tools
            ]
            self.calls = summary.calls
            self.call_coverage = overall.call_coverage
            self.required_detail = overall.required_detail
            self.optional_share = overall.optional_share
            self.optional_detail = overall.optional_detail
        self.loaded = True

    def _sources(self, sees_captured: bool) -> frozenset[Source]:
        if not sees_captured or self.source == APP:
            return frozenset({APP})
        if self.source == CAPTURED:
            return frozenset({CAPTURED})
        return frozenset({APP, CAPTURED})

    def _show(self, found: Dashboard, scope: Scope | None) -> None:
        totals: Counts = found.totals
        shares = _shares(totals.coverage, "-intent")
        self.dash_calls = totals.calls
        self.dash_with_intent = totals.with_intent
        self.dash_coverage = shares.coverage
        self.dash_coverage_detail = shares.coverage_detail
        self.dash_optional = shares.optional
        self.dash_optional_detail = shares.optional_detail
        self.dash_vague = totals.vague
        self.dash_duplicates = totals.duplicates
        self.dash_failures = totals.failures
        self.tool_rows = [_breakdown(row) for row in found.tools]
        self.server_rows = [_breakdown(row) for row in found.servers]
        self.agent_rows = [_breakdown(row) for row in found.agents]
        self.any_calls = bool(self.tool_rows)
        everything = self.tool_rows + self.server_rows + self.agent_rows
        self.scope_label = "" if scope is None else _scope_label(scope, everything)
        self.top_intents = _intents(found.top_intents, "top")
        self.vague_intents = _intents(found.vague_intents, "vague")
        self.duplicate_intents = _intents(found.duplicate_intents, "duplicate")
        self.failure_intents = _intents(found.failure_intents, "failed")
        self.chart_unit = _BUCKETS.get(found.bucket_days, f"{found.bucket_days} days")
        self.chart = [
            {
                "label": day_label(point.day),
                "calls": point.calls,
                "with_intent": point.with_intent,
                "without_intent": point.calls - point.with_intent,
                "failed": point.failures,
            }
            for point in found.chart
        ]


def _sees_captured_calls(host: Host, user_id: str) -> bool:
    user = user_store.get_user(host.engine, user_id)
    return sees_captured_calls(host.config.auth, user.name if user is not None else None)
