"""Incremental Server-Sent Events decoding: bytes -> text -> lines -> events.

Each stage is a small decoder with `decode(...)` and `flush()` that accepts input split
anywhere and does no I/O; `aiter_sse` is the thin loop chaining them.
Events follow the WHATWG "event stream interpretation" field by field:
https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

import httpx

from intent_ui.agent.providers.errors import ProviderError, map_httpx_error

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event. `retry` is the reconnection time (ms) last set, if any."""

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None


class SSELineDecoder:
    """Split text into lines on CR, LF or CRLF (and nothing else), across chunk edges.

    A trailing CR is held until the next chunk, so a CRLF split between two chunks is
    one line end, not two.
    """

    def __init__(self) -> None:
        self._buffer: list[str] = []
        self._trailing_cr = False

    def decode(self, chunk: str) -> list[str]:
        if self._trailing_cr:
            chunk = "\r" + chunk
            self._trailing_cr = False
        if chunk.endswith("\r"):
            self._trailing_cr = True
            chunk = chunk[:-1]
        if not chunk:
            return []
        parts = _LINE_BREAK.split(chunk)
        if len(parts) == 1:
            self._buffer.append(parts[0])
            return []
        lines = ["".join(self._buffer) + parts[0], *parts[1:-1]]
        self._buffer = [parts[-1]] if parts[-1] else []
        return lines

    def flush(self) -> list[str]:
        if not self._buffer and not self._trailing_cr:
            return []
        line = "".join(self._buffer)
        self._buffer = []
        self._trailing_cr = False
        return [line]


class EventDecoder(Protocol):
    """Turns one line (without its line break) into a dispatched event, or `None`."""

    def decode(self, line: str) -> ServerSentEvent | None: ...


class SSEDecoder:
    """The WHATWG field-by-field interpretation of event-stream lines."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._last_event_id = ""
        self._retry: int | None = None

    def decode(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        elif field == "id":
            # An id containing NUL is ignored by the spec (it could truncate C strings).
            if "\0" not in value:
                self._last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        # Any other field name is ignored.
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        # The last event id persists across events; type and data reset every time.
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return ServerSentEvent(
            event=event, data="\n".join(data), id=self._last_event_id, retry=self._retry
        )


class _Pipeline:
    """bytes -> UTF-8 text (BOM dropped, bad bytes replaced) -> lines -> events."""

    def __init__(self, decoder: EventDecoder | None) -> None:
        self._text = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._lines = SSELineDecoder()
        self._events: EventDecoder = decoder if decoder is not None else SSEDecoder()

    def decode(self, chunk: bytes) -> list[ServerSentEvent]:
        return self._feed(self._lines.decode(self._text.decode(chunk)))

    def flush(self) -> list[ServerSentEvent]:
        lines = self._lines.decode(self._text.decode(b"", final=True))
        return self._feed([*lines, *self._lines.flush()])

    def _feed(self, lines: list[str]) -> list[ServerSentEvent]:
        events = []
        for line in lines:
            event = self._events.decode(line)
            if event is not None:
                events.append(event)
        return events


async def aiter_sse(
    response: httpx.Response, decoder: EventDecoder | None = None
) -> AsyncGenerator[ServerSentEvent, None]:
    """Events from a streaming httpx response, its body split anywhere (transport errors
    propagate unchanged)."""
    pipeline = _Pipeline(decoder)
    async for chunk in response.aiter_bytes():
        for event in pipeline.decode(chunk):
            yield event
    for event in pipeline.flush():
        yield event


DRAIN_TIMEOUT_S = 2.0


async def drain(events: AsyncIterator[ServerSentEvent], timeout: float = DRAIN_TIMEOUT_S) -> None:
    """Read and drop what follows the final event, so the connection can be reused.

    Gives up quietly after `timeout` seconds or on a transport error: the answer is
    already complete, only the keep-alive connection is at stake.
    """
    with contextlib.suppress(TimeoutError, httpx.HTTPError, ProviderError):
        async with asyncio.timeout(timeout):
            async for _ in events:
                pass


async def checked_sse(
    response: httpx.Response, *, url: str, provider: str, partial: Callable[[], bool]
) -> AsyncGenerator[ServerSentEvent, None]:
    """`aiter_sse` with transport failures mapped to `ProviderError` at this one place.

    `partial()` says whether the caller already yielded events, so a dropped connection
    mid-answer is reported as partial. Both providers read their streams through this.
    """
    events = aiter_sse(response)
    try:
        while True:
            try:
                sse = await anext(events)
            except StopAsyncIteration:
                return
            except httpx.HTTPError as exc:
                raise map_httpx_error(
                    exc, url=url, provider=provider, streaming=True, partial=partial()
                ) from exc
            yield sse
    finally:
        await events.aclose()
