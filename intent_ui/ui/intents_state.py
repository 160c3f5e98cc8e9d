"""The intents page's state (`/intents`): captured MCP tool calls per tool, read-only.

Reads the `capture_events` table that `intent_ui.capture.StoreSink` writes, through
`intent_ui.store.capture_events.capture_summary`; the coverage arithmetic is the pure rule
in `intent_ui.core.capture`. This module only turns the summary into display strings.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import reflex as rx

from intent_ui.core.capture import Coverage
from intent_ui.store.capture_events import CaptureSummary, capture_summary
from intent_ui.store.db import StoreError, init_db

__all__ = ["CaptureRowVM", "IntentsState", "percent"]

logger = logging.getLogger(__name__)

NO_CALLS = "—"
"""Shown instead of a ratio when there were no calls of that kind (0% would read as a
failure)."""


def percent(ratio: float | None) -> str:
    """`0.6667` -> `67%`; None -> `—`."""
    return NO_CALLS if ratio is None else f"{round(ratio * 100)}%"


def _of(hit: int, total: int, kind: str) -> str:
    noun = "call" if total == 1 else "calls"
    return f"{hit} of {total} {kind} {noun}" if total else f"no {kind} calls"


@dataclass
class CaptureRowVM:
    tool: str = ""
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    latest_intent: str = ""


def _row(tool: str, calls: int, cov: Coverage, latest: str | None) -> CaptureRowVM:
    return CaptureRowVM(
        tool=tool,
        calls=calls,
        call_coverage=percent(cov.call_coverage),
        required_detail=_of(cov.required_with_intent, cov.required_calls, "required-context"),
        optional_share=percent(cov.optional_share),
        optional_detail=_of(cov.optional_with_intent, cov.optional_calls, "optional-context"),
        latest_intent=latest or "",
    )


class IntentsState(rx.State):
    """The `/intents` page."""

    rows: list[CaptureRowVM] = []
    calls: int = 0
    call_coverage: str = NO_CALLS
    required_detail: str = ""
    optional_share: str = NO_CALLS
    optional_detail: str = ""
    loaded: bool = False
    error: str = ""

    @rx.event
    async def load_page(self) -> None:
        try:
            summary = await asyncio.to_thread(_read_summary)
        except StoreError as exc:
            logger.warning("The intents page could not read the store: %s", exc)
            self.error = str(exc)
            self.loaded = True
            return
        overall = _row("", summary.calls, summary.overall, None)
        self.rows = [_row(t.tool, t.calls, t.coverage, t.latest_intent) for t in summary.tools]
        self.calls = summary.calls
        self.call_coverage = overall.call_coverage
        self.required_detail = overall.required_detail
        self.optional_share = overall.optional_share
        self.optional_detail = overall.optional_detail
        self.error = ""
        self.loaded = True


def _read_summary() -> CaptureSummary:
    return capture_summary(init_db())
