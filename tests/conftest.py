"""Fixtures every suite shares: a real Redis and a real PostgreSQL (tests/support/servers.py:
the machine's own on 127.0.0.1 when they answer, else private ones started for the
session). Session-scoped and started only when a test asks for them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import servers

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    # Under pytest-xdist (the suite runs its files on two processes) every process but the
    # first builds and serves the page from a frontend folder of its own: an app's build
    # writes its backend's address into that folder, so two apps sharing one would send
    # each other's pages to the wrong backend.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and worker != "gw0" and "REFLEX_WEB_WORKDIR" not in os.environ:
        os.environ["REFLEX_WEB_WORKDIR"] = str(ROOT / f".web-{worker}")


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
