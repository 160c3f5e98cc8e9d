"""Start the real app under AppHarness with a given config file and SQLite database.

The app reads `INTENT_UI_CONFIG` and `DB_URL` when it builds its host (config, database,
runtime) on first use, so each module-scoped fixture writes its own config and database,
and `own_host` makes that app build its own host.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

from reflex.testing import AppHarness, AppHarnessProd

from intent_ui.store import users as user_store
from intent_ui.store.db import init_db
from intent_ui.ui import host as host_module

ROOT = Path(__file__).resolve().parents[2]
MCP_GITHUB_SERVER = ROOT / "tests" / "support" / "mcp_github_server.py"


LOOPBACK_ACTIONS = "actions:\n  allow_private_networks: true\n"
"""YAML letting imported OpenAPI actions reach the test APIs, which serve on 127.0.0.1
(the app refuses private addresses by default)."""


def github_mcp_block(call_log: Path | None = None) -> str:
    """YAML for the real stdio MCP server named `github` used across the e2e suite."""
    env = f'\n      MCP_CALL_LOG: "{call_log}"' if call_log else ""
    return (
        "mcp_servers:\n"
        "  github:\n"
        f'    command: "{sys.executable}"\n'
        f'    args: ["{MCP_GITHUB_SERVER}"]\n'
        f"    env:{env or ' {}'}\n"
    )


def database_path(workdir: Path) -> Path:
    """The SQLite file `running_app(workdir, ...)` serves; a test may write it first (an
    existing file is migrated at start, like any upgraded install)."""
    return workdir / "intent_ui.db"


def add_password_users(workdir: Path, passwords: dict[str, str]) -> None:
    """Create users who sign in with these passwords (name -> password) in the database
    `running_app(workdir, ...)` will serve; call it before starting the app."""
    workdir.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{database_path(workdir)}"
    with mock.patch.dict(os.environ, {"DB_URL": url}):  # DB_URL wins over the argument
        engine = init_db(url)
        for name, password in passwords.items():
            user_store.add_user(engine, name, password)


@contextlib.contextmanager
def own_host() -> Iterator[None]:
    """While it lasts, the app serves from a host of its own, built on first use.

    The app builds its host once per process, but every app of a test session is served
    from this process (each on its own event loop), so the host of the app started before
    is set aside here and comes back when this one stops."""
    with mock.patch.multiple(host_module, _host=None, _building=None):
        yield


@contextlib.contextmanager
def running_app(workdir: Path, config_yaml: str, *, prod: bool = False) -> Iterator[AppHarness]:
    """Run the app with `config_yaml` and the SQLite file `database_path(workdir)`.

    `prod` serves the production build (what benchmarks should measure: the dev build
    runs React's development checks on every render)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = workdir / "intent_ui.yaml"
    config_path.write_text(config_yaml)
    saved = {k: os.environ.get(k) for k in ("INTENT_UI_CONFIG", "DB_URL")}
    os.environ["INTENT_UI_CONFIG"] = str(config_path)
    os.environ["DB_URL"] = f"sqlite:///{database_path(workdir)}"
    try:
        harness_cls = AppHarnessProd if prod else AppHarness
        with own_host(), harness_cls.create(root=ROOT, app_name="intent_ui") as harness:
            yield harness
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
