"""Display records: what the page is sent for a turn, built from a `TurnView`.

The one place a label becomes something shown. Every record is a plain JSON-ready dict
(the page's store holds them under keys, `core/patches.py`):

- `turn_entry`: the turn as a whole (status, goal line, failure, its parts in order);
- `group_entry`: one group's header line, open state, timing (its cards travel apart);
- `card_entry`: one call's card, collapsed; `call_detail` is what an expanded card adds
  (argument preview and result, fetched on demand, so a growing argument text never
  travels with every fragment);
- `card_title` / `group_title`: the full text behind a label the page shows truncated;
- a call that waits for a person has its approval or question record too
  (`core/pause_cards.py`).

A record depends only on the view, the language and, for a live header, the minimum
display time (`HeaderHold`): a stored turn replayed gives the records the live turn ended
with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, MutableMapping
from typing import NotRequired, TypedDict

from partial_json_parser import loads as partial_loads

from intent_ui.core.display import Span, format_elapsed, wall_time
from intent_ui.core.failures import describe_failure
from intent_ui.core.header import GROUP_HEADER_MIN_CALLS, HeaderView
from intent_ui.core.labels import card_is_in_flight, card_label
from intent_ui.core.minimum_display import MinimumDisplay
from intent_ui.core.pause_cards import approval_detail, waiting_note
from intent_ui.core.sanitize import TITLE_WINDOW, DisplayText, has_label_text, sanitize_label
from intent_ui.core.siblings import Sibling, sibling_suffixes
from intent_ui.core.states import FINAL_STATES, turn_status
from intent_ui.core.turn import CallRecord, TextPart, ToolGroup, TurnView

__all__ = [
    "CALM_AFTER",
    "LAZY_AFTER",
    "PREVIEW_LIMIT",
    "TIMELINE_AFTER",
    "CallDetail",
    "CardEntry",
    "GroupEntry",
    "GroupHead",
    "GroupStats",
    "HeaderHold",
    "ParsedArguments",
    "PartRef",
    "Timing",
    "TurnEntry",
    "assemble_group",
    "call_detail",
    "card_display",
    "card_entry",
    "card_title",
    "compact_key",
    "goal_line",
    "group_entry",
    "group_head",
    "group_key",
    "group_stats",
    "group_suffixes",
    "group_title",
    "has_timeline",
    "part_refs",
    "pretty_arguments",
    "timing",
    "turn_entry",
]

PREVIEW_LIMIT = 6000
"""The most characters an expanded card's argument preview or result shows."""

CALM_AFTER = 8
"""With more live cards than this in one group, the cards stop animating and only the
header shimmers: dozens of sweeping highlights are noise to a reader, and in a browser
without GPU compositing they cost more than the label updates themselves (measured:
tab busy 10.6 s of a 12 s stream at 32 calls with every card animated, 5.2 s without)."""

LAZY_AFTER = 40
"""A group with more cards than this renders only those near the screen (the stylesheet's
`data-lazy` rule): a long turn costs the browser what is visible, not what is stored."""

TIMELINE_AFTER = 3
"""A turn with more calls than this gets a compact timeline of marks, one per call."""


class Timing(TypedDict):
    """Elapsed time of a card or group: the page counts up from `started_at` (ms epoch,
    "" when unknown) while `ticking`; a settled one shows `elapsed`, fixed here."""

    started_at: str
    settled_at: str
    elapsed: str
    ticking: bool


class CardEntry(Timing):
    """A collapsed card (`card:{call_id}`)."""

    call_id: str
    state: str
    label: str
    live: bool
    label_key: str


class GroupHead(TypedDict):
    """The fields of a group's record that come from its header."""

    header: str
    header_key: str
    suffix: str
    aria_label: str
    glyph: str
    live: bool
    phase: str
    open: bool


class GroupStats(Timing):
    """The fields of a group's record that come from its calls' states and times."""

    single: bool
    calm: bool
    lazy: bool
    waiting: bool


class GroupEntry(GroupHead, GroupStats):
    """A group (`group:{g}`); its cards are `cards:{g}` and `card:{call_id}`."""

    key: str
    compact_key: str


class PartRef(TypedDict):
    """One part of the turn, by the key its value is held under."""

    kind: str  # "text" or "group"
    key: str  # "text:{index in the turn's parts}" or "group:{group number}"


class TurnEntry(TypedDict):
    """The turn (`turn`)."""

    status: str
    goal: str
    timeline: bool
    failure: str
    failure_hint: str
    error: str
    waiting: str
    parts: list[PartRef]


