"""A tool-call group's header; the rules in words: docs/labels.md (Group header).

`group_header(calls, summary)` resolves the three-phase header by its precedence:
resolved summary > latest in-flight intent > latest settled outcome > subagent /
ask-question counts > `Used N tools`. "Latest" means the highest `seq` (stamped when the
change arrived), never list order, so out-of-order settlement cannot rewind the header.
Its text is raw (unsanitised): pass it through `sanitize_label` when rendering.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from intent_ui.core.labels import CallView, card_label
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.sanitize import TITLE_WINDOW, has_label_text, sanitize_label

__all__ = [
    "GROUP_HEADER_MIN_CALLS",
    "HeaderGlyph",
    "HeaderPhase",
    "HeaderSource",
    "HeaderView",
    "group_header",
    "header_source",
    "tool_name_summary",
]

HeaderPhase = Literal["in_flight", "settled", "summarized"]
HeaderSource = Literal["summary", "intent", "outcome", "subagents", "questions", "count"]
HeaderGlyph = Literal["tools", "subagents", "questions"]

GROUP_HEADER_MIN_CALLS = 2
"""A group shows a header (and so can show a summary) from this many calls;
a single call is shown as its card alone."""


@dataclass(frozen=True, slots=True)
class HeaderView:
    """A tool-call group's header.

    `text` is the label without the server suffix; the UI renders `server_suffix` in its
    own span (it is empty while the header shows a live intent, and when the calls do not
    share a server). `aria_label` always carries the call count. `collapse` is true only
    when a resolved summary is shown: an intent header keeps the group open.
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
    summary: str | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> HeaderView:
    """Resolve a group's header by the precedence chain (docs/labels.md, Group header).

    A non-blank summary always wins (it is only generated once the group's batch
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

    text, source = _header_text(group, summary, glyph, in_flight, count, lang)
    if source == "summary":
        phase = "summarized"
    # The live intent is shown bare, reading as the live edge; the suffix returns at settle.
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
        collapse=source == "summary",
    )


def _header_text(
    group: tuple[CallView, ...],
    summary: str | None,
    glyph: HeaderGlyph,
    in_flight: bool,
    count: int,
    lang: str,
) -> tuple[str, HeaderSource]:
    if summary is not None and has_label_text(summary):
        return summary, "summary"
    live = _live_source(group)
    if live is not None:
        return card_label(live, lang), "intent"
    settled = _settled_source(group)
    if settled is not None:
        return card_label(settled, lang), "outcome"
    if glyph == "subagents":
        key = "group.agents_running" if in_flight else "group.agents_ran"
        return translate(key, lang, n=count), "subagents"
    if glyph == "questions":
        key = "group.questions_asking" if in_flight else "group.questions_asked"
        return translate(key, lang, n=count), "questions"
    return translate("group.used", lang, n=count), "count"


def header_source(calls: Iterable[CallView], summary: str | None = None) -> str | None:
    """The id of the call whose label the header shows (the latest live intent, else the
    latest settled outcome); None when it shows the summary or a count. While it stays
    the same, a change to another call's intent text leaves the header as it reads."""
    if summary is not None and has_label_text(summary):
        return None
    group = tuple(calls)
    found = _live_source(group) or _settled_source(group)
    return None if found is None else found.call_id


def _live_source(group: tuple[CallView, ...]) -> CallView | None:
    return _latest(
        call
        for call in group
        if call.in_flight and call.carries_intent and has_label_text(call.intent)
    )


def _settled_source(group: tuple[CallView, ...]) -> CallView | None:
    return _latest(
        call
        for call in group
        if call.final
        and call.carries_intent
        and (has_label_text(call.intent) or has_label_text(call.outcome))
    )


def _latest(calls: Iterable[CallView]) -> CallView | None:
    # Highest label seq wins; on a tie the later call in the group does (stable and deterministic).
    best: CallView | None = None
    for call in calls:
        if best is None or call.label_seq >= best.label_seq:
            best = call
    return best


def _glyph(group: tuple[CallView, ...]) -> HeaderGlyph:
    if group and all(call.category == "subagent" for call in group):
        return "subagents"
    if group and all(call.category == "ask_question" for call in group):
        return "questions"
    return "tools"
