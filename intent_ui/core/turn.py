"""The turn reducer every view shares: `TurnEvent`s in, label-ready state out.

`TurnView.apply(event)` folds one `intent_ui.core.events` value into the turn and returns
what changed, so a view re-renders only that:

- a call id: that call's record changed (state, arguments, intent, outcome, output);
- `"header:{group}"`: that group's header may read differently (a call's label-relevant
  fields changed, or its summary arrived). Not for a change to the intent text of a call
  the header does not show (`header_source`), nor for intent text past the first
  `TITLE_WINDOW` characters of the live label it shows: the header reads the same, and
  with many calls streaming most fragments are of other calls;
- `"text"`: the reply text grew;
- `"parts"`: the part list changed shape (a new text part or a new group);
- `"goal"`: the turn's goal was chosen (`goal`);
- `"done"`: the turn ended;
- `"pause:{call_id}"`: the call's approval or question was asked or answered (`pause`),
  so what waits for the user (`waiting`) may have changed.

Rules (each pinned by tests):

- Parts keep arrival order. Calls group by their round's group index (the event's
  `block` field): a group's `ToolGroup` sits where its first call appeared and later calls
  of the same group join it, even if text arrived in between. Text after a group starts a
  new `TextPart`.
- Only label-bearing calls parse an intent: their `ArgsDelta` chunks feed an
  `IntentStream`. Other calls keep the raw argument text only, so a business parameter
  named `intent` never becomes a label (docs/labels.md, The label gate).
- A call's `label_seq` is stamped from the event when its first displayable intent
  arrives and when it settles; the group header orders by it, not by list order, so a
  call settling out of order cannot rewind the header.
- `ArgsComplete` only moves a call to `running` (and reads the final intent); the JSON
  becoming parseable never settles anything. `CallBackgrounded` -> `background`, still
  in flight (the handle is not a result). Only `CallSettled` gives a final state; a
  later `CallSettled` (a background harvest) may still update it.
- `ActivityLabel` (a group's summary): a blank one is ignored, so a pending reservation
  never overwrites a filled one.
- `TurnDone`: calls still `streaming` or `running` become `cancelled` (whatever the stop
  reason: they can no longer finish, and must not shimmer forever). Backgrounded calls
  keep running; their harvest (or the reaper's error) arrives as a later `CallSettled`.
- A call that waits for a person (`ApprovalRequested`, `QuestionAsked`) keeps its state
  (`running`) and gets a `Pause` (`pause(call_id)`); the decision or answer completes it.
  An approval with rewritten arguments replaces the call's argument text, and the intent
  is read again from it: the rewritten intent is the call's label from then on. A call
  that settles (or is cancelled by the end) no longer waits, decided or not.
- A subagent's child turn (`SubagentStarted`, then calls whose `CallStarted.parent` is
  the `subagent` call) is kept beside the turn's parts, never in them: a child call
  joins its parent's `children(call_id)` in start order, and every change to it marks
  the child and the parent (the parent's ticker reads its children), never a group
  header. The reply text of a child is not part of the turn: the child's answer is
  the parent call's result.
- Bad input never raises: an event for an unknown call, a duplicate start, or a value of
  the wrong type is skipped, changing nothing (`apply` returns no markers).

- Work per event does not grow with what came before: argument fragments are kept as a
  list and joined only when asked for (`arguments(call_id)`), and a call's record carries
  the argument length rather than the text.
- An intent that the provider streamed after other keys cannot show while streaming (only
  the first key is read as it arrives), but once the arguments are complete the card still
  takes it from the parsed object.

A turn on screen is always `TurnView.replay(events)` of its stored or live events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, NamedTuple, get_args

from intent_ui.core.capabilities.intent import read_intent
from intent_ui.core.events import (
    ActivityLabel,
    ApprovalDecided,
    ApprovalRequested,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    QuestionAnswered,
    QuestionAsked,
    SubagentStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.header import HeaderView, header_source
from intent_ui.core.header import group_header as resolve_group_header
from intent_ui.core.labels import CallCategory, CallView, tool_category
from intent_ui.core.labels import card_label as resolve_card_label
from intent_ui.core.locale import DEFAULT_LANGUAGE
from intent_ui.core.pauses import ANSWERED, APPROVED, DENIED, SCOPES, Pause
from intent_ui.core.sanitize import TITLE_WINDOW, has_label_text
from intent_ui.core.states import FINAL_STATES, FOREGROUND_STATES, CallState
from intent_ui.core.streaming import IntentStream, StreamingIntent, read_streaming_intent

__all__ = [
    "CallRecord",
    "ChosenGoal",
    "Part",
    "Subagent",
    "TextPart",
    "ToolGroup",
    "TurnView",
    "live_label_unchanged",
]

_CATEGORIES: frozenset[str] = frozenset(get_args(CallCategory))


@dataclass(frozen=True, slots=True)
class TextPart:
    """A run of assistant reply text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolGroup:
    """One group: the tool calls of one round, in start order."""

    group: int
    call_ids: tuple[str, ...]


