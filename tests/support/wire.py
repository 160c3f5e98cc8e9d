"""Builders of the exact provider wire shapes, as SSE text chunks for `ReplayServer`.

`openai_chunks(...)` gives a Chat Completions stream (data-only lines, `[DONE]` at the
end); `anthropic_events(...)` a Messages stream (`event: X` + `data: {...}`). Each list
item is one complete SSE event, so a `Script(events=...)` sends them one chunk each;
`split_bytes` re-cuts a body at arbitrary byte offsets for decoder edge cases, and
`decode_sse` reads a body back through the providers' own SSE decoding.

Tool calls are `(call_id, name, arguments_json)`; the argument text is streamed in
fragments of `fragment_size` characters, exactly as the providers do.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import httpx

from intent_ui.agent.providers.sse import EventDecoder, ServerSentEvent, aiter_sse

ToolCallSpec = tuple[str, str, str]
"""`(call_id, name, arguments_json)`."""

CREATED = 1_700_000_000


def sse_event(data: Any, event: str | None = None) -> str:
    """One SSE event; `data` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n"


def fragments(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters (none for empty text)."""
    if size < 1:
        raise ValueError("fragment_size must be at least 1")
    return [text[i : i + size] for i in range(0, len(text), size)]


def split_bytes(chunks: Sequence[str], *, every: int) -> list[bytes]:
    """The UTF-8 body of `chunks` re-cut every `every` bytes (may split characters)."""
    body = "".join(chunks).encode()
    return [body[i : i + every] for i in range(0, len(body), every)]


async def decode_sse(
    chunks: Iterable[bytes], decoder: EventDecoder | None = None
) -> list[ServerSentEvent]:
    """The events the providers read from a response body that arrives as `chunks`."""

    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return [event async for event in aiter_sse(httpx.Response(200, content=body()), decoder)]


# -- OpenAI Chat Completions ---------------------------------------------------------


def openai_chunks(
    *,
    text: str | None = None,
    tool_calls: Sequence[ToolCallSpec] = (),
    fragment_size: int = 4,
    reuse_index_zero: bool = False,
    interleave: bool = False,
    usage: bool = True,
    finish_reason: str | None = "tool_calls",
    model: str = "gpt-4o-mini",
    prompt_tokens: int = 21,
    completion_tokens: int = 13,
    done: bool = True,
) -> list[str]:
    """A `chat.completion.chunk` stream.

    A role chunk, `text` in fragments, then each call: a first delta with `index`,
    `id`, `type`, `function.name` and `arguments: ""`, then argument fragments
    carrying only `index` + `function.arguments`. Calls go one after the other, or
    round-robin with `interleave`; `reuse_index_zero` gives every call index 0 (as
    Ollama and some vLLM builds do). Then a chunk with `finish_reason` (omitted when
    `None`: a cut stream), a usage chunk with `choices: []` when `usage`, and
    `data: [DONE]` when `done`.
    """
    if reuse_index_zero and interleave:
        raise ValueError("interleaved calls that all use index 0 cannot be told apart")

    def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
        body: dict[str, Any] = {
            "id": "chatcmpl-replay",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_replay",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}],
        }
        if usage:
            body["usage"] = None
        return sse_event(body)

    out = [chunk({"role": "assistant", "content": ""})]
    out.extend(chunk({"content": piece}) for piece in fragments(text or "", fragment_size))

    per_call: list[list[str]] = []
    for position, (call_id, name, arguments) in enumerate(tool_calls):
        index = 0 if reuse_index_zero else position
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        rest = [
            {"index": index, "function": {"arguments": piece}}
            for piece in fragments(arguments, fragment_size)
        ]
        per_call.append([chunk({"tool_calls": [first]})])
        per_call[-1].extend(chunk({"tool_calls": [delta]}) for delta in rest)
    if interleave:
        longest = max((len(calls) for calls in per_call), default=0)
        out.extend(calls[i] for i in range(longest) for calls in per_call if i < len(calls))
    else:
        out.extend(piece for calls in per_call for piece in calls)

    if finish_reason is not None:
        out.append(chunk({}, finish_reason))
    if usage:
        out.append(
            sse_event(
                {
                    "id": "chatcmpl-replay",
                    "object": "chat.completion.chunk",
                    "created": CREATED,
                    "model": model,
                    "system_fingerprint": "fp_replay",
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                }
            )
        )
    if done:
        out.append("data: [DONE]\n\n")
    return out


def openai_error_body(message: str, type_: str = "invalid_request_error") -> dict[str, Any]:
    """The JSON body of an OpenAI error answer."""
    return {"error": {"message": message, "type": type_, "param": None, "code": None}}


# -- Anthropic Messages --------------------------------------------------------------


def anthropic_events(
    *,
    text: str | None = None,
    tool_uses: Sequence[ToolCallSpec] = (),
    fragment_size: int = 4,
    stop_reason: str | None = "tool_use",
    model: str = "claude-sonnet-4-5",
    input_tokens: int = 42,
    output_tokens: int = 17,
    message_stop: bool = True,
) -> list[str]:
    """A Messages event stream.

    `message_start`, a `ping`, then a text block (index 0) when `text`, then one
    `tool_use` block per call: `content_block_start` with `input: {}`, a first
    `input_json_delta` with `partial_json: ""`, the fragments, `content_block_stop`.
    Then `message_delta` with `stop_reason` and the output usage (omitted when
    `stop_reason` is `None`) and `message_stop` (omitted when `message_stop` is false).
    """
    out = [
        sse_event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_replay",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": 1},
                },
            },
            "message_start",
        ),
        sse_event({"type": "ping"}, "ping"),
    ]
    index = 0
    if text is not None:
        out.append(_block_start(index, {"type": "text", "text": ""}))
        out.extend(
            _block_delta(index, {"type": "text_delta", "text": piece})
            for piece in fragments(text, fragment_size)
        )
        out.append(_block_stop(index))
        index += 1
    for call_id, name, arguments in tool_uses:
        out.append(
            _block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})
        )
        out.append(_block_delta(index, {"type": "input_json_delta", "partial_json": ""}))
        out.extend(
            _block_delta(index, {"type": "input_json_delta", "partial_json": piece})
            for piece in fragments(arguments, fragment_size)
        )
        out.append(_block_stop(index))
        index += 1
    if stop_reason is not None:
        out.append(
            sse_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": output_tokens},
                },
                "message_delta",
            )
        )
    if message_stop:
        out.append(sse_event({"type": "message_stop"}, "message_stop"))
    return out


def anthropic_error_body(type_: str, message: str) -> dict[str, Any]:
    """The JSON body of an Anthropic error answer."""
    return {"type": "error", "error": {"type": type_, "message": message}}


def anthropic_error_event(type_: str = "overloaded_error", message: str = "Overloaded") -> str:
    """An in-stream `error` event (e.g. `overloaded_error`)."""
    return sse_event(anthropic_error_body(type_, message), "error")


def _block_start(index: int, block: dict[str, Any]) -> str:
    return sse_event(
        {"type": "content_block_start", "index": index, "content_block": block},
        "content_block_start",
    )


def _block_delta(index: int, delta: dict[str, Any]) -> str:
    return sse_event(
        {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
    )


def _block_stop(index: int) -> str:
    return sse_event({"type": "content_block_stop", "index": index}, "content_block_stop")
