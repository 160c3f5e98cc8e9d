"""Agent goals: goals_json and scopes_json columns on agents (the turn-level goals a turn
chooses from, and the scopes they work on).

Existing agents get empty lists: no goals, so their turns offer every picked tool, as
before.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0006_agent_goals
Revises: 0005_user_density
Create Date: 2026-12-01 01:10:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_agent_goals"
down_revision: str | Sequence[str] | None = "0005_user_density"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("goals_json", sa.Text(), nullable=False, server_default="[]"))
        batch_op.add_column(
            sa.Column("scopes_json", sa.Text(), nullable=False, server_default="[]")
        )


def downgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_column("scopes_json")
        batch_op.drop_column("goals_json")
