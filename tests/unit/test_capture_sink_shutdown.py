"""Shutting a batching sink down is bounded: an endpoint that never answers cannot hold the
process up for a request timeout per queued batch, and every event it did not take is
counted and logged as dropped."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from intent_ui.capture import CallEvent, HttpSink

GUARD = 30  # seconds: a safety net against a hang, never an assertion about speed


def _event(index: int) -> CallEvent:
    return CallEvent(
        tool="book_car",
        intent=f"Trip {index}",
        intent_context="required",
        intent_source="context_parameter",
        status="ok",
        duration_ms=1.5,
        timestamp=1_700_000_000.0,
        server="test",
    )


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    """A loopback port that takes connections (the kernel's backlog) and never answers."""
    server = socket.create_server(("127.0.0.1", 0), backlog=64)
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/intents"
    finally:
        server.close()


def test_a_dead_endpoint_with_a_full_queue_cannot_hold_shutdown_up(
    silent_endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="intent_ui.capture")
    # Each request would wait a minute for an answer, and six batches are queued behind
    # the first: an unbounded shutdown would take seven minutes.
    sink = HttpSink(
        silent_endpoint,
        timeout=60,
        batch_size=1,
        flush_interval=0.01,
        max_queue=6,
        close_timeout=0.5,
    )
    for index in range(20):
        sink.emit(_event(index))
    closer = threading.Thread(target=sink.close, daemon=True)
    closer.start()
    closer.join(GUARD)
    assert not closer.is_alive(), "close() waited for the dead endpoint"
    assert sink.dropped == 20  # none delivered, every one counted
    assert "the endpoint did not take them within the 0.5 s shutdown allows" in caplog.text
    assert "(20 dropped so far)" in caplog.text
