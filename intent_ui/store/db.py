"""Open the database: resolve its URL, run the migrations to head, hand out one engine.

`init_db()` is what the app, the CLI and the tests call. The schema lives in the alembic
migrations shipped inside this package (`migrations/`), run programmatically, so no
`alembic.ini` is needed at the repository root. The revision table is
`intent_ui_alembic_version`, so a Reflex project that also runs `reflex db migrate` on the
same database keeps its own `alembic_version` table untouched.

SQLite (the default) gets `check_same_thread=False` (flushes run in worker threads), WAL
(readers never block the streaming writer), a busy timeout and enforced foreign keys.

Several processes may open one fresh database at once (the app's workers, a CLI run next
to the app): the migration runs under a cross-process lock, so the second one waits and
then finds the schema at head instead of racing to create the same tables. For a SQLite
file that is an exclusive `flock` on `<file>.migrate-lock` next to it (left in place:
removing it would reopen the race); for PostgreSQL a transaction-scoped advisory lock.

`store_errors(action)` is the store's one boundary for database failures: every query
module wraps its public functions in it, so a locked or unreachable database surfaces as
a `StoreError` saying what could not be done and how to fix it. SQLAlchemy's own message
echoes the SQL statement and its parameters (the user's text); the `StoreError` carries
the driver's first line only and drops the chained original, so no log repeats it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import (
    ArgumentError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
    StatementError,
)
from sqlalchemy.pool import StaticPool
from sqlmodel import Session

__all__ = [
    "DB_URL_ENV",
    "DEFAULT_DB_URL",
    "MIGRATIONS_DIR",
    "VERSION_TABLE",
    "DatabaseError",
    "NotFoundError",
    "StoreError",
    "add_row",
    "database_url",
    "dispose_engines",
    "init_db",
    "migration_config",
    "open_session",
    "owned_row",
    "store_errors",
]

DB_URL_ENV = "DB_URL"
DEFAULT_DB_DIR = Path(".data")
DEFAULT_DB_URL = "sqlite:///.data/intent_ui.db"
"""Inside a hidden folder on purpose: `reflex run` watches the app folder for changes,
and a database written next to the code restarts the dev backend mid-turn."""
VERSION_TABLE = "intent_ui_alembic_version"
MIGRATIONS_DIR = Path(__file__).resolve().with_name("migrations")
SQLITE_BUSY_TIMEOUT_MS = 5000
MIGRATION_LOCK_SUFFIX = ".migrate-lock"
# An arbitrary constant naming the advisory lock; any other user of the database would
# have to pick this very number to collide with it.
_PG_MIGRATION_LOCK_KEY = 0x1A7E7_0001

try:
    import fcntl
except ImportError:  # Windows: no flock; concurrent first starts are not serialised there
    fcntl = None  # type: ignore[assignment]

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


class StoreError(Exception):
    """Base of the store's errors; each message says what, where, and how to fix it."""


class DatabaseError(StoreError, RuntimeError):
    """The database at a URL could not be opened or migrated; the message names the URL."""


class NotFoundError(StoreError, LookupError):
    """A conversation, message or agent id that is not in the database."""


def database_url(explicit: str | None = None) -> str:
    """The URL to use: env `DB_URL`, else `explicit`, else `sqlite:///.data/intent_ui.db`.

    The SQLite default is relative to the current directory.
    """
    from_env = os.environ.get(DB_URL_ENV, "").strip()
    if from_env:
        return from_env
    if explicit is not None and explicit.strip():
        return explicit.strip()
    # The default's folder is ours to make; any other missing folder is the user's error.
    DEFAULT_DB_DIR.mkdir(exist_ok=True)
    return DEFAULT_DB_URL


def init_db(url: str | None = None) -> Engine:
    """Migrate the database at `database_url(url)` to head and return its cached engine.

    Calling it again with the same URL returns the same engine without touching the
    database. Raises `DatabaseError` when the database cannot be opened or migrated.
    """
    parsed = _parse(database_url(url))
    key = parsed.render_as_string(hide_password=False)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is not None:
            return engine
        engine = _create_engine(parsed)
        try:
            with _migration_lock(parsed), engine.begin() as connection:
                if connection.dialect.name == "postgresql":
                    connection.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"),
                        {"key": _PG_MIGRATION_LOCK_KEY},
                    )
                command.upgrade(migration_config(connection), "head")
        except Exception as exc:
            engine.dispose()
            raise DatabaseError(
                f"Cannot open the database at {_shown(parsed)}: {_reason(exc)}. "
                f"Check that the location exists and is writable, or point {DB_URL_ENV} "
                "at another database."
            ) from exc
        _engines[key] = engine
        return engine


