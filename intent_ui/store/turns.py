"""A turn's append-only event log: written while it streams, replayed by every view.

`EventLog(engine, message_id)` buffers the events of one running turn: `append` does no
I/O and O(chunk) work; `flush()` writes everything buffered in one transaction. The
turn's session flushes at once after a state change and every ~100 ms while only text
and argument fragments arrive (`should_flush_now`), so a crash loses at most the last
unflushed fragments.

Fragments are merged while they wait: consecutive argument fragments of one call, and
consecutive reply text, become one row carrying the seq of the last fragment. Replaying
the merged row gives the same view, with two guards: any event that is not a fragment
closes every open row (text after a new group must stay after it), and a fragment
that made its call's intent first readable closes its row (that seq orders the group
header, so it must survive). A turn's stored size so stays within about twice its text.

A flush that fails keeps its rows buffered, whatever the error. `salvage()` is for rows
the database refuses while the store itself works (a value no driver encodes): it writes
them one per transaction and drops only the refused ones, and the turn's end then says how
many were lost and why, so the turn is stored as an error rather than lost whole.

`load_events(engine, message_id)` reads the log back; `TurnView.replay` of it is the
turn. When the turn ends, `flush` also writes the message's summary (reply text, status,
error, stop reason) that lists and history read without replaying, and then, given
`copies`, the intents dashboard's copy of the turn's calls (`store.dashboard`; a copy that
fails is logged, and the turn stays recorded).

`mark_interrupted(engine)` runs at app start: a turn still `streaming` belonged to a
process that stopped, so its log gets the `TurnDone` that process never wrote
(`end_interrupted`, one turn). With several workers that is not true of every such turn:
`intent_ui.agent.cluster` ends only the ones whose owner's lease is gone
(`streaming_turns` lists the candidates).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, insert, select, update

from intent_ui.core.dashboard import CallCopy
from intent_ui.core.events import (
    ArgsDelta,
    TextDelta,
    TurnDone,
    TurnEvent,
    event_from_record,
    event_to_record,
)
from intent_ui.core.pauses import RESTARTED_ERROR
from intent_ui.core.states import CANCELLED_STOP_REASONS, turn_status
from intent_ui.core.text import clip, scrub_surrogates
from intent_ui.core.turn import TurnView
from intent_ui.store.dashboard import TurnCopies, record_turn_calls
from intent_ui.store.db import StoreError, store_errors
from intent_ui.store.models import Clock, Message, TurnEventRow, decode_json, encode_json

__all__ = [
    "CANCELLED_STOP_REASONS",
    "INTERRUPTED_STOP_REASON",
    "EventLog",
    "end_interrupted",
    "load_events",
    "mark_interrupted",
    "streaming_turns",
    "turn_state",
    "turn_status",
]

logger = logging.getLogger(__name__)

INTERRUPTED_STOP_REASON = "interrupted"

_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_EVENTS = TurnEventRow.__table__  # type: ignore[attr-defined]
_TEXT_KEY = ""  # the open-row key of reply text (call ids are never empty)
_REASON_CHARS = 200
_SAVE_ACTION = "save the turn (it stays buffered; the next flush retries)"


@dataclass(slots=True)
class _Row:
    seq: int
    kind: str
    data: dict[str, Any]
    pieces: list[str] = field(default_factory=list)  # merged fragments, joined at write

    def values(self, message_id: str, loss: str | None = None) -> dict[str, Any]:
        """The row to insert; `loss` (what `salvage` dropped) joins the error of an end."""
        data = self.data
        if self.pieces:
            key = "chunk" if self.kind == "ArgsDelta" else "text"
            data = {**data, key: "".join(self.pieces)}
        if loss and self.kind == "TurnDone":
            data = {**data, "error": _with_loss(data.get("error"), loss)}
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

    def __init__(
        self,
        engine: Engine,
        message_id: str,
        *,
        now: Clock = time.time,
        copies: TurnCopies | None = None,
    ) -> None:
        self._engine = engine
        self._message_id = message_id
        self._now = now
        # The intents dashboard's copy of the turn's calls (`store.dashboard`): made when
        # the turn ends, written once its summary is.
        self._copies = copies
        self._copied: list[CallCopy] | None = None
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._rows: list[_Row] = []
        self._open: dict[str, _Row] = {}  # rows that may still absorb fragments
        self._summary: dict[str, Any] | None = None
        self._gone = False
        self._lost = 0  # rows `salvage` dropped, and the last reason the database gave
        self._lost_reason = ""

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

    def abandon(self) -> None:
        """Write nothing more, buffered or later: the turn is no longer this log's to write
        (another worker recorded its end after this one's lease was lost)."""
        self._drop()

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
        if self._copies is not None:
            try:
                self._copied = self._copies.copies(view, done.at or self._now())
            except Exception:  # the dashboard's copy must never cost the turn its end
                logger.exception("Turn %s: its calls could not be copied", self._message_id)

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

        Blocking: run it with `asyncio.to_thread`. On failure nothing is lost: the rows stay
        buffered for the next flush and the error is raised (`StoreError` when the store
        failed; any other error means the database refused the rows themselves: see
        `salvage`). If the message was deleted meanwhile (its conversation was removed), the
        turn is dropped silently.
        """
        with self._flush_lock:
            taken = self._take()
            if taken is None:
                return False
            rows, summary = taken
            try:
                with store_errors(_SAVE_ACTION):
                    gone = self._write([self._values(row) for row in rows], self._end(summary))
            except BaseException:
                self._put_back(rows, summary)
                raise
            if gone:
                self._drop()
                return False
            return True

    def salvage(self) -> int:
        """Write what is buffered one row per transaction; returns how many rows the
        database refused, which are dropped.

        For a batch `flush` could not write though the store works. Each refused row is
        counted, and the turn's end (its `TurnDone` and the summary) then says how many were
        lost and why and marks the turn an error; a `TurnDone` that is refused itself is
        replaced by a bare one, so the turn always ends. Raises `StoreError` when the store
        fails, with the rows not yet written still buffered.
        """
        with self._flush_lock:
            taken = self._take()
            if taken is None:
                return 0
            rows, summary = taken
            lost_before = self._lost
            for index, row in enumerate(rows):
                try:
                    gone = self._write_row(row)
                except StoreError:
                    self._put_back(rows[index:], summary)
                    raise
                except Exception as exc:
                    self._lose(exc)
                    if row.kind != "TurnDone":
                        continue
                    bare = _Row(row.seq, row.kind, {"stop_reason": "error"})
                    try:
                        gone = self._write_row(bare)
                    except StoreError:
                        self._put_back([bare, *rows[index + 1 :]], summary)
                        raise
                if gone:
                    self._drop()
                    return self._lost - lost_before
            if summary is not None:
                # The reply text is the summary's one free-form field: refused, the status
                # still lands without it (the replayed log has the text).
                bare_summary = {k: v for k, v in summary.items() if k != "content"}
                for attempt in (summary, bare_summary):
                    try:
                        gone = self._write_summary(attempt)
                        break
                    except StoreError:
                        self._put_back([], summary)
                        raise
                    except Exception:
                        if attempt is bare_summary:
                            raise
                        logger.exception("Turn %s: its reply text was refused", self._message_id)
                if gone:
                    self._drop()
            dropped = self._lost - lost_before
            if dropped:
                logger.error(
                    "Turn %s: %d event(s) could not be saved (%s)",
                    self._message_id,
                    dropped,
                    self._lost_reason,
                )
            return dropped

    def _take(self) -> tuple[list[_Row], dict[str, Any] | None] | None:
        with self._lock:
            if self._gone or not (self._rows or self._summary):
                return None
            rows, summary = self._rows, self._summary
            self._rows, self._summary = [], None
            self._open.clear()
            return rows, summary

    def _put_back(self, rows: list[_Row], summary: dict[str, Any] | None) -> None:
        with self._lock:
            self._rows[:0] = rows
            self._summary = self._summary or summary

    def _drop(self) -> None:
        with self._lock:
            self._gone = True
            self._rows.clear()
            self._summary = None

    def _lose(self, exc: Exception) -> None:
        self._lost += 1
        said = scrub_surrogates(f"{type(exc).__name__}: {exc}")
        self._lost_reason = clip(" ".join(said.split()), _REASON_CHARS)

    @property
    def _loss(self) -> str | None:
        """What the turn's end says about the rows `salvage` dropped (None: none were)."""
        if not self._lost:
            return None
        events = "1 event" if self._lost == 1 else f"{self._lost} events"
        return f"{events} of this turn could not be saved ({self._lost_reason}); the rest was."

    def _values(self, row: _Row) -> dict[str, Any]:
        return row.values(self._message_id, self._loss)

    def _end(self, summary: dict[str, Any] | None) -> dict[str, Any] | None:
        loss = self._loss
        if summary is None or loss is None:
            return summary
        return {**summary, "status": "error", "error": _with_loss(summary.get("error"), loss)}

    def _write_row(self, row: _Row) -> bool:
        with store_errors(_SAVE_ACTION):
            return self._write([self._values(row)], None)

    def _write_summary(self, summary: dict[str, Any]) -> bool:
        with store_errors(_SAVE_ACTION):
            return self._write([], self._end(summary))

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
        if summary is not None:
            self._write_copies()
        return False

    def _write_copies(self) -> None:
        """The dashboard's copy of the ended turn's calls, in a transaction of its own
        after the summary's: a copy the database refuses is logged and dropped, and the
        turn stays recorded."""
        copies, self._copied = self._copied, None
        if not copies or self._copies is None:
            return
        try:
            record_turn_calls(
                self._engine,
                self._message_id,
                self._copies.owner_id,
                self._copies.agent_id,
                copies,
            )
        except Exception:
            logger.exception(
                "Turn %s: its calls could not be copied for the intents dashboard",
                self._message_id,
            )


def _with_loss(error: object, loss: str) -> str:
    return f"{error} {loss}" if isinstance(error, str) and error else loss


@store_errors("read the turn")
def load_events(engine: Engine, message_id: str, *, after_seq: int = 0) -> list[TurnEvent]:
    """The turn's events in seq order ([] for an unknown or user message); with
    `after_seq`, only the rows after it (a reader that replayed the log up to there).

    A row that cannot be read (hand-edited, or written by a newer version) is skipped with
    a warning naming it, so one bad row never takes a conversation down.
    """
    with engine.connect() as connection:
        rows = connection.execute(
            select(_EVENTS.c.seq, _EVENTS.c.kind, _EVENTS.c.data)
            .where(_EVENTS.c.message_id == message_id, _EVENTS.c.seq > after_seq)
            .order_by(_EVENTS.c.seq)
        ).all()
    events: list[TurnEvent] = []
    for seq, kind, data in rows:
        try:
            events.append(event_from_record(kind, seq, decode_json(data)))
        except ValueError as exc:
            logger.warning("Skipping stored event of message %s: %s", message_id, exc)
    return events


@store_errors("list the running turns")
def streaming_turns(engine: Engine, conversation_id: str | None = None) -> list[tuple[str, str]]:
    """`(message_id, conversation_id)` of every turn still `streaming` (in one
    conversation, when given): running now, or left so by a process that stopped."""
    query = select(_MESSAGES.c.id, _MESSAGES.c.conversation_id).where(
        _MESSAGES.c.status == "streaming", _MESSAGES.c.role == "assistant"
    )
    if conversation_id is not None:
        query = query.where(_MESSAGES.c.conversation_id == conversation_id)
    with engine.connect() as connection:
        return [(str(m), str(c)) for m, c in connection.execute(query).all()]


@store_errors("read the turn")
def turn_state(engine: Engine, message_id: str) -> tuple[str, str] | None:
    """`(conversation_id, status)` of an assistant message; None for any other id."""
    with engine.connect() as connection:
        found = connection.execute(
            select(_MESSAGES.c.conversation_id, _MESSAGES.c.status).where(
                _MESSAGES.c.id == message_id, _MESSAGES.c.role == "assistant"
            )
        ).first()
    return None if found is None else (str(found[0]), str(found[1]))


def end_interrupted(
    engine: Engine,
    message_id: str,
    *,
    tail: Iterable[TurnEvent] = (),
    after_seq: int = 0,
    now: Clock = time.time,
) -> TurnDone | None:
    """Record the end of a turn whose process stopped; returns that end, or None when the
    log already had one.

    `tail`: events the process published that its log may lack (what another worker read
    of the turn's live stream); those after the log's last seq are written first (no two
    argument fragments in one row), and a `TurnDone` among them is the turn's end.
    Otherwise the end is `TurnDone("interrupted")`, after the log and after `after_seq`
    (the last seq anyone may have seen), so its unfinished calls replay as cancelled.
    """
    view = TurnView.replay(load_events(engine, message_id))
    if view.done:
        return None
    log = EventLog(engine, message_id, now=now)
    done: TurnDone | None = None
    for event in tail:
        if event.seq <= view.last_seq:
            continue
        view.apply(event)
        # Not merged: the rule that keeps a merged row's replay identical needs the
        # publisher's view of when a label moved, which a reader of the stream lacks.
        log.append(event, label_moved=True)
        if isinstance(event, TurnDone):
            done = event
            break
    if done is None:
        # A turn that waited for the user cannot resume without its process: it says so.
        waited = bool(view.waiting())
        done = TurnDone(
            max(view.last_seq, after_seq) + 1,
            INTERRUPTED_STOP_REASON,
            RESTARTED_ERROR if waited else None,
            at=now(),
            error_kind="restarted" if waited else None,
        )
        view.apply(done)
        log.append(done)
    log.finish(view, done)
    log.flush()
    return done


def mark_interrupted(engine: Engine, *, now: Clock = time.time, keep: Collection[str] = ()) -> int:
    """End turns left `streaming` by a process that stopped; returns how many.

    Each gets the `TurnDone("interrupted")` its session never wrote, so its unfinished
    calls replay as cancelled, and its summary. Only for one process: with several, a
    `streaming` turn may be another worker's, running (see the module docstring). `keep`
    are the turns left as they are: the ones that resume (`intent_ui.agent.resume`).
    """
    streaming = [found for found in streaming_turns(engine) if found[0] not in keep]
    for message_id, _ in streaming:
        end_interrupted(engine, message_id, now=now)
    return len(streaming)
