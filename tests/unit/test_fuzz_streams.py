"""Property tests: the stream readers never crash and never emit a lone surrogate.

Hypothesis feeds arbitrary bytes, text and JSON-shaped values, split at arbitrary points,
to the SSE decoders, both stream accumulators and the streaming intent reader. The only
exception allowed is the documented one (`ProviderStreamError` from an accumulator for a
malformed stream), and every string that comes out must encode as UTF-8: a lone surrogate
would crash printing, storing or the next request.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from intent_ui.agent.providers.anthropic_stream import MessagesAccumulator
from intent_ui.agent.providers.base import ProviderEvent
from intent_ui.agent.providers.errors import ProviderStreamError
from intent_ui.agent.providers.openai_stream import ChatCompletionsAccumulator
from intent_ui.agent.providers.sse import SSEDecoder, SSELineDecoder
from intent_ui.core.streaming import IntentStream, read_streaming_intent
from tests.support.wire import decode_sse

FUZZ = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"])
# Text that may hold lone surrogates, as `json.loads` produces from escapes.
DECODED_TEXT = st.lists(st.one_of(st.characters(), SURROGATES), max_size=30).map("".join)
# JSON text fragments rich in the escapes and quotes the intent reader must handle.
JSON_PIECES = st.sampled_from(
    [
        '{"intent": "',
        '{"',
        "intent",
        '"',
        ":",
        " ",
        "\\",
        "\\u",
        "\\ud83d",
        "\\ude00",
        "\\ud800",
        "\\udc00",
        "\\n",
        "\\x",
        "u12G4",
        "}",
        ",",
    ]
)
ARGUMENT_TEXT = st.lists(st.one_of(JSON_PIECES, DECODED_TEXT), max_size=20).map("".join)

LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), DECODED_TEXT, ARGUMENT_TEXT, st.floats()
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(DECODED_TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)


def encodable(value: Any) -> bool:
    """Every string in `value` (an event, a dict, a list) encodes as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(encodable(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return all(encodable(k) and encodable(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(encodable(item) for item in value)
    return True


def split(text: str, cuts: Iterable[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    edges = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(edges)]


# --- SSE --------------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=8))
async def test_sse_bytes_split_anywhere_decode_like_the_whole(body: bytes, cuts: list[int]) -> None:
    points = sorted({cut % (len(body) + 1) for cut in cuts})
    edges = [0, *points, len(body)]
    pieces = [body[a:b] for a, b in itertools.pairwise(edges)]
    events = await decode_sse(pieces)
    assert events == await decode_sse([body])
    assert all(encodable(event) for event in events)


SSE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["data: ", "event: ", "id: ", "retry: 7", ":", "\n", "\r", "\r\n"]),
        st.text(max_size=10),
    ),
    max_size=30,
).map("".join)


@FUZZ
@given(SSE_TEXT, st.lists(st.integers(0, 300), max_size=8))
def test_sse_text_decoders_accept_text_split_anywhere(text: str, cuts: list[int]) -> None:
    # The text stages only ever see what the UTF-8 decoder produced, so no surrogates.
    def lines_of(pieces: list[str]) -> list[str]:
        decoder = SSELineDecoder()
        lines = [line for piece in pieces for line in decoder.decode(piece)]
        return lines + decoder.flush()

    lines = lines_of(split(text, cuts))
    assert lines == lines_of([text])
    decoder = SSEDecoder()
    events = [decoder.decode(line) for line in [*lines, ""]]
    assert all(encodable(event) for event in events if event is not None)


# --- accumulators -----------------------------------------------------------------------

TOOL_DELTA = st.fixed_dictionaries(
    {},
    optional={
        "index": st.integers(0, 2),
        "id": st.sampled_from(["c1", "c2", "\ud800"]),
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {}, optional={"name": DECODED_TEXT, "arguments": st.one_of(ARGUMENT_TEXT, VALUES)}
        ),
    },
)
OPENAI_CHUNK = st.one_of(
    VALUES,
    st.fixed_dictionaries(
        {
            "choices": st.lists(
                st.fixed_dictionaries(
                    {"index": st.integers(0, 1)},
                    optional={
                        "delta": st.fixed_dictionaries(
                            {},
                            optional={
                                "content": DECODED_TEXT,
                                "refusal": DECODED_TEXT,
                                "tool_calls": st.lists(TOOL_DELTA, max_size=2),
                            },
                        ),
                        "finish_reason": st.sampled_from(
                            [None, "stop", "length", "tool_calls", "\udc00"]
                        ),
                    },
                ),
                max_size=2,
            )
        },
        optional={"usage": VALUES, "error": st.one_of(st.none(), VALUES)},
    ),
)

ANTHROPIC_DELTA = st.fixed_dictionaries(
    {"type": st.sampled_from(["text_delta", "input_json_delta", "thinking_delta", "x"])},
    optional={"text": DECODED_TEXT, "partial_json": ARGUMENT_TEXT},
)
ANTHROPIC_EVENT = st.tuples(
    st.sampled_from(
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
            "message",
            "\ud800",
        ]
    ),
    st.one_of(
        VALUES,
        st.fixed_dictionaries(
            {"index": st.integers(0, 2)},
            optional={
                "content_block": st.fixed_dictionaries(
                    {"type": st.sampled_from(["text", "tool_use"])},
                    optional={
                        "id": DECODED_TEXT,
                        "name": DECODED_TEXT,
                        "input": VALUES,
                        "text": DECODED_TEXT,
                    },
                ),
                "delta": st.one_of(
                    ANTHROPIC_DELTA,
                    st.fixed_dictionaries(
                        {"stop_reason": st.sampled_from(["end_turn", "tool_use", "max_tokens"])}
                    ),
                ),
                "usage": VALUES,
                "error": VALUES,
                "message": VALUES,
            },
        ),
    ),
)


