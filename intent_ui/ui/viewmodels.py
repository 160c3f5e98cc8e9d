"""What the browser is sent: small display records built from a `TurnView`.

The full argument text stays server-side; a card carries its argument preview and result
only while it is expanded, bounded to a tail, so deltas stay small: Reflex sends each
changed var whole, so a growing argument text sent with every fragment would make the
traffic of a turn quadratic in its length (docs/turns.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import TypedDict

from partial_json_parser import loads as partial_loads

from intent_ui.core.display import Span, format_elapsed, wall_time
from intent_ui.core.header import GROUP_HEADER_MIN_CALLS
from intent_ui.core.labels import card_is_in_flight
from intent_ui.core.minimum_display import MinimumDisplay
from intent_ui.core.sanitize import TITLE_WINDOW, has_label_text, sanitize_label
from intent_ui.core.siblings import Sibling, sibling_suffixes
from intent_ui.core.states import FINAL_STATES
from intent_ui.core.turn import CallRecord, TextPart, ToolGroup, TurnView

PREVIEW_LIMIT = 6000


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


def compact_key(group_key: str) -> str:
    """The key of a group's open state in the header-only density."""
    return f"{group_key}:compact"


@dataclass
class CardVM:
    call_id: str = ""
    state: str = "streaming"
    label: str = ""
    title: str = ""  # the full label, only when `label` is truncated (saves bytes per delta)
    # A live streaming card's title travels apart, as appends (`ui.live_titles`): the page
    # reads it under this key, and `title` is empty. "" everywhere else.
    title_key: str = ""
    live: bool = False
    label_key: str = ""
    expanded: bool = False
    args_preview: str = ""
    result: str = ""
    # Elapsed time: the browser counts up from `started_at` (ms epoch, "" when unknown)
    # while `ticking`; a settled call shows `elapsed`, fixed here.
    started_at: str = ""
    settled_at: str = ""
    elapsed: str = ""
    ticking: bool = False


@dataclass
class GroupVM:
    key: str = ""
    single: bool = True
    header: str = ""
    header_title: str = ""
    # While the header streams an intent its title travels apart, like a card's (see
    # CardVM.title_key), and `header_title` is empty.
    title_key: str = ""
    header_key: str = ""
    suffix: str = ""
    aria_label: str = ""
    glyph: str = "tools"
    live: bool = False
    phase: str = "in_flight"
    open: bool = True
    calm: bool = False  # many live cards: only the header shimmers (see CALM_AFTER)
    lazy: bool = False  # many cards: only those near the screen render (see LAZY_AFTER)
    # The header-only density keeps its own open state: a group there stays its header
    # line until opened there, whatever it was in the full view.
    compact_key: str = ""
    compact_open: bool = False
    started_at: str = ""  # the group's wall time, like a card's (see CardVM)
    settled_at: str = ""
    elapsed: str = ""
    ticking: bool = False
    cards: list[CardVM] = field(default_factory=list)
    # A live group whose cards travel in slot vars (see `slotted_parts`): its cards are
    # slots first_slot .. first_slot + slot_count - 1, and `cards` is empty.
    first_slot: int = -1
    slot_count: int = 0


@dataclass
class PartVM:
    kind: str = "text"
    text: str = ""
    group: GroupVM = field(default_factory=GroupVM)


@dataclass
class MessageVM:
    id: str = ""
    role: str = "assistant"
    text: str = ""
    status: str = "complete"
    # A failed turn (core/failures.py): what happened, what to do, the recorded error.
    failure: str = ""
    failure_hint: str = ""
    error: str = ""
    goal: str = ""  # the turn's goal line: the chosen goal's description ("" without goals)
    timeline: bool = False  # more than TIMELINE_AFTER calls: the turn gets a timeline
    parts: list[PartVM] = field(default_factory=list)


def goal_line(turn: TurnView) -> str:
    """The turn's goal line, "" when no goal was chosen."""
    return turn.goal.line if turn.goal is not None else ""


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


class CardCache:
    """Reuses a card's view model while what it shows did not change: a collapsed card
    depends only on its label inputs (`CallView`), so a push with 32 streaming cards
    re-sanitises only the labels that changed, not every card whose arguments grew."""

    def __init__(self) -> None:
        self._cards: dict[str, tuple[object, tuple[str, bool, str], CardVM]] = {}
        # Final arguments parsed for sibling checks: they never change once complete.
        self.parsed: dict[str, dict[str, object] | None] = {}

    def card(
        self,
        turn: TurnView,
        call_id: str,
        lang: str,
        expanded: Collection[str],
        suffix: str = "",
    ) -> CardVM:
        record = turn.call(call_id)
        is_expanded = call_id in expanded
        # The view is the same object until a label input changes, so the usual check
        # (a card whose label did not change) is an identity test.
        key: object = (
            record
            if is_expanded or record is None
            else (turn.call_view(call_id), record.started_at, record.settled_at)
        )
        inputs = (lang, is_expanded, suffix)
        cached = self._cards.get(call_id)
        if cached is not None and cached[1] == inputs and _same(cached[0], key):
            return cached[2]
        card = _card(turn, call_id, lang, expanded, suffix)
        self._cards[call_id] = (key, inputs, card)
        return card


