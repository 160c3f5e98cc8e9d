"""`core/text.py`: lone surrogates and terminal escape sequences at the edges."""

from __future__ import annotations

import json

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from intent_ui.core.text import (
    GRAPHEME_MAX_CHARS,
    grapheme_end,
    scrub_decoded,
    scrub_surrogates,
    terminal_text,
)

LONE = json.loads('"\\ud800"')


def test_scrub_decoded_replaces_surrogates_in_keys_values_and_nested_lists() -> None:
    value = {"k" + LONE: ["x", {"y": LONE}, 3, None], "n": 1.5}
    assert scrub_decoded(value) == {"k\ufffd": ["x", {"y": "\ufffd"}, 3, None], "n": 1.5}


def test_values_json_cannot_encode_are_still_scrubbed() -> None:
    leaf = object()
    value = {"leaf": leaf, "deep": [{"z": LONE}], ("t", LONE): 1}
    scrubbed = scrub_decoded(value)
    assert scrubbed["leaf"] is leaf and scrubbed["deep"] == [{"z": "\ufffd"}]
    assert scrubbed[("t", "\ufffd")] == 1
    clean = {"leaf": leaf, "n": [1, "two"]}
    assert scrub_decoded(clean) is clean


def test_clean_values_come_back_as_the_same_object() -> None:
    value = {"a": ["b", {"c": "d"}], "e": 1}
    assert scrub_decoded(value) is value
    text = "plain ✓ text 😀"
    assert scrub_surrogates(text) is text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "red"),  # CSI
        ("\x1b]0;window title\x07text", "text"),  # OSC ended by BEL
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC ended by ST
        ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),  # DCS
        ("\x9b2Jclear", "clear"),  # 8-bit CSI
        ("a\x1bcb", "ab"),  # two-character escape (full reset)
        ("cut \x1b[", "cut "),  # unterminated at the end
        ("a\x00b\x08c\x7fd", "abcd"),
        ("rtl \u202egnp.exe", "rtl gnp.exe"),
        ("x" + LONE, "x\ufffd"),
        ("one\r\ntwo\rthree\u2028four\ttab", "one\ntwo\nthree\nfour\ttab"),
    ],
)
def test_terminal_text_removes_escape_sequences_whole(raw: str, shown: str) -> None:
    assert terminal_text(raw) == shown


def test_terminal_text_on_one_line_collapses_breaks_and_tabs() -> None:
    assert terminal_text(" a\r\nb\t\x1b[1mc\x1b[0m  d \n", multiline=False) == "a b c d"
    assert terminal_text(None) == ""
    assert terminal_text(42, multiline=False) == "42"


def _cluster_by_cluster(text: str, count: int) -> int:
    """Where the first `count` clusters end, one cluster at a time (the slow, plain way)."""
    end = 0
    for seen, cluster in enumerate(regex.finditer(r"\X", text), start=1):
        if cluster.end() - cluster.start() > GRAPHEME_MAX_CHARS:
            return cluster.start() + GRAPHEME_MAX_CHARS
        end = cluster.end()
        if seen == count:
            break
    return end


# Letters with and without combining marks, CR/LF, emoji joiners, flags' regional
# indicators, Devanagari signs: the characters that make or extend clusters.
_CLUSTER_PIECES = st.sampled_from(
    ["a", "b", " ", "\r", "\n", "\u0301", "\u200d", "\U0001f468", "\U0001f1eb", "क", "्", "ि"]
)


@given(st.lists(_CLUSTER_PIECES, max_size=60).map("".join), st.integers(0, 40))
def test_grapheme_end_agrees_with_counting_cluster_by_cluster(text: str, count: int) -> None:
    expected = 0 if count <= 0 else _cluster_by_cluster(text, count)
    assert grapheme_end(text, count) == (len(text) if len(text) <= count else expected)


def test_an_ascii_label_followed_by_a_combining_mark_keeps_the_mark() -> None:
    # The ASCII shortcut must not cut an accent off the last letter it keeps.
    assert grapheme_end("abe\u0301x", 3) == 4
    assert grapheme_end("ab\r\nc", 3) == 4
