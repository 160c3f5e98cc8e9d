"""`core/text.py`: lone surrogates and terminal escape sequences at the edges."""

from __future__ import annotations

import json

from intent_ui.core.text import scrub_decoded, scrub_surrogates

LONE = json.loads('"\\ud800"')


def test_scrub_decoded_replaces_surrogates_in_keys_values_and_nested_lists() -> None:
    value = {"k" + LONE: ["x", {"y": LONE}, 3, None], "n": 1.5}
    assert scrub_decoded(value) == {"k\ufffd": ["x", {"y": "\ufffd"}, 3, None], "n": 1.5}


def test_clean_values_come_back_as_the_same_object() -> None:
    value = {"a": ["b", {"c": "d"}], "e": 1}
    assert scrub_decoded(value) is value
    text = "plain ✓ text 😀"
    assert scrub_surrogates(text) is text
