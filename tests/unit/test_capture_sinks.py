"""The sinks: a JSON-lines file, an HTTP endpoint on loopback, and the store."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from intent_ui.capture import CallEvent, HttpSink, JsonlSink, StoreSink
from intent_ui.capture.sinks import BatchingSink
from intent_ui.store.capture_events import capture_summary
from intent_ui.store.db import DatabaseError
from tests.support.sse_server import ReplayServer, Script
from tests.support.store import migrated_engine


def _event(tool: str = "book_car", intent: str | None = "Trip", **changes: object) -> CallEvent:
    fields: dict[str, object] = {
        "tool": tool,
        "intent": intent,
        "intent_context": "required",
        "intent_source": "context_parameter" if intent else None,
        "status": "ok",
        "duration_ms": 1.5,
        "timestamp": 1_700_000_000.0,
        "server": "test",
    }
    fields.update(changes)
    return CallEvent(**fields)  # type: ignore[arg-type]


# --- JsonlSink -------------------------------------------------------------------------


def test_jsonl_sink_appends_one_object_per_line(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_text('{"earlier": true}\n', encoding="utf-8")
    sink = JsonlSink(path)
    sink.emit(_event(intent="Trip to Zürich"))
    sink.emit(_event(tool="explode", intent=None, status="error"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"earlier": True}
    assert json.loads(lines[1]) == {
        "tool": "book_car",
        "intent": "Trip to Zürich",
        "intent_context": "required",
        "intent_source": "context_parameter",
        "status": "ok",
        "duration_ms": 1.5,
        "timestamp": 1_700_000_000.0,
        "server": "test",
    }
    second = json.loads(lines[2])
    assert (second["tool"], second["intent"], second["intent_source"], second["status"]) == (
        "explode",
        None,
        None,
        "error",
    )


def test_jsonl_sink_keeps_lines_whole_across_threads(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    sink = JsonlSink(path)
    long_intent = "x" * 400

    def write(worker: int) -> None:
        for index in range(50):
            sink.emit(_event(tool=f"tool{worker}", intent=f"{long_intent}{index}"))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 200
    assert {r["tool"] for r in records} == {"tool0", "tool1", "tool2", "tool3"}


def test_jsonl_sink_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is a directory"):
        JsonlSink(tmp_path)


# --- HttpSink --------------------------------------------------------------------------


def test_http_sink_posts_batches_of_json(tmp_path: Path) -> None:
    with ReplayServer(default=Script.json(200, {"ok": True})) as server:
        sink = HttpSink(f"{server.base_url}/intents", batch_size=2, flush_interval=30)
        for index in range(5):
            sink.emit(_event(intent=f"intent {index}"))
        sink.close()  # delivers the odd one out without waiting for the interval
        requests = server.wait_for_requests(3)
    assert {r.path for r in requests} == {"/intents"}
    assert [[e["intent"] for e in r.json["events"]] for r in requests] == [
        ["intent 0", "intent 1"],
        ["intent 2", "intent 3"],
        ["intent 4"],
    ]
    assert sink.dropped == 0


def test_http_sink_counts_a_failed_batch_as_dropped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="intent_ui.capture")
    with ReplayServer(default=Script.json(503, {"error": "down"})) as server:
        sink = HttpSink(server.base_url, batch_size=2, flush_interval=30)
        sink.emit(_event())
        sink.emit(_event())
        sink.close()
    assert sink.dropped == 2
    assert "HttpSink dropped 2 call event(s)" in caplog.text


def test_http_sink_refuses_a_non_http_url() -> None:
    with pytest.raises(ValueError, match="http"):
        HttpSink("ftp://example.com/intents")


class _HeldSink(BatchingSink):
    """Delivery blocks until released, so the queue fills up deterministically."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.delivered: list[str | None] = []
        super().__init__(batch_size=1, flush_interval=30, max_queue=2)

    def deliver(self, batch: Sequence[CallEvent]) -> None:
        self.started.set()
        self.release.wait()
        self.delivered.extend(event.intent for event in batch)


def test_full_queue_drops_with_a_counted_warning_instead_of_blocking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="intent_ui.capture")
    sink = _HeldSink()
    sink.emit(_event(intent="in delivery"))
    assert sink.started.wait(10)
    for index in range(4):  # two fit in the queue, two are dropped
        sink.emit(_event(intent=f"queued {index}"))
    assert sink.dropped == 2
    assert "(2 dropped so far)" in caplog.text
    sink.release.set()
    sink.close()
    assert sink.delivered == ["in delivery", "queued 0", "queued 1"]


# --- StoreSink -------------------------------------------------------------------------


def test_store_sink_writes_events_the_summary_reads(tmp_path: Path) -> None:
    engine = migrated_engine(tmp_path)
    sink = StoreSink(str(engine.url), batch_size=10, flush_interval=30)
    sink.emit(_event(intent="Trip"))
    sink.emit(_event(intent=None))
    sink.emit(_event(tool="refresh_map", intent=None, intent_context="optional"))
    sink.close()
    summary = capture_summary(engine)
    assert summary.calls == 3
    book, refresh = summary.tools
    assert (book.tool, book.calls, book.coverage.call_coverage) == ("book_car", 2, 0.5)
    assert (refresh.tool, refresh.coverage.optional_calls) == ("refresh_map", 1)


def test_store_sink_with_a_bad_url_fails_at_construction() -> None:
    with pytest.raises(DatabaseError, match="not a database URL"):
        StoreSink("no such scheme")
