"""Checkpoints before workspace-changing calls (`checkpoints`) and the file contents they
keep, by SHA-256 (`checkpoint_blobs`). Nothing stored before this revision has one.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0012_checkpoints
Revises: 0011_message_branches
Create Date: 2026-12-07 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_checkpoints"
down_revision: str | Sequence[str] | None = "0011_message_branches"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "checkpoints",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("conversation_id", sa.String(), nullable=False),
        sa.Column("message_id", sa.String(), nullable=False),
        sa.Column("call_id", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("changes", sa.Text(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.create_index(
            "ix_checkpoints_conversation", ["conversation_id", "created_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_checkpoints_message_id"), ["message_id"], unique=False)
    op.create_table(
        "checkpoint_blobs",
        sa.Column("sha256", sa.String(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )


def downgrade() -> None:
    op.drop_table("checkpoint_blobs")
    with op.batch_alter_table("checkpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_checkpoints_message_id"))
        batch_op.drop_index("ix_checkpoints_conversation")
    op.drop_table("checkpoints")
