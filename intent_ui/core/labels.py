"""What each tool-call card and each group header says (§5, §9.2-9.5).

Four pure pieces, shared by every view (browser, terminal, store):

- `card_label(call)`: the §5.1 table for one call. The label-bearing gate comes first: a
  tool the server did not mark shows the default label even when its arguments contain a
  business parameter named `intent`.
- `group_header(calls, activity_label)`: the §5.2 three-phase header. Precedence:
  resolved activity label > latest in-flight intent > latest settled outcome > subagent /
  ask-question counts > `Used N tools`. "Latest" means the highest `seq` (stamped when the
  change arrived), never list order, so out-of-order settlement cannot rewind the header.
- `sanitize_label(text)`: model-authored text made safe for one line of chrome (§9.5).
  Applied at render; stored data stays faithful.
- `MinimumDisplay`: holds a header label for a minimum time during bursts (§9.4) without
  delaying the underlying state.

Labels returned by `card_label` / `group_header` are raw (unsanitised) text: pass them
through `sanitize_label` when rendering.
"""

from __future__ import annotations

import functools
import html
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import bleach

from intent_ui.core.capabilities.intent import INTENT_ARG, apply_outcome
from intent_ui.core.events import CallState
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.text import INVISIBLE, scrub_surrogates

__all__ = [
    "ASK_QUESTION_TOOL_NAMES",
    "FINAL_STATES",
    "GROUP_HEADER_MIN_CALLS",
    "IN_FLIGHT_STATES",
    "SUBAGENT_TOOL_NAMES",
    "CallCategory",
    "CallView",
    "DisplayText",
    "HeaderView",
    "MinimumDisplay",
    "Sibling",
    "card_is_live",
    "card_label",
    "default_label",
    "group_header",
    "has_label_text",
    "sanitize_label",
    "sibling_suffixes",
    "tool_category",
    "tool_name_summary",
]

CallCategory = Literal["tool", "subagent", "ask_question"]
HeaderPhase = Literal["in_flight", "settled", "summarized"]
HeaderSource = Literal["activity", "intent", "outcome", "subagents", "questions", "count"]
HeaderGlyph = Literal["tools", "subagents", "questions"]

IN_FLIGHT_STATES: frozenset[str] = frozenset({"streaming", "running", "background"})
"""States whose label is still live; a backgrounded dispatch stays in flight (§10.3)."""

FINAL_STATES: frozenset[str] = frozenset({"settled", "error", "cancelled"})

GROUP_HEADER_MIN_CALLS = 2
"""A block shows a group header (and so can show an activity label) from this many calls;
a single call is shown as its card alone."""

SUBAGENT_TOOL_NAMES: frozenset[str] = frozenset({"subagent"})
"""Tools whose groups count agents (`Running 2 agents`, Users glyph; §5.3)."""

ASK_QUESTION_TOOL_NAMES: frozenset[str] = frozenset({"ask_user_question"})
"""Tools whose groups count questions (`Asking 2 questions`, question glyph; §5.3)."""


def tool_category(tool: str) -> CallCategory:
    """The homogeneous-group category of a tool name."""
    if tool in SUBAGENT_TOOL_NAMES:
        return "subagent"
    if tool in ASK_QUESTION_TOOL_NAMES:
        return "ask_question"
    return "tool"


@dataclass(frozen=True, slots=True)
class CallView:
    """Everything label resolution needs about one call.

    `seq` is the sequence number of the call's last label-relevant change: its first
    parsable intent arrived, or it settled. `intent` is the (possibly partial) intent text
    and is only honoured when `label_bearing` is true.
    """

    call_id: str
    tool: str
    state: CallState
    server: str | None = None
    label_bearing: bool = False
    intent: str | None = None
    outcome: str | None = None
    outcome_patch: Mapping[str, str] | None = None
    seq: int = 0
    category: CallCategory = "tool"

    @property
    def in_flight(self) -> bool:
        return self.state in IN_FLIGHT_STATES

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


