"""How much of a turn the chat shows, and the running times shown beside labels.

- Display density, a per-user setting: `full` (cards and headers as they are), `intents`
  (one line per call: glyph, label, elapsed time; groups stay open), `header` (each group
  is its header line until expanded). A switch only changes rendering: every label stays
  identical and nothing is fetched again.
- Elapsed time: the browser counts an in-flight call up from its start timestamp (no push
  per tick); a settled call shows the fixed duration formatted here. The browser's ticker
  (`assets/intent_ui.js`, `formatElapsed`) formats the same way, so a call reads the same
  when it settles.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from intent_ui.core.choices import Choice

__all__ = [
    "DEFAULT_DENSITY",
    "DENSITIES",
    "DENSITY",
    "Density",
    "Span",
    "format_elapsed",
    "wall_time",
]

Density = Literal["full", "intents", "header"]
DENSITIES: tuple[Density, ...] = ("full", "intents", "header")
DEFAULT_DENSITY: Density = "full"


DENSITY: Choice[Density] = Choice("display density", DENSITIES, DEFAULT_DENSITY)
"""The per-user setting; `DENSITY.parse` refuses anything but the three densities."""


def format_elapsed(ms: float) -> str:
    """`0.4s`, `3.2s`, `59.9s`, `1m 04s`, `1h 02m`: tenths under a minute, then whole
    units. Negative or non-finite input (clock skew, no timestamps) reads as `0.0s`."""
    if not isinstance(ms, int | float) or not ms >= 0 or ms == float("inf"):
        ms = 0.0
    tenths = int(ms // 100)
    if tenths < 600:
        return f"{tenths // 10}.{tenths % 10}s"
    seconds = int(ms // 1000)
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


@dataclass(frozen=True, slots=True)
class Span:
    """When something ran, in epoch seconds: `start` 0 when unknown, `end` 0 while it
    is still running."""

    start: float
    end: float


def wall_time(spans: Iterable[Span]) -> Span:
    """A group's wall time: its first start to its last end, still running (end 0) while
    any member runs. Members without a known start are left out."""
    known = [span for span in spans if span.start > 0]
    if not known:
        return Span(0.0, 0.0)
    start = min(span.start for span in known)
    if any(span.end <= 0 for span in known):
        return Span(start, 0.0)
    return Span(start, max(span.end for span in known))
