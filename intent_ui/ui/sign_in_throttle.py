"""Failed sign-ins counted where every worker of the app sees them.

The sign-in form slows guessing down: five failures for one user name, or fifty from one
client address (many people can share one, behind a NAT or a proxy), within five
minutes, and that name or address waits until the oldest of those failures is five
minutes old. A successful sign-in clears its name's count.

One app process counts in its own memory (`core/throttle.py`). With `REFLEX_REDIS_URL`
set the app may run as several workers, on several machines: counted per process, a
guesser's attempts would spread over the workers and be forgotten at each restart, so the
counts live in Redis instead, through the `limits` package's moving window (the same
rule: the last `limit` failures of a key, each forgotten once it is `window_s` old).
Its timestamps are each worker's wall clock, so the machines' clocks must agree (NTP).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import redis.asyncio
from limits import RateLimitItemPerSecond
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from reflex.utils import prerequisites

from intent_ui.core.throttle import FailureThrottle

__all__ = [
    "CLIENT_LIMIT",
    "NAME_LIMIT",
    "REDIS_KEY_PREFIX",
    "WINDOW_S",
    "FailureCounter",
    "ProcessFailures",
    "RedisFailures",
    "SignInThrottle",
    "sign_in_throttle",
]

NAME_LIMIT = 5
CLIENT_LIMIT = 50
WINDOW_S = 300
"""Whole seconds: the Redis window expires its keys by the second."""
REDIS_KEY_PREFIX = "intent_ui:sign_in"


class FailureCounter(Protocol):
    """Failed attempts per key in a moving window, wherever they are kept."""

    async def retry_after(self, key: str) -> float:
        """Seconds until `key` may try again; 0 when it may now."""
        ...

    async def failed(self, key: str) -> None: ...

    async def succeeded(self, key: str) -> None: ...


class ProcessFailures:
    """Failures counted in this process's memory (bounded: `core/throttle.py`)."""

    def __init__(
        self, limit: int, window_s: int = WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._throttle = FailureThrottle(limit=limit, window_s=float(window_s))
        self._clock = clock

    async def retry_after(self, key: str) -> float:
        return self._throttle.retry_after(key, self._clock())

    async def failed(self, key: str) -> None:
        self._throttle.failed(key, self._clock())

    async def succeeded(self, key: str) -> None:
        self._throttle.succeeded(key)


class RedisFailures:
    """Failures counted in Redis, shared by every worker using it; a key's entries expire
    with the window, so invented names cannot grow Redis beyond what five minutes of
    attempts write."""

    def __init__(
        self, limiter: MovingWindowRateLimiter, scope: str, limit: int, window_s: int = WINDOW_S
    ) -> None:
        self._limiter = limiter
        self._scope = scope
        self._item = RateLimitItemPerSecond(limit, window_s, namespace="failed")

    def _identifiers(self, key: str) -> tuple[str, str]:
        # A name is whatever the form was sent (any length, any character, `limits` joins
        # identifiers with '/'): its digest gives every key one short, fixed shape.
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16)
        return self._scope, digest.hexdigest()

    async def retry_after(self, key: str) -> float:
        stats = await self._limiter.get_window_stats(self._item, *self._identifiers(key))
        if stats.remaining > 0:
            return 0.0
        return max(0.0, stats.reset_time - time.time())

    async def failed(self, key: str) -> None:
        # Refused (not recorded) once the key is at its limit, which is what the form
        # checks first anyway: the oldest failure still decides when the wait ends.
        await self._limiter.hit(self._item, *self._identifiers(key))

    async def succeeded(self, key: str) -> None:
        await self._limiter.clear(self._item, *self._identifiers(key))


@dataclass(frozen=True)
class SignInThrottle:
    """The sign-in form's two counts: per user name and per client address."""

    by_name: FailureCounter
    by_client: FailureCounter
    close: Callable[[], Awaitable[None]] | None = None
    """Releases what the counts hold open (the Redis connections)."""

    @classmethod
    def in_process(
        cls, *, name_limit: int = NAME_LIMIT, client_limit: int = CLIENT_LIMIT
    ) -> SignInThrottle:
        return cls(ProcessFailures(name_limit), ProcessFailures(client_limit))

    @classmethod
    def on_redis(
        cls,
        url: str,
        *,
        key_prefix: str = REDIS_KEY_PREFIX,
        name_limit: int = NAME_LIMIT,
        client_limit: int = CLIENT_LIMIT,
    ) -> SignInThrottle:
        """Counts in the Redis at `url` (a `REFLEX_REDIS_URL`: redis://, rediss:// or
        unix://), under keys starting with `key_prefix`. Connects on first use."""
        # A pool of our own, from Reflex's URL as it is: `limits` would want its own
        # scheme spelling, and the pool is what `close` releases.
        pool = redis.asyncio.ConnectionPool.from_url(url)
        storage = RedisStorage(
            "async+redis://",
            implementation="redispy",
            key_prefix=key_prefix,
            # Documented by `limits`, though its options are typed as plain values.
            connection_pool=pool,  # type: ignore[arg-type]
        )
        limiter = MovingWindowRateLimiter(storage)
        return cls(
            RedisFailures(limiter, "name", name_limit),
            RedisFailures(limiter, "client", client_limit),
            close=pool.aclose,
        )

    async def retry_after(self, name: str, client: str) -> float:
        """Seconds until a sign-in as `name` from `client` may be tried; 0 when now."""
        waits = await asyncio.gather(
            self.by_name.retry_after(name), self.by_client.retry_after(client)
        )
        return max(waits)

    async def failed(self, name: str, client: str) -> None:
        await asyncio.gather(self.by_name.failed(name), self.by_client.failed(client))

    async def succeeded(self, name: str) -> None:
        """The name's count starts over; the address keeps its (others may guess there)."""
        await self.by_name.succeeded(name)

    async def aclose(self) -> None:
        if self.close is not None:
            await self.close()


_throttles: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SignInThrottle] = (
    weakref.WeakKeyDictionary()
)


def sign_in_throttle() -> SignInThrottle:
    """The running app's throttle: on Redis when `REFLEX_REDIS_URL` is set, else in this
    process. One per event loop: a backend has one, but the browser tests serve app after
    app from one process, each on a loop of its own, and a Redis connection belongs to
    the loop that opened it."""
    loop = asyncio.get_running_loop()
    throttle = _throttles.get(loop)
    if throttle is None:
        url = prerequisites.parse_redis_url()
        throttle = SignInThrottle.on_redis(url) if url else SignInThrottle.in_process()
        _throttles[loop] = throttle
    return throttle
