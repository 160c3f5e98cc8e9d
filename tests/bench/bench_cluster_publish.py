"""Server CPU a turn's owner spends publishing its events to Redis, per event.

    source scripts/env.sh && python tests/bench/bench_cluster_publish.py [--events 4096]
        [--rounds 3] [--url redis://127.0.0.1:6379/0]

`TurnSession`s (a real SQLite log each, one feed in English, as a page reads them)
publish 8 parallel calls whose intents stream one character per event. Their CPU time
per event (`time.process_time`, every thread) is measured without and with the cluster's
publishing (`StreamWriter` and a `StreamPublisher` per turn, on a real Redis, the linger
`ClusterConfig` has by default); the difference is what publishing adds. Rows:

- `1 turn`: one event every 2.5 ms, as one turn of 8 calls streaming at 50 chunks/s per
  call has them (nothing to share a write with: each is a write and a reply of its own);
- `1 turn, burst 8`: 8 events every 20 ms (one network chunk with a fragment of each
  call);
- `50 turns`: one event of each of 50 turns every 2.5 ms, as a worker at capacity has
  them (20,000 events/s).

The events come at that pace in both runs (the loop sleeps between ticks), so the cost of
waking up for the next chunk, which a real network read has too, is in both and cancels
out; what publishing adds (its write, and waking up for Redis's reply) stays.

Best of `--rounds` (the machine may be shared). Keys go under a prefix of the run's own,
deleted after.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402
from redis.asyncio import Redis  # noqa: E402
from redis.asyncio.retry import Retry  # noqa: E402
from redis.backoff import NoBackoff  # noqa: E402

from intent_ui.agent.cluster.config import ClusterConfig  # noqa: E402
from intent_ui.agent.cluster.publisher import StreamPublisher, StreamWriter  # noqa: E402
from intent_ui.agent.session import TurnSession  # noqa: E402
from intent_ui.core.events import ArgsDelta, CallStarted, TurnEvent  # noqa: E402
from intent_ui.store import conversations as conv  # noqa: E402
from intent_ui.store.db import dispose_engines, init_db  # noqa: E402
from intent_ui.store.models import LOCAL_USER_ID  # noqa: E402
from intent_ui.store.turns import EventLog  # noqa: E402

CALLS = 8
INTENT = "Reading the callback router to see where the OAuth state is checked"
LINGER_S = ClusterConfig(url="").publish_linger_s
PACE_S = 1 / (CALLS * 50)  # 8 calls at 50 chunks/s each


def events(count: int) -> list[Callable[[int], TurnEvent]]:
    """8 calls started, then one character of one call's arguments per event."""
    made = [_started(c) for c in range(CALLS)]
    text = '{"intent": "' + INTENT * 50
    for i in range(count):
        made.append(_delta(i % CALLS, text[(i // CALLS) % len(text)]))
    return made


def _started(call: int) -> Callable[[int], TurnEvent]:
    return lambda seq: CallStarted(seq, f"c{call}", "read_file", 0, label_bearing=True)


def _delta(call: int, char: str) -> Callable[[int], TurnEvent]:
    return lambda seq: ArgsDelta(seq, f"c{call}", char)


async def written(publishers: list[StreamPublisher]) -> None:
    """Until every publisher's queue is written (waiting, never spinning)."""
    for publisher in publishers:
        while publisher.pending or publisher.in_flight:
            publisher.written.clear()
            await publisher.written.wait()


async def one_run(
    url: str, prefix: str, count: int, per_tick: int, turns: int, publish: bool
) -> float:
    folder = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    engine = init_db(f"sqlite:///{folder / 'bench.db'}")
    client = Redis.from_url(url, decode_responses=True, retry=Retry(NoBackoff(), 0))
    writer = StreamWriter(client, ttl_s=60, linger_s=LINGER_S)
    writer.start()
    sessions: list[TurnSession] = []
    publishers: list[StreamPublisher] = []
    for _ in range(turns):
        chat = conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo")
        message_id = conv.start_assistant_message(engine, chat.id)
        session = TurnSession(
            message_id=message_id, conversation_id=chat.id, log=EventLog(engine, message_id)
        )
        session.feed("en")
        if publish:
            publisher = writer.publisher(f"{prefix}turn:{message_id}")
            session.observers.append(publisher)
            publishers.append(publisher)
        sessions.append(session)
    makes = events(count // turns)
    seq = 0

    async def tick(n: int) -> None:
        nonlocal seq
        for session in sessions:
            for offset, make in enumerate(makes[seq : seq + n], start=1):
                session.publish(make(seq + offset))
        seq += n
        await asyncio.sleep(n * PACE_S)

    await tick(CALLS)  # the calls start: not measured
    await written(publishers)
    started = time.process_time()
    while seq < len(makes):
        await tick(per_tick)
    await written(publishers)
    spent = time.process_time() - started
    await writer.aclose()
    await client.aclose()
    dispose_engines()
    return spent / ((len(makes) - CALLS) * turns) * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    prefix = f"bench_cluster:{secrets.token_hex(4)}:"
    rows = (("1 turn", 1, 1), ("1 turn, burst 8", 8, 1), ("50 turns", 1, 50))
    try:
        print(f"{'row':<16} {'without':>8} {'with':>8} {'added':>8}   us of CPU per event")
        for name, per_tick, turns in rows:
            runs = {
                publish: min(
                    [
                        await one_run(args.url, prefix, args.events, per_tick, turns, publish)
                        for _ in range(args.rounds)
                    ]
                )
                for publish in (False, True)
            }
            added = runs[True] - runs[False]
            print(f"{name:<16} {runs[False]:>8.1f} {runs[True]:>8.1f} {added:>8.1f}")
    finally:
        sync = redis.Redis.from_url(args.url)
        keys = list(sync.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            sync.delete(*keys)
        sync.close()


if __name__ == "__main__":
    asyncio.run(main())
