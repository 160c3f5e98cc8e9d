"""A turn as keyed patches: what the page's store holds for a turn, and how it changes.

The page keeps one store per message, `key -> JSON value`; the keys of a turn are

- `turn`: its record (`cards.turn_entry`), listing its parts by key;
- `text:{i}`: reply text part `i` (its index in the turn's parts);
- `group:{g}`, `cards:{g}`, `title:group:{g}`: group `g`'s record, its call ids in order,
  and the full header when the page shows it truncated (`cards.group_entry`);
- `card:{call_id}`, `title:{call_id}`: a call's collapsed card and its full label;
- `approval:{call_id}`, `question:{call_id}`: what a call that waits for the user asks
  (`pause_cards.approval_entry`, `question_entry`), kept once decided;
- `children:{call_id}`, `ticker:{call_id}`: a `subagent` call's child calls in order
  (each a `card:` and `title:` like any call) and the line under its card
  (`subagent_cards`);
- `announce`: what the polite live region says last (a call started, a call settled, a
  call waits for the reader: its approval's first line, or its question).
  It is news, not state: frames carry it, snapshots do not.

A change is a list of operations, applied in order:

- `["reset"]`: forget every key of the message;
- `["set", key, value]`: the key's whole value;
- `["add", key, start, text]`: a string grows by `text`; `start` is the length of the
  value it continues, in UTF-16 code units (the page's string length: an emoji counts
  two). A store holding another length missed a change: it has a gap and fetches a
  snapshot again (`PatchGap`).

`TurnPatcher` turns the change markers of `TurnView.apply` into these operations: a
snapshot of a view, then per flush only the keys whose value differs from what it sent
last. Nothing here reads a clock (time is passed in), does I/O or knows about sockets; a
feed wraps flushes in numbered `Frame`s and writes them (`Frame.wire`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection, Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from intent_ui.core.cards import (
    CardEntry,
    GroupHead,
    GroupStats,
    HeaderHold,
    assemble_group,
    card_display,
    group_head,
    group_key,
    group_stats,
    group_suffixes,
    turn_entry,
)
from intent_ui.core.events import (
    ApprovalRequested,
    CallSettled,
    CallStarted,
    QuestionAsked,
    TurnEvent,
)
from intent_ui.core.labels import CallView
from intent_ui.core.locale import translate
from intent_ui.core.pause_cards import approval_entry, pause_key, question_entry
from intent_ui.core.sanitize import sanitize_label
from intent_ui.core.subagent_cards import child_ids, children_key, ticker_entry, ticker_key
from intent_ui.core.text import scrub_surrogates
from intent_ui.core.turn import TextPart, ToolGroup, TurnView, live_label_unchanged

__all__ = [
    "END_EVENT",
    "Frame",
    "Op",
    "PatchGap",
    "TurnPatcher",
    "apply_ops",
    "frame_id",
    "frame_order",
    "utf16_len",
]

Op = list[object]
"""One operation: `["reset"]`, `["set", key, value]` or `["add", key, start, text]`."""

END_EVENT = b"event: end\ndata: {}\n\n"
"""What a stream writes after the frame holding the turn's end."""


class PatchGap(ValueError):
    """An `add` that does not continue the value held: a change was missed."""


def utf16_len(text: str) -> int:
    """The length of `text` as a JavaScript string. A lone surrogate counts one, as the
    U+FFFD it becomes on the wire does."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


# --- frames ----------------------------------------------------------------------------


def frame_id(seq: int, n: int = 0) -> str:
    """A frame's id: the seq of the last event folded into it, and `.n` for the n-th frame
    made since without a new event (a held header coming due)."""
    return f"{seq}.{n}" if n else str(seq)


def frame_order(value: str) -> tuple[int, int]:
    """`(seq, n)` of a frame id, the order frames come in. Raises ValueError for anything
    `frame_id` does not make (a client's Last-Event-ID is client input)."""
    seq, dot, n = value.partition(".")
    if not _digits(seq) or (dot and not _digits(n)):
        raise ValueError(f"not a frame id: {value[:40]!r}")
    return int(seq), int(n) if dot else 0


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON, the page's own text (one encoder for every frame: `json.dumps` with
options builds one per call)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """The operations of one flush, under the id a client resumes from."""

    id: str
    ops: list[Op]

    def wire(self, message_id: str) -> bytes:
        """The frame as one server-sent event: `id: {id}`, then the message id and the
        operations as compact JSON on one `data:` line."""
        data = _encode({"m": message_id, "ops": self.ops})
        try:
            encoded = data.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a split escape in model output) has no UTF-8 form; U+FFFD
            # has the same UTF-16 length, so the `add` offsets stay right.
            encoded = scrub_surrogates(data).encode("utf-8")
        return b"id: " + self.id.encode("ascii") + b"\ndata: " + encoded + b"\n\n"