class CallDetail(TypedDict):
    """What an expanded card shows besides its collapsed record; a call with an approval
    also the arguments its tool receives and the text to edit (`approval_detail`)."""

    label: str
    arguments: str
    result: str
    tool_arguments: NotRequired[str]
    editable: NotRequired[str]
    trace_id: NotRequired[str]
    """The turn's trace id, when traces are on (added by the route: agent/tracing.py)."""


ParsedArguments = MutableMapping[str, tuple[int, dict[str, object] | None]]
"""Final arguments parsed for sibling checks, by call id, with the argument length they
were parsed at: a group's suffixes are recomputed often, its arguments rarely change."""


def group_key(message_id: str, group: int) -> str:
    """The page-wide key of a group (its open state is kept under it)."""
    return f"{message_id}:{group}"


def compact_key(group_key: str) -> str:
    """The key of a group's open state in the header-only density: a group there stays
    its header line until opened there, whatever it was in the full view."""
    return f"{group_key}:compact"


def goal_line(turn: TurnView) -> str:
    """The turn's goal line, "" when no goal was chosen."""
    return turn.goal.line if turn.goal is not None else ""


def has_timeline(turn: TurnView) -> bool:
    """Whether the turn shows its call timeline (more than TIMELINE_AFTER calls of its
    own: a subagent's calls are marked by their parent's card, not on the timeline)."""
    return sum(1 for record in turn.calls() if record.parent is None) > TIMELINE_AFTER


def pretty_arguments(raw: str) -> str:
    """Pretty-print possibly partial JSON; garbage or an empty buffer shows as written.

    partial-json-parser raises assorted exceptions on garbage and can return lone
    surrogates for a split escape, hence the broad guard and the encode check.
    """
    text = raw.strip()
    if not text:
        return ""
    try:
        value = partial_loads(text)
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
        pretty.encode("utf-8")
    except Exception:
        pretty = raw
    if len(pretty) > PREVIEW_LIMIT:
        return "…" + pretty[-PREVIEW_LIMIT:]
    return pretty


def _bounded(text: str) -> str:
    return text if len(text) <= PREVIEW_LIMIT else text[:PREVIEW_LIMIT] + "…"


def timing(span: Span, running: bool) -> Timing:
    """The elapsed-time fields of a card or group (all empty without timestamps)."""
    if span.start <= 0 or (not running and span.end <= 0):
        return {"started_at": "", "settled_at": "", "elapsed": "", "ticking": False}
    started = round(span.start * 1000)
    if running:
        return {"started_at": str(started), "settled_at": "", "elapsed": "", "ticking": True}
    # The duration is read from the stamps the page gets, so both always agree.
    settled = round(span.end * 1000)
    return {
        "started_at": str(started),
        "settled_at": str(settled),
        "elapsed": format_elapsed(settled - started),
        "ticking": False,
    }


# --- cards -----------------------------------------------------------------------------


def card_display(
    turn: TurnView, call_id: str, lang: str, suffix: str = ""
) -> tuple[CardEntry, str]:
    """The card's record and its title (`card_entry`, `card_title`), sanitised once."""
    record = turn.call(call_id)
    view = turn.call_view(call_id)
    if record is None or view is None:
        return _unknown_card(call_id), ""
    settled = record.state in FINAL_STATES
    label = card_label(view, lang)
    if not (settled or record.intent_complete):
        # A label still streaming changes per fragment: its title follows only the first
        # TITLE_WINDOW characters until the intent is complete, so one update never costs
        # more than that however long the intent grows.
        label = label[:TITLE_WINDOW]
    shown = sanitize_label(label)
    entry: CardEntry = {
        "call_id": call_id,
        "state": record.state,
        "label": shown.text + suffix,
        "live": card_is_in_flight(view),
        # A new key when the call settles remounts the label, so the crossfade plays once.
        "label_key": f"{call_id}:{'settled' if settled else 'live'}",
        **timing(Span(record.started_at, record.settled_at), not settled),
    }
    # A disambiguated card keeps its suffix visible: it is added after the cap.
    title = shown.title + suffix if shown.truncated and shown.title else ""
    return entry, title


def card_entry(turn: TurnView, call_id: str, lang: str, suffix: str = "") -> CardEntry:
    """A collapsed card; `suffix` is its sibling suffix (`group_suffixes`)."""
    return card_display(turn, call_id, lang, suffix)[0]


def card_title(turn: TurnView, call_id: str, lang: str, suffix: str = "") -> str:
    """The card's whole label when the card shows it truncated, else ""."""
    return card_display(turn, call_id, lang, suffix)[1]


def _unknown_card(call_id: str) -> CardEntry:
    return {
        "call_id": call_id,
        "state": "streaming",
        "label": "",
        "live": False,
        "label_key": "",
        "started_at": "",
        "settled_at": "",
        "elapsed": "",
        "ticking": False,
    }


