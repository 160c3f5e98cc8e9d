"""Provider chunk -> visible label latency in Chromium, and reload time of a long stored turn.

    source scripts/env.sh && python tests/bench/bench_ui_latency.py [--seconds 12]
        [--calls 1,8,32,128] [--patterns staggered,burst] [--long-calls 32]
        [--reload-calls 500] [--before REV]

A loopback OpenAI-shaped provider (tests/support/bench_provider.py, a process of its own,
Nagle off) streams N interleaved tool calls whose intents are what people stream: one
sentence of 40 to 110 characters per call (different per call, the same in every run),
one character per call every 20 ms, visible whole; a turn is rounds of fresh calls for
about `--seconds` (at most 7 rounds, the app's limit). `staggered` writes each call's
chunk on its own, spread over the tick; `burst` writes every call's chunk of a tick in
one write. The page's MutationObserver times what a person sees: the label's text
(`tool-call-label` textContent). Latency = time shown - time written, per chunk (a chunk
ending in a space shows nothing new and is no sample); end lag = per round, the last
label to show its whole intent minus the round's last write (the worst round); tab busy =
the page's main-thread task time (CDP) over the turn.

The `long` row keeps the earlier shape: intents growing three characters per tick to
1,800 characters in 12 s. Past the label's visible cap only its `title` changes, so its
visible columns cover the first 120 characters, and the `title` column (printed for
every row) all of them; its end lag is the title's.

Reload: a stored turn of `--reload-calls` settled calls (streamed through the app first),
reloaded five times; from navigation to the frame showing the first label, and all
labels, timed in the page (median), beside their targets; and when the page asked for
the stored turns' snapshots (`/_iu/turns?ids=...`) and had them, where the page has
such a request.

`--before REV` measures the same rows on revision REV in the same run: a `git worktree`
of it in a temporary folder (sharing this checkout's `.venv` and `tools/`), its own app
process and database, the same provider, browser and benchmark code; the rows alternate
between the two apps, and the columns are printed side by side. Everything shares this
machine's cores: compare columns of one run, not absolute numbers. `BENCH_MOTION=reduce`
measures with `prefers-reduced-motion` (no shimmer).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable  # noqa: E402
from tests.support.bench_app import AppProcess, resolve, worktree  # noqa: E402
from tests.support.bench_labels import LabelWatch, Latencies, label_latencies  # noqa: E402
from tests.support.bench_provider import Kind, Provider, Spec  # noqa: E402

VISIBLE_CAP = 120
"""Characters a card label shows before it is cut with an ellipsis."""

TARGETS = (
    "label p95 <= 16.7 ms (one frame) at 1 call, <= 20 ms at 8 and 32, <= 33 ms at 128, "
    "staggered and burst; reload of a 500-call turn: first label <= 200 ms, all <= 400 ms"
)
RELOAD_TARGETS = {"first": 200.0, "all": 400.0}
"""Milliseconds from navigation to the frame showing the first label, and every label."""


def target_p95(calls: int) -> float | None:
    """The label p95 a row of `calls` parallel calls should keep (None: no target)."""
    if calls <= 1:
        return 16.7
    if calls <= 32:
        return 20.0
    if calls <= 128:
        return 33.0
    return None


RELOAD_OBSERVER = """
window.__labels = {first: null, all: null};
new MutationObserver(() => {
  const seen = window.__labels;
  if (seen.all !== null) return;
  const n = document.querySelectorAll('[data-testid=tool-call-label]').length;
  // The time of the frame that shows them: the next animation frame after the change.
  const stamp = (key) => requestAnimationFrame(() => { seen[key] = performance.now(); });
  if (n > 0 && seen.first === null) { seen.first = 0; stamp('first'); }
  if (n >= %d) { seen.all = 0; stamp('all'); }
}).observe(document, {subtree: true, childList: true});
"""

SNAPSHOT_REQUEST = """
(() => {
  const found = performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/_iu/turns?'));
  return found.length ? [found[0].startTime, found[0].responseEnd] : null;
})()
"""
"""When the page asked for its stored turns' snapshots and had the answer (ms from
navigation; null for a page that gets its turns another way)."""


@dataclass(frozen=True)
class Row:
    pattern: str  # staggered | burst | long
    calls: int

    @property
    def name(self) -> str:
        return f"{self.pattern}{self.calls}"

    def spec(self, seconds: float) -> Spec:
        kind: Kind = "long" if self.pattern == "long" else "sentences"
        return Spec(kind, self.calls, self.pattern == "burst", seconds, record=True)


@dataclass(frozen=True)
class Result:
    visible: Latencies
    title: Latencies
    rounds: int
    chars: str
    busy: float


class Target:
    """One app being measured (this checkout, or the --before revision) and its tab."""

    def __init__(
        self, label: str, root: Path, workdir: Path, provider: Provider, browser: Browser
    ) -> None:
        self.label = label
        self.app = AppProcess(root, workdir, provider.app_config(workdir))
        self.url = self.app.addresses.frontend_url
        motion = os.environ.get("BENCH_MOTION", "no-preference")
        self.context = browser.new_context(reduced_motion=motion)  # type: ignore[arg-type]
        self._provider = provider

    def close(self) -> None:
        self.context.close()
        self.app.close()

    def _new_chat(self) -> Page:
        """A tab on a new, empty chat. Loaded again after New chat: the tab's own
        follow-up of New chat (it stops waiting for a turn) waits in the tab's queue, and
        a message sent before it ran would lose its turn's end on the page (Stop stays)."""
        page = self.context.new_page()
        page.goto(self.url)
        page.get_by_test_id("new-chat").click()
        page.reload()
        return page

    def _send(self, page: Page, message: str) -> None:
        page.get_by_test_id("chat-input").fill(message)
        page.get_by_test_id("send-button").click()
        expect(page.get_by_test_id("stop-button")).to_be_visible()

    @contextlib.contextmanager
    def _app_checked(self) -> Iterator[None]:
        """On a failure in the page, say first whether the app itself stopped."""
        try:
            yield
        except Exception as exc:
            self.app.check()
            raise RuntimeError(
                f"measuring {self.label} failed: {exc}\nthe end of its app's log:\n"
                f"{self.app.log_tail()}"
            ) from exc

    def stream(self, row: Row, seconds: float) -> Result:
        with self._app_checked():
            return self._stream(row, seconds)

    def _stream(self, row: Row, seconds: float) -> Result:
        provider = self._provider
        provider.reset()
        page = self._new_chat()
        watch = LabelWatch(page)
        watch.start()
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        self._send(page, f"{row.name} {self.label}")
        # Sleep through the stream rather than poll the page: polling runs in the tab being
        # measured, and at 128 calls its visibility checks cost as much as a card update.
        time.sleep(seconds)
        expect(page.get_by_test_id("send-button")).to_be_visible(timeout=120_000 + seconds * 5000)
        after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        observations = watch.observations()
        page.close()
        sent, intents = provider.sent()
        cap = VISIBLE_CAP if row.pattern == "long" else None
        lengths = sorted(len(text) for text in intents.values()) or [0]
        return Result(
            visible=label_latencies(sent, intents, observations, visible_cap=cap),
            title=label_latencies(sent, intents, observations, title=True),
            rounds=len({call_id.split("c", 1)[0] for call_id in intents}),
            chars=f"{lengths[0]}" if lengths[0] == lengths[-1] else f"{lengths[0]}-{lengths[-1]}",
            busy=after["TaskDuration"] - before.get("TaskDuration", 0.0),
        )

    def reload(self, calls: int) -> dict[str, float]:
        """Store a turn of `calls` settled calls by streaming it, then time five reloads:
        from navigation start to the frame that shows the first label, and all labels."""
        with self._app_checked():
            return self._reload(calls)

    def _reload(self, calls: int) -> dict[str, float]:
        page = self._new_chat()
        self._send(page, f"seed {self.label}")
        expect(page.get_by_test_id("send-button")).to_be_visible(timeout=300_000)
        page.close()
        page = self.context.new_page()
        page.add_init_script(RELOAD_OBSERVER % calls)
        firsts, alls, asked, answered = [], [], [], []
        for _ in range(5):
            page.goto(self.url)
            page.wait_for_function("window.__labels.all > 0", timeout=60_000)
            seen = page.evaluate("window.__labels")
            firsts.append(seen["first"])
            alls.append(seen["all"])
            request = page.evaluate(SNAPSHOT_REQUEST)
            if request is not None:
                asked.append(request[0])
                answered.append(request[1])
        page.close()
        times = {"first": statistics.median(firsts), "all": statistics.median(alls)}
        if asked:
            times["asked"] = statistics.median(asked)
            times["answered"] = statistics.median(answered)
        return times


