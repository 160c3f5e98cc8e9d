"""Shared fixtures: a migrated database per test, the host the pages are served from, and
(for the capture tests) the intent capture test server built as FastMCP and as a
low-level Server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server
from sqlalchemy import Engine

from intent_ui.capture.options import CONFIG_ENV, SWITCH_ENV
from intent_ui.config import AppConfig
from intent_ui.store.db import dispose_engines
from intent_ui.ui import host as host_module
from intent_ui.ui.host import Host
from tests.support.capture_servers import SERVER_KINDS, ServerKind, build_server
from tests.support.capture_sink import RecordingSink
from tests.support.store import migrated_engine


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A fresh, fully migrated SQLite database in the test's folder (not `DB_URL`'s)."""
    monkeypatch.delenv("DB_URL", raising=False)
    yield migrated_engine(tmp_path)
    dispose_engines()


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
