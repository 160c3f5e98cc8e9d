"""Several workers in one test process: each its own `Cluster` (worker id, Redis
connections, control subscription) and its own `TurnSessions` on a scripted runtime, all
on one database and one Redis, as the workers of one app behind one address are.

Timings are short (a lease of a second), so a worker that "dies" is noticed within the
test; keys and channels carry a prefix of the test's own, deleted afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import redis
from sqlalchemy import Engine

from intent_ui.agent.cluster import Cluster, ClusterConfig
from intent_ui.agent.live import LiveTurns
from intent_ui.agent.session import TurnSession, TurnSessions
from intent_ui.config import AppConfig
from intent_ui.core.patches import apply_ops
from intent_ui.core.turn import TurnView
from intent_ui.store.turns import load_events
from tests.support.scripted_runtime import ScriptedRun, ScriptedRuntime
from tests.support.wire import decode_sse

APP_CONFIG = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})


def fast_config(url: str, prefix: str) -> ClusterConfig:
    return ClusterConfig(
        url=url,
        prefix=prefix,
        lease_ms=1000,
        renew_s=0.2,
        quiet_s=0.1,
        confirm_s=0.3,
        stream_ttl_s=60,
        log_poll_s=0.05,
        sweep_s=3600,  # the tests ask for a sweep themselves
    )


@dataclass
class Worker:
    name: str
    cluster: Cluster
    sessions: TurnSessions
    live: LiveTurns
    runtime: ScriptedRuntime

    def run(self, index: int = -1) -> ScriptedRun:
        return self.runtime.runs[index]

    def die(self, session: TurnSession) -> None:
        """The worker running `session` stops dead: it renews no lease, publishes nothing
        and writes nothing more (its process is gone)."""
        owned = self.cluster.owned_turns[session.message_id]
        owned.fenced = True  # nothing happens at its end either
        owned.lease.stop_keeping()
        owned.publisher.stop()
        session.log.abandon()


@contextlib.asynccontextmanager
async def workers(
    engine: Engine, config: ClusterConfig, *names: str, flush_interval: float = 0.01
) -> AsyncIterator[list[Worker]]:
    made: list[Worker] = []
    try:
        for name in names:
            runtime = ScriptedRuntime()
            cluster = Cluster(config, engine, worker_id=name, hold_ms=0)
            sessions = TurnSessions(
                engine=engine,
                runtime=runtime,  # type: ignore[arg-type]
                config=APP_CONFIG,
                flush_interval=flush_interval,
                coordinator=cluster,
            )
            await cluster.start(sessions, sweep=False)
            made.append(Worker(name, cluster, sessions, LiveTurns(sessions, cluster), runtime))
        yield made
    finally:
        for worker in made:
            for run in worker.runtime.runs:
                run.close()
            await worker.sessions.aclose()
            await worker.cluster.aclose()


def drop_keys(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def new_prefix() -> str:
    return f"intent_ui_test:{secrets.token_hex(6)}:"


async def until(check: Callable[[], object], *, limit_s: float = 20.0) -> None:
    """Until `check()` is true (polled on the loop); fails after `limit_s`, a bound far
    above what any step takes, so a hang fails rather than stalls the suite."""
    async with asyncio.timeout(limit_s):
        while not check():
            await asyncio.sleep(0.01)


async def read_all(stream: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in stream])


async def page_store(body: bytes) -> dict[str, object]:
    """What a page holds after the SSE `body` (raises on a gap or a repeat)."""
    store: dict[str, object] = {}
    lengths: dict[str, int] = {}
    events = await decode_sse([body])
    assert events[-1].event == "end"
    for event in events:
        if event.event == "message":
            apply_ops(store, json.loads(event.data)["ops"], lengths)
    store.pop("announce", None)
    return store


async def read_page(stream: AsyncIterator[bytes]) -> dict[str, object]:
    """What a page holds after reading `stream` to its end."""
    return await page_store(await read_all(stream))


def labels(view: TurnView) -> list[str]:
    return [view.card_label(call.call_id) for call in view.calls()]


def stored(engine: Engine, message_id: str) -> TurnView:
    return TurnView.replay(load_events(engine, message_id))
