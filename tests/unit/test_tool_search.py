"""Ranking deferred tools for `tool_search`."""

from __future__ import annotations

from typing import Any

from intent_ui.agent.tool_search import rank_tools, tool_search_definition
from intent_ui.core.capabilities.intent import is_intent_label_property

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


def test_another_form_of_a_word_finds_the_tool() -> None:
    registry = {
        **REGISTRY,
        "grep_code": {"description": "Search the code base for a pattern."},
    }
    assert rank_tools("searching", registry) == ["grep_code"]
    assert rank_tools("emailing the team", registry) == ["send_email"]
    assert rank_tools("converted documents", registry) == ["convert_pdf"]


def test_a_word_few_tools_hold_ranks_above_one_many_hold() -> None:
    registry = {
        "read_file": {"description": "Read a file from the workspace."},
        "write_file": {"description": "Write a file to the workspace."},
        "read_issue": {"description": "Read an issue from the tracker."},
    }
    assert rank_tools("read the tracker", registry) == ["read_issue", "read_file"]


def test_an_empty_or_wordless_registry_finds_nothing() -> None:
    assert rank_tools("search", {}) == []
    assert rank_tools("search", {"x": {"description": "!!"}}) == []
    assert rank_tools("the", REGISTRY) == []


def first_property(definition: dict[str, Any]) -> object:
    return next(iter(definition["parameters"]["properties"].values()))


def test_definition_is_self_describing_only_with_intents_on() -> None:
    assert is_intent_label_property(first_property(tool_search_definition(intents=True)))
    assert not is_intent_label_property(first_property(tool_search_definition(intents=False)))
