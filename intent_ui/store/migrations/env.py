"""Alembic environment for the Intent UI store.

`intent_ui.store.db.init_db` passes an open connection in `config.attributes`; the
command line (see `alembic.ini` next to this file) opens `DB_URL` instead. Only the
store's own tables are compared during autogenerate, since other SQLModel tables may share
`SQLModel.metadata`. Batch mode keeps future ALTERs working on SQLite.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

from intent_ui.store import models
from intent_ui.store.db import VERSION_TABLE, database_url


def _include_name(name: str | None, type_: str, _parents: Any) -> bool:
    # Names reflected from the database.
    return type_ != "table" or name in models.STORE_TABLES


def _include_object(obj: Any, name: str | None, type_: str, _reflected: bool, _other: Any) -> bool:
    # Objects of the metadata (and their columns, indexes, ... through their table).
    table = obj if type_ == "table" else getattr(obj, "table", None)
    return table is None or getattr(table, "name", None) in models.STORE_TABLES


def _render_item(type_: str, obj: Any, _autogen_context: Any) -> str | bool:
    # Render SQLModel's AutoString as a plain String so revisions need no sqlmodel import.
    if type_ == "type" and isinstance(obj, AutoString):
        return "sa.String()"
    return False


_OPTIONS: dict[str, Any] = {
    "target_metadata": SQLModel.metadata,
    "version_table": VERSION_TABLE,
    "include_name": _include_name,
    "include_object": _include_object,
    "render_item": _render_item,
    "render_as_batch": True,
    "compare_type": True,
}


def _run_online(connection: Any) -> None:
    context.configure(connection=connection, **_OPTIONS)
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    if context.is_offline_mode():
        context.configure(url=database_url(), literal_binds=True, **_OPTIONS)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run_online(connection)
        return
    engine = create_engine(database_url())
    try:
        with engine.begin() as own_connection:
            _run_online(own_connection)
    finally:
        engine.dispose()


_main()
