"""Text a reader sees as one character but that holds several code points, shared by the
tests of every cap that counts grapheme clusters (labels, captured intents)."""

from __future__ import annotations

import pytest

# Man, woman, girl and boy joined by zero-width joiners: seven code points.
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
FLAG = "\U0001f1ef\U0001f1f5"  # Japan: two regional indicators
WAVE = "\U0001f44b\U0001f3fd"  # waving hand + medium skin tone
HEART = "\u2764\ufe0f"  # heart + emoji variation selector
KSHI = "\u0915\u094d\u0937\u093f"  # Devanagari क्षि: ka, virama, ssa, vowel sign i
ACUTE = "e\u0301"  # e + combining acute accent

CLUSTERS = pytest.mark.parametrize(
    "cluster",
    [FAMILY, FLAG, WAVE, HEART, KSHI, ACUTE],
    ids=["zwj-family", "flag", "skin-tone", "variation-selector", "devanagari", "accent"],
)
"""Parametrizes a test over one sample of each kind (argument `cluster`)."""
