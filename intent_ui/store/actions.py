"""Imported OpenAPI documents (the source of action tools), one row per API domain.

The table lives here rather than in `models.py`, whose tables the alembic migrations own:
`init_action_store(engine)` creates just this table (`create_all(tables=[...])`), which is
idempotent. Importing a document for a domain that already has one replaces it, so the
tool ids of that API stay stable (`{operationId}_action_{encoded_domain}`). Documents belong
to the user who imported them (`owner`, a user id): one document per owner and domain, and
each function sees only the owner's rows.

The store keeps the parsed document as JSON text and knows nothing about OpenAPI:
`intent_ui.agent.tools.actions` turns rows back into tools, from that text
(`StoredAction.document_json`), so it can keep what it parsed by content; the decoded
mapping (`document`) is decoded only when asked for.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Text, UniqueConstraint
from sqlmodel import Field, Session, SQLModel, col, select

from intent_ui.store.db import store_errors
from intent_ui.store.models import decode_json, encode_json, new_id

__all__ = [
    "ActionDocument",
    "StoredAction",
    "delete_action_document",
    "init_action_store",
    "list_action_documents",
    "save_action_document",
]


class ActionDocument(SQLModel, table=True):
    __tablename__ = "action_documents"
    __table_args__ = (
        UniqueConstraint("owner_id", "encoded_domain", name="uq_action_documents_owner_domain"),
    )

    id: str = Field(default_factory=new_id, primary_key=True)
    owner_id: str = Field(index=True)
    encoded_domain: str = Field(index=True)
    domain: str
    title: str = Field(sa_type=Text)
    source: str = Field(sa_type=Text)  # the URL or the uploaded file's name
    document_json: str = Field(sa_type=Text)
    created_at: float


@dataclass(frozen=True, slots=True)
class StoredAction:
    """A stored document: its row's fields and the document's JSON text."""

    id: str
    owner_id: str
    encoded_domain: str
    domain: str
    title: str
    source: str
    document_json: str
    created_at: float

    @property
    def document(self) -> dict[str, Any]:
        """The document, decoded (each call decodes the text again)."""
        document = decode_json(self.document_json, {})
        return document if isinstance(document, dict) else {}


_initialised: weakref.WeakSet[Engine] = weakref.WeakSet()


def init_action_store(engine: Engine) -> None:
    """Create the table if it does not exist (once per engine per process)."""
    if engine in _initialised:
        return
    # SQLModel sets `__table__` on a table model without declaring it.
    SQLModel.metadata.create_all(engine, tables=[ActionDocument.__table__])  # type: ignore[attr-defined]
    _initialised.add(engine)


def _decoded(row: ActionDocument) -> StoredAction:
    return StoredAction(
        id=row.id,
        owner_id=row.owner_id,
        encoded_domain=row.encoded_domain,
        domain=row.domain,
        title=row.title,
        source=row.source,
        document_json=row.document_json,
        created_at=row.created_at,
    )


@store_errors("save the action document")
def save_action_document(
    engine: Engine,
    *,
    owner: str,
    encoded_domain: str,
    domain: str,
    title: str,
    source: str,
    document: dict[str, Any],
    now: Callable[[], float],
) -> StoredAction:
    """Store `owner`'s document for its domain, replacing their earlier one for it."""
    init_action_store(engine)
    with Session(engine) as session:
        row = session.exec(
            select(ActionDocument).where(
                ActionDocument.owner_id == owner, ActionDocument.encoded_domain == encoded_domain
            )
        ).first()
        if row is None:
            row = ActionDocument(
                owner_id=owner,
                encoded_domain=encoded_domain,
                domain=domain,
                title=title,
                source=source,
                document_json=encode_json(document),
                created_at=now(),
            )
        else:
            row.domain, row.title, row.source = domain, title, source
            row.document_json = encode_json(document)
        session.add(row)
        session.commit()
        session.refresh(row)
        return _decoded(row)


@store_errors("list the action documents")
def list_action_documents(engine: Engine, *, owner: str | None) -> list[StoredAction]:
    """`owner`'s stored documents (everyone's for None, when loading every user's action
    tools at start), oldest first."""
    init_action_store(engine)
    statement = select(ActionDocument).order_by(col(ActionDocument.created_at))
    if owner is not None:
        statement = statement.where(ActionDocument.owner_id == owner)
    with Session(engine) as session:
        return [_decoded(row) for row in session.exec(statement).all()]


@store_errors("delete the action document")
def delete_action_document(engine: Engine, document_id: str, *, owner: str) -> bool:
    """Remove `owner`'s stored document; False when they have none with that id."""
    init_action_store(engine)
    with Session(engine) as session:
        row = session.get(ActionDocument, document_id)
        if row is None or row.owner_id != owner:
            return False
        session.delete(row)
        session.commit()
        return True
