"""Captured MCP tool calls (`capture_events`): written by `StoreSink`, read by /intents.

Append-only: one row per finished tool call of a server wrapped by
`intent_ui.capture.with_intent_capture`. The id is an autoincrement integer, since rows
are only ever inserted and read in bulk. Each row also gets what the intents dashboard
groups by (`intent_hash`, `vague`: `intent_ui.core.dashboard`), and the transaction that
inserts rows adds them to the dashboard's day counts (`intent_ui.store.dashboard`), which
the summary below sums: the database counts, and Call Coverage is the pure rule in
`intent_ui.core.capture` applied to its sums.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from sqlalchemy import (
    BigInteger,
    Engine,
    Index,
    case,
    false,
    func,
    insert,
    literal_column,
    select,
)
from sqlmodel import Field, SQLModel, Text

from intent_ui.core.capture import (
    Coverage,
    IntentContextMode,
    IntentSource,
    coverage_from_counts,
)
from intent_ui.core.dashboard import dashboard_text, intent_hash, is_vague
from intent_ui.store.dashboard import (
    CAPTURED,
    CAPTURED_OWNER,
    FAILED_ROWS,
    VAGUE_ROWS,
    DashboardCount,
    intents_index,
    tally_captured,
)
from intent_ui.store.db import StoreError

__all__ = ["CaptureEvent", "CaptureSummary", "ToolCapture", "add_capture_events", "capture_summary"]

_MODES: frozenset[IntentContextMode] = frozenset(get_args(IntentContextMode))
_SOURCES: frozenset[str] = frozenset(get_args(IntentSource))
_STATUSES = frozenset({"ok", "error"})


class CaptureEvent(SQLModel, table=True):
    __tablename__ = "capture_events"
    __table_args__ = (
        Index("ix_capture_events_tool", "tool"),
        Index("ix_capture_events_timestamp", "timestamp"),
        # The newest intent of a tool, read from the end (`capture_summary`).
        Index(
            "ix_capture_events_tool_intent",
            "tool",
            "id",
            sqlite_where=literal_column("intent IS NOT NULL"),
            postgresql_where=literal_column("intent IS NOT NULL"),
        ),
        # The dashboard's intent lists read these (`store.dashboard`, which explains them).
        intents_index("ix_capture_events_intents", "intent_hash", "timestamp"),
        intents_index("ix_capture_events_time_intents", "timestamp", "intent_hash"),
        intents_index(
            "ix_capture_events_tool_intents", "tool", "server", "intent_hash", "timestamp"
        ),
        intents_index("ix_capture_events_server_intents", "server", "intent_hash", "timestamp"),
        intents_index(
            "ix_capture_events_vague",
            *("intent_hash", "timestamp", "tool", "server"),
            where=VAGUE_ROWS,
        ),
        intents_index(
            "ix_capture_events_failed",
            *("intent_hash", "timestamp", "tool", "server"),
            where=FAILED_ROWS,
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    server: str | None = Field(default=None, nullable=True)
    tool: str
    intent: str | None = Field(default=None, sa_type=Text, nullable=True)
    intent_context: str  # 'required' | 'optional' | 'none'
    intent_source: str | None = Field(default=None, nullable=True)
    status: str  # 'ok' | 'error'
    duration_ms: float
    timestamp: float  # epoch seconds at the start of the call
    # `intent_ui.core.dashboard.intent_hash` / `is_vague` of the intent, for the dashboard.
    intent_hash: int | None = Field(default=None, sa_type=BigInteger, nullable=True)
    vague: bool = Field(default=False, sa_column_kwargs={"server_default": false()})


def _row(record: Mapping[str, Any]) -> dict[str, Any]:
    try:
        row = {
            "server": record.get("server"),
            "tool": record["tool"],
            "intent": record.get("intent"),
            "intent_context": record["intent_context"],
            "intent_source": record.get("intent_source"),
            "status": record["status"],
            "duration_ms": float(record["duration_ms"]),
            "timestamp": float(record["timestamp"]),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(
            f"A capture event needs tool, intent_context, status, duration_ms and timestamp; "
            f"{dict(record)!r} is missing or mistypes {exc}."
        ) from exc
    if (
        not isinstance(row["tool"], str)
        or row["intent_context"] not in _MODES
        or (row["intent_source"] is not None and row["intent_source"] not in _SOURCES)
        or row["status"] not in _STATUSES
    ):
        raise StoreError(
            f"Invalid capture event {dict(record)!r}: intent_context must be one of "
            f"{sorted(_MODES)}, intent_source one of {sorted(_SOURCES)} or null, status "
            f"one of {sorted(_STATUSES)}."
        )
    return row


def add_capture_events(engine: Engine, records: Iterable[Mapping[str, Any]]) -> int:
    """Insert call events (`CallEvent.to_record()` dicts) in one transaction; the count.

    Every record is checked first, so one bad record inserts nothing and names itself.
    The intent is stored as `intent_ui.core.dashboard.dashboard_text` makes it (the
    wrapper has stripped and clamped it already; a record from elsewhere may not have
    been), with its dashboard digest and vagueness; the same transaction adds the calls
    to the dashboard's day counts.
    """
    rows = [_with_dashboard_fields(_row(record)) for record in records]
    if rows:
        with engine.begin() as connection:
            connection.execute(insert(CaptureEvent), rows)
            tally_captured(rows).write(connection)
    return len(rows)


def _with_dashboard_fields(row: dict[str, Any]) -> dict[str, Any]:
    intent = dashboard_text(row["intent"])
    return {
        **row,
        "intent": intent,
        "intent_hash": intent_hash(intent) if intent else None,
        "vague": is_vague(intent, row["tool"]),
    }


@dataclass(frozen=True, slots=True)
class ToolCapture:
    """One tool's captured calls: all of them, their coverage, and the latest intent."""

    tool: str
    calls: int
    coverage: Coverage
    latest_intent: str | None