Part = TextPart | ToolGroup


class ChosenGoal(NamedTuple):
    """The goal the model chose for the turn, and the goal line it shows."""

    goal_id: str
    line: str


class Subagent(NamedTuple):
    """A `subagent` call's child turn: its name ("" for a copy of the turn's agent), its
    model, and when it started (epoch seconds, 0 when unknown)."""

    agent: str
    model: str
    started_at: float


@dataclass(frozen=True, slots=True)
class CallRecord:
    """Everything known about one call but its argument text (`TurnView.arguments`).

    `label_seq` is the seq of its last label-relevant change; `started_at` / `settled_at`
    are epoch seconds (0 when unknown). `called_as` is the name the model called the tool
    by when it is not `tool` (see `CallStarted`); `parent` the `subagent` call a child
    turn's call belongs to.
    """

    call_id: str
    tool: str
    group: int
    server: str | None = None
    carries_intent: bool = False
    category: CallCategory = "tool"
    state: CallState = "streaming"
    args_len: int = 0
    args_complete: bool = False
    intent: str | None = None
    intent_complete: bool = False
    outcome: str | None = None
    outcome_patch: dict[str, str] | None = None
    error: str | None = None
    output: str = ""
    label_seq: int = 0
    started_seq: int = 0
    started_at: float = 0.0
    settled_at: float = 0.0
    called_as: str | None = None
    parent: str | None = None

    def view(self) -> CallView:
        return CallView(*_label_inputs(self))


@dataclass(slots=True)
class _Group:
    part_index: int
    call_ids: list[str] = field(default_factory=list)


