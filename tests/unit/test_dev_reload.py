"""`reflex run` (the README's first command) must not restart itself while a turn runs.

Its reloader watches everything in the app folder except hidden folders (and a few
names), so the default SQLite file has to live in a hidden folder: beside the code, each
write restarted the backend and cancelled the turn being streamed.
"""

from __future__ import annotations

from pathlib import Path

from intent_ui.store.db import DEFAULT_DB_URL


def test_the_default_database_lives_in_a_hidden_folder() -> None:
    database = Path(DEFAULT_DB_URL.removeprefix("sqlite:///"))
    assert not database.is_absolute()
    assert len(database.parts) == 2 and database.parts[0].startswith(".")
