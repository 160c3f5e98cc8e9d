"""Summaries: prompt building, cleaning, and the demo's deterministic summaries."""

from __future__ import annotations

import json

from intent_ui.agent.activity import (
    MAX_SUMMARY_CHARS,
    DemoSummarizer,
    SummaryEntry,
    build_summary_prompt,
    clean_summary,
)
from intent_ui.core.states import FinalState


def entry(
    status: FinalState = "settled", outcome: str | None = "Found 3 matches for OAuth"
) -> SummaryEntry:
    return SummaryEntry(
        tool_name="grep_search",
        tool_input='{"intent": "Searching for OAuth handling", "pattern": "OAuth"}',
        status=status,
        output="a.py:1: OAuth",
        outcome=outcome,
        intent="Searching for OAuth handling",
    )


def test_prompt_entries_keep_the_intent_in_the_tool_input() -> None:
    prompt = build_summary_prompt([entry()])
    line = json.loads(prompt.splitlines()[1])
    assert json.loads(line["input"])["intent"] == "Searching for OAuth handling"
    assert line["outcome"] == "Found 3 matches for OAuth"


def test_clean_summary_takes_one_line_without_quotes_or_period() -> None:
    assert clean_summary('"Located the OAuth router."\nextra') == "Located the OAuth router"
    assert clean_summary("  \n ") is None
    assert clean_summary(None) is None


def test_clean_summary_caps_long_text_with_an_ellipsis() -> None:
    summary = clean_summary("x" * 500)
    assert summary is not None
    assert len(summary) == MAX_SUMMARY_CHARS
    assert summary.endswith("…")


async def test_demo_summary_joins_outcomes_and_counts_failures() -> None:
    second = entry(outcome="Found 1 match for MCP")
    failed = entry(status="error", outcome=None)
    summary = await DemoSummarizer().summarize([entry(), second, failed])
    assert summary == "Found 3 matches for OAuth; found 1 match for MCP; 1 call failed"


async def test_demo_summary_is_none_for_no_entries() -> None:
    assert await DemoSummarizer().summarize([]) is None
