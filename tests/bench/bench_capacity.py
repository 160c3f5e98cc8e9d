"""How many conversations one app process, and two backend workers on Redis and
PostgreSQL, serve at once while a tab still shows its labels within 50 ms.

    source scripts/env.sh && python tests/bench/bench_capacity.py [--smoke] [--seconds 8]
        [--rounds 3] [--ks 0,1,5,10,20,50,100,200] [--light-ks 1,10,50,100,200,300,500]
        [--workers 2] [--workers-ks 1,5,10,20,50,100,200] [--budget 2400]
        [--json-out FILE] [--previous FILE]

The app runs its production build in a process of its own (granian, as in production,
the page and its backend on one address), with `auth: mode: header`, so every
conversation is its own user's, as in real use; then as `--workers` backend workers
(`tests/support/bench_targets.py`: each a process of its own, one private Redis, a
database of the run's own on the machine's PostgreSQL), the conversations spread over
them in turn as a balancer would, the tab on the first. K
conversations are headless websocket clients (tests/support/bench_clients.py) replaying
the events a real page sends: each connects with its own token and user and sends one
message. Its turn, from a loopback OpenAI-shaped provider in a process of its own
(tests/support/bench_provider.py), is rounds of 8 parallel calls at 50 chunks/s per call,
one-sentence intents one character per chunk, every call's chunk of a tick in one write.
Once all K stream, one Chromium tab sends a message in its own conversation (the same
turn) and measures its visible labels (textContent, MutationObserver) for `--seconds`,
while the app's process is measured with psutil: CPU (% of one core), RSS, and CPU per
streamed chunk (every conversation's chunks the provider wrote in that window, tab's
included). Each K is measured `--rounds` times and the medians printed. K grows 1, 5,
10, 20, 50, ... and stops at the first K whose tab p95 passes 50 ms, or when the time
budget is spent: the answer is the largest K that held.

The lighter row does the same with a lighter load: each conversation streams reply text
(four characters at 50 chunks/s) rather than calls; the tab's turn is the same as above.
With workers CPU and memory are the sum over their processes (% of one core: two busy
workers read up to 200).

Everything shares this machine's cores (the clients, the provider and Chromium with the
app): the numbers compare runs on one machine, not machines. `--smoke` runs K = 1 of each
row for 2 s, once, and exits non-zero if a part did not work (no labels seen, no pushes
received, no chunks streamed), never on a number. `--workers 0` leaves the workers out.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, BrowserContext, expect, sync_playwright  # noqa: E402
from playwright.sync_api import Error as PlaywrightError  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable  # noqa: E402
from tests.support.bench_clients import USER_HEADER, Conversations, Recording, record  # noqa: E402
from tests.support.bench_labels import LabelWatch, label_latencies  # noqa: E402
from tests.support.bench_provider import Provider, Spec  # noqa: E402
from tests.support.bench_targets import Served, one_process, workers_on_redis  # noqa: E402

TARGET_P95_MS = 50.0
HOLD_S = 600.0
"""Load turns stream until the step ends them (their spec's seconds set to 0)."""
START_TIMEOUT_S = 60.0
SETTLE_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Load:
    name: str  # the provider spec's name, the first word of each conversation's message
    title: str
    spec: Spec


LOADS = {
    "calls": Load("load", "8 calls", Spec("sentences", 8, burst=True, seconds=HOLD_S)),
    "text": Load("light", "reply text", Spec("text", seconds=HOLD_S)),
}


@dataclass(frozen=True)
class Step:
    p50: float
    p95: float
    samples: int
    cpu: float  # % of one core
    rss_mb: float
    mb_per_conversation: float
    us_per_chunk: float
    chunks_per_s: float
    pushes_per_s: float  # per headless conversation
    kb_per_s: float  # per headless conversation
    thinned: bool  # some load turns ended before the window did


class Bench:
    def __init__(
        self,
        app: Served,
        provider: Provider,
        clients: Conversations,
        recording: Recording,
        probe: BrowserContext,
        seconds: float,
    ) -> None:
        self.app = app
        self.provider = provider
        self.clients = clients
        self.recording = recording
        self.probe = probe
        self.seconds = seconds
        self.steps = 0

    def _turns(self, what: str, name: str) -> int:
        return self.provider.counters()[what].get(name, 0)

    def step(self, load: Load, k: int) -> Step:
        """One measurement at K load conversations; every load turn has ended and every
        client has gone when it returns, whatever happened."""
        self.steps += 1
        tag = f"s{self.steps}"
        self.provider.spec(load.name, load.spec)
        self.provider.reset()
        rss_before = self.app.rss()
        started = time.monotonic()
        connected = False
        try:
            self.app.check()
            if k:
                first = self._turns("started", load.name)
                connected = True
                for at, api_url in enumerate(self.app.api_urls):
                    mine = range(at, k, len(self.app.api_urls))
                    if mine:
                        self.clients.start(
                            api_url,
                            self.recording,
                            [f"{tag}u{i}" for i in mine],
                            [f"{load.name} {tag} {i}" for i in mine],
                        )
                deadline = time.monotonic() + START_TIMEOUT_S
                while self._turns("started", load.name) - first < k:
                    if time.monotonic() > deadline:
                        began = self._turns("started", load.name) - first
                        raise RuntimeError(f"K={k}: only {began} of the load turns started")
                    time.sleep(0.1)
            ended_before = self._turns("ended", load.name)
            page = self.probe.new_page()
            page.goto(self.app.frontend_url)
            page.get_by_test_id("new-chat").click()
            page.reload()
            watch = LabelWatch(page)
            watch.start()
            page.get_by_test_id("chat-input").fill(f"probe {tag}")
            page.get_by_test_id("send-button").click()
            expect(page.get_by_test_id("stop-button")).to_be_visible(timeout=60_000)
            cpu_start = self.app.cpu_s()
            chunks_start = self.provider.counters()["chunks"]
            window_start = time.monotonic()
            time.sleep(self.seconds)
            cpu = self.app.cpu_s() - cpu_start
            counters = self.provider.counters()
            window = time.monotonic() - window_start
            rss = self.app.rss()
            thinned = counters["ended"].get(load.name, 0) > ended_before
            self.provider.spec(load.name, dataclasses.replace(load.spec, seconds=0.0))
            expect(page.get_by_test_id("send-button")).to_be_visible(timeout=300_000)
            observations = watch.observations()
            page.close()
            sent, intents = self.provider.sent()
            latencies = label_latencies(sent, intents, observations)
            received = self.clients.stop() if k else {"pushes": 0, "bytes": 0}
            connected = False
        except Exception:
            self.app.check()
            raise
        finally:
            self.provider.spec(load.name, dataclasses.replace(load.spec, seconds=0.0))
            if connected:
                self.clients.stop()
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while self.provider.counters()["active"] and time.monotonic() < deadline:
                time.sleep(0.2)
        elapsed = time.monotonic() - started
        chunks = counters["chunks"] - chunks_start
        return Step(
            p50=latencies.p50,
            p95=latencies.p95,
            samples=len(latencies.values),
            cpu=100 * cpu / window,
            rss_mb=rss / 2**20,
            mb_per_conversation=(rss - rss_before) / 2**20 / max(k, 1),
            us_per_chunk=1e6 * cpu / chunks if chunks else float("nan"),
            chunks_per_s=chunks / window,
            pushes_per_s=received["pushes"] / max(k, 1) / elapsed,
            kb_per_s=received["bytes"] / 1024 / max(k, 1) / elapsed,
            thinned=thinned,
        )


def median_step(steps: list[Step]) -> Step:
    fields = {}
    for field in dataclasses.fields(Step):
        values = [getattr(s, field.name) for s in steps]
        if field.type in ("bool", bool):
            fields[field.name] = any(values)
        else:
            fields[field.name] = statistics.median(values)
    return Step(**fields)


def _num(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def print_table(
    results: list[tuple[str, int, Step]], previous: dict[tuple[str, int], dict[str, float]]
) -> None:
    headers = [
        "load",
        "K",
        "tab p50",
        "tab p95",
        "CPU %",
        "RSS MB",
        "+MB/conv",
        "us/chunk",
        "chunks/s",
        "push/s",
        "KB/s",
    ]
    if previous:
        headers[4:4] = ["p95 prev"]
        headers.append("CPU % prev")
    if not results:
        print("(no step was measured)")
        return
    lines = []
    for title, k, s in results:
        line = [title, str(k), _num(s.p50), _num(s.p95) + ("*" if s.thinned else "")]
        old = previous.get((title, k))
        if previous:
            line.append(_num(old["p95"]) if old else "-")
        line += [
            _num(s.cpu, 0),
            _num(s.rss_mb, 0),
            _num(s.mb_per_conversation, 2),
            _num(s.us_per_chunk, 0),
            _num(s.chunks_per_s, 0),
            _num(s.pushes_per_s, 1),
            _num(s.kb_per_s, 1),
        ]
        if previous:
            line.append(_num(old["cpu"], 0) if old else "-")
        lines.append(line)
    widths = [max(len(h), *(len(x[i]) for x in lines)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for line in lines:
        print("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)))
    print(
        "tab p50/p95: ms from the provider's write to the tab's visible label; CPU: the app"
        " process, % of one core; +MB/conv: RSS growth over the step per conversation;"
        " push/s, KB/s: what each headless conversation received; * some load turns had"
        " ended before the window did"
    )


def ladder(text: str, flag: str) -> list[int]:
    try:
        ks = [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        raise SystemExit(f"{flag} {text!r}: give conversation counts, e.g. 1,5,10") from None
    if any(k < 0 for k in ks):
        raise SystemExit(f"{flag} {text!r}: counts cannot be negative")
    return ks


@dataclass(frozen=True)
class Row:
    load: Load
    ks: list[int]
    title: str


def measure(
    served: Served,
    rows: list[Row],
    browser: Browser,
    provider: Provider,
    clients: Conversations,
    args: argparse.Namespace,
    deadline: float,
    results: list[tuple[str, int, Step]],
    largest: dict[str, int | None],
    notes: list[str],
) -> None:
    """Every row's ladder on `served`, into `results`, `largest` and `notes`."""
    recorder = browser.new_context(extra_http_headers={USER_HEADER: "recorder"})
    recording = record(recorder.new_page(), served.frontend_url, "idle record")
    recorder.close()
    probe = browser.new_context(extra_http_headers={USER_HEADER: "probe"})
    try:
        bench = Bench(served, provider, clients, recording, probe, args.seconds)
        for row in rows:
            largest[row.title] = None
            for k in row.ks:
                if time.monotonic() > deadline:
                    notes.append(f"{row.title}: time budget spent before K={k}")
                    break
                try:
                    step = median_step([bench.step(row.load, k) for _ in range(args.rounds)])
                except (RuntimeError, PlaywrightError) as exc:
                    notes.append(f"{row.title} K={k}: not measured: {exc}")
                    print(notes[-1], file=sys.stderr)
                    break
                results.append((row.title, k, step))
                print(
                    f"{row.title} K={k}: tab p95 {_num(step.p95)} ms, CPU {step.cpu:.0f}%",
                    file=sys.stderr,
                )
                if not step.p95 <= TARGET_P95_MS:
                    break
                largest[row.title] = k
    finally:
        probe.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--smoke", action="store_true", help="K = 1 of each row, 2 s, once")
    parser.add_argument("--seconds", type=float, default=8.0, help="measuring window per step")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per K (median)")
    parser.add_argument("--ks", default="0,1,5,10,20,50,100,200")
    parser.add_argument("--light-ks", default="1,10,50,100,200,300,500")
    parser.add_argument("--workers", type=int, default=2, help="workers of the last row (0: none)")
    parser.add_argument("--workers-ks", default="1,5,10,20,50,100,200")
    parser.add_argument("--budget", type=float, default=2400.0, help="seconds for all steps")
    parser.add_argument("--json-out", type=Path, help="write the results here")
    parser.add_argument("--previous", type=Path, help="a --json-out of an earlier run")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rounds = 2.0, 1
        args.ks = args.light_ks = args.workers_ks = "1"
    if args.seconds <= 0 or args.rounds < 1 or args.workers < 0:
        raise SystemExit("--seconds must be positive, --rounds at least 1 and --workers at least 0")
    single = [
        Row(LOADS["calls"], ladder(args.ks, "--ks"), LOADS["calls"].title),
        Row(LOADS["text"], ladder(args.light_ks, "--light-ks"), LOADS["text"].title),
    ]
    calls = LOADS["calls"]
    several = [
        Row(
            calls, ladder(args.workers_ks, "--workers-ks"), f"{calls.title}, {args.workers} workers"
        )
    ]
    previous: dict[tuple[str, int], dict[str, float]] = {}
    if args.previous:
        previous = {(r["load"], r["k"]): r for r in json.loads(args.previous.read_text())}
    provider = Provider()
    provider.spec("probe", Spec("sentences", 8, burst=True, seconds=args.seconds, record=True))
    provider.spec("idle", Spec("text", seconds=0.1))
    results: list[tuple[str, int, Step]] = []
    largest: dict[str, int | None] = {}
    notes: list[str] = []
    deadline = time.monotonic() + args.budget
    try:
        with contextlib.ExitStack() as stack:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            clients = stack.enter_context(Conversations())
            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(
                executable_path=chromium_executable(), args=CHROMIUM_ARGS
            )
            stack.callback(browser.close)
            common = (browser, provider, clients, args, deadline, results, largest, notes)
            workdir = folder / "app"
            workdir.mkdir()
            with one_process(workdir, provider.app_config(workdir, header_auth=True)) as served:
                measure(served, single, *common)
            if args.workers:
                workdir = folder / "workers"
                workdir.mkdir()
                config = provider.app_config(workdir, header_auth=True)
                with workers_on_redis(workdir, config, args.workers) as served:
                    measure(served, several, *common)
    finally:
        provider.close()
    where = "one app process; then workers on Redis and PostgreSQL" if args.workers else ""
    print(f"\n{args.seconds:g} s windows, median of {args.rounds}; {where or 'one app process'}")
    print_table(results, previous)
    for title, held_k in largest.items():
        held = "none" if held_k is None else str(held_k)
        print(f"largest K with tab p95 <= {TARGET_P95_MS:.0f} ms, {title}: {held}")
    for note in notes:
        print(note)
    if args.json_out:
        rows = [{"load": t, "k": k, **dataclasses.asdict(s)} for t, k, s in results]
        args.json_out.write_text(json.dumps(rows, indent=1))
    if args.smoke:
        broken = [
            f"{title} K={k}: {what}"
            for title, k, s in results
            for what, bad in (
                ("the tab saw no label", s.samples == 0),
                ("no chunks streamed", s.chunks_per_s == 0),
                ("the headless conversations received no pushes", k > 0 and s.pushes_per_s == 0),
            )
            if bad
        ]
        expected = len(single) + (len(several) if args.workers else 0)
        if broken or len(results) != expected:
            raise SystemExit(
                "smoke run failed: " + "; ".join(broken + notes or ["a row is missing"])
            )
        print("smoke run: every part worked")


if __name__ == "__main__":
    main()
