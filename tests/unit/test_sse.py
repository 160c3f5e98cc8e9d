"""SSE decoding: line splitting across chunk edges, WHATWG fields, the byte pipeline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from intent_ui.agent.providers.sse import (
    EventDecoder,
    ServerSentEvent,
    SSEDecoder,
    SSELineDecoder,
    drain,
)
from tests.support.wire import decode_sse


def lines_of(chunks: list[str]) -> list[str]:
    decoder = SSELineDecoder()
    lines: list[str] = []
    for chunk in chunks:
        lines.extend(decoder.decode(chunk))
    return lines + decoder.flush()


def events_of(lines: list[str]) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    return [event for line in lines if (event := decoder.decode(line)) is not None]


# -- SSELineDecoder ------------------------------------------------------------------


def test_line_decoder_lf() -> None:
    assert lines_of(["a\nb\n"]) == ["a", "b"]


def test_line_decoder_cr() -> None:
    assert lines_of(["a\rb\r"]) == ["a", "b"]


def test_line_decoder_crlf() -> None:
    assert lines_of(["a\r\nb\r\n"]) == ["a", "b"]


def test_line_decoder_crlf_split_between_chunks_is_one_line_end() -> None:
    assert lines_of(["a\r", "\nb\n"]) == ["a", "b"]


def test_line_decoder_cr_then_cr_is_two_line_ends() -> None:
    assert lines_of(["a\r", "\rb\n"]) == ["a", "", "b"]


def test_line_decoder_holds_a_trailing_cr_until_more_text() -> None:
    decoder = SSELineDecoder()
    assert decoder.decode("a\r") == []
    assert decoder.decode("b") == ["a"]


def test_line_decoder_joins_a_line_split_over_many_chunks() -> None:
    assert lines_of(["da", "ta: ", "x", "\n"]) == ["data: x"]


def test_line_decoder_splits_only_on_cr_and_lf() -> None:
    assert lines_of(["a\u2028b\x0bc\x1cd\n"]) == ["a\u2028b\x0bc\x1cd"]


def test_line_decoder_flush_returns_an_unterminated_line() -> None:
    assert lines_of(["a\nrest"]) == ["a", "rest"]


def test_line_decoder_flush_of_a_trailing_cr_ends_the_line() -> None:
    decoder = SSELineDecoder()
    assert decoder.decode("") == []
    assert decoder.decode("x\r") == []
    assert decoder.flush() == ["x"]
    assert decoder.flush() == []


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_line_decoder_every_split_point(newline: str) -> None:
    body = newline.join(["data: one", "", ": note", "data: two", "", ""])
    expected = ["data: one", "", ": note", "data: two", ""]
    for cut in range(len(body) + 1):
        assert lines_of([body[:cut], body[cut:]]) == expected, cut


def test_line_decoder_one_character_per_chunk_mixed_endings() -> None:
    body = "a\r\nb\rc\n\r\n"
    assert lines_of(list(body)) == ["a", "b", "c", ""]


# -- SSEDecoder ----------------------------------------------------------------------


def test_decoder_blank_line_dispatches_data() -> None:
    assert events_of(["data: hi", ""]) == [ServerSentEvent(data="hi")]


def test_decoder_multi_line_data_is_joined_by_newline() -> None:
    assert events_of(["data: a", "data: b", "data:", ""]) == [ServerSentEvent(data="a\nb\n")]


def test_decoder_event_field_sets_the_type() -> None:
    events = events_of(["event: ping", "data: {}", ""])
    assert events == [ServerSentEvent(event="ping", data="{}")]


def test_decoder_event_type_resets_after_dispatch() -> None:
    events = events_of(["event: a", "data: 1", "", "data: 2", ""])
    assert [e.event for e in events] == ["a", "message"]


def test_decoder_comment_lines_are_ignored() -> None:
    assert events_of([": keep-alive", "data: x", ": again", ""]) == [ServerSentEvent(data="x")]


def test_decoder_blank_line_without_data_dispatches_nothing() -> None:
    assert events_of(["event: lonely", "", "data: next", ""]) == [ServerSentEvent(data="next")]


def test_decoder_id_is_kept_for_later_events() -> None:
    events = events_of(["id: 7", "data: a", "", "data: b", ""])
    assert [e.id for e in events] == ["7", "7"]


def test_decoder_id_containing_nul_is_ignored() -> None:
    events = events_of(["id: 1", "data: a", "", "id: 2\0x", "data: b", ""])
    assert [e.id for e in events] == ["1", "1"]


def test_decoder_retry_takes_an_integer() -> None:
    assert events_of(["retry: 1500", "data: a", ""])[0].retry == 1500


def test_decoder_retry_ignores_non_digits() -> None:
    assert events_of(["retry: 15s", "retry: -1", "retry:", "data: a", ""])[0].retry is None


def test_decoder_value_without_space_after_colon() -> None:
    assert events_of(["data:x", ""]) == [ServerSentEvent(data="x")]


def test_decoder_only_one_leading_space_is_removed() -> None:
    assert events_of(["data:  x", ""]) == [ServerSentEvent(data=" x")]


def test_decoder_field_name_without_colon_has_empty_value() -> None:
    assert events_of(["data", ""]) == [ServerSentEvent(data="")]


def test_decoder_colon_inside_value_is_kept() -> None:
    assert events_of(['data: {"a": "b:c"}', ""]) == [ServerSentEvent(data='{"a": "b:c"}')]


def test_decoder_unknown_fields_are_ignored() -> None:
    assert events_of(["foo: bar", "data: x", ""]) == [ServerSentEvent(data="x")]


def test_decoder_satisfies_the_protocol() -> None:
    decoder: EventDecoder = SSEDecoder()
    assert decoder.decode("data: x") is None


# -- the byte pipeline ------------------------------------------------------------------


async def test_pipeline_every_byte_split_of_a_crlf_stream() -> None:
    body = "event: a\r\ndata: é€\r\n\r\ndata: 😀\r\n\r\n".encode()
    expected = [ServerSentEvent(event="a", data="é€"), ServerSentEvent(data="😀")]
    for cut in range(len(body) + 1):
        assert await decode_sse([body[:cut], body[cut:]]) == expected, cut


async def test_pipeline_one_byte_per_chunk() -> None:
    body = "data: naïve\n\n".encode()
    chunks = [body[i : i + 1] for i in range(len(body))]
    assert await decode_sse(chunks) == [ServerSentEvent(data="naïve")]


async def test_pipeline_drops_a_leading_bom() -> None:
    body = "\ufeffdata: x\n\n".encode()
    assert await decode_sse([body[:2], body[2:]]) == [ServerSentEvent(data="x")]


async def test_pipeline_replaces_invalid_utf8_instead_of_raising() -> None:
    assert await decode_sse([b"data: a\xffb\n\n"]) == [ServerSentEvent(data="a\ufffdb")]


async def test_pipeline_does_not_dispatch_an_unterminated_last_event() -> None:
    assert await decode_sse([b"data: a\n\ndata: b\n"]) == [ServerSentEvent(data="a")]


async def test_pipeline_uses_a_custom_event_decoder() -> None:
    class Upper:
        def decode(self, line: str) -> ServerSentEvent | None:
            return ServerSentEvent(data=line.upper()) if line else None

    assert await decode_sse([b"ab\ncd\n"], Upper()) == [
        ServerSentEvent(data="AB"),
        ServerSentEvent(data="CD"),
    ]


async def test_drain_reads_the_rest_and_ignores_a_broken_tail() -> None:
    read: list[str] = []

    async def tail() -> AsyncIterator[ServerSentEvent]:
        for data in ("late", "later"):
            read.append(data)
            yield ServerSentEvent(data=data)
        raise httpx.ReadError("gone")

    await drain(tail())  # the answer was already complete: a broken tail is not an error
    assert read == ["late", "later"]


async def test_drain_gives_up_on_a_tail_that_never_ends() -> None:
    read: list[str] = []

    async def stalled() -> AsyncIterator[ServerSentEvent]:
        read.append("late")
        yield ServerSentEvent(data="late")
        await asyncio.Event().wait()  # the server keeps the connection open, silent
        yield ServerSentEvent(data="never")

    await asyncio.wait_for(drain(stalled(), timeout=0.05), timeout=30)
    assert read == ["late"]
