"""Imported OpenAPI documents (the source of action tools), one row per API domain.

The table lives here rather than in `models.py`, whose tables the alembic migrations own:
`init_action_store(engine)` creates just this table (`create_all(tables=[...])`), which is
idempotent. Importing a document for a domain that already has one replaces it, so the
tool ids of that API stay stable (`{operationId}_action_{encoded_domain}`).

The store keeps the parsed document as JSON text and knows nothing about OpenAPI:
`intent_ui.agent.tools.actions` turns rows back into tools.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Text
from sqlmodel import Field, Session, SQLModel, select

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

    id: str = Field(default_factory=new_id, primary_key=True)
    encoded_domain: str = Field(index=True, unique=True)
    domain: str
    title: str = Field(sa_type=Text)
    source: str = Field(sa_type=Text)  # the URL or the uploaded file's name
    document_json: str = Field(sa_type=Text)
    created_at: float


@dataclass(frozen=True, slots=True)
class StoredAction:
    """A stored document, decoded."""

    id: str
    encoded_domain: str
    domain: str
    title: str
    source: str
    document: dict[str, Any]
    created_at: float


_initialised: weakref.WeakSet[Engine] = weakref.WeakSet()


def init_action_store(engine: Engine) -> None:
    """Create the table if it does not exist (once per engine per process)."""
    if engine in _initialised:
        return
    SQLModel.metadata.create_all(engine, tables=[ActionDocument.__table__])  # type: ignore[list-item]
    _initialised.add(engine)


def _decoded(row: ActionDocument) -> StoredAction:
    document = decode_json(row.document_json, {})
    return StoredAction(
        id=row.id,
        encoded_domain=row.encoded_domain,
        domain=row.domain,
        title=row.title,
        source=row.source,
        document=document if isinstance(document, dict) else {},
        created_at=row.created_at,
    )


@store_errors("save the action document")
def save_action_document(
    engine: Engine,
    *,
    encoded_domain: str,
    domain: str,
    title: str,
    source: str,
    document: dict[str, Any],
    now: Callable[[], float],
) -> StoredAction:
    """Store a document for its domain, replacing an earlier one for the same domain."""
    init_action_store(engine)
    with Session(engine) as session:
        row = session.exec(
            select(ActionDocument).where(ActionDocument.encoded_domain == encoded_domain)
        ).first()
        if row is None:
            row = ActionDocument(
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
def list_action_documents(engine: Engine) -> list[StoredAction]:
    """Every stored document, oldest first."""
    init_action_store(engine)
    with Session(engine) as session:
        rows = session.exec(select(ActionDocument).order_by(ActionDocument.created_at)).all()
        return [_decoded(row) for row in rows]


@store_errors("delete the action document")
def delete_action_document(engine: Engine, document_id: str) -> bool:
    """Remove a stored document; False when there was none with that id."""
    init_action_store(engine)
    with Session(engine) as session:
        row = session.get(ActionDocument, document_id)
        if row is None:
            return False
        session.delete(row)
        session.commit()
        return True
