"""What the capacity benchmark measures: the app as one process (SQLite, UI state in
memory), or as backend workers on a Redis and a PostgreSQL (`scripts/scale.sh`'s shape),
both the production build under granian (`tests/e2e/harness.py` `running_workers`).

Either is a `Served`: the page's address, the backend address each headless conversation
connects to (spread over the workers as a balancer would), a check that it still runs,
and its processes, whose CPU and memory are summed. The workers' Redis is a private one
(thrown away after) and their database one made for the run on the machine's PostgreSQL
(dropped after), so nothing of the benchmark stays behind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

from tests.e2e.harness import Workers, running_workers
from tests.support import servers

__all__ = ["Served", "one_process", "workers_on_redis"]


class Served:
    """One way of serving the app (module docstring)."""

    def __init__(
        self,
        title: str,
        frontend_url: str,
        api_urls: list[str],
        pids: list[int],
        check: Callable[[], None],
    ) -> None:
        self.title = title
        self.frontend_url = frontend_url
        self.api_urls = api_urls
        self.check = check
        """Raise, saying why, if a process of the app has stopped."""
        self._pids = pids
        self._tree: list[psutil.Process] = []

    def processes(self) -> list[psutil.Process]:
        """The app's processes (each worker and what it forked), found once."""
        if not self._tree:
            for pid in self._pids:
                root = psutil.Process(pid)
                self._tree += [root, *root.children(recursive=True)]
        return self._tree

    def cpu_s(self) -> float:
        return sum(sum(p.cpu_times()[:2]) for p in self.processes())

    def rss(self) -> int:
        return sum(p.memory_info().rss for p in self.processes())


@contextlib.contextmanager
def one_process(workdir: Path, config_yaml: str) -> Iterator[Served]:
    """The app as one process on SQLite, served the way the workers are (granian, the
    page and its backend on one address: a tab's requests are never cross-origin)."""
    db_url = f"sqlite:///{workdir / 'bench.db'}"
    with running_workers(workdir, config_yaml, redis_url=None, db_url=db_url, workers=1) as one:
        yield Served(
            "one process",
            one.url(0),
            list(one.urls),
            [process.pid for process in one.processes],
            lambda: _check_workers(one),
        )


@contextlib.contextmanager
def workers_on_redis(workdir: Path, config_yaml: str, workers: int = 2) -> Iterator[Served]:
    with (
        servers.private_redis_server() as redis,
        servers.postgres_server() as postgres,
        servers.postgres_database(postgres, prefix="intent_ui_bench") as db_url,
        running_workers(
            workdir, config_yaml, redis_url=redis.url, db_url=db_url, workers=workers
        ) as started,
    ):
        yield Served(
            f"{workers} workers",
            started.url(0),
            list(started.urls),
            [process.pid for process in started.processes],
            lambda: _check_workers(started),
        )


def _check_workers(started: Workers) -> None:
    for process, log in zip(started.processes, started.logs, strict=True):
        code = process.poll()
        if code is not None:
            said = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"a worker stopped (exit code {code}; log {log}):\n{said}")
