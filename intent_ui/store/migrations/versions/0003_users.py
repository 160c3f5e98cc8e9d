"""Users and ownership: a users table, owner_id on conversations, agents, memory entries
and imported action documents; shared agents; memory keys unique per owner.

Every row that existed before belongs to the local user (`local`), which this revision
creates, so an install without `auth:` sees exactly what it saw before.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0003_users
Revises: 0002_event_log
Create Date: 2026-12-01 00:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_users"
down_revision: str | Sequence[str] | None = "0002_event_log"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LOCAL = "local"


def upgrade() -> None:
    users = op.create_table(
        "users",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.bulk_insert(users, [{"id": LOCAL, "name": LOCAL, "password_hash": None, "created_at": 0.0}])

    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("owner_id", sa.String(), nullable=False, server_default=LOCAL)
        )
        batch_op.create_index(batch_op.f("ix_conversations_owner_id"), ["owner_id"])

    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("owner_id", sa.String(), nullable=False, server_default=LOCAL)
        )
        batch_op.add_column(
            sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.create_index(batch_op.f("ix_agents_owner_id"), ["owner_id"])

    # The primary key changes from (key) to (owner_id, key): rebuild the table.
    op.create_table(
        "memory_entries_new",
        sa.Column("owner_id", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", "key"),
    )
    op.execute(
        "INSERT INTO memory_entries_new (owner_id, key, value, updated_at) "
        f"SELECT '{LOCAL}', key, value, updated_at FROM memory_entries"
    )
    op.drop_table("memory_entries")
    op.rename_table("memory_entries_new", "memory_entries")

    # Imported action documents live in a table the app creates on first use, outside
    # these migrations; when it exists already, give its rows to the local user too.
    if sa.inspect(op.get_bind()).has_table("action_documents"):
        with op.batch_alter_table("action_documents", schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("owner_id", sa.String(), nullable=False, server_default=LOCAL)
            )
            batch_op.drop_index("ix_action_documents_encoded_domain")
            batch_op.create_index("ix_action_documents_encoded_domain", ["encoded_domain"])
            batch_op.create_index("ix_action_documents_owner_id", ["owner_id"])
            batch_op.create_unique_constraint(
                "uq_action_documents_owner_domain", ["owner_id", "encoded_domain"]
            )


def downgrade() -> None:
    # Memory keys were global before users: only the local user's entries fit back.
    # Other users' conversations and agents stay, visible to everyone again.
    op.create_table(
        "memory_entries_old",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.execute(
        "INSERT INTO memory_entries_old (key, value, updated_at) "
        f"SELECT key, value, updated_at FROM memory_entries WHERE owner_id = '{LOCAL}'"
    )
    op.drop_table("memory_entries")
    op.rename_table("memory_entries_old", "memory_entries")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agents_owner_id"))
        batch_op.drop_column("shared")
        batch_op.drop_column("owner_id")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_conversations_owner_id"))
        batch_op.drop_column("owner_id")
    op.drop_table("users")
