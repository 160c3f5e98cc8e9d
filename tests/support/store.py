"""Store setup shared by the tests: a migrated SQLite file per test, cheaply, a migrated
PostgreSQL database emptied between tests, and turns written the way a running session
writes them.

Migrating a fresh file costs ~100 ms, so the migrations run once per test process into a
template that each test copies (`test_store_db.py` still migrates fresh files itself).
PostgreSQL is migrated once per session too (`PostgresStore`), and each test gets it back
as the migrations left it.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from sqlalchemy import Engine, MetaData, text

from intent_ui.agent.session import TurnSession
from intent_ui.core.events import TurnEvent
from intent_ui.store.db import VERSION_TABLE, dispose_engines, init_db
from intent_ui.store.turns import EventLog


@functools.cache
def _template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="intent-ui-store-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "template.db"
    init_db(f"sqlite:///{path}")
    dispose_engines()  # closing the last connection folds the WAL into the file
    return path


def migrated_engine(folder: Path) -> Engine:
    """An engine on a fresh, fully migrated database file inside `folder`."""
    path = folder / "store.db"
    shutil.copyfile(_template(), path)
    return init_db(f"sqlite:///{path}")


class PostgresStore:
    """A PostgreSQL database migrated once (at `url`, e.g. the session's `postgres_url`);
    `fresh()` returns it to what the migrations left, their seed rows (the `local` user)
    included, faster than a new database would be made."""

    def __init__(self, url: str) -> None:
        self.engine = init_db(url)
        metadata = MetaData()
        metadata.reflect(self.engine)
        with self.engine.connect() as connection:
            self._seed = [
                (table, rows)
                for table in metadata.sorted_tables
                if table.name != VERSION_TABLE
                and (rows := [dict(row._mapping) for row in connection.execute(table.select())])
            ]

    def fresh(self) -> Engine:
        with self.engine.begin() as connection:
            # Listed each time: a store may create a table of its own on first use
            # (store/actions.py), after the migrations.
            names = connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            listed = ", ".join(f'"{name}"' for name in names if name != VERSION_TABLE)
            connection.execute(text(f"TRUNCATE {listed} RESTART IDENTITY CASCADE"))
            for table, rows in self._seed:
                connection.execute(table.insert(), rows)
        return self.engine

    def close(self) -> None:
        self.engine.dispose()


def turn_session(engine: Engine, message_id: str, *, clock: float = 0.0) -> TurnSession:
    """A session writing to `message_id`'s log, driven by hand with `publish`."""
    return TurnSession(
        message_id=message_id,
        conversation_id="",
        log=EventLog(engine, message_id, now=lambda: clock),
        clock=lambda: clock,
    )


def record_turn(engine: Engine, message_id: str, events: list[TurnEvent]) -> TurnSession:
    """Write `events` as a running turn's session does (its fold, log and summary)."""
    session = turn_session(engine, message_id)
    for event in events:
        session.publish(event)
    session.log.flush()
    return session