def rows_of(args: argparse.Namespace) -> list[Row]:
    rows = []
    for pattern in (p for p in args.patterns.split(",") if p):
        if pattern not in ("staggered", "burst"):
            raise SystemExit(f"--patterns: {pattern!r} is not staggered or burst")
        for calls in (int(n) for n in args.calls.split(",") if n):
            if pattern == "burst" and calls == 1:
                continue  # one call has nothing to burst with
            rows.append(Row(pattern, calls))
    if args.long_calls > 0:
        rows.append(Row("long", args.long_calls))
    return rows


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:.1f}"


def print_table(headers: list[str], lines: list[list[str]]) -> None:
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for line in lines:
        print("  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)))


def report(
    args: argparse.Namespace,
    labels: list[str],
    results: dict[tuple[str, str], Result],
    reloads: dict[str, dict[str, float]],
    rows: list[Row],
) -> None:
    def metric(name: str) -> list[str]:
        return [name] + [f"{name} {label}" for label in labels[1:]]

    headers = ["pattern", "calls", "chars", "rounds", "samples"]
    for name in ("p50 ms", "p95 ms"):
        headers += metric(name)
    headers.append("target p95")
    for name in ("p95 title", "end lag ms", "tab busy s"):
        headers += metric(name)
    lines = []
    for row in rows:
        per = [results[(row.name, label)] for label in labels]
        now = per[0]
        samples = " ".join(f"{len(r.visible.values)}/{r.visible.expected}" for r in per)
        line = [row.pattern, str(row.calls), now.chars, str(now.rounds), samples]
        line += [_ms(r.visible.p50) for r in per]
        line += [_ms(r.visible.p95) for r in per]
        # The long row measures the earlier shape, past what people read: no target.
        target = None if row.pattern == "long" else target_p95(row.calls)
        line.append("-" if target is None else f"<= {target:g}")
        line += [_ms(r.title.p95) for r in per]
        # A long row's visible text stops at the cap: its end is the title's.
        line += [_ms((r.title if row.pattern == "long" else r.visible).end_lag) for r in per]
        line += [f"{r.busy:.2f}" for r in per]
        lines.append(line)
    print(
        f"\nchunk -> visible label latency (textContent), 50 chunks/s per call, ~{args.seconds:g} s"
    )
    if len(labels) > 1:
        print(f"columns without a revision: this checkout; '{labels[1]}': --before {args.before}")
    if lines:
        print_table(headers, lines)
    print(f"targets: {TARGETS}")
    if reloads:
        print(f"\nreload of a stored {args.reload_calls}-call turn (median of 5), from navigation")
        reload_lines = [
            [
                label,
                f"{r['first']:.0f}",
                f"<= {RELOAD_TARGETS['first']:g}",
                f"{r['all']:.0f}",
                f"<= {RELOAD_TARGETS['all']:g}",
                f"{r['asked']:.0f}-{r['answered']:.0f}" if "asked" in r else "-",
            ]
            for label, r in reloads.items()
        ]
        print_table(
            ["app", "first label ms", "target", "all labels ms", "target", "snapshot request"],
            reload_lines,
        )
        print("snapshot request: from when the page asked for the stored turns to their answer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=12.0, help="stream length per row")
    parser.add_argument("--calls", default="1,8,32,128", help="parallel calls per row")
    parser.add_argument("--patterns", default="staggered,burst")
    parser.add_argument("--long-calls", type=int, default=32, help="calls of the long row; 0: none")
    parser.add_argument("--reload-calls", type=int, default=500, help="0: no reload row")
    parser.add_argument("--before", metavar="REV", help="measure this revision beside it")
    args = parser.parse_args()
    if args.seconds <= 0:
        raise SystemExit(f"--seconds {args.seconds}: give a positive stream length")
    rows = rows_of(args)
    labels = ["now"]
    if args.before:
        labels.append(resolve(args.before)[:7])
    provider = Provider()
    for row in rows:
        provider.spec(row.name, row.spec(args.seconds))
    provider.spec("seed", Spec("whole", max(1, args.reload_calls)))
    results: dict[tuple[str, str], Result] = {}
    reloads: dict[str, dict[str, float]] = {}
    try:
        with contextlib.ExitStack() as stack:
            roots = [ROOT]
            if args.before:
                roots.append(stack.enter_context(worktree(args.before)))
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(
                executable_path=chromium_executable(), args=CHROMIUM_ARGS
            )
            stack.callback(browser.close)
            targets = []
            for label, root in zip(labels, roots, strict=True):
                target = Target(label, root, folder / label, provider, browser)
                stack.callback(target.close)
                targets.append(target)
            if args.reload_calls > 0:
                for target in targets:
                    reloads[target.label] = target.reload(args.reload_calls)
            for index, row in enumerate(rows):
                # Alternate which app goes first, so drift in the machine's load (it is
                # shared) falls on both columns alike.
                order = targets if index % 2 == 0 else targets[::-1]
                for target in order:
                    results[(row.name, target.label)] = target.stream(row, args.seconds)
                    print(f"measured {row.name} on {target.label}", file=sys.stderr)
    finally:
        provider.close()
    report(args, labels, results, reloads, rows)


if __name__ == "__main__":
    main()
