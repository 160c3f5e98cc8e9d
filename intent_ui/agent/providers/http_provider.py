"""What the two HTTP adapters share: the client, the stream loop, closing.

`HTTPProvider` serves `OpenAIProvider` and `AnthropicProvider` the way httpx's
`BaseClient` serves its two clients: the shared part is written once, and each adapter
adds only its wire format: the pure functions that build the URL and the request body,
its accumulator, its headers, and how one SSE event feeds that accumulator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, ClassVar, Generic, Protocol, Self, TypedDict, TypeVar

import httpx

from intent_ui.agent.providers.base import ChatRequest, ProviderEvent
from intent_ui.agent.providers.errors import ProviderError, ProviderStreamError
from intent_ui.agent.providers.retry import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, open_stream
from intent_ui.agent.providers.sse import ServerSentEvent, checked_sse, drain
from intent_ui.core.text import clip, loads_scrubbed

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
"""The parameters schema sent for a tool that declares none."""

QUOTED_LINE_CHARS = 200
"""How much of a malformed data line an error message quotes."""


class StreamAccumulator(Protocol):
    """What the stream loop needs from an adapter's accumulator."""

    @property
    def produced_events(self) -> bool: ...

    def finish(self) -> list[ProviderEvent]: ...


AccumulatorT = TypeVar("AccumulatorT", bound=StreamAccumulator)


class HTTPOptions(TypedDict, total=False):
    """The keyword options every HTTP adapter takes (see `HTTPProvider`)."""

    http_client: httpx.AsyncClient | None
    timeout: httpx.Timeout | float
    max_retries: int
    extra_headers: Mapping[str, str] | None


def unknown_role_error(position: int, role: object) -> ProviderError:
    """The error for a neutral message whose role no adapter knows."""
    return ProviderError(
        f"Message {position} has role {role!r}; expected 'user', 'assistant', 'tool' or "
        "'system'. Fix the conversation before sending it."
    )


class HTTPProvider(ABC, Generic[AccumulatorT]):
    """A streaming model behind an HTTP API that answers in Server-Sent Events.

    Pass `http_client` to share a pool (the caller then closes it); otherwise the
    provider owns one, closed by `aclose()` / `async with`.
    """

    provider_name: ClassVar[str]
    """How messages name the API ("OpenAI-compatible API")."""
    stream_format: ClassVar[str]
    """The stream format a malformed data line is said not to follow ("Messages")."""
    _stream_url: Callable[[str], str]
    """`base_url` without its trailing slash -> the URL to POST to."""
    _request_body: Callable[[ChatRequest], dict[str, Any]]
    """The JSON body of the streaming request."""
    _new_accumulator: Callable[[str], AccumulatorT]
    """A fresh accumulator for one response, given the URL its errors name."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self._stream_url(self.base_url)
        self.max_retries = max_retries
        self._api_key = api_key
        self._extra_headers = dict(extra_headers or {})
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=timeout)

    def headers(self) -> dict[str, str]:
        """The request headers: the adapter's own, then `extra_headers`, which win."""
        headers = {"accept": "text/event-stream", **self._api_headers()}
        headers.update(self._extra_headers)
        return headers

    async def stream(self, request: ChatRequest) -> AsyncIterator[ProviderEvent]:
        """Yield the events of one model response; raise `ProviderError`s on failure."""
        body = self._request_body(request)
        response = await open_stream(
            self._client,
            self.url,
            headers=self.headers(),
            json_body=body,
            provider=self.provider_name,
            endpoint=self.base_url,
            max_retries=self.max_retries,
        )
        accumulator = self._new_accumulator(self.url)
        events = checked_sse(
            response,
            url=self.url,
            provider=self.provider_name,
            partial=lambda: accumulator.produced_events,
        )
        try:
            async for sse in events:
                if not sse.data.strip():
                    continue
                produced, done = self._read(sse, accumulator)
                for event in produced:
                    yield event
                if done:
                    # Reading the rest lets the connection go back to the pool.
                    await drain(events)
                    break
            for event in accumulator.finish():
                yield event
        finally:
            await events.aclose()
            await response.aclose()

    def _json(self, data: str, *, where: str, partial: bool) -> Any:
        """`data` parsed (lone surrogates replaced), or a `ProviderStreamError` quoting it;
        `where` names the event."""
        try:
            return loads_scrubbed(data)
        except ValueError as exc:
            raise ProviderStreamError(
                f"Malformed JSON in {where} from {self.url} ({exc}) in the data line "
                f"{clip(data, QUOTED_LINE_CHARS)!r}. The server is not speaking the "
                f"{self.stream_format} stream format; check base_url.",
                partial=partial,
                url=self.url,
            ) from exc

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @abstractmethod
    def _api_headers(self) -> dict[str, str]:
        """The adapter's own headers (credentials, API version)."""

    @abstractmethod
    def _read(
        self, sse: ServerSentEvent, accumulator: AccumulatorT
    ) -> tuple[list[ProviderEvent], bool]:
        """Feed one non-blank event: the events it produced, and whether the stream is done."""
