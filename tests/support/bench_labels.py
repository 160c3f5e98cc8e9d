"""What a person sees of streaming intents, timed in the page, for the benchmarks.

`LabelWatch` installs a MutationObserver on the page (child lists, text and the `title`
attribute) and records, each time a card's `tool-call-label` changes, its visible text
(`textContent`) and its `title`, with the page's wall-clock time. `label_latencies` then
pairs every intent chunk the provider wrote with the first moment the label showed it:
latency = time shown - time written, per chunk.

The observer looks only at the labels the mutations touched, not at every card, so it
costs the page about the same at 1 and at 128 calls.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["LabelWatch", "Latencies", "label_latencies", "percentile"]

TAIL = 8
"""Characters of a title kept with its length, enough to tell the intent's prefix from an
outcome of the same length."""

OBSERVER = """
(() => {
  const obs = (window.__labelObs = []);
  const seen = new WeakMap();
  const look = (label, now) => {
    const card = label.closest('[data-testid=tool-call]');
    if (!card) return;
    const text = label.textContent || '';
    const title = label.getAttribute('title') || '';
    const last = seen.get(label);
    if (last && last[0] === text && last[1] === title.length) return;
    seen.set(label, [text, title.length]);
    obs.push([card.getAttribute('data-call-id'), text.length > 400 ? '' : text,
              title.length, title.slice(-TAIL), now]);
  };
  const LABEL = '[data-testid=tool-call-label]';
  new MutationObserver((records) => {
    const now = performance.timeOrigin + performance.now();
    const labels = new Set();
    for (const record of records) {
      const node = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      const label = node && node.closest(LABEL);
      if (label) labels.add(label);
      for (const added of record.addedNodes) {
        if (added.nodeType !== 1) continue;
        if (added.matches(LABEL)) labels.add(added);
        for (const inner of added.querySelectorAll(LABEL)) labels.add(inner);
      }
    }
    for (const label of labels) look(label, now);
  }).observe(document.body, {subtree: true, childList: true, characterData: true,
                             attributes: true, attributeFilter: ['title']});
})();
""".replace("TAIL", str(TAIL))


class LabelWatch:
    """The observer in one page: `start()` after the page loaded, `observations()` after
    the turn: (call id, text, title length, title tail, ms since the epoch) per change."""

    def __init__(self, page: Any) -> None:
        self._page = page

    def start(self) -> None:
        self._page.evaluate(OBSERVER)

    def observations(self) -> list[tuple[str, str, int, str, float]]:
        return [tuple(row) for row in self._page.evaluate("window.__labelObs")]


def visible_length(intent: str, text: str) -> int:
    """How many of the intent's characters `text` shows (0 when it is not the intent:
    the default label, an outcome). A capped label ends in an ellipsis."""
    if intent.startswith(text):
        return len(text)
    if text.endswith("…") and intent.startswith(text[:-1]):
        return len(text) - 1
    return 0


def title_length(intent: str, length: int, tail: str) -> int:
    if length <= len(intent) and intent[:length].endswith(tail):
        return length
    return 0


def _reached(shown: Iterable[tuple[str, int, float]]) -> Callable[[str, int], float | None]:
    """`reached(call_id, n)`: when the call's label first showed at least n characters.
    Per call, the observations sorted by length with the earliest time from each length
    up, so each lookup is a bisection (a scan per sample is quadratic: hours at 128
    calls)."""
    by_call: dict[str, list[tuple[int, float]]] = {}
    for call_id, length, at in shown:
        if length > 0:
            by_call.setdefault(call_id, []).append((length, at))
    tables: dict[str, tuple[list[int], list[float]]] = {}
    for call_id, seen in by_call.items():
        seen.sort()
        lengths = [length for length, _ in seen]
        earliest = [at for _, at in seen]
        for i in range(len(earliest) - 2, -1, -1):
            earliest[i] = min(earliest[i], earliest[i + 1])
        tables[call_id] = (lengths, earliest)

    def reached(call_id: str, length: int) -> float | None:
        table = tables.get(call_id)
        if table is None:
            return None
        i = bisect.bisect_left(table[0], length)
        return table[1][i] if i < len(table[0]) else None

    return reached


@dataclass(frozen=True)
class Latencies:
    """Per-chunk latencies (ms, sorted) and how many chunks could have been seen."""

    values: list[float]
    expected: int
    end_lag: float

    @property
    def p50(self) -> float:
        return statistics.median(self.values) if self.values else float("nan")

    @property
    def p95(self) -> float:
        return percentile(self.values, 0.95)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of sorted `values` (nan when empty)."""
    if not values:
        return float("nan")
    return values[int(q * (len(values) - 1))]


def label_latencies(
    sent: Mapping[tuple[str, int], float],
    intents: Mapping[str, str],
    observations: Iterable[tuple[str, str, int, str, float]],
    *,
    title: bool = False,
    visible_cap: int | None = None,
) -> Latencies:
    """Latency of every intent chunk in `sent` ((call id, characters sent) -> ms written),
    read from the label's visible text, or from its `title` with `title=True`.

    A chunk that ends in a space changes nothing a person sees (a label is trimmed), so it
    is not a sample; with `visible_cap`, neither is a chunk past the first `visible_cap`
    characters, which a capped label never shows. `end_lag`: per round of calls, the
    last label to show its whole intent minus the round's last write; the worst round."""
    rows = list(observations)
    if title:
        shown = [
            (cid, title_length(intents.get(cid, ""), n, tail), at) for cid, _, n, tail, at in rows
        ]
    else:
        shown = [
            (cid, visible_length(intents.get(cid, ""), text), at) for cid, text, _, _, at in rows
        ]
    reached = _reached(shown)
    values: list[float] = []
    expected = 0
    for (call_id, length), written in sent.items():
        intent = intents.get(call_id, "")
        if not intent or intent[length - 1] == " ":
            continue
        if visible_cap is not None and length > visible_cap:
            continue
        expected += 1
        seen = reached(call_id, length)
        if seen is not None:
            values.append(seen - written)
    values.sort()
    return Latencies(values, expected, _end_lag(sent, intents, reached, visible_cap))


def _end_lag(
    sent: Mapping[tuple[str, int], float],
    intents: Mapping[str, str],
    reached: Callable[[str, int], float | None],
    visible_cap: int | None,
) -> float:
    rounds: dict[str, list[tuple[str, int, float]]] = {}
    for (call_id, length), written in sent.items():
        rounds.setdefault(call_id.split("c", 1)[0], []).append((call_id, length, written))
    worst = float("nan")
    for chunks in rounds.values():
        last_write = max(written for _, _, written in chunks)
        shown_at = []
        for call_id in {cid for cid, _, _ in chunks}:
            whole = len(intents.get(call_id, "").rstrip())
            if visible_cap is not None:
                whole = min(whole, visible_cap)
            at = reached(call_id, whole)
            if at is None:
                return float("nan")  # a label never showed its whole intent
            shown_at.append(at)
        lag = max(shown_at) - last_write
        worst = lag if worst != worst or lag > worst else worst
    return worst
