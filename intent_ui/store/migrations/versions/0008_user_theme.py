"""Each user's colour theme (light, dark, or system: follow the browser).

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0008_user_theme
Revises: 0007_session_epoch
Create Date: 2026-12-03 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_user_theme"
down_revision: str | Sequence[str] | None = "0007_session_epoch"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("theme", sa.String(), nullable=False, server_default="system")
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("theme")
