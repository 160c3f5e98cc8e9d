"""What the page shows of a `subagent` call's child turn, beside the call's own card.

Display records like `core/cards.py`'s, held under their own keys (`core/patches.py`):

- `ticker:{call_id}` (`ticker_entry`): the line under the parent card while the child
  runs, and once it ended: the child's latest label, its running time, how many calls
  it made and its model ("Reading the callback router · 12s · 4 calls · demo"). Before
  the child's first call the line says that it started (`Subagent "Auditor" started`).
  The parent card's own label stays the `subagent` call's intent: the two never merge.
  It also lists the child's calls that wait for the reader (`waiting`): their approval
  or question shows under the parent card, collapsed or not.
- `children:{call_id}` (`child_ids`): the child's calls in start order; each is a card
  like any other (`card:{id}`, `title:{id}`), shown when the parent card is opened.

The latest label is the child call whose label changed last (an intent that appeared, a
call that settled), so a reader of a collapsed card sees what the child does now.
"""

from __future__ import annotations

from intent_ui.core.cards import Timing, timing
from intent_ui.core.display import Span
from intent_ui.core.locale import translate
from intent_ui.core.pause_cards import child_name
from intent_ui.core.sanitize import sanitize_label
from intent_ui.core.states import FINAL_STATES
from intent_ui.core.turn import TurnView

__all__ = ["TickerEntry", "child_ids", "children_key", "ticker_entry", "ticker_key"]


class TickerEntry(Timing):
    """A subagent's ticker (`ticker:{call_id}`)."""

    name: str
    latest: str
    calls: str
    model: str
    live: bool
    waiting: list[str]


def ticker_key(call_id: str) -> str:
    return f"ticker:{call_id}"


def children_key(call_id: str) -> str:
    return f"children:{call_id}"


def child_ids(turn: TurnView, call_id: str) -> list[str]:
    """The child's calls, in start order (the value of `children:{call_id}`)."""
    return list(turn.children(call_id))


def ticker_entry(turn: TurnView, call_id: str, lang: str) -> TickerEntry | None:
    """The ticker of a `subagent` call whose child started; None for any other call."""
    found = turn.subagent(call_id)
    record = turn.call(call_id)
    if found is None or record is None:
        return None
    children = turn.children(call_id)
    name = child_name(turn, call_id, lang)
    latest = translate("subagent.started", lang, name=name)
    newest = None
    for child in children:
        child_record = turn.call(child)
        if child_record is not None and (
            newest is None or child_record.label_seq >= newest.label_seq
        ):
            newest = child_record
    if newest is not None:
        latest = turn.card_label(newest.call_id, lang)
    running = record.state not in FINAL_STATES
    started = found.started_at or record.started_at
    return {
        "name": name,
        "latest": sanitize_label(latest).text,
        "calls": translate("subagent.calls", lang, n=len(children)),
        "model": sanitize_label(found.model).text,
        "live": running,
        # The child's calls waiting for the reader: their approval or question shows
        # under the parent card, which is all a collapsed card shows of the child.
        "waiting": [pause.call_id for pause in turn.waiting() if pause.call_id in children],
        **timing(Span(started, record.settled_at), running),
    }