class TurnView:
    """Folds a turn's events into parts, per-call records, card labels and headers."""

    def __init__(self, categorize: Callable[[str], CallCategory] = tool_category) -> None:
        self._categorize = categorize
        self._parts: list[Part] = []
        self._groups: dict[int, _Group] = {}
        self._calls: dict[str, CallRecord] = {}
        self._streams: dict[str, IntentStream] = {}
        self._args: dict[str, list[str]] = {}
        # Each call's label inputs, built once per label-relevant change: every push reads
        # them for every card and header, while fragments change them far less often.
        self._views: dict[str, CallView] = {}
        self._summaries: dict[int, str] = {}
        # The call each group's header shows (`header_source`), worked out again only
        # after a change that may move it: what decides whether a fragment marks it.
        self._sources: dict[int, str | None] = {}
        self._pauses: dict[str, Pause] = {}
        self._children: dict[str, list[str]] = {}
        self._subagents: dict[str, Subagent] = {}
        self._text: list[str] = []
        self._last_seq = 0
        self.goal: ChosenGoal | None = None
        """The chosen goal, once the model chose one."""
        self.done = False
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.error_kind: str | None = None

    # --- reducing -------------------------------------------------------------------------

    @classmethod
    def replay(
        cls,
        events: Iterable[TurnEvent],
        categorize: Callable[[str], CallCategory] = tool_category,
    ) -> TurnView:
        """A view built by applying `events` in order."""
        view = cls(categorize)
        for event in events:
            view.apply(event)
        return view

    def apply(self, event: TurnEvent) -> set[str]:
        """Fold one event in; return the change markers described in the module docstring."""
        seq = getattr(event, "seq", None)
        if isinstance(seq, int):
            self._last_seq = max(self._last_seq, seq)
        match event:
            case CallStarted():
                return self._start(event)
            case ArgsDelta():
                return self._delta(event)
            case ArgsComplete():
                return self._complete(event)
            case CallBackgrounded():
                return self._background(event)
            case CallSettled():
                return self._settle(event)
            case TextDelta():
                return self._text_delta(event)
            case ActivityLabel():
                return self._summary(event)
            case GoalSelected():
                return self._goal(event)
            case TurnDone():
                return self._done(event)
            case ApprovalRequested() | QuestionAsked():
                return self._pause(event)
            case ApprovalDecided() | QuestionAnswered():
                return self._decide(event)
            case SubagentStarted():
                return self._subagent(event)
        return set()  # not a turn event

    def _start(self, event: CallStarted) -> set[str]:
        if event.call_id in self._calls:
            return set()  # a duplicate start
        category = self._categorize(event.tool)
        record = CallRecord(
            call_id=event.call_id,
            tool=event.tool,
            group=event.block,
            server=event.server,
            carries_intent=bool(event.label_bearing),
            category=category if category in _CATEGORIES else "tool",
            started_seq=event.seq,
            started_at=_time(event.at),
            called_as=event.called_as if isinstance(event.called_as, str) else None,
        )
        parent = event.parent if isinstance(event.parent, str) else None
        if parent is not None:
            if parent not in self._calls or self._calls[parent].parent is not None:
                return set()  # a child of no call of this turn (or of a child): skipped
            record = replace(record, parent=parent)
        self._calls[event.call_id] = record
        self._args[event.call_id] = []
        if record.carries_intent:
            self._streams[event.call_id] = IntentStream()
        if parent is not None:
            self._children.setdefault(parent, []).append(event.call_id)
            return {event.call_id, parent}
        changed = {event.call_id, _header(event.block)}
        self._sources.pop(event.block, None)
        group = self._groups.get(event.block)
        if group is None:
            self._groups[event.block] = _Group(len(self._parts), [event.call_id])
            self._parts.append(ToolGroup(event.block, (event.call_id,)))
            changed.add("parts")
        else:
            group.call_ids.append(event.call_id)
            self._parts[group.part_index] = ToolGroup(event.block, tuple(group.call_ids))
        return changed

    def _delta(self, event: ArgsDelta) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None:
            return set()
        if record.args_complete or record.state in FINAL_STATES:
            return set()  # the argument text is final once the provider said so
        if not isinstance(event.chunk, str) or not event.chunk:
            return set()
        self._args[event.call_id].append(event.chunk)
        stream = self._streams.get(event.call_id)
        found = stream.feed(event.chunk) if stream is not None else None
        args_len = record.args_len + len(event.chunk)
        if found is None or (
            found.text == record.intent and bool(found.complete) == record.intent_complete
        ):
            # Most fragments of a call carry no intent text (the keys after it): only the
            # length grows, no label input moves, so the call alone changed.
            self._calls[event.call_id] = _evolve(record, args_len=args_len)
            return {event.call_id}
        return self._store(record, _with_intent(record, found, event.seq, args_len=args_len))

    def _complete(self, event: ArgsComplete) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None:
            return set()
        if isinstance(event.arguments, str) and event.arguments:
            self._args[event.call_id][:] = [event.arguments]
        arguments = self.arguments(event.call_id)
        updated = replace(
            record,
            args_len=len(arguments),
            args_complete=True,
            state="running" if record.state == "streaming" else record.state,
        )
        if record.carries_intent:
            # The final text is authoritative; if it cannot be read (the provider sent no
            # final copy), the streamed intent stands rather than flickering away.
            final = read_streaming_intent(arguments)
            if final is None and not has_label_text(record.intent):
                late = read_intent(arguments)  # the intent was not the first key
                final = None if late is None else StreamingIntent(late, True)
            if final is not None:
                updated = _with_intent(updated, final, event.seq)
        return self._store(record, updated)

    def _background(self, event: CallBackgrounded) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None or record.state in FINAL_STATES:
            return set()
        return self._store(record, replace(record, state="background"))

    def _settle(self, event: CallSettled) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None:
            return set()
        if event.state not in FINAL_STATES:
            return set()  # only a final state settles a call
        patch = event.outcome_patch
        updated = replace(
            record,
            state=event.state,
            output=event.output if isinstance(event.output, str) else str(event.output),
            outcome=event.outcome if isinstance(event.outcome, str) else None,
            outcome_patch=dict(patch) if isinstance(patch, Mapping) else None,
            error=event.error if isinstance(event.error, str) else None,
        )
        if updated == record:
            return set()  # an idempotent re-emission (background polling) changes nothing
        return self._store(
            record, replace(updated, label_seq=event.seq, settled_at=_time(event.at))
        )

    def _text_delta(self, event: TextDelta) -> set[str]:
        if not isinstance(event.text, str) or not event.text:
            return set()
        self._text.append(event.text)
        if self._parts and isinstance(self._parts[-1], TextPart):
            last = self._parts[-1]
            self._parts[-1] = TextPart(last.text + event.text)
            return {"text"}
        self._parts.append(TextPart(event.text))
        return {"text", "parts"}

    def _summary(self, event: ActivityLabel) -> set[str]:
        if not isinstance(event.label, str) or not has_label_text(event.label):
            return set()  # pending or blank: the header stays where it is
        if self._summaries.get(event.block) == event.label:
            return set()
        self._summaries[event.block] = event.label
        self._sources.pop(event.block, None)
        return {_header(event.block)}

    def _goal(self, event: GoalSelected) -> set[str]:
        if not isinstance(event.goal_id, str) or not isinstance(event.label, str):
            return set()
        goal = ChosenGoal(event.goal_id, event.label)
        if goal == self.goal:
            return set()
        self.goal = goal
        return {"goal"}

    def _done(self, event: TurnDone) -> set[str]:
        self.done = True
        self.stop_reason = event.stop_reason
        self.error = event.error
        self.error_kind = event.error_kind
        changed = {"done"}
        for record in list(self._calls.values()):
            if record.state in FOREGROUND_STATES:
                updated = replace(
                    record,
                    state="cancelled",
                    error=record.error or event.error,
                    label_seq=event.seq,
                    settled_at=_time(event.at),
                )
                changed |= self._store(record, updated)
        return changed

    def _pause(self, event: ApprovalRequested | QuestionAsked) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None or record.state in FINAL_STATES or event.call_id in self._pauses:
            return set()  # unknown, over already, or asked twice
        if isinstance(event, ApprovalRequested):
            pause = Pause(
                event.call_id,
                "approval",
                event.seq,
                tool_id=event.tool_id if isinstance(event.tool_id, str) else "",
                agent_scope=event.agent_scope is True,
            )
        else:
            choices = event.choices if isinstance(event.choices, list | tuple) else ()
            pause = Pause(
                event.call_id,
                "question",
                event.seq,
                question=event.question if isinstance(event.question, str) else "",
                choices=tuple(choice for choice in choices if isinstance(choice, str)),
            )
        self._pauses[event.call_id] = pause
        return self._paused(record)

    def _decide(self, event: ApprovalDecided | QuestionAnswered) -> set[str]:
        pause = self._pauses.get(event.call_id)
        if pause is None or pause.decided:
            return set()  # nothing asked, or answered already: the first answer stands
        if isinstance(event, QuestionAnswered):
            if pause.kind != "question" or not isinstance(event.answer, str):
                return set()
            self._pauses[event.call_id] = replace(
                pause,
                verdict=ANSWERED,
                answer=event.answer,
                by=str(event.by),
                decided_seq=event.seq,
            )
            return self._paused(self._calls.get(event.call_id))
        if pause.kind != "approval" or event.verdict not in (APPROVED, DENIED):
            return set()
        edited = isinstance(event.arguments, str) and bool(event.arguments)
        self._pauses[event.call_id] = replace(
            pause,
            verdict=event.verdict,
            scope=event.scope if event.scope in SCOPES else "once",
            reason=event.reason if isinstance(event.reason, str) else "",
            edited=edited,
            by=str(event.by),
            decided_seq=event.seq,
        )
        record = self._calls.get(event.call_id)
        changed = self._paused(record) if record is not None else {_pause_marker(event.call_id)}
        if edited and record is not None:
            # The call runs with what the user wrote, intent included (it is the label).
            self._args[event.call_id][:] = [event.arguments]
            updated = replace(record, args_len=len(event.arguments))
            if record.carries_intent:
                final = read_streaming_intent(event.arguments)
                if final is None:
                    late = read_intent(event.arguments)
                    final = None if late is None else StreamingIntent(late, True)
                if final is not None:
                    updated = _with_intent(updated, final, event.seq)
                    if updated.intent != record.intent:
                        updated = replace(updated, label_seq=event.seq)
            changed |= self._store(record, updated)
        return changed

    def _subagent(self, event: SubagentStarted) -> set[str]:
        record = self._calls.get(event.call_id)
        if record is None or record.parent is not None or event.call_id in self._subagents:
            return set()
        agent = event.agent if isinstance(event.agent, str) else ""
        model = event.model if isinstance(event.model, str) else ""
        self._subagents[event.call_id] = Subagent(agent, model, _time(event.at))
        return {event.call_id}

    def _paused(self, record: CallRecord | None) -> set[str]:
        """The markers of a pause of `record`'s: a child's waits in its parent's ticker."""
        if record is None:
            return set()
        changed = {_pause_marker(record.call_id)}
        if record.parent is not None:
            changed.add(record.parent)
        return changed

    def _store(self, before: CallRecord, after: CallRecord) -> set[str]:
        if after == before:
            return set()
        self._calls[after.call_id] = after
        changed = {after.call_id}
        if _label_inputs_differ(before, after):
            self._views.pop(after.call_id, None)
            # A child's label is its parent's ticker line, never a group header.
            if after.parent is not None:
                changed.add(after.parent)
            elif self._header_reads_otherwise(before, after):
                changed.add(_header(after.group))
        elif after.parent is not None and after.state != before.state:
            changed.add(after.parent)
        return changed

    def _header_reads_otherwise(self, before: CallRecord, after: CallRecord) -> bool:
        """Whether the change from `before` to `after` (label inputs differ) may change how
        the group's header reads."""
        group = after.group
        if not _intent_text_only(before, after):
            self._sources.pop(group, None)  # which call the header shows may have moved
            return True
        if group not in self._sources:
            self._sources[group] = header_source(self.group_calls(group), self.summary(group))
        if self._sources[group] != after.call_id:
            return False
        return not live_label_unchanged(before, after)

    # --- views ----------------------------------------------------------------------------

    @property
    def parts(self) -> tuple[Part, ...]:
        return tuple(self._parts)

    @property
    def text(self) -> str:
        """The whole reply text so far."""
        return "".join(self._text)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def groups(self) -> tuple[int, ...]:
        """Group indices in display order."""
        return tuple(part.group for part in self._parts if isinstance(part, ToolGroup))

    def calls(self) -> tuple[CallRecord, ...]:
        """Every call, in start order."""
        return tuple(self._calls.values())

    def call(self, call_id: str) -> CallRecord | None:
        return self._calls.get(call_id)

    def children(self, call_id: str) -> tuple[str, ...]:
        """The calls of the call's child turn (a `subagent` call's), in start order."""
        return tuple(self._children.get(call_id, ()))

    def subagent(self, call_id: str) -> Subagent | None:
        """The call's child turn, once it started (None for any other call)."""
        return self._subagents.get(call_id)

    def top(self, call_id: str) -> str:
        """The turn's own call a call belongs to: its parent for a child's call, else
        itself."""
        record = self._calls.get(call_id)
        return record.parent if record is not None and record.parent is not None else call_id

    def arguments(self, call_id: str) -> str:
        """The call's raw argument text so far ("" for an unknown call)."""
        chunks = self._args.get(call_id)
        if not chunks:
            return ""
        if len(chunks) > 1:
            chunks[:] = ["".join(chunks)]  # later reads and appends stay cheap
        return chunks[0]

    def call_view(self, call_id: str) -> CallView | None:
        """The call's label inputs; the same object until one of them changes."""
        view = self._views.get(call_id)
        if view is None:
            record = self._calls.get(call_id)
            if record is None:
                return None
            view = self._views[call_id] = record.view()
        return view

    def card_label(self, call_id: str, lang: str = DEFAULT_LANGUAGE) -> str:
        """The call's raw card label (sanitise at render); "" for an unknown call."""
        view = self.call_view(call_id)
        return "" if view is None else resolve_card_label(view, lang)

    def group_calls(self, group: int) -> tuple[CallView, ...]:
        found = self._groups.get(group)
        if found is None:
            return ()
        return tuple(view for call_id in found.call_ids if (view := self.call_view(call_id)))

    def pause(self, call_id: str) -> Pause | None:
        """The call's approval or question, if it waited for a person."""
        return self._pauses.get(call_id)

    def waiting(self) -> tuple[Pause, ...]:
        """What waits for the user now: undecided pauses of calls still in flight."""
        return tuple(
            pause
            for pause in self._pauses.values()
            if not pause.decided
            and (record := self._calls.get(pause.call_id)) is not None
            and record.state not in FINAL_STATES
        )

    def summary(self, group: int) -> str | None:
        return self._summaries.get(group)

    def group_header(self, group: int, lang: str = DEFAULT_LANGUAGE) -> HeaderView:
        return resolve_group_header(self.group_calls(group), self._summaries.get(group), lang)


