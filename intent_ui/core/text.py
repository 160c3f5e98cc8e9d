"""Text made safe where it crosses an edge of the system (pure: no I/O).

Two facts live here and nowhere else:

- **Lone surrogates.** `json.loads` turns the escape `"\\ud800"` into a Python string
  holding a lone surrogate, which no UTF-8 encoder accepts: printing it, storing it or
  sending it back to a provider raises. `scrub_surrogates` / `scrub_decoded` replace each
  one with U+FFFD, once, where decoded provider text enters the system (the stream
  accumulators, the tool-argument parser, MCP tool results), so nothing downstream has to
  care.
- **Terminal safety.** Text that reaches a terminal (the CLI's output, provider error
  messages, an MCP server's stderr) must not carry escape sequences: a provider error body
  or a server's stderr could otherwise retitle the window, move the cursor or hide what was
  printed. `terminal_text` removes whole escape sequences and every other control
  character, and the bidi controls that can reorder the surrounding text.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "INVISIBLE",
    "LONE_SURROGATE",
    "REPLACEMENT",
    "scrub_decoded",
    "scrub_surrogates",
    "terminal_text",
]

REPLACEMENT = "\ufffd"
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Any surrogate code point: in a Python string every one is unencodable as UTF-8."""

INVISIBLE = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Bidi marks, overrides and isolates and the BOM: they can reorder or hide nearby text."""

# ESC-introduced sequences, matched whole so their parameters do not survive as litter:
# CSI (ESC [ ... final), OSC / DCS / SOS / PM / APC strings (ended by BEL or ST, or by
# the end of the text when unterminated), and the two-character escapes (ESC + one byte).
# The 8-bit C1 forms (0x9b CSI, 0x9d OSC, ...) are matched the same way.
_ESCAPE_SEQUENCE = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?
    | \x1b[ -~]?
    """,
    re.VERBOSE,
)
_CONTROL_MULTILINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROL_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LINE_BREAKS = re.compile("\r\n|\r|\u2028|\u2029")


def scrub_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when none)."""
    if LONE_SURROGATE.search(text) is None:
        return text
    return LONE_SURROGATE.sub(REPLACEMENT, text)


def scrub_decoded(value: Any) -> Any:
    """A decoded JSON value with lone surrogates replaced in every string, keys included.

    Returns the very same object when there is nothing to replace (the common case, one
    read-only walk), so a stream chunk costs no copy. Non-JSON leaves (numbers, None,
    other objects) pass unchanged.
    """
    if not _has_surrogate(value):
        return value
    if isinstance(value, str):
        return LONE_SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {scrub_decoded(k): scrub_decoded(v) for k, v in value.items()}
    return type(value)(scrub_decoded(item) for item in value)


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, dict | list):
        # One C-speed encode and one search instead of a Python walk: this runs on every
        # chunk of every stream. Anything the encoder refuses is walked instead.
        try:
            encoded = json.dumps(value, ensure_ascii=False, check_circular=False)
        except (TypeError, ValueError, RecursionError):
            pass
        else:
            return LONE_SURROGATE.search(encoded) is not None
    if isinstance(value, str):
        return LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        for key, item in value.items():
            if _has_surrogate(key) or _has_surrogate(item):
                return True
    elif isinstance(value, list | tuple):
        for item in value:
            if _has_surrogate(item):
                return True
    return False


def terminal_text(text: object, *, multiline: bool = True) -> str:
    """`text` safe to write to a terminal. Never raises.

    Escape sequences are removed whole; other control characters are dropped, except that
    with `multiline` line breaks (normalised to `\\n`) and tabs are kept, and without it
    every line break and tab becomes a space and runs of whitespace collapse to one line.
    Bidi controls and the BOM are removed; lone surrogates become U+FFFD.
    """
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    raw = scrub_surrogates(raw)
    raw = _ESCAPE_SEQUENCE.sub("", raw)
    raw = INVISIBLE.sub("", raw)
    if multiline:
        return _CONTROL_MULTILINE.sub("", _LINE_BREAKS.sub("\n", raw))
    return " ".join(_CONTROL_ONE_LINE.sub(" ", raw).split())
