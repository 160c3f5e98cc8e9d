from __future__ import annotations

import unicodedata

import pytest

from intent_ui.core.sanitize import DisplayText, has_label_text, sanitize_label
from intent_ui.core.text import GRAPHEME_MAX_CHARS
from tests.support.graphemes import CLUSTERS, FAMILY, FLAG, KSHI
from tests.support.label_helpers import OAUTH


def test_plain_text_passes_through() -> None:
    assert sanitize_label(OAUTH) == DisplayText(OAUTH, OAUTH)


def test_newlines_and_control_characters_become_single_spaces() -> None:
    shown = sanitize_label("  Reading\n\nthe\tfile\x00\x07 now\r\n ")
    assert shown.text == "Reading the file now"
    assert shown.title == "Reading the file now"


def test_unicode_line_separators_and_bidi_controls_are_removed() -> None:
    assert sanitize_label("a\u2028b\u202ecba\u2066x\ufeff").text == "a bcbax"


def test_long_intent_is_capped_with_an_ellipsis_and_full_title() -> None:
    intent = "Searching " + "x" * 290
    shown = sanitize_label(intent)
    assert len(intent) == 300
    assert len(shown.text) == 120
    assert shown.text.endswith("…")
    assert shown.text[:-1] == intent[:119]
    assert shown.title == intent
    assert shown.truncated


def test_cap_respects_a_custom_limit() -> None:
    assert sanitize_label("abcdef", limit=4).text == "abc…"
    assert sanitize_label("abcd", limit=4).text == "abcd"


def test_cut_does_not_leave_a_trailing_space_before_the_ellipsis() -> None:
    assert sanitize_label("abc defgh", limit=5).text == "abc…"


@CLUSTERS
def test_a_cap_counts_what_a_reader_sees_as_one_character(cluster: str) -> None:
    # Five fit a cap of five whole, however many code points each one holds.
    assert sanitize_label(cluster * 5, limit=5).text == cluster * 5
    # Six do not: four of them and the ellipsis, never a piece of the fifth.
    assert sanitize_label(cluster * 6, limit=5).text == cluster * 4 + "…"


@CLUSTERS
def test_a_cut_beside_a_cluster_keeps_it_whole_or_leaves_it_out(cluster: str) -> None:
    text = "Reading " + cluster + " notes"
    assert sanitize_label(text, limit=10).text == "Reading " + cluster + "…"
    assert sanitize_label(text, limit=9).text == "Reading…"


def test_a_long_label_of_family_emoji_keeps_119_of_them() -> None:
    shown = sanitize_label(FAMILY * 200)
    assert shown.text == FAMILY * 119 + "…"
    assert shown.title == FAMILY * 200


def test_flags_are_counted_in_pairs_of_indicators() -> None:
    usa = "\U0001f1fa\U0001f1f8"
    assert sanitize_label(FLAG + usa + FLAG + "!", limit=3).text == FLAG + usa + "…"


def test_one_giant_cluster_is_cut_rather_than_dropped() -> None:
    zalgo = "z" + "\u0301" * 200  # far longer than any real cluster
    assert sanitize_label(zalgo, limit=10).text == zalgo[:GRAPHEME_MAX_CHARS] + "…"
    cut = zalgo[:GRAPHEME_MAX_CHARS] + "…"
    assert sanitize_label("ok " + zalgo, limit=10).text == "ok " + cut


@pytest.mark.parametrize("text", [FAMILY * 300, KSHI * 300, "Reading " + "\u0301" * 2000])
def test_a_label_shown_without_its_title_is_cut_the_same_way(text: str) -> None:
    assert sanitize_label(text, title=False).text == sanitize_label(text).text


def test_img_onerror_renders_as_literal_text() -> None:
    shown = sanitize_label("Checking <img src=x onerror=alert(1)> payload")
    assert shown.text == "Checking <img src=x onerror=alert(1)> payload"
    assert shown.title == shown.text


def test_script_tags_stay_literal_text() -> None:
    assert sanitize_label("<script>alert(1)</script>Reading").text == (
        "<script>alert(1)</script>Reading"
    )


def test_entities_stay_as_written() -> None:
    assert sanitize_label("&lt;img src=x&gt;ok").text == "&lt;img src=x&gt;ok"


def test_comparisons_keep_their_angle_brackets() -> None:
    assert sanitize_label("Checking whether x < 10 & y > 2").text == (
        "Checking whether x < 10 & y > 2"
    )


def test_markdown_and_output_references_stay_literal() -> None:
    text = "Reading **{{tool0turn0}}** [link](http://x)"
    assert sanitize_label(text).text == text


def test_lone_surrogate_becomes_a_replacement_character() -> None:
    assert sanitize_label("ab\ud83dcd").text == "ab\ufffdcd"


@pytest.mark.parametrize("value", [None, 42, b"bytes", object()])
def test_non_text_never_raises(value: object) -> None:
    shown = sanitize_label(value)
    assert isinstance(shown.text, str)
    assert sanitize_label(None) == DisplayText("", "")


def test_no_unicode_normalisation_is_applied() -> None:
    # No Unicode normalisation: stored and shown text compare equal for plain input.
    decomposed = "Cafe\u0301"
    assert sanitize_label(decomposed).text == decomposed
    assert unicodedata.normalize("NFC", decomposed) != decomposed


@pytest.mark.parametrize(
    ("text", "shows"),
    [
        ("Reading the config", True),
        ("1 file", True),
        ("a<!-- the rest is a comment -->", True),
        ("<b></b>", True),  # markup is shown as the characters written
        ("\u202eabc", True),
        ("<!-- only a comment -->", False),
        ("   \t\n", False),
        ("\u202e\u2066", False),
        ("\x00\x01", False),
        ("", False),
        (None, False),
    ],
)
def test_has_label_text_agrees_with_what_sanitising_shows(text: object, shows: bool) -> None:
    assert has_label_text(text) is shows
    assert bool(sanitize_label(text, title=False).text) is shows
