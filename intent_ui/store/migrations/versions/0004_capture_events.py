"""Captured MCP tool calls: the capture_events table.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0004_capture_events
Revises: 0003_users
Create Date: 2026-12-01 00:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_capture_events"
down_revision: str | Sequence[str] | None = "0003_users"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "capture_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("server", sa.String(), nullable=True),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("intent", sa.Text(), nullable=True),
        sa.Column("intent_context", sa.String(), nullable=False),
        sa.Column("intent_source", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("capture_events", schema=None) as batch_op:
        batch_op.create_index("ix_capture_events_timestamp", ["timestamp"], unique=False)
        batch_op.create_index("ix_capture_events_tool", ["tool"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("capture_events", schema=None) as batch_op:
        batch_op.drop_index("ix_capture_events_tool")
        batch_op.drop_index("ix_capture_events_timestamp")
    op.drop_table("capture_events")
