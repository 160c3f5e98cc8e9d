"""The intents dashboard's tables and queries (docs/dashboard.md).

Two sources feed `/intents`: this app's own turns, whose calls are copied into
`dashboard_calls` when a turn ends (`record_turn_calls`, called by the turn's event log),
and captured MCP servers, whose calls `StoreSink` writes to `capture_events`. The
transaction that writes either also adds them to two counts (`Tally`): `dashboard_counts`,
per UTC day and per tool (with its server) or, for the app's calls, per agent, split by
how the intent was asked for (`required` / `optional` / `none`): calls, calls with an
intent, vague intents, identical sibling intents, failures; and `dashboard_intents`, per
intent over all time: calls, failures.

Every number on the page is a SQL aggregation; nothing loops over stored calls in Python.
The tables, the totals and the chart sum day counts, so they cost the same at a million
calls as at a hundred. The intent lists (the most common, the vague, the identical, the
ones whose calls failed) group the calls by `intent_hash` over covering partial indexes
(`intents_index`); the most common of all time are the largest intent counts.

Who sees what: the app's calls carry their owner, and every query takes the user it reads
for; captured calls belong to no user (owner `""` in the counts) and are read only when
the caller passes the `captured` source, which the page does for operators only.

A deleted conversation takes its calls off the dashboard (`forget_turn_calls`): the
counts go down by what they added, and their rows go.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    Index,
    Select,
    and_,
    case,
    column,
    delete,
    false,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    table,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Field, SQLModel, Text

from intent_ui.core.capture import Coverage, coverage_from_counts
from intent_ui.core.dashboard import (
    CallCopy,
    ToolTest,
    chart_bucket_days,
    copy_turn_calls,
    utc_day,
)
from intent_ui.core.turn import TurnView
from intent_ui.store.db import store_errors

__all__ = [
    "APP",
    "CAPTURED",
    "CAPTURED_OWNER",
    "DUPLICATE_ROWS",
    "FAILED_ROWS",
    "HAS_DIGEST",
    "INTENT_LIST_LIMIT",
    "INTENT_ROWS",
    "NO_SERVER",
    "VAGUE_ROWS",
    "Breakdown",
    "ChartPoint",
    "Counts",
    "Dashboard",
    "DashboardCall",
    "DashboardCount",
    "DashboardIntent",
    "DashboardQuery",
    "IntentCount",
    "Scope",
    "Source",
    "Tally",
    "TurnCopies",
    "dashboard",
    "forget_turn_calls",
    "intents_index",
    "parse_scope",
    "record_turn_calls",
    "tally_captured",
    "timed_queries",
]

Source = Literal["app", "captured"]
APP: Source = "app"
CAPTURED: Source = "captured"
_SOURCES: frozenset[str] = frozenset(get_args(Source))
_ALL_SOURCES: tuple[Source, ...] = (APP, CAPTURED)
CAPTURED_OWNER = ""
"""The owner of captured calls in `dashboard_counts`: nobody (no user id is empty)."""
NO_SERVER = ""
"""`dashboard_counts.server` of a call without one: a key column cannot be NULL and
still make two such rows the same key."""

INTENT_LIST_LIMIT = 10


INTENT_ROWS = "intent_hash IS NOT NULL"
VAGUE_ROWS = "vague"
FAILED_ROWS = "status = 'error'"
DUPLICATE_ROWS = "duplicate"
"""The conditions of the partial indexes, spelt once: a query names the rows it wants
with the very same text, which is what lets SQLite's planner use a partial index."""
HAS_DIGEST = "COALESCE(intent_hash, 0) <> 0"
"""How the list of failures leaves out calls without an intent (a digest is never 0).
Not `intent_hash IS NOT NULL`: a query implying that could be served by a scope's index
of every intent (`ix_*_tool_intents`...), whose rows SQLite's planner then reads one by
one to find the few failures, where the small index of failures alone is far cheaper.
`vague` and `duplicate` need no such test: only a call with an intent is either."""


def intents_index(name: str, *columns: str, where: str = INTENT_ROWS) -> Index:
    return Index(
        name,
        *columns,
        sqlite_where=literal_column(where),
        postgresql_where=literal_column(where),
    )