def drive(feed: Any, finish: Any, items: list[Any]) -> list[ProviderEvent]:
    events: list[ProviderEvent] = []
    try:
        for item in items:
            events += feed(*item) if isinstance(item, tuple) else feed(item)
        events += finish()
    except ProviderStreamError as exc:  # the documented failure for a malformed stream
        assert encodable(exc.message)
    return events


@FUZZ
@given(st.lists(OPENAI_CHUNK, max_size=8))
def test_the_chat_completions_accumulator_never_crashes_or_emits_surrogates(
    chunks: list[Any],
) -> None:
    acc = ChatCompletionsAccumulator()
    assert all(encodable(event) for event in drive(acc.feed, acc.finish, chunks))


@FUZZ
@given(st.lists(ANTHROPIC_EVENT, max_size=10))
def test_the_messages_accumulator_never_crashes_or_emits_surrogates(
    events: list[tuple[str, Any]],
) -> None:
    acc = MessagesAccumulator()
    assert all(encodable(event) for event in drive(acc.feed, acc.finish, events))


# --- the streaming intent ---------------------------------------------------------------


@FUZZ
@given(ARGUMENT_TEXT, st.lists(st.integers(0, 300), max_size=8))
def test_the_intent_reader_split_anywhere_matches_the_whole_and_emits_no_surrogate(
    text: str, cuts: list[int]
) -> None:
    stream = IntentStream()
    seen = [stream.feed(piece) for piece in split(text, cuts)]
    final = stream.flush()
    whole = read_streaming_intent(text)
    assert final == whole
    for result in [*seen, final]:
        assert result is None or encodable(result.text)
    # The text only grows while the value is open.
    texts = [result.text for result in seen if result is not None]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))


@FUZZ
@given(st.dictionaries(DECODED_TEXT, VALUES, max_size=3), DECODED_TEXT)
def test_the_intent_reader_on_parsed_arguments_emits_no_surrogate(
    args: dict[str, Any], intent: str
) -> None:
    for value in (args, {"intent": intent, **args}, json.dumps(args)):
        result = read_streaming_intent(value)
        assert result is None or encodable(result.text)