def _same(cached: object, key: object) -> bool:
    if isinstance(cached, tuple) and isinstance(key, tuple):
        return cached[0] is key[0] and cached[1:] == key[1:]
    return cached == key


def build_turn_parts(
    turn: TurnView,
    *,
    message_id: str,
    lang: str,
    expanded: Collection[str] = (),
    group_open: Mapping[str, bool] | None = None,
    header_hold: Callable[[str, str], str] | None = None,
    cache: CardCache | None = None,
) -> list[PartVM]:
    """Display parts of one assistant turn.

    `header_hold(group_key, text)` lets the live view apply a minimum display time to
    header labels; a reload passes none and shows the true header. `cache` reuses the
    view models of cards that did not change since the last call.
    """
    parts: list[PartVM] = []
    for part in turn.parts:
        if isinstance(part, TextPart):
            parts.append(PartVM(kind="text", text=part.text))
            continue
        assert isinstance(part, ToolGroup)
        parts.append(
            PartVM(
                kind="group",
                group=_group(
                    turn, part, message_id, lang, expanded, group_open, header_hold, cache
                ),
            )
        )
    return parts


def settled_prefix(turn: TurnView) -> int:
    """How many leading parts of the turn streaming can no longer change: every part
    before the last one, up to the first group with a call not yet final. A live
    view sends these apart from the rest, so a push during a long turn carries only its
    current round (they can still change, e.g. a late summary or a group opened:
    the live view compares before it sends)."""
    count = 0
    for part in turn.parts[:-1]:
        if isinstance(part, ToolGroup) and any(
            (record := turn.call(call_id)) is None or record.state not in FINAL_STATES
            for call_id in part.call_ids
        ):
            break
        count += 1
    return count


def slotted_parts(parts: list[PartVM], slots: int) -> tuple[list[PartVM], list[CardVM]]:
    """`parts` with every group's cards moved out into numbered slots, in order, and the
    cards by slot. A live view keeps each slot in a var of its own, so a push carries
    the cards that changed rather than every card of the round. More cards than `slots`
    stay in their groups (nothing moved, no cards returned)."""
    if sum(len(part.group.cards) for part in parts if part.kind == "group") > slots:
        return parts, []
    out: list[PartVM] = []
    cards: list[CardVM] = []
    for part in parts:
        if part.kind != "group":
            out.append(part)
            continue
        group = part.group
        moved = replace(group, cards=[], first_slot=len(cards), slot_count=len(group.cards))
        cards.extend(group.cards)
        out.append(replace(part, group=moved))
    return out, cards


def has_timeline(turn: TurnView) -> bool:
    """Whether the turn shows its call timeline (more than TIMELINE_AFTER calls)."""
    return len(turn.calls()) > TIMELINE_AFTER


def _group(
    turn: TurnView,
    part: ToolGroup,
    message_id: str,
    lang: str,
    expanded: Collection[str],
    group_open: Mapping[str, bool] | None,
    header_hold: Callable[[str, str], str] | None,
    cache: CardCache | None,
) -> GroupVM:
    key = f"{message_id}:{part.group}"
    suffixes = _sibling_suffixes(turn, part.call_ids, lang, cache)
    if cache is None:
        cards = [
            _card(turn, call_id, lang, expanded, suffix)
            for call_id, suffix in zip(part.call_ids, suffixes, strict=True)
        ]
    else:
        cards = [
            cache.card(turn, call_id, lang, expanded, suffix)
            for call_id, suffix in zip(part.call_ids, suffixes, strict=True)
        ]
    header = turn.group_header(part.group, lang)
    shown = sanitize_label(header.text, title=not header.live)
    text = header_hold(key, shown.text) if header_hold else shown.text
    is_open = (group_open or {}).get(key, not header.collapse)
    records = [r for call_id in part.call_ids if (r := turn.call(call_id)) is not None]
    wall = wall_time(
        Span(r.started_at, r.settled_at if r.state in FINAL_STATES else 0.0) for r in records
    )
    return GroupVM(
        key=key,
        single=len(cards) < GROUP_HEADER_MIN_CALLS,
        header=text,
        header_title=shown.title if shown.truncated else "",
        header_key=f"{key}:{header.phase}:{header.source}",
        suffix=header.server_suffix,
        aria_label=header.aria_label,
        glyph=header.glyph,
        live=header.live,
        phase=header.phase,
        open=is_open,
        calm=sum(card.live for card in cards) > CALM_AFTER,
        lazy=len(cards) > LAZY_AFTER,
        compact_key=compact_key(key),
        compact_open=(group_open or {}).get(compact_key(key), False),
        **_timing(wall, any(r.state not in FINAL_STATES for r in records)),
        cards=cards,
    )


