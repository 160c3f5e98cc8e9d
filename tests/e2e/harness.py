"""Start the real app under AppHarness with a given config file and SQLite database, or
as several backend workers on one Redis and one PostgreSQL (`running_workers`).

The app reads `INTENT_UI_CONFIG` and `DB_URL` when it builds its host (config, database,
runtime) on first use, so each module-scoped fixture writes its own config and database,
and `own_host` makes that app build its own host.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import httpx
from reflex.environment import environment
from reflex.testing import AppHarness, AppHarnessProd

from intent_ui.store import users as user_store
from intent_ui.store.db import init_db
from intent_ui.ui import host as host_module
from tests.support.loopback import free_port

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


WORKER_START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Workers:
    """Backend workers of one app, each a process of its own (like the workers Reflex's
    granian forks in production), sharing one Redis and one database.

    Worker `i` listens on its own loopback address and the one shared port, and serves
    the production page there too, so a tab opened at `url(i)` talks to worker `i` only:
    the built page names its backend `localhost:PORT`, and Reflex's page swaps `localhost`
    for the host it was loaded from. That is how a test puts two tabs on two workers."""

    urls: tuple[str, ...]
    redis_url: str | None
    db_url: str
    logs: tuple[Path, ...]
    processes: tuple[subprocess.Popen[bytes], ...] = field(repr=False)

    def url(self, worker: int) -> str:
        return self.urls[worker]

    def kill(self, worker: int) -> None:
        """End worker `worker` at once (SIGKILL to its granian and the process it forked),
        as a crashed machine would: nothing of its shutdown runs."""
        _signal_worker(self.processes[worker], signal.SIGKILL)


@contextlib.contextmanager
def running_workers(
    workdir: Path, config_yaml: str, *, redis_url: str | None, db_url: str, workers: int = 2
) -> Iterator[Workers]:
    """Build the production page once, then run `workers` backend processes of the app
    with `config_yaml` (which must not set `server:`; the workers' own origins go there),
    the Redis state manager at `redis_url` and the store at `db_url` (migrated first, as
    scripts/scale.sh does); with `redis_url` None and one worker, the app as one process
    (UI state in memory). Stopped (SIGTERM, as granian stops) when the block ends."""
    assert redis_url is not None or workers == 1, "several workers need a Redis"
    assert "server:" not in config_yaml, "running_workers writes the server block itself"
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    hosts = [f"127.0.0.{2 + worker}" for worker in range(workers)]
    urls = tuple(f"http://{host}:{port}" for host in hosts)
    origins = ", ".join(f'"{url}"' for url in urls)
    config_path = workdir / "intent_ui.yaml"
    config_path.write_text(f"{config_yaml}server:\n  allowed_origins: [{origins}]\n")
    env = _worker_environment(config_path, redis_url, db_url, port)
    with mock.patch.dict(os.environ, {"DB_URL": db_url}):  # DB_URL wins over the argument
        init_db(db_url).dispose()  # the workers hold connections of their own
    _build_page(workdir, env)
    logs = tuple(workdir / f"worker{worker}.log" for worker in range(workers))
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for host, log in zip(hosts, logs, strict=True):
            processes.append(_start_worker(host, port, env, log))
        for url, process, log in zip(urls, processes, logs, strict=True):
            _wait_for_worker(url, process, log)
        yield Workers(
            urls=urls, redis_url=redis_url, db_url=db_url, logs=logs, processes=tuple(processes)
        )
    finally:
        for process in processes:
            _signal_worker(process, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal_worker(process, signal.SIGKILL)
                process.wait()


def _signal_worker(process: subprocess.Popen[bytes], sent: signal.Signals) -> None:
    """Signal a worker's whole process group (granian and the worker process it forks)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sent)


def _worker_environment(
    config: Path, redis_url: str | None, db_url: str, port: int
) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # Under these Reflex behaves as inside a test of its own (AppHarness clears them).
        if key not in ("PYTEST_CURRENT_TEST", "APP_HARNESS_FLAG")
    }
    env.update(
        INTENT_UI_CONFIG=str(config),
        DB_URL=db_url,
        REFLEX_API_URL=f"http://localhost:{port}",
        REFLEX_DEPLOY_URL=f"http://localhost:{port}",
        REFLEX_FRONTEND_PORT=str(port),
        REFLEX_BACKEND_PORT=str(port),
        REFLEX_ENV_MODE="prod",
    )
    if redis_url is not None:
        env["REFLEX_REDIS_URL"] = redis_url
    else:  # one process: the UI state in its memory
        env.pop("REFLEX_REDIS_URL", None)
    return env


def _build_page(workdir: Path, env: dict[str, str]) -> None:
    """The production page, built into .web as `reflex run --env prod` builds it."""
    command = [sys.executable, "-m", "reflex", "export", "--frontend-only", "--no-zip"]
    command += ["--env", "prod", "--loglevel", "warning"]
    with (workdir / "build.log").open("wb") as log:
        built = subprocess.run(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    if built.returncode != 0:
        said = (workdir / "build.log").read_text(errors="replace")[-4000:]
        raise RuntimeError(f"Building the production page failed:\n{said}")


def _start_worker(host: str, port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """One worker: granian (what Reflex runs in production) with the app's factory, the
    page mounted, nothing compiled again."""
    worker_env = {
        **env,
        # Reflex's own switches (internal names, hence looked up, not spelt here).
        environment.REFLEX_MOUNT_FRONTEND_COMPILED_APP.name: "true",
        environment.REFLEX_SKIP_COMPILE.name: "true",
    }
    command = [sys.executable, "-m", "granian", "--interface", "asgi", "--factory"]
    command += ["--host", host, "--port", str(port), "--workers", "1", "--log-level", "warning"]
    command += ["intent_ui.intent_ui:app"]
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=worker_env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, signalled as one
        )


def _wait_for_worker(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + WORKER_START_TIMEOUT_S
    while True:
        try:
            if httpx.get(f"{url}/ping", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            said = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"The worker at {url} did not start:\n{said}")
        time.sleep(0.1)