# --- card labels (§5.1) -----------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def default_label(
    tool: str, server: str | None = None, *, settled: bool, lang: str = DEFAULT_LANGUAGE
) -> str:
    """Today's label: `Running {tool}` / `Ran {tool}`, plus ` in {server}` for MCP tools.
    Remembered: every card of every push asks for it, and it only depends on its inputs."""
    label = translate("card.ran" if settled else "card.running", lang, tool=tool)
    if server:
        label = translate("card.in_server", lang, label=label, server=server)
    return label


def has_label_text(value: object) -> bool:
    """Whether `value` would show any text once sanitised (blank and markup-only do not)."""
    if not isinstance(value, str):
        return False
    # Asked for every label on every fragment: a letter or digit up front always survives
    # sanitising (nothing before it can hide it), which answers almost every intent in
    # constant time.
    return value[:1].isalnum() or bool(sanitize_label(value, title=False).text)


def card_label(call: CallView, lang: str = DEFAULT_LANGUAGE) -> str:
    """The card's label, resolved by the §5.1 table (raw text: sanitise at render)."""
    running = default_label(call.tool, call.server, settled=False, lang=lang)
    # The gate: only server-marked calls may show model text or tool-authored outcomes.
    intent = call.intent if call.label_bearing and has_label_text(call.intent) else None
    outcome = call.outcome if call.label_bearing and has_label_text(call.outcome) else None
    state = call.state
    if state in ("streaming", "running"):
        return intent or running
    if state == "background":
        return translate("card.background", lang, label=intent) if intent else running
    ran = default_label(call.tool, call.server, settled=True, lang=lang)
    if state == "settled":
        if outcome:
            return outcome
        if intent:
            return _patched(intent, call.outcome_patch if call.label_bearing else None)
        return ran
    if state == "error":
        # A success patch ("Searching" -> "Searched") would claim success: never applied.
        return translate("card.failed", lang, label=outcome or intent or ran)
    if state == "cancelled":
        return translate("card.cancelled", lang, label=intent or running)
    return intent or running


def _patched(intent: str, patch: Mapping[str, str] | None) -> str:
    if patch is None:
        return intent
    result = apply_outcome(intent, None, patch)
    return result if isinstance(result, str) and result else intent


def card_is_live(call: CallView) -> bool:
    """Whether the card shimmers: streaming, running or backgrounded."""
    return call.state in IN_FLIGHT_STATES


# --- sibling collisions -------------------------------------------------------------------

SIBLING_VALUE_LIMIT = 40
"""How many characters of the telling argument value a disambiguated card shows."""


@dataclass(frozen=True, slots=True)
class Sibling:
    """One card of a block, as collision checking sees it: its raw label, whether that
    label is the model's (an intent or the outcome it settled into), and its parsed
    arguments (None while they do not parse, e.g. still streaming)."""

    label: str
    from_intent: bool
    arguments: Mapping[str, object] | None


