"""A capture sink for tests: keeps every call event in memory."""

from __future__ import annotations

import threading

from intent_ui.capture import CallEvent


class RecordingSink:
    """Keeps every call event in memory, in arrival order."""

    def __init__(self) -> None:
        self.events: list[CallEvent] = []
        self._lock = threading.Lock()

    def emit(self, event: CallEvent) -> None:
        with self._lock:
            self.events.append(event)

    def close(self) -> None:
        """Nothing to release."""

    def by_tool(self, tool: str) -> list[CallEvent]:
        return [event for event in self.events if event.tool == tool]
