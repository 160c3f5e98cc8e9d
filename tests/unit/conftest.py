"""Shared fixtures: a migrated database per test, the host the pages are served from,
(for the capture tests) the intent capture test server built as FastMCP and as a
low-level Server, each HTTP provider with its wire, and a cluster's Redis keys of the
test's own."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server
from sqlalchemy import Engine

from intent_ui.agent.cluster import ClusterConfig
from intent_ui.capture.options import CONFIG_ENV, SWITCH_ENV
from intent_ui.config import AppConfig
from intent_ui.store.db import dispose_engines
from intent_ui.ui import host as host_module
from intent_ui.ui.host import Host
from intent_ui.ui.sign_in_throttle import SignInThrottle
from tests.support import servers
from tests.support.capture_servers import SERVER_KINDS, ServerKind, build_server
from tests.support.capture_sink import RecordingSink
from tests.support.cluster import drop_keys, fast_config, new_prefix
from tests.support.provider_cases import CASES, ProviderCase
from tests.support.sandbox import readable_folder
from tests.support.store import PostgresStore, migrated_engine


@pytest.fixture(autouse=True)
def no_trace_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own OpenTelemetry endpoint must not receive the tests' turns (the
    tracing tests point their hosts at a collector of their own)."""
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


DATABASE_KINDS = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The store's own tests (`test_store_*.py`) run on every database the app supports;
    the other tests that take `engine` run on SQLite only, which keeps the suite short."""
    module = metafunc.module.__name__.rpartition(".")[2]
    if "database_kind" in metafunc.fixturenames and module.startswith("test_store_"):
        metafunc.parametrize("database_kind", DATABASE_KINDS, indirect=True)


@pytest.fixture
def database_kind(request: pytest.FixtureRequest) -> str:
    """Which database `engine` is: one of DATABASE_KINDS; SQLite unless parametrised."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def postgres_store(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url)
    yield store
    store.close()


@pytest.fixture
def new_database(
    database_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], str]]:
    """`new_database()`: the URL of a new, empty database (not migrated yet) of the
    parametrised kind: a SQLite file in the test's folder, or a PostgreSQL database of its
    own, dropped after the test (its engines are closed first)."""
    made = 0
    with contextlib.ExitStack() as stack:

        def new() -> str:
            nonlocal made
            made += 1
            if database_kind == "postgresql":
                server = request.getfixturevalue("postgres_server_url")
                return stack.enter_context(servers.postgres_database(server))
            return f"sqlite:///{tmp_path / f'new{made}.db'}"

        yield new
        dispose_engines()


@pytest.fixture
def engine(
    database_kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[Engine]:
    """A fresh, fully migrated database (not `DB_URL`'s): a SQLite file in the test's
    folder, or the session's PostgreSQL database emptied for this test."""
    monkeypatch.delenv("DB_URL", raising=False)
    if database_kind == "postgresql":
        postgres: PostgresStore = request.getfixturevalue("postgres_store")
        yield postgres.fresh()
    else:
        yield migrated_engine(tmp_path)
    dispose_engines()


@pytest.fixture
def oauth_demo(tmp_path: Path) -> AppConfig:
    """The demo endpoint, unpaced, over a workspace (the test's folder) whose one file
    mentions OAuth: a demo turn that searches for OAuth finds one match, in `auth.py`."""
    (tmp_path / "auth.py").write_text("OAuth here\n")
    return AppConfig.model_validate(
        {"endpoints": [{"kind": "demo", "pacing_ms": 0}], "workspace": tmp_path}
    )


@pytest.fixture
def serve_host(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Host]:
    """`serve_host(config, runtime=None)` builds the host of `config` (and `runtime`, a
    fake one or None) over the test's database, and makes it the host `get_host()`
    returns, as the running app's own."""

    def serve(config: AppConfig, runtime: Any = None) -> Host:
        host = Host(config=config, engine=engine, runtime=runtime)
        monkeypatch.setattr(host_module, "_host", host)
        return host

    return serve


@pytest.fixture
def demo_host(serve_host: Callable[..., Host], tmp_path: Path) -> Host:
    """The host of the demo endpoint over the test's folder (see `serve_host`)."""
    return serve_host(
        AppConfig.model_validate({"endpoints": [{"kind": "demo"}], "workspace": tmp_path})
    )


@pytest.fixture
def no_capture_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own INTENT_CAPTURE settings must not leak into capture tests."""
    monkeypatch.delenv(SWITCH_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)


@pytest.fixture(params=SERVER_KINDS)
def server_kind(request: pytest.FixtureRequest) -> ServerKind:
    return request.param


@pytest.fixture
def make_server(server_kind: ServerKind, no_capture_switch: None) -> Callable[[], FastMCP | Server]:
    """Builds a fresh test server of the parametrised kind; capture is off unless the test
    switches it on."""
    return lambda: build_server(server_kind)


@pytest.fixture
def sink(no_capture_switch: None) -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def sandbox_workspace() -> Iterator[Path]:
    """A workspace the sandbox can bind (readable by its user, as root too), holding one
    file, `notes.md`."""
    with readable_folder() as folder:
        (folder / "notes.md").write_text("TODO write the notes\n")
        yield folder


THROTTLE_STORAGES = ("process", "redis")


@pytest.fixture(params=THROTTLE_STORAGES)
async def make_sign_in_throttle(
    request: pytest.FixtureRequest,
) -> AsyncIterator[Callable[..., SignInThrottle]]:
    """`make_sign_in_throttle(name_limit=..., client_limit=...)`: a sign-in throttle
    counting in this process, or in the real Redis (`redis_url`) under keys of this test's
    own; every throttle it makes in one test shares one Redis, like workers of one app."""
    made: list[SignInThrottle] = []
    key_prefix = f"intent_ui_test:{uuid.uuid4().hex}:sign_in"
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None

    def make(**limits: int) -> SignInThrottle:
        if url is not None:
            throttle = SignInThrottle.on_redis(url, key_prefix=key_prefix, **limits)
        else:
            throttle = SignInThrottle.in_process(**limits)
        made.append(throttle)
        return throttle

    yield make
    for throttle in made:
        await throttle.aclose()
    if url is not None:  # the shared Redis keeps nothing of the test
        client = redis.asyncio.Redis.from_url(url)
        try:
            async for key in client.scan_iter(match=f"{key_prefix}:*"):
                await client.delete(key)
        finally:
            await client.aclose()


@pytest.fixture(params=CASES, ids=lambda case: case.id)
def provider_case(request: pytest.FixtureRequest) -> ProviderCase:
    """Each HTTP provider with its wire: a test taking it runs once per provider."""
    return request.param


@pytest.fixture
def cluster_config(redis_url: str) -> Iterator[ClusterConfig]:
    """Cluster settings with test timings, on the shared Redis under a prefix of this
    test's own, whose keys are deleted afterwards."""
    prefix = new_prefix()
    yield fast_config(redis_url, prefix)
    drop_keys(redis_url, prefix)