def call_detail(turn: TurnView, call_id: str, lang: str) -> CallDetail:
    """What an expanded card shows: its whole label (sanitised, with its sibling suffix),
    its arguments pretty-printed (a tail, while long) and, once settled, its result
    (error or output, a head)."""
    record = turn.call(call_id)
    if record is None:
        return {"label": "", "arguments": "", "result": ""}
    suffix = ""
    call_ids = tuple(view.call_id for view in turn.group_calls(record.group))
    if call_id in call_ids:
        suffix = group_suffixes(turn, call_ids, lang)[call_ids.index(call_id)]
    settled = record.state in FINAL_STATES
    detail: CallDetail = {
        "label": sanitize_label(turn.card_label(call_id, lang)).title + suffix,
        "arguments": pretty_arguments(turn.arguments(call_id)),
        "result": _bounded(record.error or record.output) if settled else "",
    }
    approval = approval_detail(turn, call_id)
    if approval is not None:
        detail["tool_arguments"] = approval["tool_arguments"]
        detail["editable"] = approval["editable"]
    return detail


# --- sibling suffixes ------------------------------------------------------------------


def group_suffixes(
    turn: TurnView,
    call_ids: tuple[str, ...],
    lang: str,
    parsed: ParsedArguments | None = None,
) -> list[str]:
    """Disambiguating suffixes for sibling cards with identical intents, one per call.
    Labels are resolved and arguments parsed only for calls whose arguments are final
    and whose intents are the same text, so a call while intents stream costs one pass
    over the group's records. `parsed` remembers parsed arguments across calls."""
    records = [turn.call(call_id) for call_id in call_ids]
    by_intent: dict[str, int] = {}
    for record in records:
        if record is not None and _may_collide(record):
            by_intent[record.intent or ""] = by_intent.get(record.intent or "", 0) + 1
    if not any(n > 1 for n in by_intent.values()):
        return [""] * len(call_ids)
    siblings = []
    for record in records:
        shared = (
            record is not None
            and _may_collide(record)
            and by_intent.get(record.intent or "", 0) > 1
            and has_label_text(record.intent)
        )
        siblings.append(
            Sibling(
                label=turn.card_label(record.call_id, lang) if shared and record else "",
                from_intent=shared,
                arguments=_parsed(turn, record, parsed) if shared and record else None,
            )
        )
    return sibling_suffixes(siblings, lang)


def _may_collide(record: CallRecord) -> bool:
    """Only a call with an intent and final arguments can be told apart by them."""
    return record.carries_intent and record.args_complete and bool(record.intent)


def _parsed(
    turn: TurnView, record: CallRecord, cache: ParsedArguments | None
) -> dict[str, object] | None:
    if cache is not None:
        known = cache.get(record.call_id)
        if known is not None and known[0] == record.args_len:
            return known[1]
    try:
        value = json.loads(turn.arguments(record.call_id))
    except ValueError:
        value = None
    parsed = value if isinstance(value, dict) else None
    if cache is not None:
        cache[record.call_id] = (record.args_len, parsed)
    return parsed


# --- groups ----------------------------------------------------------------------------


class HeaderHold:
    """Applies `MinimumDisplay` per group header during a live turn (clock passed in, in
    ms, as `now_ms`): `hold(key, text)` is the text to show now."""

    def __init__(self, min_ms: float = 200) -> None:
        self._min_ms = min_ms
        self._groups: dict[str, MinimumDisplay] = {}
        self._held: set[str] = set()  # keys holding a label back: what `due_ms` reads
        self.now_ms = 0.0

    def __call__(self, key: str, text: str) -> str:
        display = self._groups.get(key)
        if display is None:
            display = self._groups[key] = MinimumDisplay(self._min_ms)
        shown = display.offer(text, self.now_ms)
        if display.held is None:
            self._held.discard(key)
        else:
            self._held.add(key)
        return shown

    def due_ms(self) -> float | None:
        """Milliseconds until a held label may show; None when none is held."""
        if not self._held:  # asked after every frame; mostly nothing is held
            return None
        dues = [
            due for key in self._held if (due := self._groups[key].due_ms(self.now_ms)) is not None
        ]
        return min(dues) if dues else None

    def held(self) -> list[str]:
        """The keys holding a label back."""
        return list(self._held)

    def ready(self) -> list[str]:
        """The keys whose held label may show now (offer their text again)."""
        if not self._held:
            return []
        return [key for key in self._held if self._groups[key].due_ms(self.now_ms) == 0]


