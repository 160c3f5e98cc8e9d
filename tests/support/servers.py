"""Real Redis and PostgreSQL servers for the tests that need them.

The servers already listening on this machine (Redis on 127.0.0.1:6379, PostgreSQL on
127.0.0.1:5432 with trust authentication for the role `postgres`) when they answer;
otherwise private ones, started from Debian's packages on a free port inside a temporary
folder and stopped afterwards (the packages are installed with apt-get first when they are
missing and the tests run as root). Never a mock and never a skip: a machine that can
neither reach nor start one fails the tests that need it, saying what to install.

The servers on 6379 and 5432 are shared with whatever else runs on the machine (other
test runs, the app): a test never flushes Redis nor touches a database it did not make.
Each test session gets a database of its own (`postgres_database`), dropped afterwards.
A test that stops a server (a restart mid-turn) takes a private one whatever runs here
(`private_redis_server`, `private_postgres_server`: a `PrivateServer` it may `stop` and
`start` again), so the shared ones are never touched.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import redis
from psycopg import sql

from tests.support.loopback import free_port

__all__ = [
    "LOCAL",
    "POSTGRES_PORT",
    "REDIS_PORT",
    "PrivateServer",
    "ServerUnavailable",
    "free_port",
    "postgres_database",
    "postgres_server",
    "private_postgres_server",
    "private_redis_server",
    "redis_server",
]

LOCAL = "127.0.0.1"
REDIS_PORT = 6379
POSTGRES_PORT = 5432
POSTGRES_ROLE = "postgres"
START_TIMEOUT_S = 60.0
"""How long a private server may take to answer; a cold PostgreSQL start is a few seconds."""


class ServerUnavailable(RuntimeError):
    """No server answers and none could be started; the message says what to install."""


# --- Redis -------------------------------------------------------------------------------


def redis_answers(url: str) -> bool:
    """Whether a Redis server at `url` answers PING."""
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """The URL of a Redis server: the one on 127.0.0.1:6379, else a private one (nothing
    kept on disk) stopped when the block ends."""
    shared = f"redis://{LOCAL}:{REDIS_PORT}/0"
    if redis_answers(shared):
        yield shared
        return
    with private_redis_server() as server:
        yield server.url


@contextlib.contextmanager
def private_redis_server() -> Iterator[PrivateServer]:
    """A Redis of the caller's own (nothing kept on disk: a restart starts it empty), for
    tests that stop it; stopped when the block ends."""
    binary = _debian_program("redis-server", package="redis-server")
    port = free_port()
    url = f"redis://{LOCAL}:{port}/0"
    with tempfile.TemporaryDirectory(prefix="intent-ui-redis-") as folder:
        command = [binary, "--bind", LOCAL, "--port", str(port), "--save", "", "--appendonly"]
        command += ["no", "--dir", folder, "--daemonize", "no"]
        server = PrivateServer(
            "redis-server", url, command, Path(folder), lambda: redis_answers(url)
        )
        with server.running():
            yield server


# --- PostgreSQL --------------------------------------------------------------------------


def postgres_answers(host: str, port: int) -> bool:
    """Whether PostgreSQL at host:port lets the role `postgres` in."""
    try:
        with psycopg.connect(_conninfo(host, port), connect_timeout=2):
            return True
    except psycopg.Error:
        return False


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server, without a database name
    (`postgresql+psycopg://postgres@host:port`): the one on 127.0.0.1:5432, else a
    private cluster (fsync off: its data is thrown away) stopped when the block ends."""
    if postgres_answers(LOCAL, POSTGRES_PORT):
        yield _server_url(LOCAL, POSTGRES_PORT)
        return
    with private_postgres_server() as server:
        yield server.url