def _header(group: int) -> str:
    return f"header:{group}"


def _pause_marker(call_id: str) -> str:
    return f"pause:{call_id}"


def _time(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


_record_values = attrgetter(*(f.name for f in fields(CallRecord)))
_RECORD_INDEX = {f.name: index for index, f in enumerate(fields(CallRecord))}


def _evolve(record: CallRecord, **changes: Any) -> CallRecord:
    """`dataclasses.replace(record, **changes)` at half its cost (its per-field checks
    serve every kind of dataclass): every argument fragment makes a record."""
    values = list(_record_values(record))
    for name, value in changes.items():
        values[_RECORD_INDEX[name]] = value
    return CallRecord(*values)


def _with_intent(record: CallRecord, found: Any, seq: int, **also: Any) -> CallRecord:
    """Apply a `StreamingIntent` (or None) and the fields in `also`; stamp `seq` when the
    intent first shows (as `label_seq`)."""
    if found is None:
        return _evolve(record, **also) if also else record
    text = found.text
    first = not has_label_text(record.intent) and has_label_text(text)
    return _evolve(
        record,
        intent=text,
        intent_complete=bool(found.complete),
        label_seq=seq if first else record.label_seq,
        **also,
    )


_label_inputs = attrgetter(*(f.name for f in fields(CallView)))
"""What `CallRecord.view` carries, read from a record (what labels are made of)."""


def _label_inputs_differ(before: CallRecord, after: CallRecord) -> bool:
    return _label_inputs(before) != _label_inputs(after)


_inputs_but_intent = attrgetter(*(f.name for f in fields(CallView) if f.name != "intent"))


def _intent_text_only(before: CallRecord | CallView, after: CallRecord | CallView) -> bool:
    """Whether only the intent's text differs, and it shows (or not) as before: which call
    a header shows and every other label input stay as they were."""
    return _inputs_but_intent(before) == _inputs_but_intent(after) and has_label_text(
        before.intent
    ) == has_label_text(after.intent)


def live_label_unchanged(before: CallRecord | CallView, after: CallRecord | CallView) -> bool:
    """Whether a call in flight whose intent text alone changed shows the same: a live
    label is read through its first `TITLE_WINDOW` characters only (its card, its title,
    a header showing it), and those did not change."""
    old, new = before.intent, after.intent
    return (
        before.state not in FINAL_STATES
        and after.state == before.state
        and old is not None
        and new is not None
        and len(old) >= TITLE_WINDOW
        and old[:TITLE_WINDOW] == new[:TITLE_WINDOW]
        and _intent_text_only(before, after)
    )
