"""Where call events go: a JSON-lines file, an HTTP endpoint, or Intent UI's store.

A sink's `emit` runs on the tool-call path, so it must be quick and must not block:
`JsonlSink` appends one short line under a lock; `HttpSink` and `StoreSink` only put the
event on a bounded queue that a background thread drains in batches. When that queue is
full the event is dropped and counted (`dropped`), with a warning, rather than making a
tool call wait for analytics. `close()` delivers what is queued and stops the thread; it
also runs at interpreter exit. It waits at most `close_timeout` seconds (5 by default)
in all: an endpoint that does not answer cannot hold shutdown up for a batch timeout per
queued batch. Past the deadline nothing more is sent; what is still queued, and a batch
still in delivery, is dropped and counted with a warning, and a thread stuck in that
delivery is left behind (a daemon thread: it never keeps the process alive).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import httpx

from intent_ui.capture.events import CallEvent
from intent_ui.capture.options import SinkConfig
from intent_ui.store.capture_events import add_capture_events
from intent_ui.store.db import init_db

__all__ = ["BatchingSink", "HttpSink", "JsonlSink", "Sink", "StoreSink", "sink_from_config"]

logger = logging.getLogger("intent_ui.capture")

DEFAULT_CLOSE_TIMEOUT_S = 5.0
"""The most `close()` waits for an endpoint, in all, before dropping what is left."""


class Sink(Protocol):
    """Receives one event per finished tool call; `emit` must return promptly."""

    def emit(self, event: CallEvent) -> None: ...

    def close(self) -> None: ...


class JsonlSink:
    """Appends one JSON object per call to `path` (created on first write), thread-safe."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ValueError(
                f"JsonlSink needs a file path, but {str(self.path)!r} is a directory; "
                "name a file inside it, e.g. capture.jsonl."
            )
        self._lock = threading.Lock()

    def emit(self, event: CallEvent) -> None:
        line = json.dumps(event.to_record(), ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as file:
            file.write(line)

    def close(self) -> None:
        """Nothing is buffered: every line is written when its call ends."""


class BatchingSink(ABC):
    """A bounded queue drained by one daemon thread that delivers batches.

    A batch goes out when it holds `batch_size` events or `flush_interval` seconds after
    its first event, whichever comes first. `close()` takes at most `close_timeout`
    seconds (see the module docstring).
    """

    def __init__(
        self,
        *,
        batch_size: int = 100,
        flush_interval: float = 1.0,
        max_queue: int = 10_000,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT_S,
    ) -> None:
        if batch_size < 1 or max_queue < 1 or flush_interval <= 0 or close_timeout < 0:
            raise ValueError(
                f"{type(self).__name__}: batch_size and max_queue must be at least 1, "
                "flush_interval positive and close_timeout not negative (got "
                f"{batch_size}, {max_queue}, {flush_interval}, {close_timeout})."
            )
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.close_timeout = close_timeout
        self.dropped = 0
        self._queue: queue.Queue[CallEvent | None] = queue.Queue(maxsize=max_queue)
        self._closed = threading.Event()
        # The thread and close() share these: the shutdown deadline, the size of the
        # batch being delivered, and whether close() gave up on the thread (and so counted
        # that batch itself).
        self._lock = threading.Lock()
        self._deadline: float | None = None
        self._in_flight = 0
        self._abandoned = False
        self._thread = threading.Thread(
            target=self._run, name=f"intent-capture-{type(self).__name__}", daemon=True
        )
        self._thread.start()
        atexit.register(self.close)

    def emit(self, event: CallEvent) -> None:
        if self._closed.is_set():
            return
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self._drop(1, "its queue is full")

    def _drop(self, count: int, why: str) -> None:
        with self._lock:
            self.dropped += count
            total = self.dropped
        logger.warning(
            "[intent_ui] %s dropped %d call event(s) because %s (%d dropped so far).",
            type(self).__name__,
            count,
            why,
            total,
        )

    def close(self) -> None:
        """Deliver the queued events for at most `close_timeout` seconds, then stop the
        thread; what could not be delivered by then is dropped and counted (idempotent)."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._lock:
            self._deadline = time.monotonic() + self.close_timeout
        # A full queue has room again as soon as the thread takes a batch; if it never
        # does, the thread sees the deadline after its delivery, or is left behind below.
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=self.close_timeout)
        self._thread.join(self._remaining())
        if self._thread.is_alive():  # stuck in a delivery past the deadline
            with self._lock:
                self._abandoned = True
                left = self._in_flight + self._discard_queued()
                self._queue.put_nowait(None)  # room now: ends the thread once it is free
            if left:
                self._drop(left, self._late())
        atexit.unregister(self.close)

    def _remaining(self) -> float:
        deadline = self._deadline
        return 0.0 if deadline is None else max(0.0, deadline - time.monotonic())

    def _late(self) -> str:
        return f"the endpoint did not take them within the {self.close_timeout:g} s shutdown allows"

    def _discard_queued(self) -> int:
        """Empty the queue; returns how many events it held."""
        count = 0
        with contextlib.suppress(queue.Empty):
            while True:
                if self._queue.get_nowait() is not None:
                    count += 1
        return count

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batch = [first]
            deadline = time.monotonic() + self.flush_interval
            try:
                while len(batch) < self.batch_size:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                    if item is None:
                        stopping = True
                        break
                    batch.append(item)
            except queue.Empty:
                pass
            with self._lock:
                late = self._abandoned or (self._deadline is not None and self._remaining() == 0.0)
                left = len(batch) + self._discard_queued() if late else 0
                self._in_flight = 0 if late else len(batch)
            if late:
                self._drop(left, self._late())
                return
            if not self._deliver_safely(batch):
                return

    def _deliver_safely(self, batch: list[CallEvent]) -> bool:
        """Deliver one batch; False when close() gave up on this thread meanwhile."""
        failure: Exception | None = None
        try:
            self.deliver(batch)
        except Exception as exc:
            failure = exc
        with self._lock:
            self._in_flight = 0
            counted = self._abandoned  # close() already counted this batch
        if failure is not None and not counted:
            self._drop(len(batch), f"delivering them failed: {failure}")
        return not counted

    @abstractmethod
    def deliver(self, batch: Sequence[CallEvent]) -> None:
        """Send one batch; raising drops (and counts) it."""


class HttpSink(BatchingSink):
    """POSTs batches as JSON `{"events": [record, ...]}` to `url` with httpx."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 10.0,
        batch_size: int = 100,
        flush_interval: float = 1.0,
        max_queue: int = 10_000,
        close_timeout: float = DEFAULT_CLOSE_TIMEOUT_S,
    ) -> None:
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(
                f"HttpSink needs an http(s) URL with a host, got {url!r} "
                "(e.g. https://analytics.example.com/intents)."
            )
        self.url = url
        self._client = httpx.Client(headers=headers, timeout=timeout)
        super().__init__(
            batch_size=batch_size,
            flush_interval=flush_interval,
            max_queue=max_queue,
            close_timeout=close_timeout,
        )

    def deliver(self, batch: Sequence[CallEvent]) -> None:
        response = self._client.post(self.url, json={"events": [e.to_record() for e in batch]})
        response.raise_for_status()

    def close(self) -> None:
        super().close()
        if not self._thread.is_alive():  # else the thread left behind still holds it
            self._client.close()


class StoreSink(BatchingSink):
    """Writes call events to Intent UI's store (`capture_events`), for the /intents page.

    The database is opened and migrated here, so a bad URL fails when the server starts,
    not on its first call.
    """

    def __init__(
        self,
        db_url: str | None = None,
        *,
        batch_size: int = 100,
        flush_interval: float = 1.0,
        max_queue: int = 10_000,
    ) -> None:
        self.engine = init_db(db_url)
        super().__init__(batch_size=batch_size, flush_interval=flush_interval, max_queue=max_queue)

    def deliver(self, batch: Sequence[CallEvent]) -> None:
        add_capture_events(self.engine, [event.to_record() for event in batch])


def sink_from_config(config: SinkConfig | None) -> Sink | None:
    """The sink a config file names, or None."""
    if config is None:
        return None
    if config.jsonl:
        return JsonlSink(config.jsonl)
    if config.store:
        return StoreSink(config.store)
    assert config.http is not None  # SinkConfig holds exactly one
    return HttpSink(config.http)
