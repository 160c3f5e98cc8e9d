"""The tests' own servers (tests/support/servers.py): where none listens, as on a fresh
machine, a private Redis and PostgreSQL start from Debian's packages and stop after."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text

from intent_ui.store.db import dispose_engines, init_db
from tests.support import servers


@pytest.fixture
def nothing_listening(monkeypatch: pytest.MonkeyPatch) -> None:
    """The well-known ports become ports nothing listens on."""
    monkeypatch.setattr(servers, "REDIS_PORT", servers.free_port())
    monkeypatch.setattr(servers, "POSTGRES_PORT", servers.free_port())


def test_a_private_redis_starts_when_none_answers_and_stops_after(
    nothing_listening: None,
) -> None:
    with servers.redis_server() as url:
        assert f":{servers.REDIS_PORT}/" not in url
        assert servers.redis_answers(url)
    assert not servers.redis_answers(url)


def test_a_private_postgresql_holds_a_migrated_database_and_stops_after(
    nothing_listening: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with servers.postgres_server() as server:
        host, port = server.rpartition("@")[2].split(":")
        assert int(port) != servers.POSTGRES_PORT
        with servers.postgres_database(server) as url:
            monkeypatch.setenv("DB_URL", url)
            with init_db(url).connect() as connection:
                assert connection.execute(text("SELECT name FROM users")).scalars().all()
            dispose_engines()
        assert not _has_database(server, url)  # dropped with the block
    assert not servers.postgres_answers(host, int(port))


def _has_database(server: str, url: str) -> bool:
    host, port = server.rpartition("@")[2].split(":")
    name = url.rpartition("/")[2]
    conninfo = f"host={host} port={port} user=postgres dbname=postgres"
    with psycopg.connect(conninfo) as connection:
        found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        return found.fetchone() is not None
