"""Text made safe where it crosses an edge of the system (pure: no I/O).

Three facts live here and nowhere else:

- **Lone surrogates.** `json.loads` turns the escape `"\\ud800"` into a Python string
  holding a lone surrogate, which no UTF-8 encoder accepts: printing it, storing it or
  sending it back to a provider raises. A file name that is not UTF-8 arrives the same
  way (Python's surrogateescape). `scrub_surrogates` / `scrub_decoded` replace each one
  with U+FFFD, once, where decoded text enters the system (the stream accumulators, the
  tool-argument parser, MCP tool results, every tool result), so nothing downstream has to
  care; `scrub_fields` does it for every text of a record, which is how each turn event
  enters its session (the one place events are stored and shown from).
- **Terminal safety.** Text that reaches a terminal (the CLI's output, provider error
  messages, an MCP server's stderr) must not carry escape sequences: a provider error body
  or a server's stderr could otherwise retitle the window, move the cursor or hide what was
  printed. `terminal_text` removes whole escape sequences and every other control
  character, and the bidi controls that can reorder the surrounding text.
- **Grapheme clusters.** What a reader sees as one character may be several code points
  (an accented letter, an Indic conjunct, a family emoji, a flag). Every cap on text that
  people read or that is stored for them counts clusters and never cuts one in two:
  `grapheme_end` says where the first N end, by Unicode's segmentation rules.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any, TypeVar

import regex

__all__ = [
    "GRAPHEME_MAX_CHARS",
    "INVISIBLE",
    "LONE_SURROGATE",
    "REPLACEMENT",
    "clip",
    "grapheme_end",
    "loads_scrubbed",
    "scrub_decoded",
    "scrub_fields",
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


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate (`\\ud800` to `\\udfff`): the only way JSON text
read from bytes can decode to one. A lookalike (an escaped backslash before `ud8`) only
costs the full walk."""


def loads_scrubbed(text: str) -> Any:
    """`json.loads(text)` with lone surrogates replaced in every string, keys included.

    A text that holds no surrogate and no escape of one cannot decode to one, so the
    common case costs two searches of the text instead of a walk of what it decoded to
    (this runs on every chunk of every provider stream). Raises what `json.loads` raises.
    """
    value = json.loads(text)
    if LONE_SURROGATE.search(text) is None and _SURROGATE_ESCAPE.search(text) is None:
        return value
    return scrub_decoded(value)


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


_Record = TypeVar("_Record")


def scrub_fields(record: _Record) -> _Record:
    """A dataclass instance with lone surrogates replaced in every text it holds: its string
    fields and the strings inside its dict and list fields.

    Returns the very same object when there is nothing to replace (a regex search per text
    field), so the hot path of a stream costs no copy.
    """
    changes: dict[str, Any] = {}
    for name in _field_names(type(record)):
        value = getattr(record, name)
        if type(value) is str:
            if LONE_SURROGATE.search(value) is None:
                continue
            clean: Any = LONE_SURROGATE.sub(REPLACEMENT, value)
        elif isinstance(value, dict | list):
            clean = scrub_decoded(value)
        else:
            continue
        if clean is not value:
            changes[name] = clean
    return dataclasses.replace(record, **changes) if changes else record  # type: ignore[type-var]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""The field names of each record class: runs on every event of every stream, so the
fields of a class are looked up once."""


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


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


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in `…` when cut.

    For quoting what a server or a model sent inside a message of our own (an error, a
    log line), where the whole of it would drown the message.
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


GRAPHEME_MAX_CHARS = 32
"""The most code points one cluster may hold and still count as one. Far more than any
real cluster holds (the longest emoji sequences about ten; Unicode's stream-safe text
allows thirty combining marks in a row), so only a pile-up of marks ("zalgo" text) is cut
inside, and a cap of N clusters still bounds the length of what it keeps."""

# `\X` is one extended grapheme cluster, by the Unicode version the `regex` module ships.
_GRAPHEME = regex.compile(r"\X")


@functools.lru_cache(maxsize=64)
def _first_clusters(count: int) -> regex.Pattern[str]:
    """Up to `count` clusters in one match, segmented in C (a few caps are in use)."""
    return regex.compile(rf"\X{{0,{count}}}")


def grapheme_end(text: str, count: int) -> int:
    """Where the first `count` grapheme clusters of `text` end (`len(text)` when it holds
    no more than that), so `text[:grapheme_end(text, n)]` is at most n whole clusters.

    A cluster longer than `GRAPHEME_MAX_CHARS` ends the count: the cut falls inside it,
    after that many code points, rather than keeping it whole or dropping it. The work is
    bounded by `count`, not by the length of `text`.
    """
    if count <= 0:
        return 0
    if len(text) <= count:  # every cluster holds at least one code point
        return len(text)
    head = text[: count + 1]
    if head.isascii() and "\r\n" not in head:
        # Every ASCII character but a CR before an LF is a cluster of its own, and none
        # extends the one before it: the common case (asked per label per fragment) needs
        # no segmentation.
        return count
    match = _first_clusters(count).match(text)
    end = match.end() if match is not None else 0
    if end < count + GRAPHEME_MAX_CHARS:
        # No cluster among them can be longer than the cap: it alone would hold more.
        return end
    end = 0
    for seen, cluster in enumerate(_GRAPHEME.finditer(text), start=1):
        if cluster.end() - cluster.start() > GRAPHEME_MAX_CHARS:
            return cluster.start() + GRAPHEME_MAX_CHARS
        end = cluster.end()
        if seen == count:
            break
    return end
