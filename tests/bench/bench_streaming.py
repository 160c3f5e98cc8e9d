"""Benchmark: reading a streamed intent incrementally vs re-parsing the growing buffer.

Run with `python tests/bench/bench_streaming.py` (not collected by pytest).

The workload is a write-file tool call whose first key is a 100-character intent followed
by 64 KB of file content, streamed in 4-character chunks, as a provider would send it.
Four readers run side by side over the same chunks:

- `IntentStream.feed(chunk)`: the incremental decoder (one instance, fed each chunk);
- `read_streaming_intent(buffer)`: the one-shot reader on the growing buffer;
- `partial_json_parser.loads(buffer)`: re-parse the growing buffer each chunk;
- `pydantic_core.from_json(buffer, allow_partial="trailing-strings")`: the same, in Rust.

Only the reader call is timed; growing the buffer is not. A reader whose full quadratic run
would exceed the budget is timed on its first N chunks and extrapolated by the
measured growth (the cost of re-parsing grows linearly with the buffer, so the total grows
with the square of the chunk count); such rows are labelled "extrapolated".
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import partial_json_parser
import pydantic_core

from intent_ui.core.streaming import IntentStream, read_streaming_intent

CHUNK = 4
CONTENT_BYTES = 64 * 1024
BUDGET_S = 60.0  # per quadratic reader, for the full run


def build_arguments() -> str:
    intent = ("Writing the OAuth callback handler with state validation and token refresh " * 2)[
        :100
    ]
    line = 'def handler(request):\n    return {"status": "ok", "path": "C:\\\\tmp"}\n'
    content = (line * (CONTENT_BYTES // len(line) + 1))[:CONTENT_BYTES]
    return json.dumps(
        {"intent": intent, "path": "src/auth/callback.py", "content": content},
        ensure_ascii=False,
    )


def chunks_of(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def time_incremental(chunks: list[str]) -> list[float]:
    stream = IntentStream()
    feed = stream.feed
    clock = time.perf_counter
    costs: list[float] = []
    for chunk in chunks:
        start = clock()
        feed(chunk)
        costs.append(clock() - start)
    return costs


def time_incremental_total(chunks: list[str]) -> float:
    """One clock pair around the whole loop: no per-call timer overhead in the total."""
    stream = IntentStream()
    feed = stream.feed
    start = time.perf_counter()
    for chunk in chunks:
        feed(chunk)
    return time.perf_counter() - start


def timer_overhead_ns(samples: int = 100_000) -> float:
    clock = time.perf_counter
    start = clock()
    for _ in range(samples):
        clock()
    return (clock() - start) / samples * 1e9


def time_reparse(
    chunks: list[str], parse: Callable[[str], object], limit: int | None = None
) -> float:
    clock = time.perf_counter
    total = 0.0
    buffer = ""
    for chunk in chunks[: limit if limit is not None else len(chunks)]:
        buffer += chunk
        start = clock()
        with contextlib.suppress(Exception):
            parse(buffer)
        total += clock() - start
    return total


def parse_partial_json(buffer: str) -> object:
    return partial_json_parser.loads(buffer)


def parse_pydantic(buffer: str) -> object:
    return pydantic_core.from_json(buffer, allow_partial="trailing-strings")


def measure_reparse(
    name: str, chunks: list[str], parse: Callable[[str], object]
) -> tuple[float, str]:
    """Total seconds over all chunks, running a prefix first to decide whether to extrapolate."""
    probe = min(len(chunks), 1000)
    probe_s = time_reparse(chunks, parse, probe)
    # Re-parse cost grows with the buffer, so the full total is ~ probe * (n / probe) ** 2.
    estimate = probe_s * (len(chunks) / probe) ** 2
    if estimate <= BUDGET_S:
        return time_reparse(chunks, parse), "full run"
    n = max(probe, int(probe * (BUDGET_S / 4 / probe_s) ** 0.5))
    n = min(n, len(chunks))
    measured = time_reparse(chunks, parse, n)
    return (
        measured * (len(chunks) / n) ** 2,
        f"EXTRAPOLATED: measured {measured:.1f} s on first {n:,} chunks, x (n/{n:,})^2",
    )


def main() -> None:
    text = build_arguments()
    chunks = chunks_of(text)
    print(f"arguments: {len(text):,} chars, {len(chunks):,} chunks of {CHUNK} chars")

    # Sanity: all readers agree on the final intent.
    expected = json.loads(text)["intent"]
    stream = IntentStream()
    for chunk in chunks:
        stream.feed(chunk)
    assert stream.current is not None and stream.current.text == expected
    assert stream.current.complete
    assert read_streaming_intent(text) == stream.current
    assert partial_json_parser.loads(text)["intent"] == expected

    costs = time_incremental(chunks)
    incremental = time_incremental_total(chunks)
    rows: list[tuple[str, float, str]] = [("IntentStream.feed per chunk", incremental, "full run")]
    rows.append(
        (
            "read_streaming_intent(buffer)",
            time_reparse(chunks, read_streaming_intent),
            "full run",
        )
    )
    for name, parse in (
        ("partial_json_parser.loads(buffer)", parse_partial_json),
        ("pydantic_core.from_json(buffer, trailing-strings)", parse_pydantic),
    ):
        total, how = measure_reparse(name, chunks, parse)
        rows.append((name, total, how))

    print()
    print(f"{'reader':<52} {'total':>12} {'x slower':>10}  how")
    for name, total, how in rows:
        ratio = total / incremental
        print(f"{name:<52} {total * 1e3:>9.2f} ms {ratio:>9.1f}x  {how}")

    tenth = max(1, len(costs) // 10)
    first = sum(costs[:tenth]) / tenth
    last = sum(costs[-tenth:]) / tenth
    print()
    overhead = timer_overhead_ns()
    print(f"(per-chunk costs are clocked per call; timer overhead ~{overhead:.0f} ns included)")
    print(f"IntentStream per-chunk cost, first 10% of chunks: {first * 1e9:8.0f} ns")
    print(f"IntentStream per-chunk cost, last 10% of chunks:  {last * 1e9:8.0f} ns")
    print(f"flatness (last / first): {last / first:.2f}")
    pjp = rows[2][1] / incremental
    print(f"target IntentStream >= 100x faster than partial-json-parser: {pjp >= 100} ({pjp:.0f}x)")


if __name__ == "__main__":
    main()
