"""Token accounting for tool schemas (core.tokens) and the offline tokenizer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from intent_ui.agent.tokenizer import APPROXIMATE_NAME, get_tokenizer
from intent_ui.core.capabilities.intent import INTENT_PROPERTY, with_intent
from intent_ui.core.tokens import (
    AgentTokenTotals,
    ToolTokenCost,
    agent_token_totals,
    count_definition,
    definition_text,
    tool_token_cost,
)

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
MCP_TOOL: dict[str, Any] = {
    "name": "search_code",
    "description": "Search code.",
    "parameters": SCHEMA,
}
NATIVE_TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": dict(with_intent(SCHEMA)),
    "intent": True,
}


def chars(text: str) -> int:
    """A stand-in counter: one token per character, so differences are exact lengths."""
    return len(text)


def test_definition_text_keeps_only_what_the_provider_receives() -> None:
    text = definition_text({**NATIVE_TOOL, "allowed_callers": ["direct"]})
    assert list(json.loads(text)) == ["name", "description", "parameters"]


def test_count_definition_counts_the_compact_json() -> None:
    assert count_definition(MCP_TOOL, chars) == len(definition_text(MCP_TOOL))


def test_cost_of_a_tool_without_the_label_is_the_injected_property() -> None:
    cost = tool_token_cost(MCP_TOOL, chars)
    assert cost.without_intent == count_definition(MCP_TOOL, chars)
    # The property key, its description, and the separating punctuation.
    prop = json.dumps({"intent": dict(INTENT_PROPERTY)}, separators=(",", ":"))
    assert cost.intent == len(prop) - 2 + 1


def test_cost_of_a_native_tool_is_measured_as_declared() -> None:
    cost = tool_token_cost(NATIVE_TOOL, chars)
    assert cost.with_intent == count_definition(NATIVE_TOOL, chars)
    assert cost.without_intent < cost.with_intent


def test_a_tool_that_cannot_carry_the_label_costs_nothing() -> None:
    code_only = {**MCP_TOOL, "allowed_callers": ["code_execution"]}
    assert tool_token_cost(code_only, chars).intent == 0


def test_a_business_intent_parameter_is_not_counted_as_the_label() -> None:
    issue = {
        "name": "create_issue",
        "parameters": {"type": "object", "properties": {"intent": {"type": "string"}}},
    }
    cost = tool_token_cost(issue, chars)
    assert cost.intent == 0
    assert cost.without_intent == count_definition(issue, chars)


def test_measuring_does_not_mutate_the_definition() -> None:
    before = json.dumps(NATIVE_TOOL, sort_keys=True)
    tool_token_cost(NATIVE_TOOL, chars)
    tool_token_cost(MCP_TOOL, chars)
    assert json.dumps(NATIVE_TOOL, sort_keys=True) == before
    assert "intent" not in MCP_TOOL["parameters"]["properties"]


def test_agent_totals_add_intents_only_for_describing_tools() -> None:
    a = ToolTokenCost(without_intent=100, with_intent=170)
    b = ToolTokenCost(without_intent=50, with_intent=120)
    totals = agent_token_totals([(a, True), (b, False)])
    assert totals == AgentTokenTotals(without_intents=150, with_intents=220, describing=1)
    assert totals.intents == 70


def test_agent_totals_of_no_tools_are_zero() -> None:
    assert agent_token_totals([]) == AgentTokenTotals(0, 0, 0)


def test_a_describing_tool_without_label_cost_is_not_counted_as_describing() -> None:
    flat = ToolTokenCost(without_intent=40, with_intent=40)
    assert agent_token_totals([(flat, True)]).describing == 0


def test_real_tokenizer_works_offline_and_names_itself() -> None:
    tokenizer = get_tokenizer()
    assert tokenizer.exact, tokenizer.name
    assert tokenizer.name != APPROXIMATE_NAME
    assert "cl100k_base" in tokenizer.name
    assert tokenizer.count("hello world") == 2


def test_intent_property_costs_tens_of_tokens_with_the_real_tokenizer() -> None:
    # About 70 tokens (docs/capabilities.md); the exact figure depends on framing.
    cost = tool_token_cost(MCP_TOOL, get_tokenizer().count)
    assert 50 <= cost.intent <= 100


def test_real_tokenizer_needs_no_download(tmp_path: Path) -> None:
    # An empty cache and a dead proxy: any attempt to fetch a vocabulary would fail.
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(tmp_path),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    script = (
        "from intent_ui.agent.tokenizer import get_tokenizer; t = get_tokenizer(); "
        "print(t.exact, t.count('hello world'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["True", "2"], done.stderr