@dataclass(frozen=True, slots=True)
class CaptureSummary:
    """Every tool (by name), and the coverage over all of them together."""

    tools: list[ToolCapture]
    overall: Coverage
    calls: int


def capture_summary(engine: Engine, since_day: int | None = None) -> CaptureSummary:
    """Per-tool Call Coverage (required-context calls) and optional share, from UTC day
    `since_day` on (None: all time): sums of the dashboard's day counts, and each tool's
    newest intent, read from the end of its rows."""
    counts = DashboardCount.__table__  # type: ignore[attr-defined]
    c = counts.c
    required = c.intent_context == "required"
    optional = c.intent_context == "optional"
    sums = [
        func.sum(c.calls),
        func.sum(case((required, c.calls), else_=0)),
        func.sum(case((required, c.with_intent), else_=0)),
        func.sum(case((optional, c.calls), else_=0)),
        func.sum(case((optional, c.with_intent), else_=0)),
    ]
    where = [c.owner_id == CAPTURED_OWNER, c.source == CAPTURED, c.dimension == "tool"]
    if since_day is not None:
        where.append(c.day >= since_day)
    per_tool = select(c.name, *sums).where(*where).group_by(c.name).subquery()
    events = CaptureEvent.__table__  # type: ignore[attr-defined]
    newest = select(events.c.intent).where(
        events.c.tool == per_tool.c.name, events.c.intent.is_not(None)
    )
    if since_day is not None:
        newest = newest.where(events.c.timestamp >= since_day * 86_400)
    latest = newest.order_by(events.c.id.desc()).limit(1).scalar_subquery()
    with engine.connect() as connection:
        tools = connection.execute(select(per_tool, latest).order_by(per_tool.c.name)).all()
        overall = connection.execute(select(*sums).where(*where)).one()
    return CaptureSummary(
        tools=[
            ToolCapture(tool, int(calls), _coverage(rest), intent)
            for tool, calls, *rest, intent in tools
        ],
        overall=_coverage(overall[1:]),
        calls=int(overall[0] or 0),
    )


def _coverage(values: Sequence[Any]) -> Coverage:
    required, required_hit, optional, optional_hit = (int(v or 0) for v in values)
    return coverage_from_counts(required, required_hit, optional, optional_hit)
