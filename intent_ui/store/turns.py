"""Record a streaming turn into its assistant message, and replay it after a reload.

`TurnRecorder.apply(event)` only updates in-memory row state (no I/O, O(chunk) per
fragment); `flush()` writes every changed row in one transaction. The caller flushes at
once on state changes (`should_flush_now`) and on a ~100 ms timer for text and argument
chunks, so a crash or a reload loses at most the last unflushed chunk.

`load_turn_events(engine, message_id)` turns the stored rows back into the events that
rebuild an identical `intent_ui.core.turn.TurnView`: the same parts, card labels and
block headers. The recorder mirrors TurnView's rules for a call's label `seq` (stamped when
the first displayable intent arrives and when the call settles, §5.2) and stores the seq
of every event that matters, so the replay can use the original seq values and
out-of-order settlement cannot rewind a header after a reload either.

`mark_interrupted(engine)` runs at app start: a turn still `streaming` belongs to a
process that died, so it becomes `cancelled`, as do its unfinished calls.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, bindparam, insert, select, update
from sqlalchemy.exc import SQLAlchemyError

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.labels import has_label_text
from intent_ui.core.streaming import IntentStream, StreamingIntent, read_streaming_intent
from intent_ui.store.db import StoreError
from intent_ui.store.models import (
    FINAL_CALL_STATES,
    Clock,
    Message,
    ToolCall,
    decode_json,
    encode_json,
    new_id,
)

__all__ = [
    "CANCELLED_STOP_REASONS",
    "INTERRUPTED_STOP_REASON",
    "TurnRecorder",
    "load_turn_events",
    "mark_interrupted",
    "settled_times",
]

CANCELLED_STOP_REASONS: frozenset[str] = frozenset({"cancelled", "canceled", "interrupted"})
"""`TurnDone.stop_reason` values that mean the turn was stopped rather than finished."""

INTERRUPTED_STOP_REASON = "interrupted"

_MESSAGES = Message.__table__  # type: ignore[attr-defined]
_CALLS = ToolCall.__table__  # type: ignore[attr-defined]

# Columns a recorder rewrites on every flush of a changed call (all but the identity).
_CALL_MUTABLE = (
    "args_text",
    "args_json",
    "output",
    "outcome",
    "outcome_patch_json",
    "status",
    "error",
    "seq",
    "intent_seq",
    "args_completed_seq",
    "backgrounded_seq",
    "settled_seq",
    "args_completed_at",
    "settled_at",
)


@dataclass(slots=True)
class _Call:
    """The pending state of one tool-call row."""

    row_id: str
    call_id: str
    tool: str
    server: str | None
    block: int
    label_bearing: bool
    started_seq: int
    started_at: float
    text_offset: int
    args: list[str] = field(default_factory=list)
    args_complete: bool = False
    args_json: str | None = None
    stream: IntentStream | None = None
    intent: str | None = None
    output: str = ""
    outcome: str | None = None
    outcome_patch: dict[str, str] | None = None
    status: str = "streaming"
    error: str | None = None
    seq: int = 0
    intent_seq: int | None = None
    args_completed_seq: int | None = None
    backgrounded_seq: int | None = None
    settled_seq: int | None = None
    args_completed_at: float | None = None
    settled_at: float | None = None
    inserted: bool = False

    def args_text(self) -> str:
        if len(self.args) > 1:
            self.args[:] = ["".join(self.args)]  # keep later joins short
        return self.args[0] if self.args else ""

    def values(self) -> dict[str, Any]:
        return {
            "args_text": self.args_text(),
            "args_json": self.args_json,
            "output": self.output,
            "outcome": self.outcome,
            "outcome_patch_json": None
            if self.outcome_patch is None
            else encode_json(self.outcome_patch),
            "status": self.status,
            "error": self.error,
            "seq": self.seq,
            "intent_seq": self.intent_seq,
            "args_completed_seq": self.args_completed_seq,
            "backgrounded_seq": self.backgrounded_seq,
            "settled_seq": self.settled_seq,
            "args_completed_at": self.args_completed_at,
            "settled_at": self.settled_at,
        }

    def row(self, message_id: str) -> dict[str, Any]:
        return {
            "id": self.row_id,
            "message_id": message_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "server": self.server,
            "block": self.block,
            "label_bearing": self.label_bearing,
            "started_seq": self.started_seq,
            "started_at": self.started_at,
            "text_offset": self.text_offset,
            **self.values(),
        }


_MESSAGE_KEY = ""  # the message row's key in the dirty set (call ids are never empty)


class TurnRecorder:
    """Accumulates one assistant turn's events and writes them to its message row.

    `apply` is called from the event loop and `flush` from a worker thread; a lock guards
    the shared state, and flushes are serialised so rows are written in order.
    """

    def __init__(self, engine: Engine, message_id: str, *, now: Clock = time.time) -> None:
        self._engine = engine
        self._message_id = message_id
        self._now = now
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._calls: dict[str, _Call] = {}
        self._text: list[str] = []
        self._text_len = 0
        self._status = "streaming"
        self._error: str | None = None
        self._stop_reason: str | None = None
        self._done_seq: int | None = None
        self._last_seq = 0
        self._activity: dict[int, str] = {}
        self._dirty: dict[str, int] = {}  # key -> change counter
        self._gone = False

    @property
    def message_id(self) -> str:
        return self._message_id

    @property
    def needs_flush(self) -> bool:
        """Whether some applied change has not been written yet."""
        return bool(self._dirty) and not self._gone

    @staticmethod
    def should_flush_now(event: TurnEvent) -> bool:
        """True for state changes; text and argument chunks wait for the flush timer."""
        return not isinstance(event, ArgsDelta | TextDelta)

    # --- applying -------------------------------------------------------------------------

    def apply(self, event: TurnEvent) -> None:
        """Fold one event into the pending rows. No I/O; unknown calls are skipped."""
        with self._lock:
            seq = getattr(event, "seq", None)
            if isinstance(seq, int) and seq > self._last_seq:
                self._last_seq = seq
                self._touch(_MESSAGE_KEY)
            match event:
                case CallStarted():
                    self._start(event)
                case ArgsDelta():
                    self._delta(event)
                case ArgsComplete():
                    self._complete(event)
                case CallBackgrounded():
                    self._background(event)
                case CallSettled():
                    self._settle(event)
                case TextDelta():
                    self._text_delta(event)
                case ActivityLabel():
                    self._activity_label(event)
                case TurnDone():
                    self._done(event)

    def _start(self, event: CallStarted) -> None:
        if event.call_id in self._calls or not isinstance(event.call_id, str):
            return
        label_bearing = bool(event.label_bearing)
        self._calls[event.call_id] = _Call(
            row_id=new_id(),
            call_id=event.call_id,
            tool=event.tool,
            server=event.server,
            block=event.block,
            label_bearing=label_bearing,
            started_seq=event.seq,
            started_at=self._now(),
            text_offset=self._text_len,
            stream=IntentStream() if label_bearing else None,
        )
        self._touch(event.call_id)

    def _delta(self, event: ArgsDelta) -> None:
        call = self._calls.get(event.call_id)
        if call is None or call.args_complete or call.status in FINAL_CALL_STATES:
            return
        if not isinstance(event.chunk, str) or not event.chunk:
            return
        call.args.append(event.chunk)
        if call.stream is not None:
            _note_intent(call, call.stream.feed(event.chunk), event.seq)
        self._touch(event.call_id)

    def _complete(self, event: ArgsComplete) -> None:
        call = self._calls.get(event.call_id)
        if call is None:
            return
        if isinstance(event.arguments, str) and event.arguments:
            call.args[:] = [event.arguments]
        call.args_complete = True
        call.args_json = _parsed_json(call.args_text())
        call.args_completed_seq = event.seq
        call.args_completed_at = self._now()
        if call.status == "streaming":
            call.status = "running"
        if call.label_bearing:
            # As TurnView does: the final text is authoritative when it can be read.
            _note_intent(call, read_streaming_intent(call.args_text()), event.seq)
        self._touch(event.call_id)

    def _background(self, event: CallBackgrounded) -> None:
        call = self._calls.get(event.call_id)
        if call is None or call.status in FINAL_CALL_STATES:
            return
        call.status = "background"
        call.backgrounded_seq = event.seq
        self._touch(event.call_id)

    def _settle(self, event: CallSettled) -> None:
        call = self._calls.get(event.call_id)
        if call is None or event.state not in FINAL_CALL_STATES:
            return
        patch = dict(event.outcome_patch) if isinstance(event.outcome_patch, dict) else None
        settled = (
            event.state,
            event.output if isinstance(event.output, str) else str(event.output),
            event.outcome if isinstance(event.outcome, str) else None,
            patch,
            event.error if isinstance(event.error, str) else None,
        )
        if settled == (call.status, call.output, call.outcome, call.outcome_patch, call.error):
            return  # a repeated settlement (background polling) changes nothing
        call.status, call.output, call.outcome, call.outcome_patch, call.error = settled
        call.seq = event.seq
        call.settled_seq = event.seq
        call.settled_at = self._now()
        self._touch(event.call_id)

    def _text_delta(self, event: TextDelta) -> None:
        if not isinstance(event.text, str) or not event.text:
            return
        self._text.append(event.text)
        self._text_len += len(event.text)
        self._touch(_MESSAGE_KEY)

    def _activity_label(self, event: ActivityLabel) -> None:
        # A blank label is a pending reservation: it never overwrites a filled one.
        if isinstance(event.label, str) and has_label_text(event.label):
            self._activity[event.block] = event.label
            self._touch(_MESSAGE_KEY)

    def _done(self, event: TurnDone) -> None:
        self._stop_reason = event.stop_reason
        self._error = event.error
        self._done_seq = event.seq
        if event.error:
            self._status = "error"
        elif event.stop_reason in CANCELLED_STOP_REASONS:
            self._status = "cancelled"
        else:
            self._status = "complete"
        # As TurnView does: a call still streaming or running can no longer finish.
        # A backgrounded call keeps running; its result arrives as a later CallSettled.
        stamp = self._now()
        for call in self._calls.values():
            if call.status in ("streaming", "running"):
                call.status = "cancelled"
                call.error = call.error or event.error
                call.seq = event.seq
                call.settled_seq = event.seq
                call.settled_at = stamp
                self._touch(call.call_id)
        self._touch(_MESSAGE_KEY)

    def _touch(self, key: str) -> None:
        self._dirty[key] = self._dirty.get(key, 0) + 1

    # --- flushing -------------------------------------------------------------------------

    def flush(self) -> bool:
        """Write every changed row in one transaction; False when there was nothing to do.

        Blocking: run it with `asyncio.to_thread`. On failure the rows stay pending (the
        next flush retries) and `StoreError` says why. If the message was deleted
        meanwhile (its conversation was removed), the turn is dropped silently.
        """
        with self._flush_lock:
            with self._lock:
                if not self._dirty or self._gone:
                    return False
                pending = dict(self._dirty)
                message_values = self._message_values()
                inserts = [
                    self._calls[key].row(self._message_id)
                    for key in pending
                    if key != _MESSAGE_KEY and not self._calls[key].inserted
                ]
                updates = [
                    {"_row_id": self._calls[key].row_id, **self._calls[key].values()}
                    for key in pending
                    if key != _MESSAGE_KEY and self._calls[key].inserted
                ]
            try:
                gone = self._write(message_values, inserts, updates)
            except SQLAlchemyError as exc:
                raise StoreError(
                    f"Could not save the turn of message {self._message_id!r}: "
                    f"{getattr(exc, 'orig', None) or exc}. It stays pending; the next flush "
                    "retries."
                ) from exc
            with self._lock:
                if gone:
                    self._gone = True
                    self._dirty.clear()
                    return False
                for row in inserts:
                    self._calls[row["call_id"]].inserted = True
                for key, version in pending.items():
                    if self._dirty.get(key) == version:
                        del self._dirty[key]
            return True

    def _message_values(self) -> dict[str, Any]:
        if len(self._text) > 1:
            self._text[:] = ["".join(self._text)]
        return {
            "content": self._text[0] if self._text else "",
            "status": self._status,
            "error": self._error,
            "stop_reason": self._stop_reason,
            "done_seq": self._done_seq,
            "last_seq": self._last_seq,
            "activity_labels_json": encode_json(
                {str(block): label for block, label in self._activity.items()}
            ),
            "updated_at": self._now(),
        }

    def _write(
        self,
        message_values: dict[str, Any],
        inserts: list[dict[str, Any]],
        updates: list[dict[str, Any]],
    ) -> bool:
        """Returns True when the message row no longer exists."""
        with self._engine.begin() as connection:
            result = connection.execute(
                update(_MESSAGES).where(_MESSAGES.c.id == self._message_id).values(**message_values)
            )
            if result.rowcount == 0:
                return True
            if inserts:
                connection.execute(insert(_CALLS), inserts)
            if updates:
                statement = (
                    update(_CALLS)
                    .where(_CALLS.c.id == bindparam("_row_id"))
                    .values({name: bindparam(name) for name in _CALL_MUTABLE})
                )
                connection.execute(statement, updates)
        return False


def _note_intent(call: _Call, found: StreamingIntent | None, seq: int) -> None:
    """Mirror TurnView: a call's label seq is stamped when its first displayable intent shows."""
    if found is None:
        return
    if not has_label_text(call.intent) and has_label_text(found.text):
        call.seq = seq
        call.intent_seq = seq
    call.intent = found.text


