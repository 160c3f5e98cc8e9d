"""Ownership of a conversation's running turn as a lease in Redis, not a process.

`lease:turn:{conversation_id}` holds `{worker}:{message_id}` with an expiry: set only if
absent (`SET NX PX`), renewed while the turn runs, deleted when it ends, and only ever by
its holder (compare-and-set scripts). A worker that dies stops renewing: the key expires
and whichever worker notices ends the turn (`orphans`). Renewal also tells a holder that
it lost the lease: someone else holds it now, so the turn is no longer this worker's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

__all__ = ["Holder", "Lease", "lease_holder"]

logger = logging.getLogger(__name__)

# 1: renewed; 0: someone else holds it; -1: nobody does (it expired, or Redis lost it).
_RENEW = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not held then return -1 end
return 0
"""
_SWAP = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lease: a worker, for a turn (`message_id` "" while it starts)."""

    worker: str
    message_id: str

    @classmethod
    def parse(cls, value: str) -> Holder:
        worker, _, message_id = value.rpartition(":")
        return cls(worker, message_id)

    def __str__(self) -> str:
        return f"{self.worker}:{self.message_id}"


async def lease_holder(redis: Redis, key: str) -> Holder | None:
    value = await redis.get(key)
    return None if value is None else Holder.parse(str(value))


class Lease:
    """One worker's hold of one key (see the module docstring)."""

    def __init__(self, redis: Redis, key: str, holder: Holder, *, ttl_ms: int) -> None:
        self._redis = redis
        self.key = key
        self.holder = holder
        self._ttl_ms = ttl_ms
        self._renew = redis.register_script(_RENEW)
        self._swap = redis.register_script(_SWAP)
        self._release = redis.register_script(_RELEASE)
        self._keeper: asyncio.Task[None] | None = None

    async def acquire(self) -> bool:
        """Take the lease if nobody holds it."""
        return bool(await self._redis.set(self.key, str(self.holder), nx=True, px=self._ttl_ms))

    async def take_over(self, held: Holder) -> bool:
        """Take the lease from `held`, if that is who holds it."""
        return await self._swap_to(held, self.holder)

    async def rebind(self, holder: Holder) -> bool:
        """Hold it as `holder` from now on (the turn now has its message id)."""
        if await self._swap_to(self.holder, holder):
            self.holder = holder
            return True
        return False

    async def _swap_to(self, held: Holder, holder: Holder) -> bool:
        swapped = await self._swap(keys=[self.key], args=[str(held), str(holder), self._ttl_ms])
        return bool(swapped)

    async def renew(self) -> bool:
        """Extend the lease; False when someone else holds it. One that expired meanwhile
        (Redis was out of reach, or restarted empty) is taken again if still free."""
        renewed = int(await self._renew(keys=[self.key], args=[str(self.holder), self._ttl_ms]))
        if renewed == -1:
            return await self.acquire()
        return renewed == 1

    async def release(self) -> None:
        """Give the lease up, if this worker still holds it; stops the renewals."""
        self.stop_keeping()
        try:
            await self._release(keys=[self.key], args=[str(self.holder)])
        except RedisError as exc:  # it expires on its own
            logger.warning("Releasing lease %s failed (%s)", self.key, exc)

    def keep(self, every_s: float, on_lost: Callable[[], None]) -> None:
        """Renew every `every_s` until released; `on_lost` when someone else holds it."""
        self._keeper = asyncio.create_task(self._keep(every_s, on_lost), name=f"lease {self.key}")

    def stop_keeping(self) -> None:
        if self._keeper is not None and self._keeper is not asyncio.current_task():
            self._keeper.cancel()
        self._keeper = None

    async def _keep(self, every_s: float, on_lost: Callable[[], None]) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                kept = await self.renew()
            except RedisError as exc:
                logger.warning("Renewing lease %s failed (%s); retrying", self.key, exc)
                continue
            if not kept:
                logger.warning("Lease %s is held by another worker now", self.key)
                self._keeper = None
                on_lost()
                return