class DashboardCall(SQLModel, table=True):
    """One call of one of the app's own turns, copied for the dashboard when it ended
    (`intent_ui.core.dashboard.CallCopy`, with its owner, turn and agent)."""

    __tablename__ = "dashboard_calls"
    __table_args__ = (
        Index("ix_dashboard_calls_message_id", "message_id"),
        # The intent lists (`_intent_list`) read these in `intent_hash` order without
        # touching the table: a narrow one for the whole dashboard (PostgreSQL scans an
        # index of three numbers and a short id several times faster than a wide one),
        # one per scope, and one per kind of notable intent (few rows each).
        intents_index("ix_dashboard_calls_intents", "owner_id", "intent_hash", "day"),
        # A period's calls, when it is a small part of them all.
        intents_index("ix_dashboard_calls_day_intents", "owner_id", "day", "intent_hash"),
        intents_index(
            "ix_dashboard_calls_tool_intents", "owner_id", "tool", "server", "intent_hash", "day"
        ),
        intents_index(
            "ix_dashboard_calls_server_intents", "owner_id", "server", "intent_hash", "day"
        ),
        intents_index(
            "ix_dashboard_calls_agent_intents", "owner_id", "agent_id", "intent_hash", "day"
        ),
        intents_index(
            "ix_dashboard_calls_vague",
            *("owner_id", "intent_hash", "day", "tool", "server", "agent_id"),
            where=VAGUE_ROWS,
        ),
        intents_index(
            "ix_dashboard_calls_failed",
            *("owner_id", "intent_hash", "day", "tool", "server", "agent_id"),
            where=FAILED_ROWS,
        ),
        intents_index(
            "ix_dashboard_calls_duplicate",
            *("owner_id", "intent_hash", "tool", "day", "server", "agent_id"),
            where=DUPLICATE_ROWS,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    owner_id: str
    message_id: str = Field(foreign_key="messages.id", ondelete="CASCADE")
    call_id: str
    position: int
    agent_id: str
    tool: str
    server: str | None = Field(default=None, nullable=True)
    intent: str | None = Field(default=None, sa_type=Text, nullable=True)
    intent_hash: int | None = Field(default=None, sa_type=BigInteger, nullable=True)
    outcome: str | None = Field(default=None, sa_type=Text, nullable=True)
    intent_context: str  # 'required' | 'optional' | 'none'
    has_intent: bool
    vague: bool
    duplicate: bool
    status: str  # 'ok' | 'error' | 'cancelled'
    started_at: float
    duration_ms: float | None = Field(default=None, nullable=True)
    day: int  # UTC day number of started_at


class DashboardCount(SQLModel, table=True):
    """Calls per UTC day of one tool (`dimension` 'tool', `name` the tool, with its
    server) or one agent (`dimension` 'agent', `name` the agent id; the app's calls only),
    of one owner and source, and one way of asking for the intent."""

    __tablename__ = "dashboard_counts"

    owner_id: str = Field(primary_key=True)
    source: str = Field(primary_key=True)
    dimension: str = Field(primary_key=True)
    day: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    name: str = Field(primary_key=True)
    server: str = Field(primary_key=True)
    intent_context: str = Field(primary_key=True)
    calls: int = 0
    with_intent: int = 0
    vague: int = 0
    duplicates: int = 0
    failures: int = 0


class DashboardIntent(SQLModel, table=True):
    """Calls per intent of one owner and source, over all time: the most common intents
    of all time are its largest rows, read in `calls` order instead of grouping every
    call (shorter periods group their own calls: `_intent_list`)."""

    __tablename__ = "dashboard_intents"
    __table_args__ = (
        Index("ix_dashboard_intents_calls", "owner_id", "source", "calls", "intent_hash"),
    )

    owner_id: str = Field(primary_key=True)
    source: str = Field(primary_key=True)
    intent_hash: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    calls: int = 0
    failures: int = 0


_CALLS = DashboardCall.__table__  # type: ignore[attr-defined]
_COUNTS = DashboardCount.__table__  # type: ignore[attr-defined]
_INTENTS = DashboardIntent.__table__  # type: ignore[attr-defined]
# The saved agents' names, for the per-agent rows (the table is `store.models.Agent`).
_AGENTS = table("agents", column("id"), column("name"))
_KEY = ("owner_id", "source", "dimension", "day", "name", "server", "intent_context")
_SUMS = ("calls", "with_intent", "vague", "duplicates", "failures")
_INTENT_KEY = ("owner_id", "source", "intent_hash")
_INTENT_SUMS = ("calls", "failures")

# --- writing ---------------------------------------------------------------------------------

CountKey = tuple[str, str, str, int, str, str, str]
"""A `dashboard_counts` key: owner, source, dimension, day, name, server, intent context."""
IntentKey = tuple[str, str, int]
"""A `dashboard_intents` key: owner, source, intent digest."""


@dataclass(slots=True)
class Tally:
    """What a batch of calls adds to the counts: written by `write` in the transaction
    that inserts the calls, so the counts never disagree with the rows."""

    counts: dict[CountKey, list[int]] = field(default_factory=dict)
    intents: dict[IntentKey, list[int]] = field(default_factory=dict)

    def add(
        self,
        owner_id: str,
        source: Source,
        call: Mapping[str, Any],
        *,
        agent_id: str | None = None,
    ) -> None:
        """One call: `day`, `tool`, `server`, `intent_context`, `intent_hash`, and the
        flags `has_intent`, `vague`, `duplicate` and `status`."""
        failed = call["status"] == "error"
        flags = [1, *(int(bool(call[name])) for name in ("has_intent", "vague", "duplicate"))]
        flags.append(int(failed))
        keys = [(owner_id, source, "tool", call["day"], call["tool"], call["server"] or NO_SERVER)]
        if agent_id is not None:
            keys.append((owner_id, source, "agent", call["day"], agent_id, NO_SERVER))
        for key in keys:
            sums = self.counts.setdefault((*key, call["intent_context"]), [0] * len(_SUMS))
            for i, flag in enumerate(flags):
                sums[i] += flag
        if call["intent_hash"] is not None:
            sums = self.intents.setdefault((owner_id, source, call["intent_hash"]), [0, 0])
            sums[0] += 1
            sums[1] += int(failed)

    def write(self, connection: Connection) -> None:
        """Add the tally to the tables, in the caller's transaction: one upsert per table,
        its keys sorted, so that two writers take row locks in one order (PostgreSQL
        would otherwise deadlock them)."""
        _upsert(connection, _COUNTS, _KEY, _SUMS, self.counts)
        _upsert(connection, _INTENTS, _INTENT_KEY, _INTENT_SUMS, self.intents)


def _upsert(
    connection: Connection,
    target: Any,
    key: Sequence[str],
    sums: Sequence[str],
    increments: Mapping[Any, Sequence[int]],
) -> None:
    if not increments:
        return
    rows = [
        {**dict(zip(key, k, strict=True)), **dict(zip(sums, v, strict=True))}
        for k, v in sorted(increments.items())
    ]
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    # In slices: an old SQLite takes at most 999 bound values per statement.
    for start in range(0, len(rows), _UPSERT_ROWS):
        statement = dialect.insert(target).values(rows[start : start + _UPSERT_ROWS])
        statement = statement.on_conflict_do_update(
            index_elements=list(key),
            set_={name: target.c[name] + statement.excluded[name] for name in sums},
        )
        connection.execute(statement)


_UPSERT_ROWS = 999 // len(_KEY + _SUMS)


@dataclass(frozen=True, slots=True)
class TurnCopies:
    """What a turn's event log needs to copy its calls for the dashboard when it ends:
    whose turn it is, with which agent, and the tool rules of `copy_turn_calls`."""

    owner_id: str
    agent_id: str
    required: ToolTest
    omitted: ToolTest

    def copies(self, view: TurnView, ended_at: float) -> list[CallCopy]:
        return copy_turn_calls(
            view, required=self.required, omitted=self.omitted, ended_at=ended_at
        )


@store_errors("copy the turn's calls for the intents dashboard")
def record_turn_calls(
    engine: Engine,
    message_id: str,
    owner_id: str,
    agent_id: str,
    copies: Iterable[CallCopy],
) -> int:
    """Store a finished turn's call copies and add them to the counts, in one
    transaction; returns how many calls were stored."""
    rows = [
        {**copy.to_row(), "owner_id": owner_id, "message_id": message_id, "agent_id": agent_id}
        for copy in copies
    ]
    if not rows:
        return 0
    tally = Tally()
    for row in rows:
        tally.add(owner_id, APP, row, agent_id=agent_id)
    with engine.begin() as connection:
        connection.execute(insert(_CALLS), rows)
        tally.write(connection)
    return len(rows)


def tally_captured(rows: Iterable[Mapping[str, Any]]) -> Tally:
    """What captured call rows (`capture_events` values with `intent_hash` and `vague`)
    add to the counts. A captured call has an intent for coverage only when the model
    wrote it (an inferred one does not count), and no siblings (it belongs to no turn)."""
    tally = Tally()
    for row in rows:
        call = {
            **row,
            "day": utc_day(row["timestamp"]),
            "has_intent": row["intent_source"] == "context_parameter",
            "duplicate": False,
        }
        tally.add(CAPTURED_OWNER, CAPTURED, call)
    return tally


def forget_turn_calls(connection: Connection, message_ids: Any) -> None:
    """Take the calls of these turns (`message_ids`: a select of message ids) off the
    dashboard, in the caller's transaction: the counts go down by what the calls added,
    then the calls' rows (their intents) go."""
    d = _CALLS.c
    mine = d.message_id.in_(message_ids)

    def flag(column: Any) -> Any:
        return func.sum(case((column, 1), else_=0))

    sums = [
        func.count().label("calls"),
        flag(d.has_intent).label("with_intent"),
        flag(d.vague).label("vague"),
        flag(d.duplicate).label("duplicates"),
        flag(d.status == "error").label("failures"),
    ]
    server = func.coalesce(d.server, NO_SERVER)
    c = _COUNTS.c
    for dimension, name, grouped in (
        ("tool", d.tool, [d.tool, server]),
        ("agent", d.agent_id, [d.agent_id]),
    ):
        spent = (
            select(
                d.owner_id,
                d.day,
                name.label("name"),
                (server if dimension == "tool" else literal(NO_SERVER)).label("server"),
                d.intent_context,
                *sums,
            )
            .where(mine)
            .group_by(d.owner_id, d.day, *grouped, d.intent_context)
            .subquery()
        )
        connection.execute(
            update(_COUNTS)
            .where(
                c.owner_id == spent.c.owner_id,
                c.source == APP,
                c.dimension == dimension,
                c.day == spent.c.day,
                c.name == spent.c.name,
                c.server == spent.c.server,
                c.intent_context == spent.c.intent_context,
            )
            .values({total: c[total] - spent.c[total] for total in _SUMS})
        )
    spent_intents = (
        select(
            d.owner_id,
            d.intent_hash,
            func.count().label("calls"),
            flag(d.status == "error").label("failures"),
        )
        .where(mine, d.intent_hash.is_not(None))
        .group_by(d.owner_id, d.intent_hash)
        .subquery()
    )
    i = _INTENTS.c
    connection.execute(
        update(_INTENTS)
        .where(
            i.owner_id == spent_intents.c.owner_id,
            i.source == APP,
            i.intent_hash == spent_intents.c.intent_hash,
        )
        .values({total: i[total] - spent_intents.c[total] for total in _INTENT_SUMS})
    )
    # Rows counted down to nothing go, so no table lists a tool or agent with no calls.
    owners = select(d.owner_id).where(mine).distinct()
    connection.execute(delete(_COUNTS).where(c.owner_id.in_(owners), c.calls <= 0))
    connection.execute(delete(_INTENTS).where(i.owner_id.in_(owners), i.calls <= 0))
    connection.execute(delete(_CALLS).where(mine))


# --- reading ---------------------------------------------------------------------------------

ScopeKind = Literal["tool", "server", "agent"]
_SCOPE_KINDS: frozenset[str] = frozenset(get_args(ScopeKind))


@dataclass(frozen=True, slots=True)
class Scope:
    """What the totals, the chart and the intent lists narrow to: one tool (its source,
    name and server), one server (its source; `""` is the app's built-in tools) or one
    agent (the app's calls only)."""

    kind: ScopeKind
    source: Source
    name: str = ""
    server: str = NO_SERVER

    def key(self) -> str:
        """The scope as a string a page can hand back (`parse_scope` reads it)."""
        return json.dumps([self.kind, self.source, self.name, self.server])


def parse_scope(key: object) -> Scope | None:
    """The scope `Scope.key` wrote; None for anything else (a page's input is untrusted)."""
    if not isinstance(key, str):
        return None
    try:
        kind, source, name, server = json.loads(key)
    except (TypeError, ValueError):
        return None
    if kind not in _SCOPE_KINDS or source not in _SOURCES:
        return None
    if not isinstance(name, str) or not isinstance(server, str):
        return None
    if kind == "agent" and source != APP:
        return None
    return Scope(kind, source, name, server)


@dataclass(frozen=True, slots=True)
class DashboardQuery:
    """Whose dashboard, over which sources, from which UTC day (None: all time) to
    `today`, narrowed to `scope` (None: everything)."""

    owner_id: str
    sources: frozenset[Source]
    today: int
    since_day: int | None = None
    scope: Scope | None = None


@dataclass(frozen=True, slots=True)
class Counts:
    """Summed day counts: calls, coverage inputs, and the three kinds of notable intent."""

    calls: int = 0
    required_calls: int = 0
    required_with_intent: int = 0
    optional_calls: int = 0
    optional_with_intent: int = 0
    with_intent: int = 0
    vague: int = 0
    duplicates: int = 0
    failures: int = 0

    @property
    def coverage(self) -> Coverage:
        return coverage_from_counts(
            self.required_calls,
            self.required_with_intent,
            self.optional_calls,
            self.optional_with_intent,
        )


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One row of the per-tool, per-server or per-agent table."""

    scope: Scope
    counts: Counts
    agent_name: str | None = None  # a saved agent's name (agent rows)


@dataclass(frozen=True, slots=True)
class ChartPoint:
    day: int  # the first UTC day of the bar
    calls: int
    with_intent: int
    failures: int


@dataclass(frozen=True, slots=True)
class IntentCount:
    """One intent of a list: its text (as copied), how many calls wrote it in scope, how
    many of those failed, and the tool (identical sibling intents are per tool)."""

    text: str
    calls: int
    failures: int = 0
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class Dashboard:
    totals: Counts
    tools: list[Breakdown]
    servers: list[Breakdown]
    agents: list[Breakdown]
    chart: list[ChartPoint]
    bucket_days: int
    top_intents: list[IntentCount]
    vague_intents: list[IntentCount]
    duplicate_intents: list[IntentCount]
    failure_intents: list[IntentCount]
    sources: frozenset[Source] = field(default_factory=frozenset)


def _count_columns() -> list[Any]:
    c = _COUNTS.c
    required = c.intent_context == "required"
    optional = c.intent_context == "optional"
    summed = {
        "calls": c.calls,
        "required_calls": case((required, c.calls), else_=0),
        "required_with_intent": case((required, c.with_intent), else_=0),
        "optional_calls": case((optional, c.calls), else_=0),
        "optional_with_intent": case((optional, c.with_intent), else_=0),
        "with_intent": c.with_intent,
        "vague": c.vague,
        "duplicates": c.duplicates,
        "failures": c.failures,
    }
    return [func.coalesce(func.sum(value), 0).label(name) for name, value in summed.items()]


def _counts(values: Sequence[Any]) -> Counts:
    return Counts(*(int(value or 0) for value in values))


def _owner_of(source: Source, owner_id: str) -> str:
    return owner_id if source == APP else CAPTURED_OWNER


def _visible(query: DashboardQuery, sources: Iterable[Source]) -> ColumnElement[bool]:
    c = _COUNTS.c
    allowed = sorted(set(sources) & query.sources)
    if not allowed:
        return false()
    return or_(*(and_(c.owner_id == _owner_of(s, query.owner_id), c.source == s) for s in allowed))


def _since(query: DashboardQuery) -> ColumnElement[bool]:
    return true() if query.since_day is None else _COUNTS.c.day >= query.since_day


def _scoped(query: DashboardQuery) -> ColumnElement[bool]:
    """The day-count rows of the query's scope (every tool row without one)."""
    c = _COUNTS.c
    scope = query.scope
    if scope is None:
        return and_(c.dimension == "tool", _visible(query, _SOURCES))  # type: ignore[arg-type]
    if scope.kind == "agent":
        return and_(c.dimension == "agent", _visible(query, [APP]), c.name == scope.name)
    where = [c.dimension == "tool", _visible(query, [scope.source]), c.server == scope.server]
    if scope.kind == "tool":
        where.append(c.name == scope.name)
    return and_(*where)


def _tool_rows(connection: Connection, query: DashboardQuery) -> list[Breakdown]:
    c = _COUNTS.c
    by = (c.source, c.name, c.server)
    rows = connection.execute(
        select(*by, *_count_columns())
        .where(c.dimension == "tool", _visible(query, _ALL_SOURCES), _since(query))
        .group_by(*by)
        .order_by(literal_column("calls").desc(), c.name, c.server, c.source)
    ).all()
    return [Breakdown(Scope("tool", row[0], row[1], row[2]), _counts(row[3:])) for row in rows]


def _server_rows(connection: Connection, query: DashboardQuery) -> list[Breakdown]:
    c = _COUNTS.c
    rows = connection.execute(
        select(c.source, c.server, *_count_columns())
        .where(c.dimension == "tool", _visible(query, _ALL_SOURCES), _since(query))
        .group_by(c.source, c.server)
        .order_by(literal_column("calls").desc(), c.server, c.source)
    ).all()
    return [Breakdown(Scope("server", row[0], "", row[1]), _counts(row[2:])) for row in rows]


def _agent_rows(connection: Connection, query: DashboardQuery) -> list[Breakdown]:
    c = _COUNTS.c
    agents = (
        select(c.name, *_count_columns())
        .where(c.dimension == "agent", _visible(query, [APP]), _since(query))
        .group_by(c.name)
        .subquery()
    )
    rows = connection.execute(
        select(agents, _AGENTS.c.name.label("agent_name"))
        .select_from(agents.outerjoin(_AGENTS, _AGENTS.c.id == agents.c.name))
        .order_by(agents.c.calls.desc(), agents.c.name)
    ).all()
    return [
        Breakdown(Scope("agent", APP, row[0]), _counts(row[1:-1]), agent_name=row[-1])
        for row in rows
    ]


def _chart(connection: Connection, query: DashboardQuery) -> tuple[list[ChartPoint], int]:
    c = _COUNTS.c
    first = query.since_day
    if first is None:
        first = connection.execute(select(func.min(c.day)).where(_scoped(query))).scalar()
        if first is None:
            return [], 1
    last = max(query.today, first)
    bucket = chart_bucket_days(first, last)
    start = (c.day - (c.day - first) % bucket).label("bucket")
    rows = connection.execute(
        select(start, func.sum(c.calls), func.sum(c.with_intent), func.sum(c.failures))
        .where(_scoped(query), c.day >= first)
        .group_by(start)
    ).all()
    found = {int(day): (int(n), int(w), int(f)) for day, n, w, f in rows}
    # One point per bar, empty days included: a gap in the data is a gap in the chart.
    return [
        ChartPoint(day, *found.get(day, (0, 0, 0))) for day in range(first, last + 1, bucket)
    ], bucket


def _totals(connection: Connection, query: DashboardQuery) -> Counts:
    row = connection.execute(select(*_count_columns()).where(_scoped(query), _since(query))).one()
    return _counts(row)


# --- intent lists ------------------------------------------------------------------------------


def _capture_table() -> Any:
    from intent_ui.store.capture_events import CaptureEvent

    return CaptureEvent.__table__  # type: ignore[attr-defined]


ListKind = Literal["top", "vague", "failed", "duplicate"]

_LIST_ROWS: dict[ListKind, str] = {
    "top": INTENT_ROWS,
    "vague": VAGUE_ROWS,
    "failed": FAILED_ROWS,
    "duplicate": DUPLICATE_ROWS,
}


def _list_rows(kind: ListKind) -> list[ColumnElement[bool]]:
    """The rows one list reads, in either table. Spelt as the partial indexes spell their
    conditions, so the planners match them."""
    where: list[ColumnElement[bool]] = [literal_column(_LIST_ROWS[kind])]
    if kind == "failed":
        where.append(literal_column(HAS_DIGEST))
    return where


def _app_filter(query: DashboardQuery, kind: ListKind) -> list[ColumnElement[bool]] | None:
    """The conditions on the app's call rows for one list; None: the list has none."""
    if APP not in query.sources:
        return None
    d = _CALLS.c
    where = [d.owner_id == query.owner_id, *_list_rows(kind)]
    if query.since_day is not None:
        where.append(d.day >= query.since_day)
    scope = query.scope
    if scope is not None:
        if scope.source != APP:
            return None
        if scope.kind == "agent":
            where.append(d.agent_id == scope.name)
        else:
            where.append(_server_is(d.server, scope.server))
            if scope.kind == "tool":
                where.append(d.tool == scope.name)
    return where


def _captured_filter(query: DashboardQuery, kind: ListKind) -> list[ColumnElement[bool]] | None:
    """The conditions on captured call rows for one list; None: the list has none (no
    captured call belongs to a turn, so none has siblings)."""
    if CAPTURED not in query.sources or kind == "duplicate":
        return None
    e = _capture_table().c
    where = _list_rows(kind)
    if query.since_day is not None:
        where.append(e.timestamp >= query.since_day * 86_400)
    scope = query.scope
    if scope is not None:
        if scope.source != CAPTURED or scope.kind == "agent":
            return None
        where.append(_server_is(e.server, scope.server))
        if scope.kind == "tool":
            where.append(e.tool == scope.name)
    return where


def _server_is(column: Any, server: str) -> ColumnElement[bool]:
    return column.is_(None) if server == NO_SERVER else column == server


def _intent_list(
    connection: Connection, query: DashboardQuery, kind: ListKind
) -> list[IntentCount]:
    """One intent list: grouped by `intent_hash` in each source, summed across them, the
    `INTENT_LIST_LIMIT` largest kept; then one text per kept intent (any row of it will
    do: they share their words) and, for failures, how many calls wrote it in all."""
    d = _CALLS.c
    e = _capture_table().c
    app_where = _app_filter(query, kind)
    captured_where = _captured_filter(query, kind)
    # Identical sibling intents are per tool, and only the app's calls have siblings.
    by_tool = kind == "duplicate"
    parts: list[Select[Any]] = []
    if app_where is not None:
        tool = d.tool if by_tool else literal(None)
        parts.append(
            select(d.intent_hash.label("h"), tool.label("tool"), func.count().label("n"))
            .where(*app_where)
            .group_by(d.intent_hash, *([d.tool] if by_tool else []))
        )
    if captured_where is not None:
        parts.append(
            select(e.intent_hash.label("h"), func.count().label("n"))
            .where(*captured_where)
            .group_by(e.intent_hash)
        )
    if not parts:
        return []
    if kind == "top" and _all_time(query):
        ranked = _counted(query)
    elif len(parts) == 1 and app_where is not None:
        ranked = parts[0]
    elif len(parts) == 1:
        captured_part = parts[0].subquery()
        ranked = select(captured_part.c.h, literal(None).label("tool"), captured_part.c.n)
    else:
        # Both sources: each grouped on its own, then summed per intent (no tool here).
        app_part = parts[0].with_only_columns(d.intent_hash.label("h"), func.count().label("n"))
        merged = union_all(app_part, parts[1]).subquery()
        ranked = select(
            merged.c.h, literal(None).label("tool"), func.sum(merged.c.n).label("n")
        ).group_by(merged.c.h)
    # Ties by digest, descending: the order the intent counts' index is read in.
    ranked = ranked.order_by(literal_column("n").desc(), literal_column("h").desc()).limit(
        INTENT_LIST_LIMIT
    )
    top = ranked.subquery()
    texts: list[Any] = []
    if app_where is not None:
        texts.append(
            select(d.intent)
            .where(d.owner_id == query.owner_id, d.intent_hash == top.c.h)
            .limit(1)
            .scalar_subquery()
        )
    if captured_where is not None:
        texts.append(select(e.intent).where(e.intent_hash == top.c.h).limit(1).scalar_subquery())
    text = texts[0] if len(texts) == 1 else func.coalesce(*texts)
    totals = literal(0)
    if kind == "failed":
        # Failures: the list counts failed calls; `calls` is every call of the intent.
        totals = _all_calls(query, top.c.h)
    rows = connection.execute(
        select(text, top.c.n, totals, top.c.tool).order_by(top.c.n.desc(), top.c.h.desc())
    ).all()
    if kind == "failed":
        return [IntentCount(t or "", int(calls), int(n), None) for t, n, calls, _ in rows]
    return [IntentCount(t or "", int(n), 0, tool) for t, n, _, tool in rows]


def _all_time(query: DashboardQuery) -> bool:
    """Whether the intent counts answer the query (they hold all time, for everything)."""
    return query.since_day is None and query.scope is None


def _counted_sources(query: DashboardQuery) -> ColumnElement[bool]:
    i = _INTENTS.c
    return or_(
        *(
            and_(i.owner_id == _owner_of(s, query.owner_id), i.source == s)
            for s in sorted(query.sources)
        )
    )


def _counted(query: DashboardQuery) -> Select[Any]:
    """The intents of all time from their counts: one source's largest rows straight from
    the index, or both sources' summed per intent."""
    i = _INTENTS.c
    if len(query.sources) == 1:
        return select(
            i.intent_hash.label("h"), literal(None).label("tool"), i.calls.label("n")
        ).where(_counted_sources(query), i.calls > 0)
    return (
        select(i.intent_hash.label("h"), literal(None).label("tool"), func.sum(i.calls).label("n"))
        .where(_counted_sources(query), i.calls > 0)
        .group_by(i.intent_hash)
    )


def _all_calls(query: DashboardQuery, h: Any) -> Any:
    """Every call in scope whose intent has the digest `h` (a correlated count)."""
    if _all_time(query):
        i = _INTENTS.c
        return (
            select(func.coalesce(func.sum(i.calls), 0))
            .where(_counted_sources(query), i.intent_hash == h)
            .scalar_subquery()
        )
    counted: list[Any] = []
    top_query = query
    app_where = _app_filter(top_query, "top")
    if app_where is not None:
        counted.append(
            select(func.count()).where(*app_where, _CALLS.c.intent_hash == h).scalar_subquery()
        )
    captured_where = _captured_filter(top_query, "top")
    if captured_where is not None:
        e = _capture_table().c
        counted.append(
            select(func.count()).where(*captured_where, e.intent_hash == h).scalar_subquery()
        )
    total: Any = literal(0)
    for count in counted:
        total = total + count
    return total


def _intent_lists(connection: Connection, query: DashboardQuery) -> dict[str, list[IntentCount]]:
    return {
        "top_intents": _intent_list(connection, query, "top"),
        "vague_intents": _intent_list(connection, query, "vague"),
        "duplicate_intents": _intent_list(connection, query, "duplicate"),
        "failure_intents": _intent_list(connection, query, "failed"),
    }


@store_errors("read the intents dashboard")
def dashboard(engine: Engine, query: DashboardQuery) -> Dashboard:
    """Everything `/intents` shows for `query`, in one read transaction."""
    with engine.connect() as connection:
        tools = _tool_rows(connection, query)
        servers = _server_rows(connection, query)
        agents = _agent_rows(connection, query)
        totals = _totals(connection, query)
        chart, bucket = _chart(connection, query)
        lists = _intent_lists(connection, query)
    return Dashboard(
        totals=totals,
        chart=chart,
        bucket_days=bucket,
        sources=query.sources,
        tools=tools,
        servers=servers,
        agents=agents,
        **lists,
    )


def timed_queries(query: DashboardQuery) -> list[tuple[str, Callable[[Connection], object]]]:
    """The dashboard's queries one by one, named, for the benchmark to time."""
    return [
        ("calls per tool", lambda c: _tool_rows(c, query)),
        ("calls per server", lambda c: _server_rows(c, query)),
        ("calls per agent", lambda c: _agent_rows(c, query)),
        ("totals", lambda c: _totals(c, query)),
        ("chart", lambda c: _chart(c, query)),
        ("most common intents", lambda c: _intent_list(c, query, "top")),
        ("vague intents", lambda c: _intent_list(c, query, "vague")),
        ("identical sibling intents", lambda c: _intent_list(c, query, "duplicate")),
        ("intents of failed calls", lambda c: _intent_list(c, query, "failed")),
    ]
