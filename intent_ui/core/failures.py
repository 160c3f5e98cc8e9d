"""Why a turn went wrong, in words a person can act on.

A turn that ends badly carries a kind (`TurnDone.error_kind`, set where the failure is
caught); each kind is shown with a message saying what happened and a hint saying what
to do, from the locale catalogue (`error.{kind}` and `error.{kind}_hint`):

- `unreachable`: the model provider could not be reached (refused, DNS, timeout);
- `auth`: it refused the API key (401, 403);
- `not_found`: it knows neither the address nor the model (404);
- `rate_limit`: it is limiting requests, or the quota is used up (429);
- `provider`: it failed otherwise (5xx, another status, a stream that broke);
- `cut_off`: the model reached its output limit (`max_tokens`);
- `max_rounds`: the turn reached its limit of tool rounds;
- `internal`: the app failed while running the turn;
- `failed`: the turn ended with an error of no known kind (turns stored before kinds
  were, or a crash outside the run loop);
- `tool`: the turn itself ended, but a tool call failed (the model was told);
- `empty`: the model ended the turn without a word or a call (nothing to read);
- `restarted`: the server stopped while the turn waited for the user (an approval or an
  answer), so it ended there.

`describe_failure` picks what an ended turn shows: its own failure first, else its first
failed tool call, else an empty answer. The detail is the error as recorded, cut to its
first lines and never a traceback, so the words above stay the message and the detail
only backs them up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from intent_ui.core.locale import DEFAULT_LANGUAGE, translate
from intent_ui.core.text import clip

__all__ = [
    "FAILURE_KINDS",
    "FailureKind",
    "FailureNote",
    "describe_failure",
    "failure_detail",
    "turn_failure_kind",
]

FailureKind = Literal[
    "unreachable",
    "auth",
    "not_found",
    "rate_limit",
    "provider",
    "cut_off",
    "max_rounds",
    "internal",
    "failed",
    "tool",
    "empty",
    "restarted",
]
FAILURE_KINDS: frozenset[str] = frozenset(get_args(FailureKind))

_STOP_REASON_KINDS: dict[str, FailureKind] = {"max_tokens": "cut_off", "max_rounds": "max_rounds"}
_DETAIL_LINES = 3
_DETAIL_CHARS = 400
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\)", re.MULTILINE)


class _Call(Protocol):
    @property
    def tool(self) -> str: ...
    @property
    def server(self) -> str | None: ...
    @property
    def state(self) -> str: ...
    @property
    def error(self) -> str | None: ...


class _Turn(Protocol):
    """What `describe_failure` reads of a `TurnView`."""

    done: bool
    stop_reason: str | None
    error: str | None
    error_kind: str | None

    @property
    def text(self) -> str: ...
    def calls(self) -> Iterable[_Call]: ...


@dataclass(frozen=True, slots=True)
class FailureNote:
    """What a failed turn shows: `message` (what happened), `hint` (what to do) and
    `detail` (the recorded error, short)."""

    kind: FailureKind
    message: str
    hint: str
    detail: str


def turn_failure_kind(
    stop_reason: str | None, error: str | None, error_kind: str | None
) -> FailureKind | None:
    """The kind of a turn's own failure; None when it did not fail."""
    if not error:
        return None
    if error_kind in FAILURE_KINDS:
        return error_kind  # type: ignore[return-value]  # checked against the Literal
    return _STOP_REASON_KINDS.get(stop_reason or "", "failed")


def describe_failure(
    turn: _Turn, lang: str = DEFAULT_LANGUAGE, *, error: str | None = None
) -> FailureNote | None:
    """What an ended `turn` shows as its failure, or None. `error` is the turn's error
    as stored, when the caller has it (it may say more than the log's last event)."""
    if not turn.done and not error:
        return None
    error = error or turn.error
    kind = turn_failure_kind(turn.stop_reason, error, turn.error_kind)
    if kind is not None:
        return FailureNote(
            kind,
            translate(f"error.{kind}", lang),
            translate(f"error.{kind}_hint", lang),
            failure_detail(error or ""),
        )
    calls = list(turn.calls())
    failed = [call for call in calls if call.state == "error"]
    if not failed:
        if calls or turn.text.strip() or turn.stop_reason != "end_turn":
            return None
        return FailureNote(
            "empty", translate("error.empty", lang), translate("error.empty_hint", lang), ""
        )
    first = failed[0]
    name = (
        translate("card.in_server", lang, label=first.tool, server=first.server)
        if first.server
        else first.tool
    )
    return FailureNote(
        "tool",
        translate("error.tool", lang, tool=name, n=len(failed)),
        translate("error.tool_hint", lang),
        failure_detail(first.error or ""),
    )


def failure_detail(text: str) -> str:
    """The first lines of a recorded error, on one line, without any traceback."""
    found = _TRACEBACK.search(text)
    if found is not None:
        text = text[: found.start()]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return clip(" ".join(lines[:_DETAIL_LINES]), _DETAIL_CHARS)
