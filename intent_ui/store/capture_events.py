"""Captured MCP tool calls (`capture_events`): written by `StoreSink`, read by /intents.

Append-only: one row per finished tool call of a server wrapped by
`intent_ui.capture.with_intent_capture`. The id is an autoincrement integer, since rows
are only ever inserted and read in bulk. Call Coverage comes from the pure rule in
`intent_ui.core.capture`; the database only counts calls per tool and kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from sqlalchemy import Engine, Index, func, insert, select
from sqlmodel import Field, SQLModel, Text, col

from intent_ui.core.capture import (
    CallRecord,
    Coverage,
    IntentContextMode,
    IntentSource,
    coverage,
    coverage_by_tool,
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
    """
    rows = [_row(record) for record in records]
    if rows:
        with engine.begin() as connection:
            connection.execute(insert(CaptureEvent), rows)
    return len(rows)


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


def capture_summary(engine: Engine) -> CaptureSummary:
    """Per-tool Call Coverage (required-context calls) and optional share, from the store."""
    captured = col(CaptureEvent.intent_source) == "context_parameter"
    counts = select(
        col(CaptureEvent.tool),
        col(CaptureEvent.intent_context),
        captured.label("captured"),
        func.count().label("n"),
    ).group_by(CaptureEvent.tool, CaptureEvent.intent_context, captured)
    # The newest intent per tool: the highest id among the tool's rows with an intent.
    newest = (
        select(func.max(CaptureEvent.id))
        .where(col(CaptureEvent.intent).is_not(None))
        .group_by(CaptureEvent.tool)
    )
    latest = select(col(CaptureEvent.tool), col(CaptureEvent.intent)).where(
        col(CaptureEvent.id).in_(newest)
    )
    with engine.connect() as connection:
        grouped = connection.execute(counts).all()
        intents = {tool: intent for tool, intent in connection.execute(latest).all()}
    pairs = [
        (tool, CallRecord(mode, bool(hit)), n) for tool, mode, hit, n in grouped if mode in _MODES
    ]
    expanded = [(tool, record) for tool, record, n in pairs for _ in range(n)]
    per_tool = coverage_by_tool(expanded)
    totals: dict[str, int] = {}
    for tool, _record, n in pairs:
        totals[tool] = totals.get(tool, 0) + n
    tools = [
        ToolCapture(tool, totals[tool], per_tool[tool], intents.get(tool)) for tool in per_tool
    ]
    return CaptureSummary(
        tools=tools,
        overall=coverage(record for _tool, record in expanded),
        calls=sum(totals.values()),
    )
