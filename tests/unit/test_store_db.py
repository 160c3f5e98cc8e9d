"""Opening the database: URL resolution, migrations on a fresh file, clear failures."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect
from sqlmodel import SQLModel

from intent_ui.store import agents, conversations, db
from intent_ui.store.actions import save_action_document
from intent_ui.store.db import (
    VERSION_TABLE,
    DatabaseError,
    StoreError,
    database_url,
    dispose_engines,
    init_db,
    migration_config,
)
from intent_ui.store.memory import DbMemoryStore
from intent_ui.store.models import LOCAL_USER_ID, STORE_TABLES
from tests.support.store import migrated_engine

NewDatabase = Callable[[], str]


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("DB_URL", raising=False)
    yield
    dispose_engines()


def _head() -> str | None:
    return ScriptDirectory.from_config(migration_config()).get_current_head()


def test_database_url_defaults_to_a_hidden_folder_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert database_url() == "sqlite:///.data/intent_ui.db"  # where README says it is


def test_database_url_uses_explicit_url() -> None:
    assert database_url("sqlite:///other.db") == "sqlite:///other.db"


def test_database_url_env_wins_over_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_URL", "postgresql+psycopg://app@db/intent")
    assert database_url("sqlite:///other.db") == "postgresql+psycopg://app@db/intent"


def test_database_url_ignores_blank_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DB_URL", "   ")
    assert database_url("sqlite:///other.db") == "sqlite:///other.db"


def test_init_db_migrates_a_fresh_database_to_head(new_database: NewDatabase) -> None:
    engine = init_db(new_database())
    tables = set(inspect(engine).get_table_names())
    assert tables >= STORE_TABLES | {VERSION_TABLE}
    with engine.connect() as connection:
        assert (
            MigrationContext.configure(
                connection, opts={"version_table": VERSION_TABLE}
            ).get_current_revision()
            == _head()
        )


def test_init_db_twice_returns_the_same_engine(new_database: NewDatabase) -> None:
    url = new_database()
    assert init_db(url) is init_db(url)


def test_init_db_on_an_already_migrated_database_keeps_data(new_database: NewDatabase) -> None:
    url = new_database()
    chat = conversations.create_conversation(
        init_db(url), endpoint="demo", model="demo", owner=LOCAL_USER_ID
    )
    dispose_engines()  # as a second process would
    engine = init_db(url)
    assert conversations.get_conversation(engine, chat.id, owner=LOCAL_USER_ID) is not None


def test_schema_matches_the_models(new_database: NewDatabase) -> None:
    engine = init_db(new_database())
    with engine.connect() as connection:
        diff = compare_metadata(
            MigrationContext.configure(
                connection,
                opts={
                    "include_name": lambda n, t, _p: t != "table" or n in STORE_TABLES,
                    "include_object": lambda o, n, t, _r, _c: t != "table" or n in STORE_TABLES,
                },
            ),
            SQLModel.metadata,
        )
    assert diff == [], "models changed without a migration: write a new revision"


def test_sqlite_uses_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    engine = init_db(f"sqlite:///{tmp_path / 'pragmas.db'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000


def test_default_url_creates_the_file_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    init_db()
    assert (tmp_path / ".data" / "intent_ui.db").is_file()


def test_in_memory_sqlite_works() -> None:
    engine = init_db("sqlite://")
    chat = conversations.create_conversation(
        engine, endpoint="demo", model="demo", owner=LOCAL_USER_ID
    )
    assert conversations.get_conversation(engine, chat.id, owner=LOCAL_USER_ID) is not None


def test_missing_folder_raises_naming_the_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no' / 'such' / 'dir.db'}"
    with pytest.raises(DatabaseError, match="Cannot open the database") as caught:
        init_db(url)
    assert str(tmp_path / "no" / "such" / "dir.db") in str(caught.value)


def test_file_that_is_not_a_database_raises(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    with pytest.raises(DatabaseError, match=r"notes\.db"):
        init_db(f"sqlite:///{path}")


def test_garbage_url_raises() -> None:
    with pytest.raises(DatabaseError, match="not a database URL"):
        init_db("definitely not a url")


def test_missing_driver_raises_without_leaking_the_password() -> None:
    with pytest.raises(DatabaseError, match="driver is not installed") as caught:
        init_db("postgresql+nosuchdriver://app:s3cret@localhost/intent")
    assert "s3cret" not in str(caught.value)
    assert "localhost/intent" in str(caught.value)


def test_a_bare_postgresql_url_uses_the_installed_psycopg_driver() -> None:
    from intent_ui.store.db import _parse

    assert _parse("postgresql://u:p@db/x").drivername == "postgresql+psycopg"
    assert _parse("postgres://u:p@db/x").drivername == "postgresql+psycopg"
    assert _parse("postgresql+psycopg://u:p@db/x").drivername == "postgresql+psycopg"


def _open_at_once(urls: list[str], barrier: Any, results: Any) -> None:
    # One process opens every database in turn, each at the same moment as the others
    # (starting a process costs seconds, a race needs only the barrier).
    for url in urls:
        barrier.wait()
        try:
            init_db(url)
            results.put("ok")
        except Exception as exc:  # reported to the test, which shows it
            results.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_a_fresh_database_at_once_all_get_a_migrated_database(
    new_database: NewDatabase, database_kind: str
) -> None:
    context = multiprocessing.get_context("spawn")
    processes = 3
    # Two tries are plenty for PostgreSQL's advisory lock; a file lock races the file's
    # own creation too, so SQLite gets more.
    urls = [new_database() for _ in range(4 if database_kind == "sqlite" else 2)]
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_open_at_once, args=(urls, barrier, results))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=60) for _ in range(processes * len(urls))]
    for worker in workers:
        worker.join(timeout=60)
    assert outcomes == ["ok"] * (processes * len(urls))
    for url in urls:
        assert inspect(init_db(url)).has_table(VERSION_TABLE)


SECRET = "Call me at alice@example.com about the merger"


def _writes(engine: Engine) -> dict[str, Callable[[], object]]:
    return {
        "conversation": lambda: conversations.create_conversation(
            engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo", title=SECRET
        ),
        "agent": lambda: agents.create_agent(engine, owner=LOCAL_USER_ID, name=SECRET),
        "memory": lambda: asyncio.run(DbMemoryStore(engine).set(LOCAL_USER_ID, "note", SECRET)),
        "action": lambda: save_action_document(
            engine,
            owner=LOCAL_USER_ID,
            encoded_domain="x",
            domain="x",
            title=SECRET,
            source="s",
            document={},
            now=lambda: 0.0,
        ),
    }


@pytest.mark.parametrize("write", ["conversation", "agent", "memory", "action"])
def test_a_locked_database_is_a_store_error_without_the_sql_or_the_users_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str
) -> None:
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 20)
    engine = migrated_engine(tmp_path)
    save_action_document(  # creates its table before the lock is taken
        engine,
        owner=LOCAL_USER_ID,
        encoded_domain="y",
        domain="y",
        title="t",
        source="s",
        document={},
        now=time.time,
    )
    holder = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write lock
    try:
        with pytest.raises(StoreError) as caught:
            _writes(engine)[write]()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    error = caught.value
    assert "locked" in str(error)
    assert "retry" in str(error).lower()
    shown = "".join(traceback.format_exception(error))  # what a log would carry
    for leaked in ("alice@example.com", "INSERT", "[SQL", "parameters"):
        assert leaked not in shown