def apply_ops(
    store: MutableMapping[str, object],
    ops: Iterable[Sequence[object]],
    lengths: MutableMapping[str, int] | None = None,
) -> None:
    """Apply `ops` to `store` as the page does. Raises `PatchGap` on an `add` whose start
    is not the held value's UTF-16 length, ValueError on an operation it does not know.
    `lengths`, when given, remembers those lengths for `store` between calls, so a long
    text growing costs what it grows by (keep one per store)."""
    for op in ops:
        kind = op[0] if op else None
        if kind == "reset" and len(op) == 1:
            store.clear()
            if lengths is not None:
                lengths.clear()
        elif kind == "set" and len(op) == 3 and isinstance(op[1], str):
            store[op[1]] = op[2]
            if lengths is not None:
                lengths.pop(op[1], None)
        elif kind == "add" and len(op) == 4 and isinstance(op[1], str):
            key, start, text = op[1], op[2], op[3]
            held = store.get(key)
            if not isinstance(held, str) or not isinstance(text, str):
                raise PatchGap(f"add to {key!r}, which holds no text")
            length = lengths.get(key) if lengths is not None else None
            if length is None:
                length = utf16_len(held)
            if start != length:
                raise PatchGap(f"add to {key!r} at {start}, which holds {length}")
            store[key] = held + text
            if lengths is not None:
                lengths[key] = length + utf16_len(text)
        else:
            raise ValueError(f"not an operation: {list(op)[:2]!r}")


# --- the patcher -----------------------------------------------------------------------

_MISSING = object()
_HEADER = "header:"
_PAUSE = "pause:"


@dataclass(slots=True)
class _Card:
    """What a card was built from, and what it came to: the card is built again only when
    one of the inputs differs (`view` by identity: `TurnView.call_view` hands out the
    same object until a label input changes)."""

    view: CallView | None
    started_at: float
    settled_at: float
    intent_complete: bool
    suffix: str
    entry: CardEntry
    title: str
    args_complete: bool  # what the sibling suffixes of its group last saw


@dataclass(slots=True)
class _Group:
    call_ids: tuple[str, ...]
    suffixes: dict[str, str] = field(default_factory=dict)
    head: GroupHead | None = None
    title: str = ""
    stats: GroupStats | None = None


_NO_GROUP = _Group(())
"""A subagent's calls belong to no group of the turn: no sibling suffixes."""


