"""How long a group header's label stays on screen during a fast burst; the rule in words:
docs/labels.md (Group header, Minimum display time)."""

from __future__ import annotations

__all__ = ["MinimumDisplay"]


class MinimumDisplay:
    """Keep each header label on screen for at least `min_ms` during fast bursts.

    Pure: the caller passes the clock. `offer(latest, now)` returns what to show now; a
    label that arrives too soon is held (only the newest is kept) and `due_ms(now)` says
    how long until it may be shown, at which point the caller offers again (or calls
    `tick`). The underlying state is never delayed; only the display is.
    """

    __slots__ = ("_held", "_min_ms", "_shown", "_shown_at")

    def __init__(self, min_ms: float = 200) -> None:
        self._min_ms = max(0.0, float(min_ms))
        self._shown: str | None = None
        self._shown_at = 0.0
        self._held: str | None = None

    @property
    def shown(self) -> str | None:
        return self._shown

    @property
    def held(self) -> str | None:
        return self._held

    def offer(self, text: str, now_ms: float) -> str:
        """Offer the latest label; return the label to display at `now_ms`."""
        # A label that merely grows (the same sentence still streaming in) is shown at once:
        # only a switch to a different label has to wait out the minimum time.
        grows = self._shown is not None and text.startswith(self._shown)
        if self._shown is None or grows or self._elapsed(now_ms) >= self._min_ms:
            if text != self._shown:
                self._shown, self._shown_at = text, float(now_ms)
            self._held = None
            return text
        self._held = text
        return self._shown

    def tick(self, now_ms: float) -> str | None:
        """Show the held label if its time has come; return the label to display."""
        if self._held is not None and self._elapsed(now_ms) >= self._min_ms:
            return self.offer(self._held, now_ms)
        return self._shown

    def due_ms(self, now_ms: float) -> float | None:
        """Milliseconds from `now_ms` until the held label may show; None if none is held."""
        if self._held is None:
            return None
        return max(0.0, self._min_ms - self._elapsed(now_ms))

    def _elapsed(self, now_ms: float) -> float:
        # A clock that goes backwards counts as no time passed.
        return max(0.0, float(now_ms) - self._shown_at)
