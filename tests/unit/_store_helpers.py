"""Shared setup for the store tests: a migrated SQLite file per test, cheaply.

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

from intent_ui.store.db import dispose_engines, init_db


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