@contextlib.contextmanager
def private_postgres_server() -> Iterator[PrivateServer]:
    """A PostgreSQL cluster of the caller's own (its data kept across `stop` and
    `start`), for tests that restart it; `url` has no database name, as
    `postgres_server`'s. Stopped and thrown away when the block ends."""
    bindir = _postgres_bindir()
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="intent-ui-postgres-"))
    # initdb and postgres refuse to run as root: as root they run as Debian's `postgres`.
    as_owner = _as_postgres_user(folder)
    try:
        data = folder / "data"
        initdb = [*as_owner, str(bindir / "initdb"), "-D", str(data), "-U", POSTGRES_ROLE]
        initdb += ["--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"]
        subprocess.run(initdb, check=True, capture_output=True)
        command = [*as_owner, str(bindir / "postgres"), "-D", str(data), "-p", str(port)]
        command += ["-k", str(folder), "-c", f"listen_addresses={LOCAL}", "-c", "fsync=off"]
        command += ["-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        ready = lambda: postgres_answers(LOCAL, port)  # noqa: E731
        # SIGINT: a fast shutdown, which ends the clients' connections (SIGTERM's smart
        # one waits for them to leave, and a pool never leaves).
        server = PrivateServer(
            "postgres",
            _server_url(LOCAL, port),
            command,
            folder,
            ready,
            stop_signal=signal.SIGINT,
        )
        with server.running():
            yield server
    except subprocess.CalledProcessError as exc:
        said = exc.stderr.decode(errors="replace").strip() if exc.stderr else ""
        raise ServerUnavailable(f"initdb failed: {said}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_database(server_url: str, prefix: str = "intent_ui_test") -> Iterator[str]:
    """A new, empty database on the server at `server_url` (from `postgres_server`),
    dropped when the block ends (open connections to it are ended first); yields its URL."""
    name = f"{prefix}_{os.getpid()}_{secrets.token_hex(4)}"
    host, port = _host_port(server_url)
    with psycopg.connect(_conninfo(host, port), autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"{server_url}/{name}"
    finally:
        with psycopg.connect(_conninfo(host, port), autocommit=True) as connection:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            connection.execute(drop.format(sql.Identifier(name)))


def _server_url(host: str, port: int) -> str:
    return f"postgresql+psycopg://{POSTGRES_ROLE}@{host}:{port}"


def _host_port(server_url: str) -> tuple[str, int]:
    host, _, port = server_url.rpartition("@")[2].partition(":")
    return host, int(port)


def _conninfo(host: str, port: int) -> str:
    return f"host={host} port={port} user={POSTGRES_ROLE} dbname=postgres"


def _postgres_bindir() -> Path:
    """Debian's PostgreSQL programs (the newest major version installed)."""
    found = _postgres_bindirs()
    if not found:
        _apt_install("postgresql")
        found = _postgres_bindirs()
    if not found:
        raise ServerUnavailable(
            "No PostgreSQL answers on 127.0.0.1:5432 and none is installed: install Debian's "
            "'postgresql' package (or start one there with trust authentication)."
        )
    return found[-1]


def _postgres_bindirs() -> list[Path]:
    folders = glob.glob("/usr/lib/postgresql/*/bin")
    found = [Path(f) for f in folders if Path(f, "initdb").exists()]
    return sorted(found, key=lambda path: int(path.parent.name))


def _as_postgres_user(folder: Path) -> list[str]:
    if os.geteuid() != 0:
        return []
    shutil.chown(folder, user=POSTGRES_ROLE, group=POSTGRES_ROLE)
    # setpriv execs the program itself, so stopping the process stops the server.
    return ["setpriv", f"--reuid={POSTGRES_ROLE}", f"--regid={POSTGRES_ROLE}", "--init-groups"]


# --- shared ------------------------------------------------------------------------------


class PrivateServer:
    """A server process of the tests' own at `url`, which a test may `stop` (with
    `stop_signal`) and `start` again on the same port."""

    def __init__(
        self,
        name: str,
        url: str,
        command: list[str],
        folder: Path,
        ready: Callable[[], bool],
        *,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> None:
        self.name = name
        self._stop_signal = stop_signal
        self.url = url
        self._command = command
        self._folder = folder
        self._ready = ready
        self._process: subprocess.Popen[bytes] | None = None
        self._starts = 0

    def start(self) -> None:
        """Start it (again) and wait until it answers."""
        self._starts += 1
        log = self._folder / f"{self.name}.{self._starts}.log"
        with log.open("wb") as output:
            self._process = subprocess.Popen(self._command, stdout=output, stderr=subprocess.STDOUT)
        _wait_until(self._ready, self._process, self.name, self._folder)

    def stop(self) -> None:
        """Stop it; what it held in memory is gone."""
        if self._process is not None:
            _stop(self._process, self._stop_signal)
            self._process = None

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        self.start()
        try:
            yield
        finally:
            self.stop()


def _debian_program(name: str, *, package: str) -> str:
    """The path of `name`, installing Debian's `package` first when it is missing."""
    found = shutil.which(name)
    if found is None:
        _apt_install(package)
        found = shutil.which(name)
    if found is None:
        raise ServerUnavailable(
            f"No {name} on this machine: install Debian's '{package}' package "
            "(the tests start a private server from it)."
        )
    return found


def _apt_install(package: str) -> None:
    """Install a Debian package when the tests may (root with apt-get); otherwise leave
    it to the caller's message."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
        check=True,
        env=env,
        capture_output=True,
    )


def _stop(process: subprocess.Popen[bytes], sent: signal.Signals) -> None:
    process.send_signal(sent)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_until(
    ready: Callable[[], bool], process: subprocess.Popen[bytes], name: str, folder: Path
) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in folder.glob("*.log"))
            raise ServerUnavailable(f"The private {name} did not start:\n{logs}")
        time.sleep(0.05)
