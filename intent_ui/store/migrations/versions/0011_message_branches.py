"""A conversation's messages become a tree: each message follows its parent
(`messages.parent_id`, NULL for a first message), and among siblings (a reply
regenerated, a message edited and sent again) `messages.chosen` marks the one shown.

Every conversation stored before this revision is one line: each message follows the
one before it by position, and each is the only child of its parent, hence chosen.

Frozen history, like every revision: it spells out what it needs rather than
sharing helpers with other revisions or the app, so that no later change alters
what it does; the likeness between revisions is kept on purpose.

Revision ID: 0011_message_branches
Revises: 0010_intents_dashboard
Create Date: 2026-12-06 01:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_message_branches"
down_revision: str | Sequence[str] | None = "0010_intents_dashboard"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The message just before each one in its conversation: one correlated statement, which
# SQLite and PostgreSQL both run as written.
_LINK_TO_PREVIOUS = sa.text(
    "UPDATE messages SET parent_id = ("
    " SELECT previous.id FROM messages AS previous"
    " WHERE previous.conversation_id = messages.conversation_id"
    " AND previous.position < messages.position"
    " ORDER BY previous.position DESC LIMIT 1)"
)


def upgrade() -> None:
    # Plain ALTER TABLE ADD COLUMN on SQLite too. The default is the literal "1" (true
    # for both databases): a default given as an SQL expression would make alembic
    # rebuild the table, and dropping the old `messages` would cascade to every turn's
    # event log on a connection that enforces foreign keys, as the app's do.
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_id", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("chosen", sa.Boolean(), nullable=False, server_default="1"))
    op.execute(_LINK_TO_PREVIOUS)


def downgrade() -> None:
    # Nothing is deleted: the code before this revision lists every branch's messages,
    # in the order they were written.
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("chosen")
        batch_op.drop_column("parent_id")
