"""Ranking deferred tools for `tool_search`."""

from __future__ import annotations

from intent_ui.agent.tool_search import name_has_intent_label, rank_tools, tool_search_definition
from intent_ui.core.capabilities.intent import with_intent

REGISTRY = {
    "convert_pdf": {"description": "Convert a PDF document to text."},
    "createIssue": {"description": "Open an issue in the tracker."},
    "send_email": {"description": "Send an email message."},
}


def test_names_and_descriptions_match_and_camel_case_splits() -> None:
    assert rank_tools("turn a pdf into text", REGISTRY) == ["convert_pdf"]
    assert rank_tools("create an issue", REGISTRY) == ["createIssue"]


def test_no_overlap_finds_nothing() -> None:
    assert rank_tools("weather forecast", REGISTRY) == []


def test_definition_is_self_describing_only_with_intents_on() -> None:
    assert name_has_intent_label(tool_search_definition(intents=True))
    assert not name_has_intent_label(tool_search_definition(intents=False))
    assert name_has_intent_label({"parameters": dict(with_intent({"type": "object"}))})
