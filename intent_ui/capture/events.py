"""One recorded tool call: what every sink receives and the JSON-lines record shape."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from intent_ui.core.capture import CapturedIntent, IntentContextMode, IntentSource

__all__ = ["CallEvent", "CallStatus"]

CallStatus = Literal["ok", "error"]


@dataclass(frozen=True, slots=True)
class CallEvent:
    """A finished tool call. `intent` is already PII-stripped and clamped (or None).

    `intent_context` is how `context` was advertised for the tool when it was called;
    `intent_source` is None when no intent was captured. `timestamp` is epoch seconds at
    the start of the call.
    """

    tool: str
    intent: str | None
    intent_context: IntentContextMode
    intent_source: IntentSource | None
    status: CallStatus
    duration_ms: float
    timestamp: float
    server: str | None = None

    @classmethod
    def of(
        cls,
        tool: str,
        mode: IntentContextMode,
        captured: CapturedIntent | None,
        *,
        status: CallStatus,
        duration_ms: float,
        timestamp: float,
        server: str | None = None,
    ) -> CallEvent:
        return cls(
            tool=tool,
            intent=captured.text if captured else None,
            intent_context=mode,
            intent_source=captured.source if captured else None,
            status=status,
            duration_ms=duration_ms,
            timestamp=timestamp,
            server=server,
        )

    def to_record(self) -> dict[str, Any]:
        """The JSON object written by `JsonlSink` and posted by `HttpSink`."""
        return asdict(self)
