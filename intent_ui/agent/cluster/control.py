"""Requests to a turn's owner from any worker: Stop, over Redis pub/sub.

A page on any worker may stop the turn it shows; the turn runs where its session is. The
request is published on `turn-control:{message_id}`; every worker listens to the pattern
with one subscription of its own and acts on the turns it owns. Pub/sub delivers at most
once, to whoever listens then: a Stop is a click, and one lost to a dropped connection
is clicked again (the Stop button stays until the turn ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

__all__ = ["STOP", "ControlListener", "request"]

logger = logging.getLogger(__name__)

STOP = "stop"

_RETRY_S = (0.1, 0.5, 1.0, 2.0)


async def request(redis: Redis, channel: str, what: str = STOP) -> int:
    """Send `what` to the owner listening on `channel`; how many workers heard it."""
    return int(await redis.publish(channel, what))


class ControlListener:
    """This worker's subscription: calls `on_request(message_id, what)` for each request
    on a channel under `pattern` (`{prefix}turn-control:*`)."""

    def __init__(self, redis: Redis, pattern: str, on_request: Callable[[str, str], None]) -> None:
        self._redis = redis
        self._pattern = pattern
        self._prefix = pattern.removesuffix("*")
        self._on_request = on_request
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()

    async def start(self) -> None:
        """Listen from now on (returns once subscribed, or after a first failure)."""
        self._task = asyncio.create_task(self._run(), name=f"control {self._pattern}")
        waiting = asyncio.ensure_future(self._subscribed.wait())
        await asyncio.wait({waiting, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})

    async def _run(self) -> None:
        failures = 0
        while True:
            pubsub: PubSub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(self._pattern)
                self._subscribed.set()
                failures = 0
                async for message in pubsub.listen():
                    if message.get("type") == "pmessage":
                        self._handle(str(message["channel"]), str(message["data"]))
            except RedisError as exc:
                delay = _RETRY_S[min(failures, len(_RETRY_S) - 1)]
                if failures == 0:
                    logger.warning("Turn control channel lost (%s); listening again", exc)
                failures += 1
                self._subscribed.set()  # a start does not wait for Redis to come back
                await asyncio.sleep(delay)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _handle(self, channel: str, what: str) -> None:
        if not channel.startswith(self._prefix):
            return
        try:
            self._on_request(channel[len(self._prefix) :], what)
        except Exception:  # one bad request must not end the subscription
            logger.exception("Handling %r on %s failed", what, channel)