def _parsed_json(text: str) -> str | None:
    """Canonical JSON text of the arguments, or None when they are not valid JSON."""
    value = decode_json(text, _INVALID)
    return None if value is _INVALID else encode_json(value)


_INVALID: Any = object()


# --- replaying ------------------------------------------------------------------------------

# Tie-breaks for events sharing a seq: causal order within a call, text before the call it
# preceded, trailing text and labels after everything, TurnDone last.
_RANK_TEXT, _RANK_STARTED, _RANK_DELTA, _RANK_COMPLETE = 0, 1, 2, 3
_RANK_BACKGROUND, _RANK_SETTLED, _RANK_TRAILING, _RANK_ACTIVITY, _RANK_DONE = 4, 5, 6, 7, 8


def load_turn_events(engine: Engine, message_id: str) -> list[TurnEvent]:
    """Events that rebuild the stored turn's view: same parts, card labels and headers.

    Each call's original seq values are reused; an unknown or user message gives [].
    """
    with engine.connect() as connection:
        message = connection.execute(select(_MESSAGES).where(_MESSAGES.c.id == message_id)).first()
        if message is None or message.role != "assistant":
            return []
        calls = connection.execute(
            select(_CALLS)
            .where(_CALLS.c.message_id == message_id)
            .order_by(_CALLS.c.started_seq, _CALLS.c.started_at, _CALLS.c.call_id)
        ).all()

    items: list[tuple[int, int, int, TurnEvent]] = []

    def add(seq: int, rank: int, event: TurnEvent) -> None:
        items.append((seq, rank, len(items), event))

    content: str = message.content or ""
    cursor = 0
    max_seq = 0
    for call in calls:
        offset = min(max(call.text_offset, cursor), len(content))
        if offset > cursor:
            add(call.started_seq, _RANK_TEXT, TextDelta(call.started_seq, content[cursor:offset]))
            cursor = offset
        add(
            call.started_seq,
            _RANK_STARTED,
            CallStarted(
                call.started_seq,
                call.call_id,
                call.tool,
                call.block,
                server=call.server,
                label_bearing=bool(call.label_bearing),
            ),
        )
        if call.args_text:
            # One fragment with the whole text, at the seq where the intent first showed,
            # so TurnView stamps the same label seq.
            delta_seq = call.intent_seq if call.intent_seq is not None else call.started_seq
            add(delta_seq, _RANK_DELTA, ArgsDelta(delta_seq, call.call_id, call.args_text))
        if call.args_completed_seq is not None:
            add(
                call.args_completed_seq,
                _RANK_COMPLETE,
                ArgsComplete(call.args_completed_seq, call.call_id, call.args_text),
            )
        if call.backgrounded_seq is not None:
            add(
                call.backgrounded_seq,
                _RANK_BACKGROUND,
                CallBackgrounded(call.backgrounded_seq, call.call_id),
            )
        if call.status in FINAL_CALL_STATES:
            settled_seq = call.settled_seq if call.settled_seq is not None else call.seq
            patch = decode_json(call.outcome_patch_json)
            add(
                settled_seq,
                _RANK_SETTLED,
                CallSettled(
                    settled_seq,
                    call.call_id,
                    call.status,
                    output=call.output,
                    outcome=call.outcome,
                    outcome_patch=patch if isinstance(patch, dict) else None,
                    error=call.error,
                ),
            )
        max_seq = max(
            max_seq,
            *(
                s
                for s in (
                    call.started_seq,
                    call.intent_seq,
                    call.args_completed_seq,
                    call.backgrounded_seq,
                    call.settled_seq,
                )
                if s is not None
            ),
        )

    tail_seq = max(max_seq, message.last_seq or 0)
    if cursor < len(content):
        add(tail_seq, _RANK_TRAILING, TextDelta(tail_seq, content[cursor:]))
    labels = decode_json(message.activity_labels_json, {})
    if isinstance(labels, dict):
        for block, label in sorted(labels.items(), key=lambda item: _block_key(item[0])):
            if isinstance(label, str) and _block_key(block) is not None:
                add(tail_seq, _RANK_ACTIVITY, ActivityLabel(tail_seq, int(block), label))
    if message.status != "streaming":
        done_seq = message.done_seq if message.done_seq is not None else tail_seq
        stop_reason = message.stop_reason or _STOP_REASON_BY_STATUS.get(message.status, "")
        add(done_seq, _RANK_DONE, TurnDone(done_seq, stop_reason, message.error))
    items.sort(key=lambda item: item[:3])
    return [event for *_, event in items]