@contextlib.contextmanager
def store_errors(action: str) -> Iterator[None]:
    """Turn a database failure inside the block into a `StoreError` about `action`.

    Also a decorator (`@store_errors("save the agent")`). `action` completes "Could not
    ...". The message never carries the SQL or its parameters, and the SQLAlchemy error
    is not chained (a logged traceback would print both).
    """
    try:
        yield
    except SQLAlchemyError as exc:
        raise _store_error(action, exc) from None


def _store_error(action: str, exc: SQLAlchemyError) -> StoreError:
    orig = getattr(exc, "orig", None)
    # Only the driver's own first line: SQLAlchemy's str() appends the statement and its
    # parameters, and a PostgreSQL DETAIL line may quote a stored value.
    lines = str(orig).strip().splitlines() if orig is not None else []
    said = lines[0][:200] if lines else type(exc).__name__
    if isinstance(exc, OperationalError) and ("locked" in said or "busy" in said):
        return StoreError(
            f"Could not {action}: the database is locked by another connection ({said}). "
            "Retry in a moment; if it stays locked, close the other program using the "
            "database."
        )
    if isinstance(exc, OperationalError):
        return StoreError(
            f"Could not {action}: the database failed ({said}). Check that it is reachable, "
            "writable and not full, then retry."
        )
    if isinstance(exc, IntegrityError):
        return StoreError(f"Could not {action}: it conflicts with the stored data ({said}).")
    return StoreError(f"Could not {action}: the database refused it ({said}).")


def dispose_engines() -> None:
    """Close every cached engine (tests, shutdown); the next `init_db` opens afresh."""
    with _engines_lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def open_session(engine: Engine) -> Session:
    """A session whose returned rows stay readable after it closes (no expiry on commit)."""
    return Session(engine, expire_on_commit=False)


_Row = TypeVar("_Row")


def add_row(engine: Engine, row: _Row) -> _Row:
    """Insert one new row and return it, readable after its session closes (its
    database-made fields, such as a generated id, filled in)."""
    with open_session(engine) as session:
        session.add(row)
        session.commit()
    return row


class _OwnedRow(Protocol):
    owner_id: str


_Owned = TypeVar("_Owned", bound=_OwnedRow)


def owned_row(session: Session, model: type[_Owned], row_id: str, owner: str) -> _Owned | None:
    """The `model` row `row_id` if `owner` owns it; None when there is none or it is
    someone else's."""
    found = session.get(model, row_id)
    return found if found is not None and found.owner_id == owner else None


def migration_config(connection: Any | None = None) -> Config:
    """An alembic `Config` for the packaged migrations, built in code.

    With `connection`, the migrations run on it (and inside its transaction).
    """
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@contextlib.contextmanager
def _migration_lock(url: URL) -> Iterator[None]:
    """Hold an exclusive lock shared by every process migrating this SQLite file."""
    database = url.database or ""
    if (
        fcntl is None
        or url.get_backend_name() != "sqlite"
        or _is_memory(url)
        or database.startswith("file:")
    ):
        yield
        return
    with open(database + MIGRATION_LOCK_SUFFIX, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _parse(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(
            f"Cannot open the database at {url!r}: it is not a database URL "
            "(expected e.g. sqlite:///intent_ui.db or postgresql+psycopg://user@host/db)."
        ) from exc
    if parsed.drivername in ("postgresql", "postgres"):
        # The installed driver is psycopg 3; a bare postgresql:// URL would ask for psycopg2.
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite" and not _is_memory(parsed):
        # Pin a relative file to the directory current *now*, so the cached engine and a
        # later `chdir` cannot disagree about which file is open.
        database = parsed.database or ""
        if not database.startswith("file:"):
            parsed = parsed.set(database=str(Path(database).expanduser().resolve()))
    return parsed


def _create_engine(url: URL) -> Engine:
    if url.get_backend_name() != "sqlite":
        try:
            return create_engine(url, pool_pre_ping=True)
        except (NoSuchModuleError, ImportError) as exc:
            raise DatabaseError(
                f"Cannot open the database at {_shown(url)}: its driver is not installed "
                f"({_reason(exc)}). Install it (for PostgreSQL: pip install 'psycopg[binary]' "
                "and use a postgresql+psycopg:// URL)."
            ) from exc
    memory = _is_memory(url)
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        # An in-memory database lives in one connection; share it or every checkout
        # would see an empty database.
        poolclass=StaticPool if memory else None,
    )

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            if not memory:
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    return engine


def _is_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or "mode=memory" in database


def _shown(url: URL) -> str:
    return repr(url.render_as_string(hide_password=True))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, StatementError) and exc.orig is not None:
        return str(exc.orig)  # the driver's words, without SQLAlchemy's SQL echo
    return str(exc) or type(exc).__name__
