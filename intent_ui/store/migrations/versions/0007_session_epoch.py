"""Each user's session epoch: signed into every session cookie, and raised to end all of
the user's sessions at once (sign out everywhere, a new password).

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0007_session_epoch
Revises: 0006_agent_goals
Create Date: 2026-12-02 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_session_epoch"
down_revision: str | Sequence[str] | None = "0006_agent_goals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("session_epoch", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("session_epoch")
