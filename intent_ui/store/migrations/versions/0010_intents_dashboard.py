"""The intents dashboard over the app's own turns and captured servers: the copy of each
call of a finished turn (`dashboard_calls`), the day counts and intent counts both sources
add to (`dashboard_counts`, `dashboard_intents`), and the digest and vagueness of every
captured intent.

Captured calls stored before this revision get their digest and vagueness here, by the
rule of `intent_ui.core.dashboard` as it is now, and their counts from grouped inserts.
The app's turns before it are not on the dashboard: their calls were never copied, and
copying them would mean replaying every stored turn.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0010_intents_dashboard
Revises: 0009_share_links
Create Date: 2026-12-05 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from intent_ui.core.dashboard import intent_hash, is_vague

revision: str = "0010_intents_dashboard"
down_revision: str | Sequence[str] | None = "0009_share_links"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 5000
_HAS_HASH = sa.text("intent_hash IS NOT NULL")
_VAGUE = sa.text("vague")
_FAILED = sa.text("status = 'error'")
_WIDE = ["intent_hash", "day", "tool", "server", "agent_id"]
_CALL_INDEXES = [
    ("ix_dashboard_calls_intents", ["owner_id", "intent_hash", "day"], _HAS_HASH),
    ("ix_dashboard_calls_day_intents", ["owner_id", "day", "intent_hash"], _HAS_HASH),
    (
        "ix_dashboard_calls_tool_intents",
        ["owner_id", "tool", "server", "intent_hash", "day"],
        _HAS_HASH,
    ),
    ("ix_dashboard_calls_server_intents", ["owner_id", "server", "intent_hash", "day"], _HAS_HASH),
    (
        "ix_dashboard_calls_agent_intents",
        ["owner_id", "agent_id", "intent_hash", "day"],
        _HAS_HASH,
    ),
    ("ix_dashboard_calls_vague", ["owner_id", *_WIDE], _VAGUE),
    ("ix_dashboard_calls_failed", ["owner_id", *_WIDE], _FAILED),
    (
        "ix_dashboard_calls_duplicate",
        ["owner_id", "intent_hash", "tool", "day", "server", "agent_id"],
        sa.text("duplicate"),
    ),
]
_CAPTURE_INDEXES = [
    ("ix_capture_events_tool_intent", ["tool", "id"], sa.text("intent IS NOT NULL")),
    ("ix_capture_events_intents", ["intent_hash", "timestamp"], _HAS_HASH),
    ("ix_capture_events_time_intents", ["timestamp", "intent_hash"], _HAS_HASH),
    (
        "ix_capture_events_tool_intents",
        ["tool", "server", "intent_hash", "timestamp"],
        _HAS_HASH,
    ),
    ("ix_capture_events_server_intents", ["server", "intent_hash", "timestamp"], _HAS_HASH),
    ("ix_capture_events_vague", ["intent_hash", "timestamp", "tool", "server"], _VAGUE),
    ("ix_capture_events_failed", ["intent_hash", "timestamp", "tool", "server"], _FAILED),
]


def _partial(where: sa.TextClause) -> dict[str, sa.TextClause]:
    return {"sqlite_where": where, "postgresql_where": where}


def upgrade() -> None:
    op.create_table(
        "dashboard_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.String(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("call_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("server", sa.String(), nullable=True),
        sa.Column("intent", sa.Text(), nullable=True),
        sa.Column("intent_hash", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.Text(), nullable=True),
        sa.Column("intent_context", sa.String(), nullable=False),
        sa.Column("has_intent", sa.Boolean(), nullable=False),
        sa.Column("vague", sa.Boolean(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=True),
        sa.Column("day", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("dashboard_calls", schema=None) as batch_op:
        batch_op.create_index("ix_dashboard_calls_message_id", ["message_id"], unique=False)
        for name, columns, where in _CALL_INDEXES:
            batch_op.create_index(name, columns, unique=False, **_partial(where))
    op.create_table(
        "dashboard_counts",
        sa.Column("owner_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("dimension", sa.String(), nullable=False),
        sa.Column("day", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("server", sa.String(), nullable=False),
        sa.Column("intent_context", sa.String(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("with_intent", sa.Integer(), nullable=False),
        sa.Column("vague", sa.Integer(), nullable=False),
        sa.Column("duplicates", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "owner_id", "source", "dimension", "day", "name", "server", "intent_context"
        ),
    )
    op.create_table(
        "dashboard_intents",
        sa.Column("owner_id", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("intent_hash", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", "source", "intent_hash"),
    )
    with op.batch_alter_table("dashboard_intents", schema=None) as batch_op:
        batch_op.create_index(
            "ix_dashboard_intents_calls",
            ["owner_id", "source", "calls", "intent_hash"],
            unique=False,
        )
    with op.batch_alter_table("capture_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("intent_hash", sa.BigInteger(), nullable=True))
        batch_op.add_column(
            sa.Column("vague", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    _backfill_captured()
    with op.batch_alter_table("capture_events", schema=None) as batch_op:
        for name, columns, where in _CAPTURE_INDEXES:
            batch_op.create_index(name, columns, unique=False, **_partial(where))


_COUNT_COLUMNS = (
    "owner_id",
    "source",
    "dimension",
    "day",
    "name",
    "server",
    "intent_context",
    "calls",
    "with_intent",
    "vague",
    "duplicates",
    "failures",
)


_INTENT_COLUMNS = ("owner_id", "source", "intent_hash", "calls", "failures")


def _backfill_captured() -> None:
    """Digest and vagueness of the captured intents already stored, then their day counts."""
    connection = op.get_bind()
    events = sa.table(
        "capture_events",
        sa.column("id", sa.Integer()),
        sa.column("tool", sa.String()),
        sa.column("server", sa.String()),
        sa.column("intent", sa.Text()),
        sa.column("intent_context", sa.String()),
        sa.column("intent_source", sa.String()),
        sa.column("status", sa.String()),
        sa.column("timestamp", sa.Float()),
        sa.column("intent_hash", sa.BigInteger()),
        sa.column("vague", sa.Boolean()),
    )
    change = (
        sa.update(events)
        .where(events.c.id == sa.bindparam("row_id"))
        .values(intent_hash=sa.bindparam("digest"), vague=sa.bindparam("is_vague"))
    )
    last = 0
    while True:
        rows = connection.execute(
            sa.select(events.c.id, events.c.tool, events.c.intent)
            .where(events.c.id > last, events.c.intent.is_not(None))
            .order_by(events.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        connection.execute(
            change,
            [
                {"row_id": i, "digest": intent_hash(text), "is_vague": is_vague(text, tool)}
                for i, tool, text in rows
            ],
        )
        last = rows[-1][0]
    # The UTC day of a positive epoch time; PostgreSQL rounds a float cast to an integer.
    seconds = events.c.timestamp / 86400
    whole = sa.func.floor(seconds) if connection.dialect.name == "postgresql" else seconds
    day = sa.case((events.c.timestamp > 0, sa.cast(whole, sa.Integer)), else_=0)
    server = sa.func.coalesce(events.c.server, "")
    counts = sa.table("dashboard_counts", *(sa.column(name) for name in _COUNT_COLUMNS))
    per_day = sa.select(
        sa.literal(""),
        sa.literal("captured"),
        sa.literal("tool"),
        day,
        events.c.tool,
        server,
        events.c.intent_context,
        sa.func.count(),
        sa.func.sum(sa.case((events.c.intent_source == "context_parameter", 1), else_=0)),
        sa.func.sum(sa.case((events.c.vague, 1), else_=0)),
        sa.literal(0),
        sa.func.sum(sa.case((events.c.status == "error", 1), else_=0)),
    ).group_by(day, events.c.tool, server, events.c.intent_context)
    connection.execute(sa.insert(counts).from_select(list(_COUNT_COLUMNS), per_day))
    intents = sa.table("dashboard_intents", *(sa.column(n) for n in _INTENT_COLUMNS))
    per_intent = (
        sa.select(
            sa.literal(""),
            sa.literal("captured"),
            events.c.intent_hash,
            sa.func.count(),
            sa.func.sum(sa.case((events.c.status == "error", 1), else_=0)),
        )
        .where(events.c.intent_hash.is_not(None))
        .group_by(events.c.intent_hash)
    )
    connection.execute(sa.insert(intents).from_select(list(_INTENT_COLUMNS), per_intent))


def downgrade() -> None:
    with op.batch_alter_table("capture_events", schema=None) as batch_op:
        for name, _columns, _where in reversed(_CAPTURE_INDEXES):
            batch_op.drop_index(name)
        batch_op.drop_column("vague")
        batch_op.drop_column("intent_hash")
    with op.batch_alter_table("dashboard_intents", schema=None) as batch_op:
        batch_op.drop_index("ix_dashboard_intents_calls")
    op.drop_table("dashboard_intents")
    op.drop_table("dashboard_counts")
    with op.batch_alter_table("dashboard_calls", schema=None) as batch_op:
        for name, _columns, _where in reversed(_CALL_INDEXES):
            batch_op.drop_index(name)
        batch_op.drop_index("ix_dashboard_calls_message_id")
    op.drop_table("dashboard_calls")
