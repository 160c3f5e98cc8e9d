"""`reflex run` (the README's first command) must not restart itself while a turn runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from reflex.utils.exec import get_reload_paths

from intent_ui.store.db import DEFAULT_DB_URL

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_database_is_not_watched_by_the_dev_reloader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    database = (ROOT / DEFAULT_DB_URL.removeprefix("sqlite:///")).resolve()
    watched = [Path(path).resolve() for path in get_reload_paths()]
    # A watched file makes its folder watched too, so a database beside it would count.
    folders = {path if path.is_dir() else path.parent for path in watched}
    assert not any(folder == database.parent or folder in database.parents for folder in folders)
