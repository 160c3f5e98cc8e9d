"""Retry policy: constants, two pure decisions, and `open_stream`, which applies them.

Retries happen only while opening a stream: a connection failure or a retryable status
is retried, with backoff, before any event reaches the caller. Once `open_stream` has
returned a 2xx response, a failure is an error for the caller, never a silent replay
(the caller may already have shown half an answer).
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from intent_ui.agent.providers.errors import (
    ProviderStreamError,
    extract_error_message,
    is_permanent_transport_error,
    map_httpx_error,
    status_error,
)

logger = logging.getLogger(__name__)

DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 60.0
"""A server-sent `retry-after` is honoured only in (0, MAX_RETRY_AFTER] seconds."""

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=30.0, pool=10.0)
"""`read` bounds the silence between two chunks, so slow reasoning models still fit."""

_RETRYABLE_STATUSES = frozenset({408, 409, 429})


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    for key, candidate in headers.items():
        if key.lower() == name:
            return candidate
    return None


def should_retry(status_code: int | None, headers: Mapping[str, str]) -> bool:
    """Whether a failed attempt is worth repeating.

    `status_code` is `None` for a connection failure or timeout (retried). A server's
    `x-should-retry: true|false` overrides the status rule (408, 409, 429, >= 500).
    """
    override = (_header(headers, "x-should-retry") or "").strip().lower()
    if override in ("true", "false"):
        logger.debug("x-should-retry header says %s", override)
        return override == "true"
    if status_code is None:
        logger.debug("retrying a connection failure")
        return True
    retry = status_code in _RETRYABLE_STATUSES or status_code >= 500
    logger.debug("status %s is %sretryable", status_code, "" if retry else "not ")
    return retry


def _retry_after(headers: Mapping[str, str], now: float | None) -> float | None:
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - (time.time() if now is None else now)


def retry_delay(
    attempt: int, headers: Mapping[str, str], *, jitter: float, now: float | None = None
) -> float:
    """Seconds to wait before retry number `attempt + 1` (`attempt` counts from 0).

    A server's `retry-after-ms` / `retry-after` (seconds or an HTTP date, measured from
    `now`, default the clock) wins when it lies in (0, 60] s; otherwise exponential
    backoff `min(0.5 * 2**attempt, 8.0)` shortened by up to a quarter by `jitter` in
    [0, 1).
    """
    suggested = _retry_after(headers, now)
    if suggested is not None and 0 < suggested <= MAX_RETRY_AFTER:
        logger.debug("using the server's retry-after of %.3f s", suggested)
        return suggested
    backoff = min(INITIAL_RETRY_DELAY * 2**attempt, MAX_RETRY_DELAY)
    delay = max(backoff * (1 - 0.25 * jitter), 0.0)
    logger.debug("backoff for attempt %d is %.3f s", attempt, delay)
    return delay


async def open_stream(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    json_body: Any,
    provider: str,
    endpoint: str,
    max_retries: int = DEFAULT_MAX_RETRIES,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> httpx.Response:
    """POST `json_body` to `url` and return the open 2xx streaming response.

    Retries per `should_retry` / `retry_delay` up to `max_retries` times, then raises the
    mapped `ProviderError` (status errors carry the provider's own message). A 2xx
    answer that is not an event stream (a server ignoring `stream: true`) raises
    `ProviderStreamError`. The caller owns the returned response and must close it.
    """
    attempt = 0
    while True:
        try:
            request = client.build_request("POST", url, headers=dict(headers), json=json_body)
            response = await client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            error = map_httpx_error(exc, url=url, provider=provider)
            retry = not is_permanent_transport_error(exc) and should_retry(None, {})
            if attempt >= max_retries or not retry:
                raise error from exc
            delay = retry_delay(attempt, {}, jitter=jitter())
            logger.info("%s; retrying in %.2f s (%d left)", error, delay, max_retries - attempt)
        else:
            if response.is_success:
                await _ensure_event_stream(response, url=url, provider=provider)
                return response
            body = await _read_body(response)
            error = status_error(
                response.status_code, url=url, body=body, provider=provider, endpoint=endpoint
            )
            if attempt >= max_retries or not should_retry(response.status_code, response.headers):
                raise error
            delay = retry_delay(attempt, response.headers, jitter=jitter())
            logger.info(
                "%s answered %d; retrying in %.2f s (%d left)",
                url,
                response.status_code,
                delay,
                max_retries - attempt,
            )
        attempt += 1
        await sleep(delay)


async def _read_body(response: httpx.Response) -> str:
    try:
        await response.aread()
        return response.text
    except httpx.HTTPError:
        return ""
    finally:
        await response.aclose()


async def _ensure_event_stream(response: httpx.Response, *, url: str, provider: str) -> None:
    content_type = response.headers.get("content-type", "")
    if not content_type or "text/event-stream" in content_type.lower():
        return
    body = await _read_body(response)
    said = extract_error_message(body)
    raise ProviderStreamError(
        f"{provider} at {url} answered {response.status_code} with {content_type} instead "
        f"of an event stream{': ' + said if said else ''}. Check that base_url points at "
        "a server that supports streaming (stream: true).",
        url=url,
    )
