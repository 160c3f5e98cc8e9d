"""Checkpoints and the file contents they keep (docs/rewind.md).

`checkpoints`: one row per workspace-changing call that ran, in the conversation of its
turn: the call, its tool, when, and what it changed (`core.checkpoints.Change` records as
JSON), plus a note when the scan was cut short by its bounds. `checkpoint_blobs`: file
contents by SHA-256, each stored once however many checkpoints name it (content
addressing: the same file before ten calls is one row). Blobs are in the store, so they
follow the database: a restart, the command line and every worker read the same ones,
and no tool can reach them (the database is one of the app's protected files).

A deleted conversation takes its checkpoints with it, and the contents no other
checkpoint names (`forget_unused_blobs`, called by `conversations.delete_conversation`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Index, LargeBinary, delete
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, SQLModel, Text, col, select

from intent_ui.core.checkpoints import Change
from intent_ui.store.db import add_row, open_session, store_errors

__all__ = [
    "CheckpointBlob",
    "CheckpointRecord",
    "CheckpointRow",
    "add_checkpoint",
    "all_checkpoints",
    "conversation_checkpoints",
    "forget_unused_blobs",
    "known_blobs",
    "put_blobs",
    "read_blobs",
]


def _new_id() -> str:
    return uuid.uuid4().hex


def _decode(text: str) -> list[Any]:
    """A row's changes; a hand-edited or corrupt cell reads as no changes."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


class CheckpointRow(SQLModel, table=True):
    """The state of the workspace before one call, as what the call changed."""

    __tablename__ = "checkpoints"
    __table_args__ = (Index("ix_checkpoints_conversation", "conversation_id", "created_at"),)

    id: str = Field(default_factory=_new_id, primary_key=True)
    conversation_id: str = Field(foreign_key="conversations.id", ondelete="CASCADE")
    message_id: str = Field(foreign_key="messages.id", ondelete="CASCADE", index=True)
    call_id: str
    tool: str
    created_at: float
    changes: str = Field(default="[]", sa_type=Text)
    note: str = Field(default="", sa_type=Text)


class CheckpointBlob(SQLModel, table=True):
    """One file content, by its SHA-256."""

    __tablename__ = "checkpoint_blobs"

    sha256: str = Field(primary_key=True)
    size: int
    data: bytes = Field(sa_type=LargeBinary)


@dataclass(frozen=True, slots=True)
class CheckpointRecord:
    id: str
    conversation_id: str
    message_id: str
    call_id: str
    tool: str
    created_at: float
    changes: tuple[Change, ...]
    note: str


def _record(row: CheckpointRow) -> CheckpointRecord:
    raw = _decode(row.changes)
    changes = tuple(Change.from_record(item) for item in raw if isinstance(item, dict))
    return CheckpointRecord(
        row.id,
        row.conversation_id,
        row.message_id,
        row.call_id,
        row.tool,
        row.created_at,
        changes,
        row.note,
    )


@store_errors("read the checkpoint contents")
def known_blobs(engine: Engine, shas: Iterable[str]) -> set[str]:
    """Which of `shas` the store already holds."""
    wanted = list(set(shas))
    found: set[str] = set()
    with open_session(engine) as session:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            statement = select(CheckpointBlob.sha256).where(col(CheckpointBlob.sha256).in_(chunk))
            found.update(str(sha) for sha in session.exec(statement))
    return found


@store_errors("keep the checkpoint contents")
def put_blobs(engine: Engine, blobs: Mapping[str, bytes]) -> None:
    """Store contents by their SHA-256 (the keys), each once: a content another worker
    stored meanwhile is left as it is."""
    missing = set(blobs) - known_blobs(engine, blobs)
    for sha in sorted(missing):
        with open_session(engine) as session:
            session.add(CheckpointBlob(sha256=sha, size=len(blobs[sha]), data=blobs[sha]))
            try:
                session.commit()
            except IntegrityError:
                session.rollback()  # the same content, stored by someone else first


@store_errors("read the checkpoint contents")
def read_blobs(engine: Engine, shas: Iterable[str]) -> dict[str, bytes]:
    """The contents of `shas` the store holds."""
    wanted = list(set(shas))
    out: dict[str, bytes] = {}
    with open_session(engine) as session:
        for start in range(0, len(wanted), 200):
            chunk = wanted[start : start + 200]
            statement = select(CheckpointBlob.sha256, CheckpointBlob.data).where(
                col(CheckpointBlob.sha256).in_(chunk)
            )
            for sha, data in session.exec(statement):
                out[str(sha)] = bytes(data)
    return out


@store_errors("record the checkpoint")
def add_checkpoint(
    engine: Engine,
    *,
    conversation_id: str,
    message_id: str,
    call_id: str,
    tool: str,
    changes: Iterable[Change],
    note: str = "",
    now: float | None = None,
) -> str:
    """Record a checkpoint; its contents must be stored already (`put_blobs`)."""
    row = CheckpointRow(
        conversation_id=conversation_id,
        message_id=message_id,
        call_id=call_id,
        tool=tool,
        created_at=time.time() if now is None else now,
        changes=json.dumps([change.to_record() for change in changes], ensure_ascii=False),
        note=note,
    )
    return add_row(engine, row).id


@store_errors("read the checkpoints")
def conversation_checkpoints(engine: Engine, conversation_id: str) -> list[CheckpointRecord]:
    """The conversation's checkpoints, oldest first (on every branch). The caller has
    checked that the reader owns the conversation."""
    statement = (
        select(CheckpointRow)
        .where(col(CheckpointRow.conversation_id) == conversation_id)
        .order_by(col(CheckpointRow.created_at), col(CheckpointRow.id))
    )
    with open_session(engine) as session:
        return [_record(row) for row in session.exec(statement)]


@store_errors("read the checkpoints")
def all_checkpoints(engine: Engine, *, owner: str | None = None) -> list[CheckpointRecord]:
    """Every checkpoint (of `owner`'s conversations only, when given), oldest first: what
    the command line lists."""
    from intent_ui.store.models import Conversation

    statement = select(CheckpointRow).order_by(col(CheckpointRow.created_at), col(CheckpointRow.id))
    if owner is not None:
        statement = statement.join(
            Conversation, col(Conversation.id) == col(CheckpointRow.conversation_id)
        ).where(col(Conversation.owner_id) == owner)
    with open_session(engine) as session:
        return [_record(row) for row in session.exec(statement)]


@store_errors("remove unused checkpoint contents")
def forget_unused_blobs(engine: Engine) -> int:
    """Delete the contents no checkpoint names; returns how many went."""
    used: set[str] = set()
    with open_session(engine) as session:
        for changes in session.exec(select(CheckpointRow.changes)):
            for item in _decode(changes):
                before = item.get("before") if isinstance(item, dict) else None
                if isinstance(before, dict) and isinstance(before.get("sha256"), str):
                    used.add(before["sha256"])
        stored = {str(sha) for sha in session.exec(select(CheckpointBlob.sha256))}
        unused = sorted(stored - used)
        for start in range(0, len(unused), 500):
            chunk = unused[start : start + 500]
            session.execute(delete(CheckpointBlob).where(col(CheckpointBlob.sha256).in_(chunk)))
        session.commit()
    return len(unused)
