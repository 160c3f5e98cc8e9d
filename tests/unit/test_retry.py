"""Retry policy: the pure decisions, and `open_stream` applying them on loopback."""

from __future__ import annotations

import httpx
import pytest

from intent_ui.agent.providers.errors import (
    AuthenticationError,
    InternalServerError,
    ProviderConnectionError,
    ProviderStreamError,
    RateLimitError,
)
from intent_ui.agent.providers.retry import open_stream, retry_delay, should_retry
from tests.support.loopback import free_port
from tests.support.sse_server import ReplayServer, Script
from tests.support.wire import openai_chunks, openai_error_body

# -- should_retry --------------------------------------------------------------------


def test_should_retry_connection_failures() -> None:
    assert should_retry(None, {}) is True


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_should_retry_transient_statuses(status: int) -> None:
    assert should_retry(status, {}) is True


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_should_not_retry_client_errors(status: int) -> None:
    assert should_retry(status, {}) is False


def test_x_should_retry_true_overrides_a_client_error() -> None:
    assert should_retry(400, {"x-should-retry": "true"}) is True


def test_x_should_retry_false_overrides_a_server_error() -> None:
    assert should_retry(503, httpx.Headers({"X-Should-Retry": "false"})) is False


def test_x_should_retry_is_case_insensitive_in_a_plain_dict() -> None:
    assert should_retry(500, {"X-Should-Retry": "FALSE"}) is False


def test_x_should_retry_with_another_value_is_ignored() -> None:
    assert should_retry(429, {"x-should-retry": "maybe"}) is True


# -- retry_delay ---------------------------------------------------------------------


def test_delay_backoff_doubles_per_attempt() -> None:
    assert [retry_delay(n, {}, jitter=0.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 8.0]


def test_delay_backoff_is_capped_at_eight_seconds() -> None:
    assert retry_delay(10, {}, jitter=0.0) == 8.0


def test_delay_jitter_shortens_by_up_to_a_quarter() -> None:
    assert retry_delay(1, {}, jitter=1.0) == pytest.approx(0.75)


def test_delay_retry_after_ms_wins() -> None:
    assert retry_delay(3, {"retry-after-ms": "250"}, jitter=0.5) == pytest.approx(0.25)


def test_delay_retry_after_seconds() -> None:
    assert retry_delay(0, {"retry-after": "2"}, jitter=0.5) == 2.0


def test_delay_retry_after_http_date() -> None:
    headers = {"retry-after": "Wed, 21 Oct 2015 07:28:05 GMT"}
    now = 1445412480.0  # 07:28:00 GMT the same day
    assert retry_delay(0, headers, jitter=0.0, now=now) == pytest.approx(5.0)


def test_delay_ignores_retry_after_beyond_sixty_seconds() -> None:
    assert retry_delay(0, {"retry-after": "120"}, jitter=0.0) == 0.5


def test_delay_ignores_zero_or_negative_retry_after() -> None:
    assert retry_delay(1, {"retry-after": "0"}, jitter=0.0) == 1.0
    assert retry_delay(1, {"retry-after-ms": "-5"}, jitter=0.0) == 1.0


def test_delay_ignores_an_unparsable_retry_after() -> None:
    assert retry_delay(0, {"retry-after": "soon", "retry-after-ms": "x"}, jitter=0.0) == 0.5


# -- open_stream ---------------------------------------------------------------------


class Sleeps:
    """Records the delays instead of waiting them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def open_against(server: ReplayServer, sleeps: Sleeps, **options: object) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        response = await open_stream(
            client,
            f"{server.base_url}/v1/chat/completions",
            headers={"authorization": "Bearer sk-test"},
            json_body={"model": "m"},
            provider="OpenAI",
            endpoint=f"{server.base_url}/v1",
            sleep=sleeps,
            jitter=lambda: 0.0,
            **options,  # type: ignore[arg-type]
        )
        await response.aread()
        await response.aclose()
        return response


async def test_open_stream_retries_429_with_the_servers_delay() -> None:
    sleeps = Sleeps()
    scripts = [
        Script.json(429, openai_error_body("slow down"), headers={"retry-after-ms": "20"}),
        Script.sse(openai_chunks(text="ok", finish_reason="stop")),
    ]
    with ReplayServer(scripts) as server:
        response = await open_against(server, sleeps)
        assert response.status_code == 200
        assert len(server.requests) == 2
    assert sleeps.delays == [pytest.approx(0.02)]


async def test_open_stream_backs_off_exponentially_without_a_header() -> None:
    sleeps = Sleeps()
    scripts = [Script.json(503, {}), Script.json(502, {}), Script.sse(["data: {}\n\n"])]
    with ReplayServer(scripts) as server:
        await open_against(server, sleeps)
    assert sleeps.delays == [0.5, 1.0]


async def test_open_stream_gives_up_after_max_retries() -> None:
    sleeps = Sleeps()
    with ReplayServer([Script.json(500, openai_error_body("boom"))] * 3) as server:
        with pytest.raises(InternalServerError, match="boom"):
            await open_against(server, sleeps)
        assert len(server.requests) == 3


async def test_open_stream_respects_max_retries_zero() -> None:
    with ReplayServer([Script.json(429, openai_error_body("slow"))]) as server:
        with pytest.raises(RateLimitError):
            await open_against(server, Sleeps(), max_retries=0)
        assert len(server.requests) == 1


async def test_open_stream_does_not_retry_a_401() -> None:
    with ReplayServer([Script.json(401, openai_error_body("bad key"))]) as server:
        with pytest.raises(AuthenticationError):
            await open_against(server, Sleeps())
        assert len(server.requests) == 1


async def test_open_stream_honours_x_should_retry_false() -> None:
    scripts = [Script.json(503, openai_error_body("down"), headers={"x-should-retry": "false"})]
    with ReplayServer(scripts) as server:
        with pytest.raises(InternalServerError):
            await open_against(server, Sleeps())
        assert len(server.requests) == 1


async def test_open_stream_retries_a_refused_connection_then_reports_it() -> None:
    port = free_port()
    sleeps = Sleeps()
    async with httpx.AsyncClient() as client:
        with pytest.raises(ProviderConnectionError, match="Check base_url") as caught:
            await open_stream(
                client,
                f"http://127.0.0.1:{port}/v1/chat/completions",
                headers={},
                json_body={},
                provider="OpenAI",
                endpoint=f"http://127.0.0.1:{port}/v1",
                sleep=sleeps,
                jitter=lambda: 0.0,
            )
    assert sleeps.delays == [0.5, 1.0]
    assert str(port) in str(caught.value)


async def test_open_stream_does_not_retry_a_url_without_scheme() -> None:
    sleeps = Sleeps()
    async with httpx.AsyncClient() as client:
        with pytest.raises(ProviderConnectionError, match="http:// or https://"):
            await open_stream(
                client,
                "localhost:1/v1/chat/completions",
                headers={},
                json_body={},
                provider="OpenAI",
                endpoint="localhost:1/v1",
                sleep=sleeps,
            )
    assert sleeps.delays == []


async def test_open_stream_rejects_a_2xx_that_is_not_an_event_stream() -> None:
    scripts = [Script.json(200, {"choices": [{"message": {"content": "hi"}}]})]
    with (
        ReplayServer(scripts) as server,
        pytest.raises(ProviderStreamError, match="instead of an event stream"),
    ):
        await open_against(server, Sleeps())
