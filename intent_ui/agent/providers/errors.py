"""One exception tree for every provider adapter.

```
ProviderError                      anything a provider call can fail with
├── ProviderConnectionError        no usable HTTP response (DNS, refused, reset, bad URL)
│   └── ProviderTimeoutError       connect / read / write / pool timeout before the stream
├── ProviderStatusError            the server answered with a non-2xx status
│   ├── BadRequestError            400
│   ├── AuthenticationError        401
│   ├── PermissionDeniedError      403
│   ├── NotFoundError              404
│   ├── RateLimitError             429
│   └── InternalServerError        >= 500
└── ProviderStreamError            the 2xx stream broke: malformed SSE / JSON, an `error`
                                   event, a mid-stream disconnect (`partial` = events were
                                   already produced)
```

Each class names the `kind` of failure a person is told about (`core/failures.py`:
unreachable, auth, not_found, rate_limit, provider); `failure_kind(exc)` reads it.

Callers catch `ProviderError` (or a branch); raisers use the most specific leaf. Foreign
exceptions enter at exactly one boundary, `map_httpx_error`; non-2xx answers become
status errors in `status_error`. Every message says what happened, where (the URL or
the event), how to fix it, and quotes the provider's own message when it sent one.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, ClassVar

import httpx

from intent_ui.core.failures import FailureKind
from intent_ui.core.text import clip, terminal_text

_MAX_QUOTED = 300


class ProviderError(Exception):
    """Base of every provider failure; `message` is the readable text.

    The message is made terminal-safe as the error is built: it quotes text the provider
    or the network sent, which may carry escape sequences, and it reaches terminals, logs
    and the browser.
    """

    kind: ClassVar[FailureKind] = "provider"

    def __init__(self, message: str) -> None:
        message = terminal_text(message, multiline=False)
        super().__init__(message)
        self.message = message


class ProviderConnectionError(ProviderError):
    """No usable HTTP response arrived (retryable)."""

    kind: ClassVar[FailureKind] = "unreachable"

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.url = url


class ProviderTimeoutError(ProviderConnectionError):
    """The request timed out before the stream started (retryable)."""


class ProviderStatusError(ProviderError):
    """The server answered with a non-2xx status.

    `body` is the raw response text; `provider_message` the provider's own error text
    extracted from it (or `None`).
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        body: str = "",
        *,
        url: str = "",
        provider_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.url = url
        self.provider_message = provider_message


class BadRequestError(ProviderStatusError):
    """400: the request was rejected (model name, messages or tool schemas)."""


class AuthenticationError(ProviderStatusError):
    """401: the api_key is missing or wrong."""

    kind: ClassVar[FailureKind] = "auth"


class PermissionDeniedError(ProviderStatusError):
    """403: the key has no access to this model or resource."""

    kind: ClassVar[FailureKind] = "auth"


class NotFoundError(ProviderStatusError):
    """404: wrong base_url or unknown model."""

    kind: ClassVar[FailureKind] = "not_found"


class RateLimitError(ProviderStatusError):
    """429: rate limited or out of quota."""

    kind: ClassVar[FailureKind] = "rate_limit"


class InternalServerError(ProviderStatusError):
    """>= 500: the provider failed."""