def settled_times(engine: Engine, message_id: str) -> dict[str, float]:
    """Each call's settle time (its start time while unsettled), by call id.

    With `load_turn_events`, this makes the §11.4 anchor ledger a plain derivation:
    `derive_anchors(TurnView.replay(events), timestamps=settled_times(engine, id))`.
    """
    with engine.connect() as connection:
        rows = connection.execute(
            select(_CALLS.c.call_id, _CALLS.c.settled_at, _CALLS.c.started_at).where(
                _CALLS.c.message_id == message_id
            )
        ).all()
    return {
        call_id: settled_at if settled_at is not None else started_at
        for call_id, settled_at, started_at in rows
    }


_STOP_REASON_BY_STATUS = {"complete": "end_turn", "cancelled": "cancelled", "error": "error"}


def _block_key(block: object) -> int | None:
    try:
        return int(str(block))
    except ValueError:
        return None


# --- recovery -------------------------------------------------------------------------------


def mark_interrupted(engine: Engine, *, now: Clock = time.time) -> int:
    """Cancel turns left `streaming` by a process that stopped; returns how many.

    Their unfinished calls (and any call still in flight in a finished turn, such as a
    background job nobody is waiting for any more) become `cancelled`, so a reload shows
    a stopped turn instead of one running forever.
    """
    stamp = now()
    unfinished = ("streaming", "running", "background")
    with engine.begin() as connection:
        streaming = connection.execute(
            select(_MESSAGES.c.id, _MESSAGES.c.last_seq).where(_MESSAGES.c.status == "streaming")
        ).all()
        for message_id, last_seq in streaming:
            done_seq = (last_seq or 0) + 1
            connection.execute(
                update(_MESSAGES)
                .where(_MESSAGES.c.id == message_id)
                .values(
                    status="cancelled",
                    stop_reason=INTERRUPTED_STOP_REASON,
                    done_seq=done_seq,
                    last_seq=done_seq,
                    updated_at=stamp,
                )
            )
        stale = connection.execute(
            select(_CALLS.c.id, _MESSAGES.c.done_seq, _MESSAGES.c.last_seq)
            .join(_MESSAGES, _CALLS.c.message_id == _MESSAGES.c.id)
            .where(_CALLS.c.status.in_(unfinished))
        ).all()
        for row_id, done_seq, last_seq in stale:
            seq = max(done_seq or 0, last_seq or 0)
            connection.execute(
                update(_CALLS)
                .where(_CALLS.c.id == row_id)
                .values(status="cancelled", seq=seq, settled_seq=seq, settled_at=stamp)
            )
    return len(streaming)
