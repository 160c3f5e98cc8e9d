"""The owner's side of a turn's stream: every event its session publishes, appended to
`turn:{message_id}` under the event's seq.

Each turn has a `StreamPublisher`, one of its session's event observers: being called
costs a list append. The worker has one `StreamWriter`, which writes what every publisher
queued as one command, a script that `XADD`s the entries of each stream in seq order
and renews each stream's expiry: after a loop tick, and at most once per `linger_s`
while writes follow one another, so a worker streaming many turns spends one round trip
on all of them, never one per fragment. (A pipeline of `XADD`s costs the client about
twice as much per entry as the script's arguments do.)

Each entry's id is `{seq}-0`, and Redis refuses an id that is not above the stream's
last: once another worker has ended the turn (its owner's lease had expired) and written
the end there, this turn's writes are refused. Its publisher then stops, says so, and
`on_refused` lets the owner stop the turn. A write that fails for any other reason
(Redis out of reach) is not retried: its entries are lost from the stream, the next ones
say so (`p`, see `records`), and followers read the log instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from intent_ui.agent.cluster.records import entry_id, entry_values, is_refusal, saved_fields
from intent_ui.core.events import TurnEvent
from intent_ui.core.turn import TurnView

__all__ = ["StreamPublisher", "StreamWriter"]

logger = logging.getLogger(__name__)

# KEYS: the streams. ARGV: the expiry in seconds, then per stream the number of its
# entries and each entry's id, kind, data and previous seq. Returns, for each stream whose
# write was refused, its index (1-based) and Redis's error; the rest of that stream's
# entries are not written.
_APPEND = """
local ttl = ARGV[1]
local at = 2
local refused = {}
for k = 1, #KEYS do
  local n = tonumber(ARGV[at])
  at = at + 1
  for i = 1, n do
    local added = redis.pcall(
      'XADD', KEYS[k], ARGV[at], 'k', ARGV[at + 1], 'd', ARGV[at + 2], 'p', ARGV[at + 3])
    at = at + 4
    if type(added) == 'table' and added.err then
      refused[#refused + 1] = k
      refused[#refused + 1] = added.err
      at = at + 4 * (n - i)
      break
    end
  end
  redis.call('EXPIRE', KEYS[k], ttl)
end
return refused
"""


class StreamPublisher:
    """Queues one session's events for its stream (see the module docstring)."""

    def __init__(
        self, writer: StreamWriter, key: str, on_refused: Callable[[], None] = lambda: None
    ) -> None:
        self.key = key
        self._writer = writer
        self._on_refused = on_refused
        self.pending: list[TurnEvent] = []
        self.prev = 0  # the seq of the last event handed to the writer
        self.in_flight = False
        self.written = asyncio.Event()  # set after each write that carried its entries
        self.refused = False
        """True once Redis refused a write: another worker wrote this turn's end."""
        self.stopped = False

    def __call__(self, event: TurnEvent, view: TurnView) -> None:
        """The session's observer: queue `event` for the next write."""
        if self.stopped:
            return
        self.pending.append(event)
        self._writer.wanted(self)

    def stop(self) -> None:
        """Write nothing more (what is queued is dropped)."""
        self.stopped = True
        self.pending.clear()
        self.written.set()

    async def aclose(self) -> None:
        """Until what is queued is written; then write nothing more."""
        while (self.pending or self.in_flight) and not self.stopped:
            self.written.clear()
            await self.written.wait()
        self.stopped = True

    async def mark_saved(self, seq: int) -> None:
        """Say the turn's log is written (after its end at `seq`)."""
        if self.refused:
            return
        await self._writer.mark_saved(self.key, seq)

    def refuse(self, error: str) -> None:
        logger.warning(
            "Turn stream %s went further than this worker (%s): another worker ended the "
            "turn, so publishing stops",
            self.key,
            error,
        )
        self.refused = True
        self.stop()
        self._on_refused()


class StreamWriter:
    """This worker's one writer of turn streams (see the module docstring)."""

    def __init__(self, redis: Redis, *, ttl_s: int, linger_s: float = 0.0) -> None:
        self._redis = redis
        self._ttl_s = ttl_s
        self._linger_s = linger_s
        self._append = redis.register_script(_APPEND)
        self._dirty: dict[StreamPublisher, None] = {}  # publishers with entries, in order
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failing = False  # Redis out of reach: said once until a write works again

    def publisher(self, key: str, on_refused: Callable[[], None] = lambda: None) -> StreamPublisher:
        return StreamPublisher(self, key, on_refused)

    def wanted(self, publisher: StreamPublisher) -> None:
        self._dirty[publisher] = None
        if not self._wake.is_set():
            self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="write turn streams")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})

    async def mark_saved(self, key: str, seq: int) -> None:
        pipe = self._redis.pipeline(transaction=False)
        pipe.xadd(key, saved_fields(), id=entry_id(seq, 1))
        pipe.expire(key, self._ttl_s)
        try:
            results = await pipe.execute(raise_on_error=False)
        except RedisError as exc:
            logger.warning("Turn stream %s: could not mark its log written (%s)", key, exc)
            return
        if isinstance(results[0], Exception):
            logger.warning("Turn stream %s: %s", key, results[0])

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last = -float("inf")
        while True:
            await self._wake.wait()
            # Writes that follow one another wait out the linger, so what queues meanwhile
            # (other turns, the next network reads) goes in the same one.
            wait = last + self._linger_s - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self._wake.clear()
            last = loop.time()
            publishers, self._dirty = list(self._dirty), {}
            await self._write([p for p in publishers if p.pending and not p.stopped])

    async def _write(self, publishers: list[StreamPublisher]) -> None:
        if not publishers:
            return
        keys: list[str] = []
        args: list[str | int] = [self._ttl_s]
        for publisher in publishers:
            batch, publisher.pending = publisher.pending, []
            keys.append(publisher.key)
            args.append(len(batch))
            prev = publisher.prev
            for event in batch:
                args.append(entry_id(event.seq))
                args += entry_values(event, prev)
                prev = event.seq
            publisher.prev = prev
            publisher.in_flight = True
        try:
            refused = await self._append(keys=keys, args=args)
        except RedisError as exc:
            if not self._failing:
                logger.warning(
                    "Turn streams: %d event(s) not published (%s); followers read the log",
                    (len(args) - 1 - len(keys)) // 4,
                    exc,
                )
            self._failing = True
            refused = []
        else:
            self._failing = False
        for publisher in publishers:
            publisher.in_flight = False
            publisher.written.set()
        for index, error in zip(refused[::2], refused[1::2], strict=True):
            publisher = publishers[int(index) - 1]
            if is_refusal(str(error)):
                publisher.refuse(str(error))
            else:
                logger.warning("Turn stream %s: %s", publisher.key, error)
