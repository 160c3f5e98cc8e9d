"""What the agents page shows of tools and agents (ui.builder_view): one section per tool
source, every switch's state, texts and cost, the token totals, and the agent list."""

from __future__ import annotations

from collections.abc import Mapping

from intent_ui.core.builder import CAPABILITY_OPTIONS, BuilderTool
from intent_ui.core.locale import DEFAULT_LANGUAGE
from intent_ui.core.tokens import ToolTokenCost
from intent_ui.store.models import Agent
from intent_ui.ui.builder_view import BuilderView, agent_rows, build_view

ALL = frozenset(CAPABILITY_OPTIONS)
SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}


def mcp_row(tool_id: str, name: str) -> BuilderTool:
    return BuilderTool(tool_id, name, "mcp", "github", {"name": name, "parameters": SCHEMA})


COSTS = {
    "search_code_mcp_github": ToolTokenCost(40, 110),
    "slow_mcp_github": ToolTokenCost(30, 100),
}
SEARCH = mcp_row("search_code_mcp_github", "search_code")
SLOW = mcp_row("slow_mcp_github", "slow")


def search_view(
    unavailable: Mapping[str, str] | None = None,
    sandbox_unavailable: str | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> BuilderView:
    """The view of `SEARCH` alone, with its costs, nothing set or picked, every
    capability on."""
    return build_view(
        [SEARCH],
        tool_options={},
        picked=[],
        capabilities=ALL,
        costs=COSTS,
        unavailable=unavailable,
        sandbox_unavailable=sandbox_unavailable,
        lang=lang,
    )


# --- tools by source --------------------------------------------------------------------------


def test_sources_native_first_then_servers() -> None:
    native = BuilderTool("read_file", "read_file", "native", "native", {"name": "read_file"})
    view = build_view([SEARCH, native], tool_options={}, picked=[], capabilities=ALL, costs={})
    assert [(g.kind, g.key) for g in view.sources] == [("native", "native"), ("mcp", "github")]


def test_row_shows_the_intent_cost_and_state() -> None:
    options = {"search_code_mcp_github": {"describe_intent": True}}
    view = build_view([SEARCH], tool_options=options, picked=[], capabilities=ALL, costs=COSTS)
    row = view.sources[0].tools[0]
    assert row.intent.pressed is True and row.intent.disabled is False
    assert row.intent.cost == "+70 tokens"
    assert "70 tokens" in row.intent.tooltip


def test_totals_count_only_picked_tools() -> None:
    options = {"search_code_mcp_github": {"describe_intent": True}}
    view = build_view(
        [SEARCH, SLOW],
        tool_options=options,
        picked=["search_code_mcp_github"],
        capabilities=ALL,
        costs=COSTS,
    )
    assert (view.tokens_without, view.tokens_with, view.describing) == (40, 110, 1)


def test_totals_without_the_capability_add_no_intents() -> None:
    options = {"search_code_mcp_github": {"describe_intent": True}}
    view = build_view(
        [SEARCH],
        tool_options=options,
        picked=["search_code_mcp_github"],
        capabilities={"run_in_background"},
        costs=COSTS,
    )
    assert view.tokens_with == view.tokens_without == 40


def test_describe_all_shows_pressed_only_when_every_eligible_tool_is_on() -> None:
    some = {"search_code_mcp_github": {"describe_intent": True}}
    every = {**some, "slow_mcp_github": {"describe_intent": True}}
    tools = [SEARCH, SLOW]
    assert (
        build_view(tools, tool_options=some, picked=[], capabilities=ALL, costs={})
        .sources[0]
        .describe_all.pressed
        is False
    )
    assert (
        build_view(tools, tool_options=every, picked=[], capabilities=ALL, costs={})
        .sources[0]
        .describe_all.pressed
        is True
    )


def test_code_only_row_is_disabled_with_its_state_visible() -> None:
    options = {
        "search_code_mcp_github": {"describe_intent": True, "allowed_callers": ["code_execution"]}
    }
    view = build_view([SEARCH], tool_options=options, picked=[], capabilities=ALL, costs=COSTS)
    toggle = view.sources[0].tools[0].intent
    assert (toggle.pressed, toggle.disabled, toggle.cost) == (True, True, "")
    assert "only called from code" in toggle.tooltip


def test_unavailable_server_gets_a_note() -> None:
    view = build_view(
        [],
        tool_options={},
        picked=[],
        capabilities=ALL,
        costs={},
        unavailable={"jira": "timed out"},
    )
    assert view.sources[0].key == "jira"
    assert view.sources[0].note == (
        "This server is not available right now (timed out); its tools can't be picked."
    )


def test_every_switch_is_named_by_what_it_shows_then_what_it_does() -> None:
    # Speech users say the visible text ("Describe") to press a switch, so the accessible
    # name starts with it, cost included.
    view = search_view()
    (source,) = view.sources
    row = source.tools[0]
    assert (row.intent.text, row.intent.label) == (
        "Describe",
        "Describe +70 tokens: show what search_code is doing",
    )
    assert row.defer.label == "On demand: load search_code only when needed"
    assert (source.describe_all.text, source.describe_all.label) == (
        "Describe all tools",
        "Describe all tools of github",
    )


def test_the_view_speaks_the_readers_language() -> None:
    view = search_view(unavailable={"jira": "timeout"}, lang="ja")
    github = next(g for g in view.sources if g.key == "github")
    assert github.title == "MCP サーバー: github"
    assert github.tools[0].intent.label == "説明 +70 トークン：search_code の動作を表示"
    assert github.describe_all.text == "すべてのツールを説明"
    jira = next(g for g in view.sources if g.key == "jira")
    assert jira.note == "このサーバーは現在利用できません（timeout）。そのツールは選択できません。"


def test_an_action_domain_comes_after_the_servers_and_says_where_it_is_from() -> None:
    post = BuilderTool(
        "postMessage_action_slack---com", "postMessage", "action", "slack.com", {"name": "p"}
    )
    view = build_view([post, SEARCH], tool_options={}, picked=[], capabilities=ALL, costs={})
    assert [(s.kind, s.key) for s in view.sources] == [("mcp", "github"), ("action", "slack.com")]
    assert view.sources[1].title == "Actions: slack.com"


def test_a_switch_whose_capability_is_off_shows_nothing() -> None:
    view = build_view(
        [SEARCH], tool_options={}, picked=[], capabilities={"deferred_tools"}, costs=COSTS
    )
    row = view.sources[0].tools[0]
    assert row.intent.text == row.background.text == row.code_only.text == ""
    assert row.defer.text == "On demand"


# --- the agent list -----------------------------------------------------------------------------


def agent(name: str, owner: str, *, shared: bool = False, tools: str = "[]") -> Agent:
    return Agent(
        name=name, owner_id=owner, shared=shared, tools_json=tools, created_at=0, updated_at=0
    )


def test_agent_rows_say_which_is_open_whose_it_is_and_what_it_uses() -> None:
    mine = agent("Reviewer", "alice", tools='["read_file", "grep_search"]')
    theirs = agent("Team helper", "bob", shared=True, tools='["read_file"]')
    rows = agent_rows([mine, theirs], selected=mine.id, user="alice")
    assert [(r.name, r.summary, r.selected, r.own, r.shared) for r in rows] == [
        ("Reviewer", "2 tools", True, True, False),
        ("Team helper", "1 tool", False, False, True),
    ]
    assert (rows[0].edit_label, rows[0].duplicate_label, rows[0].delete_label) == (
        "Edit Reviewer",
        "Duplicate Reviewer",
        "Delete Reviewer",
    )


def test_where_the_sandbox_cannot_run_the_native_section_says_why() -> None:
    reason = "the sandbox is switched off in the configuration (sandbox: enabled: false)"
    view = search_view(sandbox_unavailable=reason)
    native = view.sources[0]
    assert (native.kind, native.tools) == ("native", [])
    assert native.note == f"bash_tool and run_tools_with_code are not offered: {reason}."
    assert next(s for s in view.sources if s.key == "github").note == ""
    # Where it runs, nothing is said.
    view = search_view()
    assert [source.note for source in view.sources] == [""]
