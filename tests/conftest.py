"""Fixtures every suite shares: a real Redis and a real PostgreSQL (tests/support/servers.py:
the machine's own on 127.0.0.1 when they answer, else private ones started for the
session). Session-scoped and started only when a test asks for them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import servers


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis server's URL (`redis://127.0.0.1:PORT/0`). Shared with everything else on
    the machine: keep to keys of your own (a unique prefix or id per test), never flush."""
    with servers.redis_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A PostgreSQL server's URL without a database (`postgresql+psycopg://postgres@HOST:
    PORT`); `postgres_url` is the session's own database on it."""
    with servers.postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """The URL of an empty PostgreSQL database made for this test session (dropped at its
    end), as `DB_URL` takes it."""
    with servers.postgres_database(postgres_server_url) as url:
        yield url
