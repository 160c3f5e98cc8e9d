"""Store setup shared by the tests: a migrated SQLite file per test, cheaply, and turns
written the way a running session writes them.

Migrating a fresh file costs ~100 ms, so the migrations run once per test process into a
template that each test copies (`test_store_db.py` still migrates fresh files itself).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from sqlalchemy import Engine

from intent_ui.agent.session import TurnSession
from intent_ui.core.events import TurnEvent
from intent_ui.store.db import dispose_engines, init_db
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