def sibling_suffixes(siblings: Sequence[Sibling], lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """Per sibling, the text to append to its card label ("" for none).

    Sibling calls whose model-written labels are identical read as one call twice; each
    gets ` · "<value>"` of the first argument (other than the intent) whose value differs
    among them (`Searching the codebase · "oauth"` / `· "mcp"`). Only siblings whose
    arguments parse take part, so a card still streaming gets its suffix once they do.
    The value is sanitised like a label and capped; the group header is not affected.
    """
    suffixes = [""] * len(siblings)
    by_label: dict[str, list[int]] = {}
    for index, sibling in enumerate(siblings):
        if sibling.from_intent and sibling.arguments is not None:
            by_label.setdefault(sibling.label, []).append(index)
    for members in by_label.values():
        if len(members) < 2:
            continue
        args = [siblings[i].arguments or {} for i in members]
        key = _telling_key(args)
        if key is None:
            continue
        for index, values in zip(members, args, strict=True):
            if key in values:
                shown = sanitize_label(_value_text(values[key]), SIBLING_VALUE_LIMIT).text
                if shown:
                    suffixes[index] = translate("card.sibling", lang, value=shown)
    return suffixes


_MISSING = object()


def _telling_key(args: Sequence[Mapping[str, object]]) -> str | None:
    """The first key, in argument order, whose values are not all the same."""
    seen: set[str] = {INTENT_ARG}
    for values in args:
        for key in values:
            if key in seen:
                continue
            seen.add(key)
            first = args[0].get(key, _MISSING)
            if any(other.get(key, _MISSING) != first for other in args[1:]):
                return key
    return None


def _value_text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


# --- group header (§5.2, §5.3, §9.2) ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeaderView:
    """A tool-call group's header.

    `text` is the label without the server suffix; the UI renders `server_suffix` in its
    own span (it is empty while the header shows a live intent, and when the calls do not
    share a server). `aria_label` always carries the call count. `collapse` is true only
    when a resolved activity label is shown: an intent header keeps the group open.
    `glyph` keeps the category icon even when intent text is shown.
    """

    text: str
    phase: HeaderPhase
    source: HeaderSource
    aria_label: str
    glyph: HeaderGlyph
    live: bool
    server_suffix: str
    count: int
    collapse: bool

    @property
    def full_text(self) -> str:
        return self.text + self.server_suffix


def tool_name_summary(calls: Iterable[CallView]) -> str | None:
    """The server every call shares (`github`), or None when they differ or are native."""
    servers = {call.server for call in calls}
    if len(servers) != 1:
        return None
    (server,) = servers
    return server or None


def group_header(
    calls: Iterable[CallView],
    activity_label: str | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> HeaderView:
    """Resolve a group's header by the §5.2 precedence chain.

    A non-blank activity label always wins (it is only generated once the block's batch
    has returned, so in practice it arrives after the calls settled); a pending or blank
    one is ignored, so the header stays at the settled phase.
    """
    group = tuple(calls)
    count = len(group)
    glyph = _glyph(group)
    in_flight = any(call.in_flight for call in group)
    server = tool_name_summary(group)
    suffix = translate("group.server_suffix", lang, server=server) if server else ""
    phase: HeaderPhase = "in_flight" if in_flight else "settled"

    text, source = _header_text(group, activity_label, glyph, in_flight, count, lang)
    if source == "activity":
        phase = "summarized"
    # The live intent is shown bare (§1's streaming example); the suffix returns at settle.
    shown_suffix = "" if source == "intent" else suffix
    # Only text that is still happening shimmers: a finished call's outcome, shown
    # because no in-flight call has an intent yet, stays still.
    live = phase == "in_flight" and source != "outcome"
    # The accessible name reads the whole label once it stops changing, and the text on
    # screen while it is live: a live label changes with every fragment, and a name
    # growing with each is work for the page and noise to a screen reader (the whole line
    # is the header's title). Either way, at most a window of a very long label.
    shown = sanitize_label((text + shown_suffix)[:TITLE_WINDOW], title=not live)
    named = shown.text if live else shown.title
    if source in ("count", "subagents", "questions"):
        aria = named
    else:
        aria = translate("group.aria", lang, label=named, n=count)
    return HeaderView(
        text=text,
        phase=phase,
        source=source,
        aria_label=aria,
        glyph=glyph,
        live=live,
        server_suffix=shown_suffix,
        count=count,
        collapse=source == "activity",
    )


def _header_text(
    group: tuple[CallView, ...],
    activity_label: str | None,
    glyph: HeaderGlyph,
    in_flight: bool,
    count: int,
    lang: str,
) -> tuple[str, HeaderSource]:
    if activity_label is not None and has_label_text(activity_label):
        return activity_label, "activity"
    live = _latest(
        call
        for call in group
        if call.in_flight and call.label_bearing and has_label_text(call.intent)
    )
    if live is not None:
        return card_label(live, lang), "intent"
    settled = _latest(
        call
        for call in group
        if call.final
        and call.label_bearing
        and (has_label_text(call.intent) or has_label_text(call.outcome))
    )
    if settled is not None:
        return card_label(settled, lang), "outcome"
    if glyph == "subagents":
        key = "group.agents_running" if in_flight else "group.agents_ran"
        return translate(key, lang, n=count), "subagents"
    if glyph == "questions":
        key = "group.questions_asking" if in_flight else "group.questions_asked"
        return translate(key, lang, n=count), "questions"
    return translate("group.used", lang, n=count), "count"


def _latest(calls: Iterable[CallView]) -> CallView | None:
    # Highest seq wins; on a tie the later call in the group does (stable and deterministic).
    best: CallView | None = None
    for call in calls:
        if best is None or call.seq >= best.seq:
            best = call
    return best


def _glyph(group: tuple[CallView, ...]) -> HeaderGlyph:
    if group and all(call.category == "subagent" for call in group):
        return "subagents"
    if group and all(call.category == "ask_question" for call in group):
        return "questions"
    return "tools"


# --- sanitising (§9.5) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DisplayText:
    """One line of safe plain text (`text`, capped) and its uncapped form (`title`)."""

    text: str
    title: str

    @property
    def truncated(self) -> bool:
        return self.text != self.title


ELLIPSIS = "…"
DEFAULT_LABEL_LIMIT = 120
TITLE_WINDOW = 2048
"""The most of a label that a text recomputed on every streamed change (a live card's
tooltip, a header's accessible name) shows; the settled card's tooltip shows it all."""

# C0/C1 controls (newlines and tabs included) and the Unicode line/paragraph separators
# become spaces; bidi overrides and isolates, marks and the BOM (`INVISIBLE`) are removed
# outright because they can reorder or hide the surrounding chrome ("Trojan source").
_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SPACES = re.compile(" {2,}")


def sanitize_label(
    text: object, limit: int = DEFAULT_LABEL_LIMIT, *, title: bool = True
) -> DisplayText:
    """Make model-authored text safe for one line of chrome. Never raises.

    - Plain text: markup is shown as the characters the model wrote, never interpreted
      (`<img src=x onerror=alert(1)>` renders as text; the renderer escapes it into a
      text node, so no element is created). Entities stay as written.
    - One line: control characters and line breaks become spaces, runs of spaces collapse,
      the ends are trimmed; bidi controls and the BOM are removed; a lone surrogate
      becomes U+FFFD. `{{tool0turn0}}` and markdown stay literal.
    - `text` is capped at `limit` characters, ending in `…` when cut; the cut never splits
      a combining mark, variation selector, skin tone, ZWJ sequence or flag from its base.
      `title` is the whole cleaned line.
    - `title=False` is for callers that show only the capped text (a label still
      streaming, a blank check): the work is then bounded by `limit`, not by the length
      of `text`, so a label growing by one character per fragment stays linear overall.
      `title` comes back empty when the text was cut (`truncated` stays true).
    """
    try:
        raw = text if isinstance(text, str) else ("" if text is None else str(text))
        window = _PREFIX_WINDOW * max(1, limit if isinstance(limit, int) else 1)
        if not title and len(raw) > window:
            # Cleaning only shortens text, and only locally: when the cleaned head of the
            # text still overflows the cap, the cap of the whole text is the cap of its head.
            head = _clean_line(raw[:window])
            if len(head) > limit:
                return DisplayText(text=_cap(head, limit), title="")
        line = _clean_line(raw)
        return DisplayText(text=_cap(line, limit), title=line)
    except Exception:  # the renderer must never fail on model output
        return DisplayText(text="", title="")


_PREFIX_WINDOW = 4
"""How many characters per capped character `title=False` cleans at most."""


def _clean_line(raw: str) -> str:
    """`raw` as one line of plain text. One push cleans the same text several times (a
    card's tooltip, its header, the header's accessible name, its timeline mark), and a
    stored turn is cleaned again on every reload: short texts are remembered."""
    if len(raw) > _CLEAN_CACHE_CHARS:
        return _one_line(_plain_text(raw))
    return _clean_line_cached(raw)


_CLEAN_CACHE_CHARS = 4 * TITLE_WINDOW


@functools.lru_cache(maxsize=1024)
def _clean_line_cached(raw: str) -> str:
    return _one_line(_plain_text(raw))


def _plain_text(text: str) -> str:
    """The model's characters, as text: markup is never interpreted, never dropped.

    bleach escapes every tag (none is allowed) and the result is unescaped once, so what
    reaches the text node is exactly what the model wrote (`<img src=x onerror=…>` shows
    as those characters); the renderer escapes it, and no element is ever created.
    """
    if "<" not in text:
        return text
    try:
        return html.unescape(bleach.clean(text, tags=set(), attributes={}, strip=False))
    except Exception:
        return text


def _one_line(text: str) -> str:
    text = scrub_surrogates(text)
    text = INVISIBLE.sub("", text)
    text = _BREAKING.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def _cap(line: str, limit: int) -> str:
    limit = max(1, limit) if isinstance(limit, int) else DEFAULT_LABEL_LIMIT
    if len(line) <= limit:
        return line
    cut = limit - 1  # room for the ellipsis
    boundary = cut
    while boundary > 0 and not _is_boundary(line, boundary):
        boundary -= 1
    if boundary == 0 and cut > 0:
        # One cluster longer than the limit (e.g. stacked combining marks): cut inside it
        # rather than show nothing; dropping trailing marks never detaches them.
        boundary = cut
    head = line[:boundary].rstrip().rstrip("\u200d")
    return head + ELLIPSIS


def _is_boundary(text: str, i: int) -> bool:
    """Whether a cut between text[i-1] and text[i] keeps grapheme clusters whole."""
    after = text[i]
    before = text[i - 1]
    if _extends(after) or before == "\u200d":
        return False
    if _regional(before) and _regional(after):
        run = 0
        j = i - 1
        while j >= 0 and _regional(text[j]):
            run += 1
            j -= 1
        return run % 2 == 0  # an odd run means text[i] completes a flag
    return True


def _extends(ch: str) -> bool:
    code = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or code == 0x200D  # zero-width joiner
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


# --- minimum display time (§9.4) --------------------------------------------------------


class MinimumDisplay:
    """Keep each header label on screen for at least `min_ms` during fast bursts.

    Pure: the caller passes the clock. `offer(latest, now)` returns what to show now; a
    label that arrives too soon is held (only the newest is kept) and `due_ms(now)` says
    how long until it may be shown, at which point the caller offers again (or calls
    `tick`). The underlying state is never delayed; only the display is.
    """

    __slots__ = ("_held", "_min_ms", "_shown", "_shown_at")

    def __init__(self, min_ms: float = 200) -> None:
        self._min_ms = max(0.0, float(min_ms))
        self._shown: str | None = None
        self._shown_at = 0.0
        self._held: str | None = None

    @property
    def shown(self) -> str | None:
        return self._shown

    @property
    def held(self) -> str | None:
        return self._held

    def offer(self, text: str, now_ms: float) -> str:
        """Offer the latest label; return the label to display at `now_ms`."""
        # A label that merely grows (the same sentence still streaming in) is shown at once:
        # only a switch to a different label has to wait out the minimum time.
        grows = self._shown is not None and text.startswith(self._shown)
        if self._shown is None or grows or self._elapsed(now_ms) >= self._min_ms:
            if text != self._shown:
                self._shown, self._shown_at = text, float(now_ms)
            self._held = None
            return text
        self._held = text
        return self._shown

    def tick(self, now_ms: float) -> str | None:
        """Show the held label if its time has come; return the label to display."""
        if self._held is not None and self._elapsed(now_ms) >= self._min_ms:
            return self.offer(self._held, now_ms)
        return self._shown

    def due_ms(self, now_ms: float) -> float | None:
        """Milliseconds from `now_ms` until the held label may show; None if none is held."""
        if self._held is None:
            return None
        return max(0.0, self._min_ms - self._elapsed(now_ms))

    def _elapsed(self, now_ms: float) -> float:
        # A clock that goes backwards counts as no time passed.
        return max(0.0, float(now_ms) - self._shown_at)
