"""The intents dashboard's rules: which intents are vague, which are identical, and the
copy of a turn's calls the dashboard keeps. Pure: no I/O, no clock (docs/dashboard.md).

- `intent_key` is what "the same intent" means: the words of the text, case-folded, with
  punctuation and spacing ignored ("Reading the config." and "reading  the config" are
  one intent). `intent_hash` is its 64-bit digest, the column the store groups by: a
  number groups faster than text on every database, and two keys colliding is as likely
  as two random 64-bit numbers being equal.
- `is_vague` says whether an intent tells a reader nothing a tool name would not:
  very short (fewer than `VAGUE_MIN_WORDS` words and fewer than `VAGUE_MIN_CHARS` letters
  or digits in them), or generic (every word is one of `GENERIC_WORDS`, a word of the
  tool's own name, or a number: "Calling the tool", "Called book_car", "Getting data").
  Generic words are English; intents in other languages are judged by length only.
- `copy_turn_calls` turns a finished turn's calls into the rows the dashboard stores:
  intents and outcomes pass through `redact_intent` (PII stripped, then clamped) and are
  made one line; a tool the operator opted out keeps no text at all, only whether an
  intent was written. The conversation itself is never touched: it stays what the model
  wrote. Two calls of one turn to one tool whose intents share a key are both marked
  `duplicate` ("identical intents among siblings": the model was told they must differ).
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.capture import INTENT_CAPTURE_LIMIT, IntentContextMode, redact_intent
from intent_ui.core.ledger import derive_anchors
from intent_ui.core.sanitize import has_label_text, sanitize_label
from intent_ui.core.turn import TurnView

__all__ = [
    "DAY_SECONDS",
    "GENERIC_WORDS",
    "PERIODS",
    "VAGUE_MIN_CHARS",
    "VAGUE_MIN_WORDS",
    "CallCopy",
    "CallStatus",
    "chart_bucket_days",
    "copy_turn_calls",
    "dashboard_text",
    "day_label",
    "declares_required_intent",
    "intent_hash",
    "intent_key",
    "is_vague",
    "since_day",
    "utc_day",
]

CallStatus = Literal["ok", "error", "cancelled"]

VAGUE_MIN_WORDS = 3
VAGUE_MIN_CHARS = 16
"""An intent is very short below both: "Ski trip" and "Fixing bug" are, "Refactoring
authentication" is not (two words, but long ones: scripts written without spaces count
their characters rather than their words)."""

# A block of words rather than a list literal: a few hundred one-word lines would hide
# which words are there.
GENERIC_WORDS: frozenset[str] = frozenset(
    """
    a an the this that these those it its some any all more my our your their his her me
    us them i we you he she they is are be been being am was were will now just please
    then again also here there
    to for of on in into with by from as at and or per via about so
    call calls called calling use uses used using run runs ran running execute executes
    executed executing invoke invokes invoked invoking perform performs performed
    performing do does did done doing make makes made making try trying tried attempt
    attempting handle handles handled handling process processing get gets got getting
    fetch fetches fetched fetching check checks checked checking look looking find
    finding search searches searched searching read reads reading write writes writing
    open opening list lists listed listing show showing view viewing update updating
    create creating edit editing work working continue continuing start starting help
    helps helped helping assist assisting need needs needed want wants wanted ask asks
    asked answer answering respond responding
    tool tools function functions action actions request requests requested task tasks
    user users s step steps next operation operations query queries data info
    information stuff thing things something anything file files code result results
    content item items value values page question goal intent purpose
    n none null nothing test testing unknown general misc
    """.split()  # noqa: SIM905
)
"""Words that say nothing about a call on their own (see `is_vague`)."""

DAY_SECONDS = 86_400

PERIODS: Mapping[str, int | None] = {"1d": 1, "7d": 7, "30d": 30, "90d": 90, "all": None}
"""The dashboard's periods: that many UTC days up to and including today; `all` has no
start. Whole days, because the counts the store keeps are per day."""

_WORD = re.compile(r"[^\W_]+")


def intent_key(text: str) -> str:
    """The words of `text`, case-folded and joined by single spaces ("" when none)."""
    return " ".join(_WORD.findall(text.casefold())) if isinstance(text, str) else ""


def intent_hash(text: str) -> int | None:
    """A signed 64-bit digest of `intent_key(text)` (a BIGINT column), never 0; None
    without words."""
    key = intent_key(text)
    if not key:
        return None
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    # Never 0, which the store reads as "no intent" (`store.dashboard.HAS_DIGEST`).
    return int.from_bytes(digest, "big", signed=True) or 1


def is_vague(intent: str | None, tool: str | None = None) -> bool:
    """Whether an intent is very short or generic (module docstring). No intent: False,
    since there is nothing to judge (coverage counts the missing ones)."""
    if not isinstance(intent, str):
        return False
    words = _WORD.findall(intent.casefold())
    if not words:
        return False
    if len(words) < VAGUE_MIN_WORDS and sum(map(len, words)) < VAGUE_MIN_CHARS:
        return True
    own = set(_WORD.findall(tool.casefold())) if isinstance(tool, str) else set()
    return all(word in GENERIC_WORDS or word in own or word.isdigit() for word in words)


def dashboard_text(text: str | None) -> str | None:
    """The copy of an intent or outcome the dashboard may keep: `redact_intent` (PII
    stripped before it is clamped), then one line of plain text (no control characters,
    which PostgreSQL would refuse in a NUL's case). None when nothing is left."""
    if not isinstance(text, str):
        return None
    line = sanitize_label(redact_intent(text), INTENT_CAPTURE_LIMIT, title=False).text
    return line or None


def declares_required_intent(parameters: object) -> bool:
    """Whether a tool's own schema lists the intent label as required (a native tool
    declares it with `with_intent`); host-injected labels are optional."""
    if not isinstance(parameters, Mapping):
        return False
    properties = parameters.get("properties")
    required = parameters.get("required")
    return (
        isinstance(properties, Mapping)
        and is_intent_label_property(properties.get(INTENT_ARG))
        and isinstance(required, list | tuple)
        and INTENT_ARG in required
    )


@dataclass(frozen=True, slots=True)
class CallCopy:
    """One call of a finished turn, as the dashboard keeps it.

    `intent` / `outcome` are `dashboard_text` copies (None when absent or opted out);
    `has_intent` is whether the model wrote one, kept even when its text is not.
    `intent_context` says how the intent was asked for: `required`, `optional` (injected
    into a third-party tool) or `none` (the call carries no label). `started_at` is epoch
    seconds; `duration_ms` None when the call's start or end time is unknown.
    """

    call_id: str
    position: int
    tool: str
    server: str | None
    intent: str | None
    intent_hash: int | None
    outcome: str | None
    intent_context: IntentContextMode
    has_intent: bool
    vague: bool
    duplicate: bool
    status: CallStatus
    started_at: float
    duration_ms: float | None

    def to_row(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "position": self.position,
            "tool": self.tool,
            "server": self.server,
            "intent": self.intent,
            "intent_hash": self.intent_hash,
            "outcome": self.outcome,
            "intent_context": self.intent_context,
            "has_intent": self.has_intent,
            "vague": self.vague,
            "duplicate": self.duplicate,
            "status": self.status,
            "started_at": self.started_at,
            "duration_ms": self.duration_ms,
            "day": utc_day(self.started_at),
        }


_STATUS: Mapping[str, CallStatus] = {"settled": "ok", "error": "error"}

ToolTest = Callable[[str, str | None], bool]
"""Asked with a call's tool name and server."""


def copy_turn_calls(
    view: TurnView,
    *,
    required: ToolTest,
    omitted: ToolTest,
    ended_at: float = 0.0,
) -> list[CallCopy]:
    """The dashboard's copy of every call of a finished turn, in start order.

    `required(tool, server)`: the tool's own schema requires the intent (see
    `declares_required_intent`); `omitted(tool, server)`: the operator opted the tool out
    of intent copies. Intents and outcomes come from the turn's anchor ledger
    (`derive_anchors`, already redacted); a call still in flight counts as cancelled, as
    the turn's end made it. `ended_at` stands in for an unknown start time.
    """
    anchors = {anchor.tool_call_id: anchor for anchor in derive_anchors(view)}
    calls = sorted(view.calls(), key=lambda record: record.started_seq)
    drafts: list[CallCopy] = []
    for position, record in enumerate(calls):
        anchor = anchors.get(record.call_id)
        has_intent = record.carries_intent and has_label_text(record.intent)
        keep = not omitted(record.tool, record.server)
        intent = dashboard_text(anchor.intent) if keep and anchor is not None else None
        outcome = dashboard_text(anchor.outcome) if keep and anchor is not None else None
        mode: IntentContextMode = "none"
        if record.carries_intent:
            mode = "required" if required(record.tool, record.server) else "optional"
        started = record.started_at or ended_at
        settled = record.settled_at
        drafts.append(
            CallCopy(
                call_id=_name(record.call_id),
                position=position,
                tool=_name(record.tool),
                server=_name(record.server) if record.server is not None else None,
                intent=intent,
                intent_hash=intent_hash(intent) if intent else None,
                outcome=outcome,
                intent_context=mode,
                has_intent=has_intent,
                vague=is_vague(intent, record.tool),
                duplicate=False,
                status=_STATUS.get(record.state, "cancelled"),
                started_at=started,
                duration_ms=(settled - started) * 1000 if started and settled >= started else None,
            )
        )
    siblings = Counter(
        (c.tool, c.server, c.intent_hash) for c in drafts if c.intent_hash is not None
    )
    return [
        replace(copy, duplicate=True)
        if copy.intent_hash is not None and siblings[(copy.tool, copy.server, copy.intent_hash)] > 1
        else copy
        for copy in drafts
    ]


_NAME_LIMIT = 200


def _name(text: str) -> str:
    """A tool, server or call name as stored: one line, no control characters (a model
    may call a tool by any name, and PostgreSQL refuses a NUL)."""
    return sanitize_label(text, _NAME_LIMIT, title=False).text or "?"


# --- days ----------------------------------------------------------------------------------


def utc_day(timestamp: float) -> int:
    """The UTC day number of an epoch time (day 0 is 1970-01-01)."""
    return int(timestamp // DAY_SECONDS) if timestamp > 0 else 0


def since_day(period: str, today: int) -> int | None:
    """The first day of `period` (a `PERIODS` key) ending on `today`; None: no start.
    An unknown period is all time."""
    days = PERIODS.get(period)
    return None if days is None else today - days + 1


def chart_bucket_days(first_day: int, last_day: int) -> int:
    """Days per bar so a chart stays readable: one day up to about three months, then a
    week, then thirty days."""
    span = last_day - first_day + 1
    if span <= 92:
        return 1
    return 7 if span <= 7 * 92 else 30


def day_label(day: int) -> str:
    """`2026-12-01` for a UTC day number."""
    return (datetime.date(1970, 1, 1) + datetime.timedelta(days=day)).isoformat()
