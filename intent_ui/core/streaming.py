"""Incremental intent extraction from streamed tool-call arguments.

Providers stream a tool call's JSON arguments in fragments (`{"intent":"Searching for OAu`).
The intent is the **first** key, so its sentence can be shown while the rest of the
arguments (often kilobytes of file content) is still arriving.

`IntentStream` is an incremental decoder in the style of httpx's: `feed(chunk)` returns
the current `StreamingIntent` (or None) and does work proportional to the chunk only. It
is a character state machine that never looks at a character twice, and once the intent
value has closed every later `feed` returns at once. `read_streaming_intent(args)` is the
one-shot form for a whole buffer (a str) or for already-parsed args (a mapping).

Rules, all pinned by tests:

- Only the first key counts. A reordered object (`{"path": ..., "intent": ...}`), a key
  that merely starts with `intent` (`"intents"`), `{}`, a first value that is not a
  string, and garbage all give None. Nothing ever raises.
- The text only grows by appending while the value is open. An escape that has not fully
  arrived is held back, never shown half-decoded: a dangling backslash, a partial
  `\\uXXXX`, and a high surrogate (`\\ud83d`) whose low half has not arrived yet.
  `flush()` drops whatever is still held back at the end of input.
- Malformed escapes never raise. Like a UTF-8 decoder in "replace" mode, each malformed
  sequence becomes one U+FFFD and the character that broke it is read again as ordinary
  input: `\\x` -> `\\ufffdx`, `\\u12G4` -> `\\ufffdG4`, a lone low surrogate -> `\\ufffd`,
  a high surrogate not followed by a low one -> `\\ufffd` plus whatever followed. (Python's
  `json.loads` would keep a lone surrogate, which cannot be encoded as UTF-8 and would
  break rendering and storage downstream.) A raw lone surrogate in the text, or in an
  already-parsed intent, becomes U+FFFD too.
- Raw control characters inside the string (invalid JSON) are kept as they are: sanitising
  is the renderer's job (docs/labels.md), and stored data stays faithful.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from intent_ui.core.text import scrub_surrogates

__all__ = ["IntentStream", "StreamingIntent", "read_streaming_intent"]

_INTENT_KEY = "intent"
_REPLACEMENT = "\ufffd"
_JSON_WHITESPACE = frozenset(" \t\n\r")
_SIMPLE_ESCAPES: dict[str, str] = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
# A run of characters that need no decoding; matched in C so long values stay cheap.
_PLAIN_RUN = re.compile(r'[^"\\]+')


@dataclass(frozen=True, slots=True)
class StreamingIntent:
    """The intent text decoded so far; `complete` once its closing quote has arrived."""

    text: str
    complete: bool


# Scanner states. Plain ints rather than an Enum: the loop compares them per character and
# an Enum member lookup costs several times a global read.
_BEFORE_OBJECT: Final = 0  # leading whitespace, waiting for `{`
_BEFORE_KEY: Final = 1  # after `{`, waiting for the first key's opening quote
_STRING: Final = 2  # inside the key or the value (see `_in_key`)
_ESCAPE: Final = 3  # after a backslash
_UNICODE: Final = 4  # after `\u`, collecting four hex digits in `_hex`
_AFTER_HIGH: Final = 5  # a high surrogate decoded; a `\` must follow for its low half
_AFTER_HIGH_BACKSLASH: Final = 6  # ... and then a `u`
_AFTER_KEY: Final = 7  # the key was `intent`; waiting for `:`
_BEFORE_VALUE: Final = 8  # waiting for the value's opening quote
_DONE: Final = 9  # the value closed, or there is no streaming intent: ignore the rest


class IntentStream:
    """Feed streamed argument text chunk by chunk; read the intent as it grows.

    Each `feed` costs O(len(chunk)) scanning plus one copy of the (short) intent text when
    it changed; after the value closes (or the first key turns out not to be `intent`) a
    `feed` costs O(1).
    """

    __slots__ = ("_current", "_hex", "_in_key", "_key", "_pending_high", "_state", "_text")

    def __init__(self) -> None:
        self._state = _BEFORE_OBJECT
        self._in_key = True
        self._key = ""
        self._text = ""
        self._hex = ""
        self._pending_high: int | None = None
        self._current: StreamingIntent | None = None

    @property
    def current(self) -> StreamingIntent | None:
        """The latest result: what the last `feed` (or `flush`) returned."""
        return self._current

    def feed(self, chunk: str) -> StreamingIntent | None:
        """Consume the next fragment of argument text; return the intent so far."""
        if self._state == _DONE or not isinstance(chunk, str) or not chunk:
            return self._current
        chunk = scrub_surrogates(chunk)  # a raw lone surrogate, like an escaped one
        out: list[str] = []
        i = 0
        n = len(chunk)
        while i < n and self._state != _DONE:
            if self._state == _STRING:
                run = _PLAIN_RUN.match(chunk, i)
                if run is not None:
                    self._emit(run.group(), out)
                    i = run.end()
                    continue
            # A step returns False when the character must be read again in the new state
            # (the tail of a malformed escape); every such path ends in a consuming state.
            if self._step(chunk[i], out):
                i += 1
        self._publish(out)
        return self._current

    def flush(self) -> StreamingIntent | None:
        """End of input: drop any held-back partial escape and return the final value."""
        self._hex = ""
        self._pending_high = None
        self._state = _DONE
        return self._current

    def _step(self, c: str, out: list[str]) -> bool:
        state = self._state
        if state == _STRING:
            if c == '"':
                self._close_string()
            else:  # the plain-run match took everything else, so this is a backslash
                self._state = _ESCAPE
        elif state == _ESCAPE:
            return self._step_escape(c, out)
        elif state == _UNICODE:
            return self._step_unicode(c, out)
        elif state == _AFTER_HIGH:
            if c == "\\":
                self._state = _AFTER_HIGH_BACKSLASH
            else:
                self._state = _STRING
                self._drop_pending_high(out)
                return False
        elif state == _AFTER_HIGH_BACKSLASH:
            if c == "u":
                self._hex = ""
                self._state = _UNICODE
            else:  # some other escape follows the high surrogate
                self._state = _ESCAPE
                self._drop_pending_high(out)
                return False
        elif c in _JSON_WHITESPACE:
            pass
        elif state == _BEFORE_OBJECT:
            self._expect(c == "{" or c == "\ufeff", _BEFORE_KEY if c == "{" else state)
        elif state == _BEFORE_KEY:
            self._expect(c == '"', _STRING)
        elif state == _AFTER_KEY:
            self._expect(c == ":", _BEFORE_VALUE)
        elif state == _BEFORE_VALUE:
            self._expect(c == '"', _STRING)
            if self._state == _STRING:
                self._in_key = False
                self._current = StreamingIntent("", False)
        return True

    def _step_escape(self, c: str, out: list[str]) -> bool:
        simple = _SIMPLE_ESCAPES.get(c)
        if simple is not None:
            self._state = _STRING
            self._emit(simple, out)
            return True
        if c == "u":
            self._hex = ""
            self._state = _UNICODE
            return True
        self._state = _STRING
        self._emit(_REPLACEMENT, out)
        return False

    def _step_unicode(self, c: str, out: list[str]) -> bool:
        if c not in _HEX_DIGITS:
            self._hex = ""
            # State first: emitting into a key may end the scan (DONE) and must win.
            self._state = _STRING
            self._drop_pending_high(out)
            if self._state == _STRING:
                self._emit(_REPLACEMENT, out)
            return False
        self._hex += c
        if len(self._hex) < 4:
            return True
        unit = int(self._hex, 16)
        self._hex = ""
        self._state = _STRING
        high = self._pending_high
        if high is not None:
            self._pending_high = None
            if 0xDC00 <= unit <= 0xDFFF:
                self._emit(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)), out)
                return True
            self._emit(_REPLACEMENT, out)
            if self._state == _DONE:
                return True
        if 0xD800 <= unit <= 0xDBFF:
            self._pending_high = unit
            self._state = _AFTER_HIGH
        elif 0xDC00 <= unit <= 0xDFFF:
            self._emit(_REPLACEMENT, out)
        else:
            self._emit(chr(unit), out)
        return True

    def _drop_pending_high(self, out: list[str]) -> None:
        if self._pending_high is not None:
            self._pending_high = None
            self._emit(_REPLACEMENT, out)

    def _expect(self, ok: bool, next_state: int) -> None:
        self._state = next_state if ok else _DONE

    def _emit(self, piece: str, out: list[str]) -> None:
        if not self._in_key:
            out.append(piece)
            return
        self._key += piece
        # The key is short: give up as soon as it can no longer be `intent`.
        if not _INTENT_KEY.startswith(self._key):
            self._state = _DONE

    def _close_string(self) -> None:
        if self._in_key:
            self._state = _AFTER_KEY if self._key == _INTENT_KEY else _DONE
        else:
            self._state = _DONE

    def _publish(self, out: list[str]) -> None:
        if self._in_key:
            return
        complete = self._state == _DONE
        if out:
            self._text += "".join(out)
        elif self._current is not None and self._current.complete == complete:
            return
        self._current = StreamingIntent(self._text, complete)


def read_streaming_intent(args: str | Mapping[str, object] | None) -> StreamingIntent | None:
    """The intent carried by tool-call `args`, whole or partial; None if there is none.

    A mapping (already parsed) yields its `intent` only when that is the first key and a
    string, always complete. A string is read as (possibly partial) JSON text.
    """
    try:
        if isinstance(args, str):
            return IntentStream().feed(args)
        if isinstance(args, Mapping):
            for key, value in args.items():
                if key == _INTENT_KEY and isinstance(value, str):
                    return StreamingIntent(scrub_surrogates(value), True)
                return None
    except Exception:
        # A hostile Mapping can raise from items(); a reader of labels must not.
        return None
    return None
