"""Requests to a turn's owner from any worker: Stop, and the decisions and answers its
waiting calls take, over Redis pub/sub.

A page on any worker may stop the turn it shows, approve or deny its waiting call, or
answer its question; the turn runs where its session is. The request is published on
`turn-control:{message_id}`; every worker listens to the pattern with one subscription of
its own and acts on the turns it owns. Pub/sub delivers at most once, to whoever listens
then: a Stop is a click, and one lost to a dropped connection is clicked again (the Stop
button stays until the turn ends).

A decision or an answer needs its verdict back (the first one wins; an edit may be
refused): its request (JSON, see `PauseRequest`) names a reply key, and the owner pushes
the verdict there (`reply`) for the asker's blocking pop (`ask`). An owner that does not
answer within `REPLY_TIMEOUT_S` is reported as such, and the card stays as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import cast

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from intent_ui.agent.approvals import Decision, Verdict

__all__ = [
    "ANSWER",
    "DECIDE",
    "STOP",
    "ControlListener",
    "PauseRequest",
    "ask",
    "reply",
    "reply_key",
    "request",
]

logger = logging.getLogger(__name__)

STOP = "stop"
DECIDE = "decide"
ANSWER = "answer"

REPLY_TIMEOUT_S = 3.0
"""How long an asker waits for the owner's verdict: the owner answers in one round trip
unless it is gone (then the lease says so within seconds)."""

_REPLY_TTL_S = 30
_RETRY_S = (0.1, 0.5, 1.0, 2.0)

NO_REPLY = Verdict(False, "The worker running this turn did not answer; try again in a moment.")
UNREACHABLE = Verdict(False, "Could not reach the turn (Redis did not answer); try again.")


@dataclass(frozen=True, slots=True)
class PauseRequest:
    """A decision on a waiting call (`what` DECIDE, `decision`) or an answer to a question
    (`what` ANSWER, `text`, `by`), and the key its verdict goes to."""

    what: str
    call_id: str
    reply_to: str
    decision: Decision | None = None
    text: str = ""
    by: str = "user"

    def encode(self) -> str:
        fields: dict[str, object] = {
            "what": self.what,
            "call_id": self.call_id,
            "reply_to": self.reply_to,
        }
        if self.decision is not None:
            fields["decision"] = asdict(self.decision)
        if self.what == ANSWER:
            fields.update(text=self.text, by=self.by)
        return json.dumps(fields)

    @classmethod
    def decode(cls, raw: str) -> PauseRequest | None:
        """The request in `raw`, or None when it is none (a Stop, or garbage)."""
        try:
            fields = json.loads(raw)
            what, call_id, reply_to = fields["what"], fields["call_id"], fields["reply_to"]
            decided = fields.get("decision")
            decision = Decision(**decided) if isinstance(decided, dict) else None
            text, by = str(fields.get("text", "")), str(fields.get("by", "user"))
        except (ValueError, TypeError, KeyError):
            return None
        if what not in (DECIDE, ANSWER) or (what == DECIDE and decision is None):
            return None
        return cls(str(what), str(call_id), str(reply_to), decision, text, by)


async def request(redis: Redis, channel: str, what: str = STOP) -> int:
    """Send `what` to the owner listening on `channel`; how many workers heard it."""
    return int(await redis.publish(channel, what))


def reply_key(prefix: str) -> str:
    """A key of its own for one verdict (`{prefix}turn-reply:{random}`)."""
    return f"{prefix}turn-reply:{secrets.token_hex(8)}"


async def ask(
    redis: Redis, channel: str, asked: PauseRequest, *, timeout_s: float = REPLY_TIMEOUT_S
) -> Verdict:
    """Send a decision or an answer to the owner on `channel`; its verdict."""
    try:
        await redis.publish(channel, asked.encode())
        # redis-py types its commands for both clients; the asyncio one returns awaitables.
        popping = cast(
            "Awaitable[list[str] | None]", redis.blpop([asked.reply_to], timeout=timeout_s)
        )
        popped = await popping
    except RedisError as exc:
        logger.warning("Asking the owner on %s failed (%s)", channel, exc)
        return UNREACHABLE
    if popped is None:
        return NO_REPLY
    try:
        return Verdict(**json.loads(popped[1]))
    except (ValueError, TypeError):
        return NO_REPLY


async def reply(redis: Redis, key: str, verdict: Verdict) -> None:
    """The owner's verdict for the asker waiting on `key`."""
    pipe = redis.pipeline(transaction=True)
    pipe.rpush(key, json.dumps(asdict(verdict)))
    pipe.expire(key, _REPLY_TTL_S)
    try:
        await pipe.execute()
    except RedisError as exc:  # the asker says the owner did not answer
        logger.warning("Answering on %s failed (%s)", key, exc)


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
