"""intent_ui.core.capabilities.outcome: the settled label a tool's outcome makes of the intent."""

from __future__ import annotations

from typing import Any

import pytest

from intent_ui.core.capabilities.outcome import apply_outcome


def test_outcome_wins_over_patch_and_intent() -> None:
    assert (
        apply_outcome(
            "Searching for OAuth handling",
            "Found 12 results for OAuth handling",
            {"from": "Searching", "to": "Searched"},
        )
        == "Found 12 results for OAuth handling"
    )


def test_blank_outcome_falls_through_to_the_patch() -> None:
    assert (
        apply_outcome("Searching for OAuth", "  ", {"from": "Searching", "to": "Searched"})
        == "Searched for OAuth"
    )


def test_patch_edits_the_span_and_keeps_the_rest() -> None:
    assert (
        apply_outcome(
            "Searching for OAuth handling", outcome_patch={"from": "Searching", "to": "Searched"}
        )
        == "Searched for OAuth handling"
    )


def test_patch_replaces_first_occurrence_only() -> None:
    assert (
        apply_outcome(
            "Reading a.py, then Reading b.py", outcome_patch={"from": "Reading", "to": "Read"}
        )
        == "Read a.py, then Reading b.py"
    )


def test_patch_is_case_sensitive() -> None:
    text = "searching for OAuth"
    assert apply_outcome(text, outcome_patch={"from": "Searching", "to": "Searched"}) == text


def test_patch_replacement_is_literal() -> None:
    patch = {"from": "Pricing", "to": r"Priced at $1 \g<0> \1 \\"}
    assert (
        apply_outcome("Pricing the plan", outcome_patch=patch)
        == r"Priced at $1 \g<0> \1 \\ the plan"
    )


def test_patch_from_is_literal_not_a_regex() -> None:
    assert apply_outcome("Matching a.b", outcome_patch={"from": ".", "to": "!"}) == "Matching a!b"


@pytest.mark.parametrize(
    "patch",
    [
        {"to": "Searched"},
        {"from": "", "to": "Searched"},
        {"from": "Looking", "to": "Looked"},
        {"from": "Searching"},
        {"from": "Searching", "to": 3},
        {"from": 3, "to": "x"},
        "Searching->Searched",
        None,
    ],
)
def test_patch_noops_leave_the_intent_unchanged(patch: Any) -> None:
    assert apply_outcome("Searching for OAuth", outcome_patch=patch) == "Searching for OAuth"


@pytest.mark.parametrize(
    "intent",
    [
        "Searching for OAuth handling in the callback router",
        "Recording the location of the OAuth callback router",
        "Buscando el manejo de OAuth en el enrutador",
        "検索中: コールバックルーターの OAuth 処理",
        "searching for lowercase things",
        "Searching",
    ],
)
def test_no_outcome_means_the_intent_unchanged_never_a_tense_rewrite(intent: str) -> None:
    assert apply_outcome(intent) == intent
    assert apply_outcome(intent, None, None) == intent
    assert apply_outcome(intent, "") == intent


def test_non_english_patch_applies_literally() -> None:
    assert apply_outcome("Buscando OAuth", outcome_patch={"from": "Buscando", "to": "Busqué"}) == (
        "Busqué OAuth"
    )
    assert (
        apply_outcome("検索中…", outcome_patch={"from": "検索中", "to": "検索済み"}) == "検索済み…"
    )


def test_no_intent_and_no_outcome_is_none() -> None:
    assert apply_outcome(None) is None
    assert apply_outcome(None, outcome_patch={"from": "a", "to": "b"}) is None


def test_outcome_labels_a_call_without_intent() -> None:
    assert apply_outcome(None, "Found 3 files") == "Found 3 files"
