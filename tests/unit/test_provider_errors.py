"""The provider exception tree: status mapping, message extraction, the httpx boundary."""

from __future__ import annotations

import json

import httpx
import pytest

from intent_ui.agent.providers.errors import (
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderStreamError,
    ProviderTimeoutError,
    RateLimitError,
    extract_error_message,
    map_httpx_error,
    status_error,
)
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator

URL = "https://api.example.com/v1/chat/completions"
ENDPOINT = "https://api.example.com/v1"


def error_for(status: int, body: str = "") -> ProviderStatusError:
    return status_error(status, url=URL, body=body, provider="OpenAI", endpoint=ENDPOINT)


def test_tree() -> None:
    assert issubclass(ProviderTimeoutError, ProviderConnectionError)
    assert issubclass(ProviderConnectionError, ProviderError)
    assert issubclass(RateLimitError, ProviderStatusError)
    assert issubclass(ProviderStreamError, ProviderError)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, PermissionDeniedError),
        (404, NotFoundError),
        (429, RateLimitError),
        (500, InternalServerError),
        (503, InternalServerError),
        (529, InternalServerError),
        (422, ProviderStatusError),
    ],
)
def test_status_maps_to_the_most_specific_class(status: int, cls: type) -> None:
    assert type(error_for(status)) is cls


def test_status_error_keeps_code_body_and_url() -> None:
    error = error_for(404, '{"error": {"message": "The model `gpt-9` does not exist"}}')
    assert (error.status_code, error.url) == (404, URL)
    assert error.provider_message == "The model `gpt-9` does not exist"
    assert str(error) == (
        f"OpenAI at {URL} answered 404 Not Found: The model `gpt-9` does not exist. "
        f"Check base_url ({ENDPOINT}) and the model name."
    )


def test_status_error_without_a_body_says_so() -> None:
    assert "(no error message in the body)" in str(error_for(502))


def test_unknown_status_code_does_not_crash() -> None:
    assert "799 HTTP error" in str(error_for(799))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"error": {"message": "bad key", "type": "x"}}', "bad key"),
        (
            '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "Overloaded",
        ),
        ('{"error": "model \\"llama\\" not found"}', 'model "llama" not found'),
        ('{"detail": "Not Found"}', "Not Found"),
        ('{"message": "nope"}', "nope"),
        (
            '{"detail": [{"loc": ["body"], "msg": "field required"}]}',
            '[{"loc": ["body"], "msg": "field required"}]',
        ),
        ("<html>Bad Gateway</html>", "<html>Bad Gateway</html>"),
        ("", None),
        ("   ", None),
    ],
)
def test_extract_error_message(body: str, message: str | None) -> None:
    assert extract_error_message(body) == message


def test_extract_error_message_clips_long_bodies() -> None:
    message = extract_error_message("x" * 1000)
    assert message is not None and len(message) == 300 and message.endswith("…")


def test_timeout_before_the_stream_is_a_timeout_error() -> None:
    error = map_httpx_error(httpx.ConnectTimeout("slow"), url=URL, provider="OpenAI")
    assert type(error) is ProviderTimeoutError
    assert URL in str(error) and "timed out" in str(error)


def test_connect_error_is_a_connection_error_naming_the_url() -> None:
    error = map_httpx_error(
        httpx.ConnectError("[Errno 111] Connection refused"), url=URL, provider="OpenAI"
    )
    assert type(error) is ProviderConnectionError
    assert "Connection refused" in str(error) and "Check base_url" in str(error)


def test_unsupported_protocol_asks_for_an_absolute_url() -> None:
    error = map_httpx_error(
        httpx.UnsupportedProtocol("no scheme"), url="localhost/v1", provider="OpenAI"
    )
    assert "http:// or https://" in str(error)


def test_failure_while_streaming_is_a_stream_error_with_partial() -> None:
    error = map_httpx_error(
        httpx.RemoteProtocolError("peer closed"),
        url=URL,
        provider="OpenAI",
        streaming=True,
        partial=True,
    )
    assert isinstance(error, ProviderStreamError) and error.partial is True
    assert "after part of the response" in str(error)


def test_read_timeout_while_streaming_is_a_stream_error() -> None:
    error = map_httpx_error(httpx.ReadTimeout("idle"), url=URL, provider="OpenAI", streaming=True)
    assert isinstance(error, ProviderStreamError) and error.partial is False


HOSTILE = "\x1b]0;pwned\x07bad \x1b[2J\x1b[31mmodel\x1b[0m\x9b1m name\r\n\x07"


def test_escape_sequences_in_an_error_body_never_reach_the_message() -> None:
    body = json.dumps({"error": {"message": HOSTILE}})
    error = status_error(400, url="http://x/v1", body=body, provider="OpenAI", endpoint="x")
    assert error.provider_message == "bad model name"
    assert "bad model name" in error.message
    for text in (error.message, error.provider_message, str(error)):
        assert not any(char in text for char in "\x1b\x07\x9b\r\n")


def test_an_in_stream_error_event_carries_no_escape_sequences() -> None:
    with pytest.raises(ProviderStreamError) as caught:
        ChatCompletionsAccumulator().feed({"error": {"message": HOSTILE}})
    assert "bad model name" in caught.value.message
    assert "\x1b" not in caught.value.message and "\x07" not in caught.value.message
