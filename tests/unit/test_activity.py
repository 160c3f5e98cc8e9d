"""Activity labels: prompt building, cleaning, and the demo's deterministic labels."""

from __future__ import annotations

import json

from intent_ui.agent.activity import (
    MAX_ACTIVITY_LABEL_CHARS,
    ActivityEntry,
    DemoActivityLabeler,
    build_activity_prompt,
    clean_activity_label,
)


def entry(
    status: str = "settled", outcome: str | None = "Found 3 matches for OAuth"
) -> ActivityEntry:
    return ActivityEntry(
        tool_name="grep_search",
        tool_input='{"intent": "Searching for OAuth handling", "pattern": "OAuth"}',
        status=status,
        output="a.py:1: OAuth",
        outcome=outcome,
        intent="Searching for OAuth handling",
    )


def test_prompt_entries_keep_the_intent_in_the_tool_input() -> None:
    prompt = build_activity_prompt([entry()])
    line = json.loads(prompt.splitlines()[1])
    assert json.loads(line["input"])["intent"] == "Searching for OAuth handling"
    assert line["outcome"] == "Found 3 matches for OAuth"


def test_clean_label_takes_one_line_without_quotes_or_period() -> None:
    assert clean_activity_label('"Located the OAuth router."\nextra') == "Located the OAuth router"
    assert clean_activity_label("  \n ") is None
    assert clean_activity_label(None) is None


def test_clean_label_caps_long_text_with_an_ellipsis() -> None:
    label = clean_activity_label("x" * 500)
    assert label is not None
    assert len(label) == MAX_ACTIVITY_LABEL_CHARS
    assert label.endswith("…")


async def test_demo_label_joins_outcomes_and_counts_failures() -> None:
    second = entry(outcome="Found 1 match for MCP")
    failed = entry(status="error", outcome=None)
    label = await DemoActivityLabeler().label([entry(), second, failed])
    assert label == "Found 3 matches for OAuth; found 1 match for MCP; 1 call failed"


async def test_demo_label_is_none_for_no_entries() -> None:
    assert await DemoActivityLabeler().label([]) is None
