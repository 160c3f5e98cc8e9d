"""A turn's append-only event log: written while it streams, replayed by every view.

`EventLog(engine, message_id)` buffers the events of one running turn: `append` does no
I/O and O(chunk) work; `flush()` writes everything buffered in one transaction. The
turn's session flushes at once after a state change and every ~100 ms while only text
and argument fragments arrive (`should_flush_now`), so a crash loses at most the last
unflushed fragments.

Fragments are merged while they wait: consecutive argument fragments of one call, and
consecutive reply text, become one row carrying the seq of the last fragment. Replaying
the merged row gives the same view, with two guards: any event that is not a fragment
closes every open row (text after a new tool block must stay after it), and a fragment
that made its call's intent first readable closes its row (that seq orders the group
header, so it must survive). A turn's stored size so stays within about twice its text.

`load_events(engine, message_id)` reads the log back; `TurnView.replay` of it is the
turn. When the turn ends, `flush` also writes the message's summary (reply text, status,
error, stop reason) that lists and history read without replaying.

`mark_interrupted(engine)` runs at app start: a turn still `streaming` belonged to a
process that stopped, so its log gets the `TurnDone` that process never wrote.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, insert, select, update

from intent_ui.core.events import (
    ArgsDelta,
    TextDelta,
    TurnDone,
    TurnEvent,
    event_from_record,
    event_to_record,
)
from intent_ui.core.turn import TurnView
from intent_ui.store.db import StoreError, store_errors
from intent_ui.store.models import Clock, Message, TurnEventRow, decode_json, encode_json

__all__ = [
    "CANCELLED_STOP_REASONS",
    "INTERRUPTED_STOP_REASON",
    "EventLog",
    "load_events",
    "mark_interrupted",
    "turn_status",
]

logger = logging.getLogger(__name__)

CANCELLED_STOP_REASONS: frozenset[str] = frozenset({"cancelled", "canceled", "interrupted"})
"""`TurnDone.stop_reason` values that mean the turn was stopped rather than finished."""

INTERRUPTED_STOP_REASON = "interrupted"

_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_EVENTS = TurnEventRow.__table__  # type: ignore[attr-defined]
_TEXT_KEY = ""  # the open-row key of reply text (call ids are never empty)


def turn_status(stop_reason: str | None, error: str | None) -> str:
    """The message status of a turn that ended so (`streaming` while it has not ended)."""
    if stop_reason is None:
        return "streaming"
    if error:
        return "error"
    if stop_reason in CANCELLED_STOP_REASONS:
        return "cancelled"
    return "complete"


@dataclass(slots=True)
class _Row:
    seq: int
    kind: str
    data: dict[str, Any]
    pieces: list[str] = field(default_factory=list)  # merged fragments, joined at write

    def values(self, message_id: str) -> dict[str, Any]:
        data = self.data
        if self.pieces:
            key = "chunk" if self.kind == "ArgsDelta" else "text"
            data = {**data, key: "".join(self.pieces)}
        return {
            "message_id": message_id,
            "seq": self.seq,
            "kind": self.kind,
            "data": encode_json(data),
        }


class EventLog:
    """Buffers one turn's events and appends them to its log.

    `append` runs on the event loop and `flush` in a worker thread: a lock guards the
    buffer, and flushes are serialised so rows land in seq order.
    """

    def __init__(self, engine: Engine, message_id: str, *, now: Clock = time.time) -> None:
        self._engine = engine
        self._message_id = message_id
        self._now = now
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._rows: list[_Row] = []
        self._open: dict[str, _Row] = {}  # rows that may still absorb fragments
        self._summary: dict[str, Any] | None = None
        self._gone = False

    @property
    def message_id(self) -> str:
        return self._message_id

    @property
    def needs_flush(self) -> bool:
        return bool(self._rows or self._summary) and not self._gone

    @staticmethod
    def should_flush_now(event: TurnEvent) -> bool:
        """True for state changes; text and argument fragments wait for the flush timer."""
        return not isinstance(event, ArgsDelta | TextDelta)

    def append(self, event: TurnEvent, *, label_moved: bool = False) -> None:
        """Buffer one event. `label_moved`: it changed its call's label seq (see module doc)."""
        with self._lock:
            if self._gone:
                return
            match event:
                case ArgsDelta():
                    self._fragment(event.call_id, event, event.chunk, close=label_moved)
                case TextDelta():
                    self._fragment(_TEXT_KEY, event, event.text, close=False)
                case _:
                    self._open.clear()
                    kind, data = event_to_record(event)
                    self._rows.append(_Row(event.seq, kind, data))

    def finish(self, view: TurnView, done: TurnDone) -> None:
        """Write the message's summary with the next flush (the turn ended with `done`)."""
        with self._lock:
            self._summary = {
                "content": view.text,
                "status": turn_status(done.stop_reason, done.error),
                "error": done.error,
                "stop_reason": done.stop_reason,
                "updated_at": self._now(),
            }

    def _fragment(self, key: str, event: TurnEvent, piece: str, *, close: bool) -> None:
        row = self._open.get(key)
        if row is None:
            kind, data = event_to_record(event)
            data.pop("chunk" if key else "text", None)
            row = _Row(event.seq, kind, data, [piece])
            self._rows.append(row)
        else:
            row.seq = event.seq
            row.pieces.append(piece)
        if close:
            self._open.pop(key, None)
        else:
            self._open[key] = row

    def flush(self) -> bool:
        """Write what is buffered in one transaction; False when there was nothing to write.

        Blocking: run it with `asyncio.to_thread`. On failure nothing is lost (the rows
        stay buffered for the next flush) and `StoreError` says why. If the message was
        deleted meanwhile (its conversation was removed), the turn is dropped silently.
        """
        with self._flush_lock:
            with self._lock:
                if self._gone or not (self._rows or self._summary):
                    return False
                rows, summary = self._rows, self._summary
                self._rows, self._summary = [], None
                self._open.clear()
                values = [row.values(self._message_id) for row in rows]
            try:
                with store_errors("save the turn (it stays buffered; the next flush retries)"):
                    gone = self._write(values, summary)
            except StoreError:
                with self._lock:
                    self._rows[:0] = rows
                    self._summary = self._summary or summary
                raise
            if gone:
                with self._lock:
                    self._gone = True
                    self._rows.clear()
                    self._summary = None
                return False
            return True

    def _write(self, rows: list[dict[str, Any]], summary: dict[str, Any] | None) -> bool:
        """Returns True when the message row no longer exists."""
        with self._engine.begin() as connection:
            found = connection.execute(
                select(_MESSAGES.c.id).where(_MESSAGES.c.id == self._message_id)
            ).first()
            if found is None:
                return True
            if rows:
                connection.execute(insert(_EVENTS), rows)
            if summary is not None:
                connection.execute(
                    update(_MESSAGES).where(_MESSAGES.c.id == self._message_id).values(**summary)
                )
        return False


