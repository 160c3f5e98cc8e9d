"""The host behind the pages: built once, on first use, from the app's settings, and
closed when the backend stops."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from intent_ui.store.db import dispose_engines
from intent_ui.store.models import LOCAL_USER_ID
from intent_ui.ui import host as host_module
from intent_ui.ui.host import close_host_at_shutdown, current_host, get_host

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_github_server.py"


@pytest.fixture
def deployed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A configuration file with a stdio MCP server and a database, named the way a
    deployment names them, and no host built yet."""
    (tmp_path / "ws").mkdir()
    config = {
        "workspace": str(tmp_path / "ws"),
        "mcp_servers": {"github": {"command": sys.executable, "args": [str(SERVER)]}},
    }
    path = tmp_path / "intent_ui.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML
    monkeypatch.setenv("INTENT_UI_CONFIG", str(path))
    monkeypatch.setenv("DB_URL", f"sqlite:///{tmp_path / 'app.db'}")
    monkeypatch.setattr(host_module, "_host", None)
    monkeypatch.setattr(host_module, "_building", None)
    yield
    dispose_engines()


@pytest.mark.usefixtures("deployed")
async def test_the_first_uses_at_once_share_one_host() -> None:
    async with close_host_at_shutdown():
        first, second = await asyncio.gather(get_host(), get_host())
        assert first is second is current_host()
        assert await get_host() is first


@pytest.mark.usefixtures("deployed")
async def test_stopping_the_backend_shuts_its_mcp_servers_down() -> None:
    async with close_host_at_shutdown():
        host = await get_host()
        tools = host.runtime.tools_for(None, LOCAL_USER_ID)
        search = next(tool for tool in tools if tool.name == "search_code")
        assert not (await search.call({"query": "oauth"})).is_error
    assert current_host() is None
    after = await search.call({"query": "oauth"})
    assert after.is_error and "shut down" in after.output
