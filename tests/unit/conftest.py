"""Shared fixtures: a migrated database per test, and the intent capture test server built
as FastMCP and as a low-level Server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp.server.fastmcp import FastMCP
from mcp.server.lowlevel import Server
from sqlalchemy import Engine

from intent_ui.capture import CallEvent
from intent_ui.capture.options import CONFIG_ENV, SWITCH_ENV
from intent_ui.store.db import dispose_engines
from tests.support.capture_servers import SERVER_KINDS, ServerKind, build_server
from tests.unit._store_helpers import migrated_engine


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A fresh, fully migrated SQLite database in the test's folder (not `DB_URL`'s)."""
    monkeypatch.delenv("DB_URL", raising=False)
    yield migrated_engine(tmp_path)
    dispose_engines()


class RecordingSink:
    """Keeps every call event in memory, in arrival order."""

    def __init__(self) -> None:
        self.events: list[CallEvent] = []
        self._lock = threading.Lock()

    def emit(self, event: CallEvent) -> None:
        with self._lock:
            self.events.append(event)

    def close(self) -> None:
        """Nothing to release."""

    def by_tool(self, tool: str) -> list[CallEvent]:
        return [event for event in self.events if event.tool == tool]


@pytest.fixture(autouse=True)
def _no_capture_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own INTENT_CAPTURE settings must not leak into tests."""
    monkeypatch.delenv(SWITCH_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)


@pytest.fixture(params=SERVER_KINDS)
def server_kind(request: pytest.FixtureRequest) -> ServerKind:
    return request.param


@pytest.fixture
def make_server(server_kind: ServerKind) -> Callable[[], FastMCP | Server]:
    """Builds a fresh test server of the parametrised kind."""
    return lambda: build_server(server_kind)


@pytest.fixture
def sink() -> Iterator[RecordingSink]:
    yield RecordingSink()