@store_errors("read the turn")
def load_events(engine: Engine, message_id: str) -> list[TurnEvent]:
    """The turn's events in seq order ([] for an unknown or user message).

    A row that cannot be read (hand-edited, or written by a newer version) is skipped with
    a warning naming it, so one bad row never takes a conversation down.
    """
    with engine.connect() as connection:
        rows = connection.execute(
            select(_EVENTS.c.seq, _EVENTS.c.kind, _EVENTS.c.data)
            .where(_EVENTS.c.message_id == message_id)
            .order_by(_EVENTS.c.seq)
        ).all()
    events: list[TurnEvent] = []
    for seq, kind, data in rows:
        try:
            events.append(event_from_record(kind, seq, decode_json(data)))
        except ValueError as exc:
            logger.warning("Skipping stored event of message %s: %s", message_id, exc)
    return events


def mark_interrupted(engine: Engine, *, now: Clock = time.time) -> int:
    """End turns left `streaming` by a process that stopped; returns how many.

    Each gets the `TurnDone("interrupted")` its session never wrote, so its unfinished
    calls replay as cancelled, and its summary.
    """
    with engine.connect() as connection:
        streaming = connection.execute(
            select(_MESSAGES.c.id).where(
                _MESSAGES.c.status == "streaming", _MESSAGES.c.role == "assistant"
            )
        ).all()
    for (message_id,) in streaming:
        view = TurnView.replay(load_events(engine, message_id))
        done = TurnDone(view.last_seq + 1, INTERRUPTED_STOP_REASON, at=now())
        view.apply(done)
        log = EventLog(engine, message_id, now=now)
        log.append(done)
        log.finish(view, done)
        log.flush()
    return len(streaming)