class ProviderStreamError(ProviderError):
    """The stream broke after a 2xx answer.

    `partial` is true when events of this response were already produced, so the
    caller holds an incomplete response and must not treat it as finished.
    `error_type` carries the provider's error type for in-stream `error` events
    (e.g. Anthropic's `overloaded_error`).
    """

    def __init__(
        self,
        message: str,
        *,
        partial: bool = False,
        url: str = "",
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.partial = partial
        self.url = url
        self.error_type = error_type


_STATUS_CLASSES: dict[int, type[ProviderStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    429: RateLimitError,
}

_STATUS_HINTS: dict[int, str] = {
    400: "Check the model name, the messages and the tool schemas sent to {endpoint}.",
    401: "Check api_key for endpoint {endpoint}.",
    403: "The api_key for endpoint {endpoint} has no access to this model or resource; "
    "check its permissions (and organization / project).",
    404: "Check base_url ({endpoint}) and the model name.",
    408: "The server timed out reading the request; retry.",
    409: "The server reported a conflict; retry.",
    413: "The request is too large; shorten the conversation or the tool results.",
    422: "The server could not process the request; check the model name and parameters.",
    429: "Rate limited or out of quota at {endpoint}; wait and retry, or check your plan.",
}
_SERVER_HINT = "The provider failed on its side; retry later."


def _quote(text: str) -> str:
    return clip(terminal_text(text, multiline=False), _MAX_QUOTED)


def extract_error_message(body: str) -> str | None:
    """The provider's own error text from a response body, or `None`.

    Understands OpenAI `{"error": {"message"}}`, Anthropic
    `{"type": "error", "error": {"type", "message"}}`, the `{"error": "text"}` of
    Ollama and the `{"message"}` / `{"detail"}` of other compatible servers; any other
    non-blank body is quoted as text.
    """
    try:
        data: Any = json.loads(body)
    except ValueError:
        return _quote(body) if body.strip() else None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _quote(error["message"])
        if isinstance(error, str) and error.strip():
            return _quote(error)
        for key in ("message", "detail"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return _quote(value)
            if value is not None and not isinstance(value, str):
                return _quote(json.dumps(value, ensure_ascii=False))
    return _quote(body) if body.strip() else None


def status_error(
    status_code: int, *, url: str, body: str, provider: str, endpoint: str
) -> ProviderStatusError:
    """The most specific `ProviderStatusError` for a non-2xx answer to `url`."""
    if status_code >= 500:
        cls: type[ProviderStatusError] = InternalServerError
    else:
        cls = _STATUS_CLASSES.get(status_code, ProviderStatusError)
    try:
        phrase = HTTPStatus(status_code).phrase
    except ValueError:
        phrase = "HTTP error"
    provider_message = extract_error_message(body)
    hint = (
        _SERVER_HINT
        if status_code >= 500
        else _STATUS_HINTS.get(status_code, "Check the endpoint configuration.")
    )
    said = f": {provider_message}" if provider_message else " (no error message in the body)"
    message = (
        f"{provider} at {url} answered {status_code} {phrase}{said}. "
        f"{hint.format(endpoint=endpoint)}"
    )
    return cls(status_code, message, body, url=url, provider_message=provider_message)


def map_httpx_error(
    exc: Exception, *, url: str, provider: str, streaming: bool = False, partial: bool = False
) -> ProviderError:
    """The one boundary where httpx exceptions become provider errors.

    Before the response headers arrived (`streaming=False`) a timeout is a
    `ProviderTimeoutError` and any other transport failure a `ProviderConnectionError`
    (both retryable). Once the body is streaming, any failure is a
    `ProviderStreamError`, `partial` when events were already produced.
    """
    detail = str(exc) or type(exc).__name__
    if streaming:
        when = "after part of the response" if partial else "before the first event"
        return ProviderStreamError(
            f"The {provider} stream from {url} broke off {when} ({type(exc).__name__}: "
            f"{detail}). The connection was closed early; retry the request.",
            partial=partial,
            url=url,
        )
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(
            f"Request to {provider} at {url} timed out ({type(exc).__name__}). Check that "
            "the server is reachable, or raise the timeout for slow models.",
            url=url,
        )
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return ProviderConnectionError(
            f"Cannot send a request to {url!r}: {detail}. base_url must be an absolute "
            "http:// or https:// URL (for example https://api.openai.com/v1).",
            url=url,
        )
    return ProviderConnectionError(
        f"Could not reach {provider} at {url} ({type(exc).__name__}: {detail}). Check "
        "base_url and that the server is running and reachable.",
        url=url,
    )


def failure_kind(exc: BaseException) -> FailureKind:
    """The kind of failure a provider call ended with; anything outside the tree (a bug
    in an adapter) counts as the provider failing."""
    return exc.kind if isinstance(exc, ProviderError) else "provider"


def is_permanent_transport_error(exc: Exception) -> bool:
    """Transport failures that retrying cannot fix (a malformed base_url)."""
    return isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL))