def group_head(
    turn: TurnView,
    group: int,
    message_id: str,
    lang: str,
    hold: Callable[[str, str], str] | None = None,
) -> tuple[GroupHead, str]:
    """The header fields of a group's record, and its title (`group_title`)."""
    header = turn.group_header(group, lang)
    shown = _header_text(header)
    key = group_key(message_id, group)
    head: GroupHead = {
        "header": hold(key, shown.text) if hold is not None else shown.text,
        "header_key": f"{key}:{header.phase}:{header.source}",
        "suffix": header.server_suffix,
        "aria_label": header.aria_label,
        "glyph": header.glyph,
        "live": header.live,
        "phase": header.phase,
        "open": not header.collapse,
    }
    return head, shown.title if shown.truncated else ""


def _header_text(header: HeaderView) -> DisplayText:
    # A live header changes per fragment: like a streaming card's, its title follows
    # only the first TITLE_WINDOW characters.
    return sanitize_label(header.text[:TITLE_WINDOW] if header.live else header.text)


def group_title(turn: TurnView, group: int, lang: str) -> str:
    """The group's whole header when the page shows it truncated, else ""."""
    shown = _header_text(turn.group_header(group, lang))
    return shown.title if shown.truncated else ""


def group_stats(turn: TurnView, call_ids: Iterable[str]) -> GroupStats:
    """The fields of a group's record that its calls' states and times give."""
    records = [record for call_id in call_ids if (record := turn.call(call_id)) is not None]
    running = [record.state not in FINAL_STATES for record in records]
    wall = wall_time(
        Span(r.started_at, r.settled_at if r.state in FINAL_STATES else 0.0) for r in records
    )
    # A child call waiting (a subagent's approval) keeps its parent's group open too.
    waiting = {turn.top(pause.call_id) for pause in turn.waiting()}
    return {
        "single": len(records) < GROUP_HEADER_MIN_CALLS,
        "calm": sum(running) > CALM_AFTER,
        "lazy": len(records) > LAZY_AFTER,
        # A group stays open while one of its calls waits for the user.
        "waiting": any(record.call_id in waiting for record in records),
        **timing(wall, any(running)),
    }


def assemble_group(key: str, head: GroupHead, stats: GroupStats) -> GroupEntry:
    """A group's record from its parts (`group_head`, `group_stats`)."""
    return {
        "key": key,
        "single": stats["single"],
        "header": head["header"],
        "header_key": head["header_key"],
        "suffix": head["suffix"],
        "aria_label": head["aria_label"],
        "glyph": head["glyph"],
        "live": head["live"],
        "phase": head["phase"],
        "open": head["open"],
        "calm": stats["calm"],
        "lazy": stats["lazy"],
        "waiting": stats["waiting"],
        "compact_key": compact_key(key),
        "started_at": stats["started_at"],
        "settled_at": stats["settled_at"],
        "elapsed": stats["elapsed"],
        "ticking": stats["ticking"],
    }


def group_entry(
    turn: TurnView,
    group: int,
    message_id: str,
    lang: str,
    hold: Callable[[str, str], str] | None = None,
) -> GroupEntry:
    """A group's record. `hold(key, text)` lets a live view apply a minimum display time
    to the header (`HeaderHold`); a stored turn passes none and shows the true header.
    `open` is the default open state: the page keeps what the reader toggled."""
    head, _title = group_head(turn, group, message_id, lang, hold)
    call_ids = [view.call_id for view in turn.group_calls(group)]
    return assemble_group(group_key(message_id, group), head, group_stats(turn, call_ids))


# --- the turn --------------------------------------------------------------------------


def part_refs(turn: TurnView) -> list[PartRef]:
    """The turn's parts, in order, by their keys."""
    refs: list[PartRef] = []
    for index, part in enumerate(turn.parts):
        if isinstance(part, TextPart):
            refs.append({"kind": "text", "key": f"text:{index}"})
        else:
            assert isinstance(part, ToolGroup)
            refs.append({"kind": "group", "key": f"group:{part.group}"})
    return refs


def turn_entry(turn: TurnView, lang: str) -> TurnEntry:
    """The turn's record: `streaming` until it ended, then its message status, what
    went wrong when something did (`core/failures.py`), and what it waits for the user
    for (`waiting`, what the browser tab's title says; "" when nothing)."""
    failure = describe_failure(turn, lang, error=turn.error)
    return {
        "status": turn_status(turn.stop_reason if turn.done else None, turn.error),
        "goal": goal_line(turn),
        "timeline": has_timeline(turn),
        "failure": failure.message if failure is not None else "",
        "failure_hint": failure.hint if failure is not None else "",
        "error": failure.detail if failure is not None else "",
        "waiting": waiting_note(turn, lang),
        "parts": part_refs(turn),
    }
