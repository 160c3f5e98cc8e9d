"""Failed attempts per key in a sliding window: how the sign-in form slows down guessing.

A key (a user name, a client address) with `limit` failures inside the last `window_s`
seconds is refused until the oldest of them leaves the window. A success clears its key.
Pure: the caller passes the time, in seconds on any monotonic clock.
"""

from __future__ import annotations

from collections import deque

WINDOW_S = 300.0
MAX_KEYS = 10_000
"""Keys remembered at most; beyond, the one whose last failure is oldest is forgotten, so
a flood of invented names cannot grow the process without bound."""


class FailureThrottle:
    def __init__(
        self,
        limit: int,
        window_s: float = WINDOW_S,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self._limit = limit
        self._window_s = window_s
        self._max_keys = max_keys
        self._failures: dict[str, deque[float]] = {}

    def retry_after(self, key: str, now: float) -> float:
        """Seconds until `key` may try again; 0 when it may now."""
        failures = self._recent(key, now)
        if failures is None or len(failures) < self._limit:
            return 0.0
        return max(0.0, failures[-self._limit] + self._window_s - now)

    def failed(self, key: str, now: float) -> None:
        failures = self._recent(key, now)
        if failures is None:
            failures = deque(maxlen=self._limit)
        else:
            del self._failures[key]
        # Keys stay ordered by their last failure (a dict keeps insertion order), so the
        # first one is the one to forget.
        if len(self._failures) >= self._max_keys:
            del self._failures[next(iter(self._failures))]
        self._failures[key] = failures
        failures.append(now)

    def succeeded(self, key: str) -> None:
        self._failures.pop(key, None)

    def _recent(self, key: str, now: float) -> deque[float] | None:
        failures = self._failures.get(key)
        if failures is None:
            return None
        while failures and failures[0] <= now - self._window_s:
            failures.popleft()
        if not failures:
            del self._failures[key]
            return None
        return failures
