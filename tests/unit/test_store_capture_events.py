"""`capture_events`: inserting call records and the per-tool coverage summary."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.store.capture_events import add_capture_events, capture_summary
from intent_ui.store.db import StoreError


def _record(tool: str, mode: str, intent: str | None, source: str | None = None) -> dict[str, Any]:
    return {
        "tool": tool,
        "intent": intent,
        "intent_context": mode,
        "intent_source": source or ("context_parameter" if intent else None),
        "status": "ok",
        "duration_ms": 2.0,
        "timestamp": 1_700_000_000.0,
        "server": "bookings",
    }


def test_summary_per_tool_with_required_coverage_and_optional_share_apart(
    engine: Engine,
) -> None:
    add_capture_events(
        engine,
        [
            _record("book_car", "required", "Weekend in Munich"),
            _record("book_car", "required", "Business trip to Oslo"),
            _record("book_car", "required", None),
            _record("book_car", "required", "Called book_car", source="inferred"),
            _record("refresh_map", "optional", None),
            _record("refresh_map", "optional", "Parking near the station"),
            _record("refresh_map", "optional", None),
            _record("refresh_map", "optional", None),
            _record("annotate", "none", None),
        ],
    )
    summary = capture_summary(engine)
    assert summary.calls == 9
    assert [t.tool for t in summary.tools] == ["annotate", "book_car", "refresh_map"]
    annotate, book, refresh = summary.tools
    assert (annotate.calls, annotate.coverage.call_coverage, annotate.coverage.optional_share) == (
        1,
        None,
        None,
    )
    # An inferred intent is not the model's: 2 of 4 required calls are covered.
    assert (book.calls, book.coverage.call_coverage, book.latest_intent) == (
        4,
        0.5,
        "Called book_car",
    )
    assert (refresh.coverage.optional_calls, refresh.coverage.optional_share) == (4, 0.25)
    assert refresh.coverage.call_coverage is None
    assert (summary.overall.call_coverage, summary.overall.optional_share) == (0.5, 0.25)


def test_empty_store_summary_has_no_ratios(engine: Engine) -> None:
    summary = capture_summary(engine)
    assert (summary.calls, summary.tools, summary.overall.call_coverage) == (0, [], None)


def test_one_bad_record_inserts_nothing_and_names_the_rule(engine: Engine) -> None:
    with pytest.raises(StoreError, match="intent_context must be one of"):
        add_capture_events(
            engine, [_record("book_car", "required", "ok"), _record("x", "sometimes", None)]
        )
    with pytest.raises(StoreError, match="missing or mistypes"):
        add_capture_events(engine, [{"tool": "book_car"}])
    assert capture_summary(engine).calls == 0
