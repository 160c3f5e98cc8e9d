"""Streaming titles as appends: what a push sends for the full labels of streaming cards.

A streaming card's `title` (its full label, up to `TITLE_WINDOW` characters) grows by a
few characters per fragment, and so does a live group header's. Sent inside the view
models, every push would carry every streaming title whole again: at 128 parallel calls
with long intents, about 100 KB per push for a few hundred new characters. Instead, a
tab's `TitleFeed` strips these titles out of the view models (which name them by
`title_key`) and sends them as operations `(key, start, text)`:

- `start == 0`: the title is `text` (a card's first title, one that changed other than by
  growing, or a refresh);
- otherwise `text` continues the title the tab holds, whose length must be `start`.

The page (`assets/live_titles.js`) applies every operation of every push in order, so a
push it never received leaves a gap it cannot fill: it then keeps the title it has and
skips appends until the next full one. Each title is therefore sent in full again at
least every `REFRESH_S` seconds (a few per push, the stalest first), and in full on
demand (`resync`, when a reloaded tab rejoins the turn).

Lengths and offsets count UTF-16 code units, as the page's strings do: an emoji is one
Python character and two JavaScript ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from intent_ui.ui.viewmodels import CardVM, PartVM

REFRESH_S = 1.0
"""A streaming title is sent in full at least this often, so a push the page missed
(a dropped connection) leaves a stale title for at most about this long."""

REFRESH_PER_PUSH = 4
"""Full refreshes due at once are spread over pushes, this many per push, so a wide
round's refreshes do not all land in one push."""

TitleOp = tuple[str, int, str]
"""`(title key, start in UTF-16 code units, text)`; see the module's docstring."""


def card_title_key(call_id: str) -> str:
    return f"card:{call_id}"


def group_title_key(group_key: str) -> str:
    return f"group:{group_key}"


def utf16_len(text: str) -> int:
    """The length of `text` as a JavaScript string."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class _Sent:
    title: str  # the title as the tab holds it
    length: int  # its utf16_len
    refreshed: float  # when it was last sent in full


class TitleFeed:
    """One tab's streaming titles: the text it holds under each key, and what to send
    next."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sent: dict[str, _Sent] = {}
        # The stripped view model handed out for a card object, so an unchanged card
        # stays the same object from push to push (cheap to compare).
        self._stripped: dict[str, tuple[CardVM, CardVM]] = {}

    def resync(self) -> None:
        """The tab lost what it held (it was reloaded): send every title in full again."""
        self._sent.clear()

    def split(self, parts: list[PartVM]) -> tuple[list[PartVM], list[TitleOp]]:
        """`parts` with the streaming titles taken out, and the operations that bring
        the tab's titles up to date. Streaming titles are those of streaming, collapsed
        cards (an expanded card shows its title in its body; past streaming, a title no
        longer changes) and of live group headers (keyed by the group's key)."""
        now = self._clock()
        ops: dict[str, TitleOp] = {}  # at most one per key: a refresh replaces an append
        out: list[PartVM] = []
        streaming: set[str] = set()
        for part in parts:
            if part.kind != "group":
                out.append(part)
                continue
            group = part.group
            cards = []
            for card in group.cards:
                if card.state == "streaming" and not card.expanded:
                    key = card_title_key(card.call_id)
                    streaming.add(key)
                    cards.append(self._strip(card, key))
                    self._update(key, card.title, now, ops)
                else:
                    cards.append(card)
            if group.live:
                key = group_title_key(group.key)
                streaming.add(key)
                self._update(key, group.header_title, now, ops)
                group = replace(group, header_title="", title_key=key, cards=cards)
            else:
                group = replace(group, cards=cards)
            out.append(replace(part, group=group))
        for held in (self._sent, self._stripped):
            for key in [key for key in held if key not in streaming]:
                del held[key]
        self._refresh(now, ops)
        return out, list(ops.values())

    def _strip(self, card: CardVM, key: str) -> CardVM:
        cached = self._stripped.get(key)
        if cached is not None and cached[0] is card:
            return cached[1]
        stripped = replace(card, title="", title_key=key)
        if cached is not None and cached[1] == stripped:
            stripped = cached[1]  # what the page shows did not change: keep the object
        self._stripped[key] = (card, stripped)
        return stripped

    def _update(self, key: str, title: str, now: float, ops: dict[str, TitleOp]) -> None:
        sent = self._sent.get(key)
        if sent is None or not title.startswith(sent.title):
            self._sent[key] = _Sent(title, utf16_len(title), now)
            ops[key] = (key, 0, title)
        elif len(title) > len(sent.title):
            added = title[len(sent.title) :]
            ops[key] = (key, sent.length, added)
            sent.title = title
            sent.length += utf16_len(added)

    def _refresh(self, now: float, ops: dict[str, TitleOp]) -> None:
        due = sorted(
            (sent.refreshed, key)
            for key, sent in self._sent.items()
            if now - sent.refreshed >= REFRESH_S
        )
        for _at, key in due[:REFRESH_PER_PUSH]:
            sent = self._sent[key]
            sent.refreshed = now
            ops[key] = (key, 0, sent.title)
