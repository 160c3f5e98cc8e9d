"""Model-authored text made safe for one line of the app's chrome; the rules in words:
docs/labels.md (Sanitising and capping).

Applied at render, never when stored: the event log keeps exactly what arrived. Labels
from `card_label` and `group_header` are raw text and pass through `sanitize_label` here.
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass

import bleach

from intent_ui.core.text import INVISIBLE, grapheme_end, scrub_surrogates

__all__ = [
    "DEFAULT_LABEL_LIMIT",
    "ELLIPSIS",
    "TITLE_WINDOW",
    "DisplayText",
    "has_label_text",
    "sanitize_label",
    "truncate_label",
]


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
    - `text` is capped at `limit` characters as a reader counts them (grapheme clusters),
      ending in `…` when cut (see `truncate_label`). `title` is the whole cleaned line.
    - `title=False` is for callers that show only the capped text (a label still
      streaming, a blank check): the work is then bounded by `limit`, not by the length
      of `text`, so a label growing by one character per fragment stays linear overall.
      `title` comes back empty when the text was cut (`truncated` stays true).
    """
    try:
        raw = text if isinstance(text, str) else ("" if text is None else str(text))
        window = _PREFIX_WINDOW * max(1, limit if isinstance(limit, int) else 1)
        if not title and len(raw) > window:
            # Cleaning only shortens text, and only locally, and a cluster boundary depends
            # only on what comes before it: when the cleaned head of the text still
            # overflows the cap, the cap of the whole text is the cap of its head.
            head = _clean_line(raw[:window])
            if grapheme_end(head, limit) < len(head):
                return DisplayText(text=truncate_label(head, limit), title="")
        line = _clean_line(raw)
        return DisplayText(text=truncate_label(line, limit), title=line)
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


def truncate_label(line: str, limit: int = DEFAULT_LABEL_LIMIT) -> str:
    """`line` cut to at most `limit` grapheme clusters, the last of them `…` when cut.

    A grapheme cluster is what a reader sees as one character: an accented letter, an
    Indic conjunct (`क्षि`), a family or skin-toned emoji, a flag. The cut never splits
    one, and a trailing space before the ellipsis goes. Only a pile-up of combining marks
    longer than any real cluster is cut inside (after `GRAPHEME_MAX_CHARS` code points).
    """
    limit = max(1, limit) if isinstance(limit, int) else DEFAULT_LABEL_LIMIT
    if grapheme_end(line, limit) == len(line):
        return line
    return line[: grapheme_end(line, limit - 1)].rstrip() + ELLIPSIS


def has_label_text(value: object) -> bool:
    """Whether `value` would show any text once sanitised (blank and markup-only do not)."""
    if not isinstance(value, str):
        return False
    # Asked for every label on every fragment: a letter or digit up front always survives
    # sanitising (nothing before it can hide it), which answers almost every intent in
    # constant time.
    return value[:1].isalnum() or bool(sanitize_label(value, title=False).text)
