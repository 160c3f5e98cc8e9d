"""A database as revision 0001 left it: turns stored as message and tool-call rows.

`fixtures/pre_event_log.json` holds rows that the pre-event-log recorder wrote for two
turns (a finished one with parallel calls settling out of order, a summary and a
failed call; one interrupted mid-intent), with the labels, headers and provider history
that code rendered from them. A migrated database must render exactly the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from alembic import command
from sqlalchemy import MetaData, create_engine

from intent_ui.store.db import migration_config

FIXTURE = Path(__file__).parent / "fixtures" / "pre_event_log.json"


def legacy_fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def write_legacy_database(path: Path) -> dict[str, Any]:
    """Create `path` at revision 0001 holding the fixture's rows; returns the fixture."""
    fixture = legacy_fixture()
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            command.upgrade(migration_config(connection), "0001_initial")
        metadata = MetaData()
        metadata.reflect(engine)
        with engine.begin() as connection:
            for table in ("conversations", "messages", "tool_calls"):
                connection.execute(metadata.tables[table].insert(), fixture["rows"][table])
    finally:
        engine.dispose()
    return fixture