class _Timing(TypedDict, total=False):
    """The elapsed-time fields `_timing` fills, by the view models' field names."""

    started_at: str
    settled_at: str
    elapsed: str
    ticking: bool


def _timing(span: Span, running: bool) -> _Timing:
    """The elapsed-time fields of a card or group view model (none without timestamps)."""
    if span.start <= 0 or (not running and span.end <= 0):
        return {}
    started = round(span.start * 1000)
    if running:
        return {"started_at": str(started), "ticking": True}
    # The duration is read from the stamps the page gets, so both always agree.
    settled = round(span.end * 1000)
    return {
        "started_at": str(started),
        "settled_at": str(settled),
        "elapsed": format_elapsed(settled - started),
    }


def _sibling_suffixes(
    turn: TurnView, call_ids: tuple[str, ...], lang: str, cache: CardCache | None
) -> list[str]:
    """Disambiguating suffixes for sibling cards with identical intents. Labels are
    resolved and arguments parsed only for calls whose arguments are final and whose
    intents are the same text, so a push while intents stream costs one pass over the
    group's records."""
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
                arguments=_parsed(turn, record, cache) if shared and record else None,
            )
        )
    return sibling_suffixes(siblings, lang)


def _may_collide(record: CallRecord) -> bool:
    """Only a call with an intent and final arguments can be told apart by them."""
    return record.carries_intent and record.args_complete and bool(record.intent)


def _parsed(
    turn: TurnView, record: CallRecord, cache: CardCache | None
) -> dict[str, object] | None:
    if cache is not None and record.call_id in cache.parsed:
        return cache.parsed[record.call_id]
    try:
        value = json.loads(turn.arguments(record.call_id))
    except ValueError:
        value = None
    parsed = value if isinstance(value, dict) else None
    if cache is not None:
        cache.parsed[record.call_id] = parsed
    return parsed


def _card(
    turn: TurnView, call_id: str, lang: str, expanded: Collection[str], suffix: str = ""
) -> CardVM:
    record = turn.call(call_id)
    view = turn.call_view(call_id)
    if record is None or view is None:
        return CardVM(call_id=call_id)
    is_expanded = call_id in expanded
    settled = record.state in FINAL_STATES
    label = turn.card_label(call_id, lang)
    if not (settled or record.intent_complete or is_expanded):
        # A label still streaming changes per fragment: its title follows only the first
        # TITLE_WINDOW characters until the intent is complete, so one update never costs
        # more than that however long the intent grows.
        label = label[:TITLE_WINDOW]
    shown = sanitize_label(label)
    # A disambiguated card keeps its suffix visible: it is added after the cap.
    title = shown.title + suffix if shown.truncated and shown.title else ""
    return CardVM(
        call_id=call_id,
        state=record.state,
        label=shown.text + suffix,
        title=title,
        live=card_is_in_flight(view),
        # A new key when the call settles remounts the label, so the crossfade plays once.
        label_key=f"{call_id}:{'settled' if settled else 'live'}",
        expanded=is_expanded,
        args_preview=pretty_arguments(turn.arguments(call_id)) if is_expanded else "",
        result=_bounded(record.error or record.output) if is_expanded and settled else "",
        **_timing(Span(record.started_at, record.settled_at), not settled),
    )


class HeaderHold:
    """Applies `MinimumDisplay` per group during a live turn (clock passed in, in ms)."""

    def __init__(self, min_ms: float = 200) -> None:
        self._min_ms = min_ms
        self._groups: dict[str, MinimumDisplay] = {}
        self.now_ms = 0.0

    def __call__(self, key: str, text: str) -> str:
        display = self._groups.setdefault(key, MinimumDisplay(self._min_ms))
        return display.offer(text, self.now_ms)

    def due_ms(self) -> float | None:
        dues = [d for g in self._groups.values() if (d := g.due_ms(self.now_ms)) is not None]
        return min(dues) if dues else None
