"""Provider chunk -> DOM label latency in Chromium, for 1, 8 and 32 parallel calls.

    source scripts/env.sh && python tests/bench/bench_ui_latency.py [--seconds 12]

A local OpenAI-shaped SSE server streams N interleaved tool calls, each appending three
characters to its intent every 20 ms (50 chunks/s per call), and records the wall-clock
time it wrote each chunk. In the page a MutationObserver records when each card's full
label (its `title`, uncapped) first reaches each length. Latency = DOM time - write time
for every chunk; the lag at stream end is the last label's arrival minus the last write.
Everything runs on this machine, side by side in one run: compare the rows, not the
absolute numbers (the browser shares the 2 cores with the app). `BENCH_MOTION=reduce`
measures with `prefers-reduced-motion` (no shimmer).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable  # noqa: E402
from tests.e2e.harness import running_app  # noqa: E402

TICK_S = 0.02
PIECE = "abc"

OBSERVER = """
window.__obs = [];
new MutationObserver(() => {
  const now = performance.timeOrigin + performance.now();
  for (const card of document.querySelectorAll('[data-testid=tool-call]')) {
    const label = card.querySelector('[data-testid=tool-call-label]');
    if (!label) continue;
    const id = card.getAttribute('data-call-id');
    const len = (label.getAttribute('title') || '').length;
    const last = window.__last || (window.__last = {});
    if (last[id] !== len) { last[id] = len; window.__obs.push([id, len, now]); }
  }
}).observe(document.body, {subtree: true, childList: true, attributes: true,
  characterData: true, attributeFilter: ['title']});
"""


class Stream:
    """What the server sends for one turn, and when it wrote each chunk."""

    def __init__(self, calls: int, seconds: float) -> None:
        self.calls = calls
        self.ticks = int(seconds / TICK_S)
        self.sent: dict[tuple[str, int], float] = {}

    def chunk(self, delta: dict, finish: str | None = None) -> bytes:
        body = {
            "id": "bench",
            "object": "chat.completion.chunk",
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    def write(self, out) -> None:  # type: ignore[no-untyped-def]
        for i in range(self.calls):
            first = {"index": i, "id": f"c{i}", "type": "function"}
            first["function"] = {"name": "list_directory", "arguments": '{"intent": "'}
            out.write(self.chunk({"tool_calls": [first]}))
        out.flush()
        start = time.time()
        for tick in range(1, self.ticks + 1):
            for i in range(self.calls):
                delta = {"index": i, "function": {"arguments": PIECE}}
                out.write(self.chunk({"tool_calls": [delta]}))
                out.flush()
                self.sent[(f"c{i}", tick * len(PIECE))] = time.time() * 1000
            pause = start + tick * TICK_S - time.time()
            if pause > 0:
                time.sleep(pause)
        for i in range(self.calls):
            delta = {"index": i, "function": {"arguments": '", "path": "."}'}}
            out.write(self.chunk({"tool_calls": [delta]}))
        out.write(self.chunk({}, "tool_calls"))
        out.write(b"data: [DONE]\n\n")
        out.flush()


def serve(state: dict) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            if body["messages"][-1]["role"] == "tool":
                self.wfile.write(Stream(0, 0).chunk({"content": "ok"}, "stop"))
                self.wfile.write(b"data: [DONE]\n\n")
                return
            state["stream"].write(self.wfile)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(page, state: dict, calls: int, seconds: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    stream = state["stream"] = Stream(calls, seconds)
    page.reload()
    page.evaluate(OBSERVER)
    page.get_by_test_id("chat-input").fill(f"bench {calls}")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    page.get_by_test_id("send-button").click()
    expect(page.get_by_test_id("stop-button")).to_be_visible()
    expect(page.get_by_test_id("send-button")).to_be_visible(timeout=(seconds + 30) * 1000)
    after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    busy = {k: after[k] - before.get(k, 0) for k in ("TaskDuration", "ScriptDuration")}
    first_seen: dict[tuple[str, int], float] = {}
    for call_id, length, at in page.evaluate("window.__obs"):
        first_seen.setdefault((call_id, length), at)
    latencies = []
    for (call_id, length), sent in stream.sent.items():
        seen = [at for (cid, ln), at in first_seen.items() if cid == call_id and ln >= length]
        if seen:
            latencies.append(min(seen) - sent)
    last_write = max(stream.sent.values())
    final = stream.ticks * len(PIECE)
    arrivals = [at for (cid, ln), at in first_seen.items() if ln >= final]
    latencies.sort()
    return {
        "samples": len(latencies),
        "expected": len(stream.sent),
        "p50": statistics.median(latencies),
        "p95": latencies[int(0.95 * (len(latencies) - 1))],
        "end_lag": (max(arrivals) - last_write) if arrivals else float("nan"),
        "busy": busy["TaskDuration"],
        "script": busy["ScriptDuration"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--calls", default="1,8,32")
    args = parser.parse_args()
    state: dict = {}
    server = serve(state)
    config = (
        "endpoints:\n  - name: bench\n    kind: openai\n"
        f"    base_url: http://127.0.0.1:{server.server_address[1]}/v1\n"
        "    api_key: x\n    models: [bench]\n"
    )
    rows = []
    with (
        tempfile.TemporaryDirectory() as workdir,
        running_app(Path(workdir), config, prod=True) as app,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=CHROMIUM_ARGS
        )
        page = browser.new_page(reduced_motion=os.environ.get("BENCH_MOTION", "no-preference"))
        assert app.frontend_url
        page.goto(app.frontend_url)
        for calls in (int(n) for n in args.calls.split(",")):
            rows.append((calls, measure(page, state, calls, args.seconds)))
        browser.close()
    server.shutdown()
    print(f"\nchunk -> DOM label latency, 50 chunks/s per call, {args.seconds:.0f} s stream")
    print(
        f"{'calls':>5} {'samples':>9} {'p50 ms':>8} {'p95 ms':>8} {'end lag ms':>11}"
        f" {'tab busy s':>11} {'tab script s':>13}"
    )
    for calls, r in rows:
        print(
            f"{calls:>5} {r['samples']:>4}/{r['expected']:<4} {r['p50']:>8.1f} "
            f"{r['p95']:>8.1f} {r['end_lag']:>11.1f} {r['busy']:>11.2f} {r['script']:>13.2f}"
        )
    print("target: p95 <= 25 ms at 8 and 32 calls, no drift (end lag ~ p50)")


if __name__ == "__main__":
    main()
