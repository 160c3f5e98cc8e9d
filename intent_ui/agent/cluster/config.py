"""Whether this process is one worker of several, and the names and timings they share.

Redis is on when `REFLEX_REDIS_URL` is set: Reflex keeps the pages' state there then, so
every worker behind one address already needs it, and the live turns use the same server.
Without it (the default: one process) nothing here is built and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LEASE_ENV", "REDIS_URL_ENV", "ClusterConfig"]

REDIS_URL_ENV = "REFLEX_REDIS_URL"
LEASE_ENV = "INTENT_UI_TURN_LEASE_S"
"""Seconds a turn's lease lasts without a renewal; the other timings follow from it."""

DEFAULT_LEASE_S = 2.0
MIN_LEASE_S = 0.5


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Where the workers meet and how quickly they notice one another's end.

    - `lease_ms`: how long a turn's ownership lasts without a renewal (a worker that died
      loses its turns this long after its last renewal); renewed every `renew_s`.
    - `quiet_s`: how long a follower's read waits for the turn's next entry before it asks
      whether the owner still holds its lease.
    - `confirm_s`: how long a lease must stay gone before its turn is ended by anyone but
      a new start in its conversation. A Redis that restarted empty has lost every lease
      at once; each live owner takes its own back within `renew_s`.
    - `stream_ttl_s`: how long a turn's stream outlives its last entry (its log is the
      record; the stream only carries the live edge).
    - `log_poll_s`: how often a follower that fell back to the log reads it again.
    - `publish_linger_s`: while events keep coming, a worker writes its streams at most
      this often (what queues meanwhile, of every turn, goes in one write).
    - `sweep_s`: how often a worker looks for turns left `streaming` by a worker that
      died with no page following them.
    - `prefix`: put before every key and channel (tests share one server this way).
    """

    url: str
    prefix: str = ""
    # A dead worker's turn ends, on the pages following it, at most about
    # lease + confirm + 2 quiet after its last renewal: 4 s by default (the goal is 5).
    # Four renewals per lease let an owner's loop stall 1.5 s before it loses its turns.
    lease_ms: int = 2_000
    renew_s: float = 0.5
    quiet_s: float = 0.5
    confirm_s: float = 1.0
    stream_ttl_s: int = 600
    log_poll_s: float = 0.25
    publish_linger_s: float = 0.002
    sweep_s: float = 15.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ClusterConfig | None:
        """The cluster settings when `REFLEX_REDIS_URL` is set, else None; the lease's
        length from `INTENT_UI_TURN_LEASE_S` when set (ValueError when it is no number of
        seconds of at least 0.5)."""
        env = os.environ if environ is None else environ
        url = env.get(REDIS_URL_ENV, "").strip()
        if not url:
            return None
        given = env.get(LEASE_ENV, "").strip()
        return cls.with_lease(url, _lease_s(given) if given else DEFAULT_LEASE_S)

    @classmethod
    def with_lease(cls, url: str, lease_s: float, *, prefix: str = "") -> ClusterConfig:
        """Timings scaled to a lease of `lease_s`: renewed four times per lease, a quiet
        stream checked as often, a lost lease confirmed over two renewals (a Redis that
        restarted empty lost every lease at once: each live owner takes its own back at
        its next renewal)."""
        renew_s = lease_s / 4
        return cls(
            url=url,
            prefix=prefix,
            lease_ms=round(lease_s * 1000),
            renew_s=renew_s,
            quiet_s=min(renew_s, 2.0),
            confirm_s=2 * renew_s,
        )

    def stream(self, message_id: str) -> str:
        """The turn's live stream: one entry per published event, id `{seq}-0`."""
        return f"{self.prefix}turn:{message_id}"

    def lease(self, conversation_id: str) -> str:
        """Who runs the conversation's turn: `{worker}:{message_id}`, with an expiry."""
        return f"{self.prefix}lease:turn:{conversation_id}"

    def control(self, message_id: str) -> str:
        """The channel a turn's owner takes requests on (Stop)."""
        return f"{self.prefix}turn-control:{message_id}"

    @property
    def control_pattern(self) -> str:
        return f"{self.prefix}turn-control:*"


def _lease_s(given: str) -> float:
    try:
        lease_s = float(given)
    except ValueError:
        lease_s = float("nan")
    if not lease_s >= MIN_LEASE_S or lease_s == float("inf"):
        raise ValueError(
            f"{LEASE_ENV}={given!r} is not a number of seconds of at least {MIN_LEASE_S}: "
            f"set it to how long a turn's worker may be silent before others end the turn "
            f"(default {DEFAULT_LEASE_S}), or unset it."
        )
    return lease_s
