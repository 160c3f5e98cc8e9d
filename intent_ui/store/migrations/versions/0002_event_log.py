"""A turn is its event log: `turn_events` replaces the `tool_calls` rows.

Each stored turn is converted: its message and tool-call rows become the events that
rebuilt it before (the same parts, card labels and headers), written to `turn_events`,
and the columns only that reconstruction needed are dropped. The conversion is written
out here in full, as the rows were at revision 0001, so later changes to the app's code
cannot change what this migration does.

Revision ID: 0002_event_log
Revises: 0001_initial
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0002_event_log"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FINAL = ("settled", "error", "cancelled")
_STOP_REASON_BY_STATUS = {"complete": "end_turn", "cancelled": "cancelled", "error": "error"}
# Tie-breaks for events sharing a seq: causal order within a call, text before the call it
# preceded, trailing text and labels after everything, the end last.
_TEXT, _STARTED, _DELTA, _COMPLETE, _BACKGROUND, _SETTLED, _TRAILING, _ACTIVITY, _DONE = range(9)


def upgrade() -> None:
    connection = op.get_bind()
    messages = sa.table(
        "messages",
        *(
            sa.column(name)
            for name in (
                "id",
                "role",
                "content",
                "status",
                "error",
                "stop_reason",
                "activity_labels_json",
                "done_seq",
                "last_seq",
                "updated_at",
            )
        ),
    )
    calls = sa.table("tool_calls", *(sa.column(name) for name in _CALL_COLUMNS))
    # Read everything first: rebuilding `messages` below drops the old table, and with
    # foreign keys on, SQLite would cascade that into any row that still refers to it.
    by_message: dict[str, list[Any]] = {}
    for row in connection.execute(sa.select(calls)):
        by_message.setdefault(row.message_id, []).append(row)
    assistant = list(connection.execute(sa.select(messages).where(messages.c.role == "assistant")))
    op.drop_table("tool_calls")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("activity_labels_json")
        batch.drop_column("done_seq")
        batch.drop_column("last_seq")
    op.create_table(
        "turn_events",
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("message_id", "seq"),
    )
    events = sa.table(
        "turn_events",
        sa.column("message_id"),
        sa.column("seq"),
        sa.column("kind"),
        sa.column("data"),
    )
    for message in assistant:
        rows = _events(message, by_message.get(message.id, []))
        if rows:
            connection.execute(events.insert(), [{"message_id": message.id, **r} for r in rows])
        if message.status != "streaming" and not message.stop_reason:
            connection.execute(
                messages.update()
                .where(messages.c.id == message.id)
                .values(stop_reason=_STOP_REASON_BY_STATUS.get(message.status, ""))
            )


_CALL_COLUMNS = (
    "message_id",
    "call_id",
    "tool",
    "server",
    "block",
    "label_bearing",
    "args_text",
    "output",
    "outcome",
    "outcome_patch_json",
    "status",
    "error",
    "seq",
    "started_seq",
    "intent_seq",
    "args_completed_seq",
    "backgrounded_seq",
    "settled_seq",
    "text_offset",
    "started_at",
    "settled_at",
)


def downgrade() -> None:
    raise RuntimeError(
        "0002_event_log cannot be undone: the tool_calls rows were folded into turn_events. "
        "Restore a backup taken before the upgrade instead."
    )


def _events(message: Any, calls: list[Any]) -> list[dict[str, Any]]:
    """The stored turn as event rows (seq, kind, data), in the order that rebuilds it."""
    items: list[tuple[int, int, int, str, dict[str, Any]]] = []

    def add(seq: int, rank: int, kind: str, data: dict[str, Any]) -> None:
        items.append((seq, rank, len(items), kind, data))

    content: str = message.content or ""
    cursor = 0
    max_seq = 0
    calls = sorted(calls, key=lambda c: (c.started_seq, c.started_at, c.call_id))
    for call in calls:
        offset = min(max(call.text_offset, cursor), len(content))
        if offset > cursor:
            add(call.started_seq, _TEXT, "TextDelta", {"text": content[cursor:offset]})
            cursor = offset
        started: dict[str, Any] = {"call_id": call.call_id, "tool": call.tool, "block": call.block}
        if call.server is not None:
            started["server"] = call.server
        if call.label_bearing:
            started["label_bearing"] = True
        if call.started_at:
            started["at"] = float(call.started_at)
        add(call.started_seq, _STARTED, "CallStarted", started)
        if call.args_text:
            # One fragment with the whole text, at the seq where the intent first showed,
            # so the replay stamps the same label seq.
            seq = call.intent_seq if call.intent_seq is not None else call.started_seq
            add(seq, _DELTA, "ArgsDelta", {"call_id": call.call_id, "chunk": call.args_text})
        if call.args_completed_seq is not None:
            add(call.args_completed_seq, _COMPLETE, "ArgsComplete", {"call_id": call.call_id})
        if call.backgrounded_seq is not None:
            add(call.backgrounded_seq, _BACKGROUND, "CallBackgrounded", {"call_id": call.call_id})
        if call.status in _FINAL:
            seq = call.settled_seq if call.settled_seq is not None else call.seq
            settled: dict[str, Any] = {"call_id": call.call_id, "state": call.status}
            if call.output:
                settled["output"] = call.output
            if call.outcome is not None:
                settled["outcome"] = call.outcome
            patch = _json(call.outcome_patch_json)
            if isinstance(patch, dict):
                settled["outcome_patch"] = patch
            if call.error is not None:
                settled["error"] = call.error
            if call.settled_at:
                settled["at"] = float(call.settled_at)
            add(seq, _SETTLED, "CallSettled", settled)
        seqs = (
            call.started_seq,
            call.intent_seq,
            call.args_completed_seq,
            call.backgrounded_seq,
            call.settled_seq,
        )
        max_seq = max(max_seq, *(s for s in seqs if s is not None))
    tail = max(max_seq, message.last_seq or 0)
    if cursor < len(content):
        add(tail, _TRAILING, "TextDelta", {"text": content[cursor:]})
    labels = _json(message.activity_labels_json)
    if isinstance(labels, dict):
        for block, label in sorted(labels.items(), key=lambda item: str(item[0])):
            if isinstance(label, str) and str(block).lstrip("-").isdigit():
                add(tail, _ACTIVITY, "ActivityLabel", {"block": int(block), "label": label})
    if message.status != "streaming":
        done: dict[str, Any] = {
            "stop_reason": message.stop_reason or _STOP_REASON_BY_STATUS.get(message.status, "")
        }
        if message.error is not None:
            done["error"] = message.error
        if message.updated_at:
            done["at"] = float(message.updated_at)
        add(message.done_seq if message.done_seq is not None else tail, _DONE, "TurnDone", done)
    items.sort(key=lambda item: item[:3])
    # The log is keyed by seq: events that shared one move to fresh numbers in order.
    rows: list[dict[str, Any]] = []
    for number, (*_, kind, data) in enumerate(items, start=1):
        rows.append({"seq": number, "kind": kind, "data": json.dumps(data, ensure_ascii=False)})
    return rows


def _json(text: str | None) -> Any:
    if text is None or not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