class TurnPatcher:
    """The store of one turn as one language shows it, kept up to date by patches.

    `snapshot(view)` sends the whole store; then, per event, `mark(event, changes)` notes
    what changed (cheap, no label work) and `flush(view, now_ms)` sends the keys whose
    value differs from what was sent. While a turn runs, group headers keep each label
    for at least `hold_ms` (`HeaderHold`); `due_ms` says when a held one must show.
    """

    def __init__(self, message_id: str, lang: str, *, hold_ms: float = 200) -> None:
        self.message_id = message_id
        self.lang = lang
        self._hold_ms = hold_ms
        self._hold = HeaderHold(hold_ms)
        self._held_groups: dict[str, int] = {}  # hold keys of offered headers -> groups
        # What the page holds: the value sent last for each key (never mutated once
        # sent), and the UTF-16 length of each text that may grow by `add`.
        self._table: dict[str, object] = {}
        self._lengths: dict[str, int] = {}
        self._cards: dict[str, _Card] = {}
        self._groups: dict[int, _Group] = {}
        self._parsed: dict[str, tuple[int, dict[str, object] | None]] = {}
        self._parts_len = 0  # how many parts the turn had at the last flush
        self._timeline = False
        self._announced: str | None = None
        # Marks since the last flush.
        self._marked_calls: dict[str, None] = {}  # ordered, so ops come in event order
        self._marked_headers: set[int] = set()
        self._marked_turn = False
        self._marked_text = False
        self._marked_pauses: dict[str, None] = {}
        self._announce: tuple[str, str] | None = None

    # --- marking --------------------------------------------------------------------------

    def mark(self, event: TurnEvent, changes: Collection[str]) -> None:
        """Remember what `event` changed (`changes` from `TurnView.apply`)."""
        if not changes:
            return
        for change in changes:
            # Any marker might also be a call id (ids are the provider's): `flush` keeps
            # only the ones the view knows as calls.
            self._marked_calls[change] = None
            if change.startswith(_HEADER):
                # A call id may look like a header marker without being one.
                with contextlib.suppress(ValueError):
                    self._marked_headers.add(int(change[len(_HEADER) :]))
            elif change == "text":
                self._marked_text = True
            elif change in ("parts", "goal", "done"):
                self._marked_turn = True
            elif change.startswith(_PAUSE):
                self._marked_pauses[change[len(_PAUSE) :]] = None
        if isinstance(event, CallStarted):
            self._announce = ("started", event.tool)
        elif isinstance(event, CallSettled):
            self._announce = ("settled", event.call_id)
        elif isinstance(event, ApprovalRequested | QuestionAsked):
            self._announce = ("waiting", event.call_id)

    def due_ms(self, now_ms: float) -> float | None:
        """Milliseconds from `now_ms` until a held header must show (then `flush` with no
        new marks sends it); None when nothing is held."""
        self._hold.now_ms = now_ms
        return self._hold.due_ms()

    # --- sending --------------------------------------------------------------------------

    def snapshot(self, view: TurnView, now_ms: float | None = None) -> list[Op]:
        """`["reset"]`, then a `set` for every key of `view`; the patcher then holds what
        it sent, and later flushes continue from it. `now_ms` is None for a stored turn:
        headers show as they are, no minimum display time."""
        self._hold = HeaderHold(self._hold_ms)
        self._held_groups.clear()
        self._table.clear()
        self._lengths.clear()
        self._cards.clear()
        self._groups.clear()
        self._parsed.clear()
        self._clear_marks()
        self._announced = None
        hold = None
        if now_ms is not None and not view.done:
            self._hold.now_ms = now_ms
            hold = self._hold
        ops: list[Op] = [["reset"]]
        parts = view.parts
        self._parts_len = len(parts)
        for index, part in enumerate(parts):
            if isinstance(part, TextPart):
                self._put_text(f"text:{index}", part.text, ops)
                continue
            assert isinstance(part, ToolGroup)
            group = self._groups[part.group] = _Group(part.call_ids)
            self._suffixes(view, group)
            for call_id in part.call_ids:
                self._card(view, call_id, group, ops)
                self._pause(view, call_id, ops)
                for child in view.children(call_id):
                    self._card(view, child, _NO_GROUP, ops)
                    self._pause(view, child, ops)
                self._subagent(view, call_id, ops)
            self._put(f"cards:{part.group}", list(part.call_ids), ops)
            self._group(view, part.group, group, hold, head=True, stats=True, ops=ops)
        self._turn(view, ops)
        return ops

    def table_ops(self) -> list[Op]:
        """`["reset"]`, then a `set` for every key as the patcher last sent it: what a
        store that applied everything sent so far holds (the announcement aside)."""
        return [["reset"], *(["set", key, value] for key, value in self._table.items())]

    def flush(self, view: TurnView, now_ms: float) -> list[Op]:
        """The operations that bring the store from what was sent to `view`, for the keys
        marked since the last flush (and any held header now due); [] when none differs."""
        self._hold.now_ms = now_ms
        headers = self._marked_headers
        calls = self._marked_calls
        pauses = self._marked_pauses
        turn_changed, text_changed, announce = (
            self._marked_turn,
            self._marked_text,
            self._announce,
        )
        self._clear_marks()
        hold: HeaderHold | None = self._hold
        if view.done:
            # The turn's end is its last frame: every header shows as it is from now on.
            headers = headers | {self._held_groups[key] for key in self._hold.held()}
            self._hold, self._held_groups, hold = HeaderHold(self._hold_ms), {}, None
        elif self._held_groups and (ready := self._hold.ready()):
            headers = headers | {self._held_groups[key] for key in ready}

        ops: list[Op] = []
        grown: set[int] = set()  # groups with a new call
        regroup: set[int] = set()  # groups whose sibling suffixes may have changed
        cards: dict[str, None] = {}
        children: dict[str, None] = {}  # a subagent's calls: in no group of the turn
        for call_id in calls:
            record = view.call(call_id)
            if record is None:
                continue
            if record.parent is not None:
                children[call_id] = None
                continue
            g = record.group
            known = self._cards.get(call_id)
            if known is None:  # a new call
                grown.add(g)
                if not self._timeline:
                    turn_changed = True
            # Suffixes only tell apart calls whose arguments are final: a call gets
            # there, or such a call's label changed (it settled).
            if known is None:
                if record.args_complete:
                    regroup.add(g)
            elif record.args_complete != known.args_complete or (
                record.args_complete and known.view is not view.call_view(call_id)
            ):
                regroup.add(g)
            cards[call_id] = None
        for g in grown:
            found = self._groups.get(g)
            call_ids = tuple(v.call_id for v in view.group_calls(g))
            if found is None:
                self._groups[g] = _Group(call_ids)
            else:
                found.call_ids = call_ids
        stats = set(grown)
        for g in regroup:
            for call_id in self._suffixes(view, self._groups[g]):
                cards[call_id] = None
        for call_id in cards:
            record = view.call(call_id)
            if record is not None and self._card(view, call_id, self._groups[record.group], ops):
                stats.add(record.group)
        for call_id in children:
            self._card(view, call_id, _NO_GROUP, ops)
        for call_id in chain(pauses, calls):
            # A pause changes with its call too: it stops waiting once the call ends.
            if view.pause(call_id) is None:
                continue  # most calls never wait for anyone
            record = view.call(view.top(call_id))  # a child's waits in its parent's group
            if record is not None and self._pause(view, call_id, ops):
                stats.add(record.group)
                turn_changed = True
        for call_id in calls:
            self._subagent(view, call_id, ops)
        for g in grown:
            self._put(f"cards:{g}", list(self._groups[g].call_ids), ops)
        if headers or stats:
            for g in sorted(headers | stats):
                group = self._groups.get(g)
                if group is not None:  # a summary may come before its group's first call
                    self._group(view, g, group, hold, head=g in headers, stats=g in stats, ops=ops)
        if text_changed:
            parts = view.parts
            for index in range(max(0, self._parts_len - 1), len(parts)):
                part = parts[index]
                if isinstance(part, TextPart):
                    self._put_text(f"text:{index}", part.text, ops)
            self._parts_len = len(parts)
        if turn_changed:
            self._turn(view, ops)
        if announce is not None:
            self._say(view, announce, ops)
        return ops

    # --- building -------------------------------------------------------------------------

    def _clear_marks(self) -> None:
        # New containers rather than cleared ones: `flush` goes on reading the old ones.
        # Only those that hold anything (most flushes mark only calls).
        if self._marked_calls:
            self._marked_calls = {}
        if self._marked_headers:
            self._marked_headers = set()
        self._marked_turn = self._marked_text = False
        if self._marked_pauses:
            self._marked_pauses = {}
        self._announce = None

    def _suffixes(self, view: TurnView, group: _Group) -> list[str]:
        """Recompute the group's sibling suffixes; return the calls whose suffix changed."""
        suffixes = group_suffixes(view, group.call_ids, self.lang, self._parsed)
        changed = []
        for call_id, suffix in zip(group.call_ids, suffixes, strict=True):
            if group.suffixes.get(call_id, "") != suffix:
                changed.append(call_id)
            if suffix:
                group.suffixes[call_id] = suffix
            else:
                group.suffixes.pop(call_id, None)
        return changed

    def _card(self, view: TurnView, call_id: str, group: _Group, ops: list[Op]) -> bool:
        """Bring `card:` and `title:` of the call up to date; return whether what its
        group's record is made of (in flight, times) changed."""
        record = view.call(call_id)
        if record is None:
            return False
        call_view = view.call_view(call_id)
        suffix = group.suffixes.get(call_id, "")
        known = self._cards.get(call_id)
        if (
            known is not None
            and known.started_at == record.started_at
            and known.settled_at == record.settled_at
            and known.intent_complete == record.intent_complete
            and known.suffix == suffix
            and (
                known.view is call_view
                # A streaming intent past the window its card reads: nothing shown moves.
                or (
                    not record.intent_complete
                    and known.view is not None
                    and call_view is not None
                    and live_label_unchanged(known.view, call_view)
                )
            )
        ):
            known.view = call_view
            known.args_complete = record.args_complete
            return False
        entry, title = card_display(view, call_id, self.lang, suffix)
        self._cards[call_id] = _Card(
            call_view,
            record.started_at,
            record.settled_at,
            record.intent_complete,
            suffix,
            entry,
            title,
            record.args_complete,
        )
        self._put(f"card:{call_id}", entry, ops)
        self._put_text(f"title:{call_id}", title, ops)
        return (
            known is None
            or entry["live"] != known.entry["live"]
            or entry["started_at"] != known.entry["started_at"]
            or entry["settled_at"] != known.entry["settled_at"]
        )

    def _group(
        self,
        view: TurnView,
        g: int,
        group: _Group,
        hold: HeaderHold | None,
        *,
        head: bool,
        stats: bool,
        ops: list[Op],
    ) -> None:
        key = group_key(self.message_id, g)
        if head or group.head is None:
            group.head, group.title = group_head(view, g, self.message_id, self.lang, hold)
            if hold is not None:
                self._held_groups[key] = g
            self._put_text(f"title:group:{g}", group.title, ops)
        if stats or group.stats is None:
            group.stats = group_stats(view, group.call_ids)
        self._put(f"group:{g}", assemble_group(key, group.head, group.stats), ops)

    def _pause(self, view: TurnView, call_id: str, ops: list[Op]) -> bool:
        """Bring the call's approval or question record up to date; False when it has none."""
        pause = view.pause(call_id)
        if pause is None:
            return False
        entry = (
            approval_entry(view, pause, self.lang)
            if pause.kind == "approval"
            else question_entry(view, pause, self.lang)
        )
        self._put(pause_key(pause), entry, ops)
        return True

    def _subagent(self, view: TurnView, call_id: str, ops: list[Op]) -> None:
        """Bring a `subagent` call's child list and ticker up to date (nothing for any
        other call: a child's change marks its parent, `TurnView.apply`)."""
        if view.subagent(call_id) is None and not view.children(call_id):
            return  # no child turn: no ticker either (`ticker_entry`)
        ticker = ticker_entry(view, call_id, self.lang)
        if ticker is None and not view.children(call_id):
            return
        self._put(children_key(call_id), child_ids(view, call_id), ops)
        if ticker is not None:
            self._put(ticker_key(call_id), ticker, ops)

    def _turn(self, view: TurnView, ops: list[Op]) -> None:
        entry = turn_entry(view, self.lang)
        self._timeline = entry["timeline"]
        self._parts_len = len(entry["parts"])
        self._put("turn", entry, ops)

    def _say(self, view: TurnView, announce: tuple[str, str], ops: list[Op]) -> None:
        kind, value = announce
        pause = view.pause(value) if kind == "waiting" else None
        if kind == "started":
            said = translate("live.running", self.lang, tool=value)
        elif pause is not None and pause.kind == "approval":
            said = approval_entry(view, pause, self.lang)["prompt"]
        elif pause is not None:
            said = question_entry(view, pause, self.lang)["question"]
        else:
            said = sanitize_label(view.card_label(value, self.lang)).text
        if said != self._announced:
            self._announced = said
            ops.append(["set", "announce", said])

    def _put(self, key: str, value: object, ops: list[Op]) -> None:
        if self._table.get(key, _MISSING) != value:
            self._table[key] = value
            ops.append(["set", key, value])

    def _put_text(self, key: str, value: str, ops: list[Op]) -> None:
        held = self._table.get(key, _MISSING)
        if held == value:
            return
        if isinstance(held, str) and value.startswith(held):
            added = value[len(held) :]
            start = self._lengths[key]
            ops.append(["add", key, start, added])
            self._lengths[key] = start + utf16_len(added)
        else:
            ops.append(["set", key, value])
            self._lengths[key] = utf16_len(value)
        self._table[key] = value
