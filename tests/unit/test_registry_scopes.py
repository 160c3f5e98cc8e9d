"""intent_ui.core.registry.ScopeRegistry: scopes, their names and relationships.

The seed's two examples (which use both registries) are in test_registry.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from intent_ui.core.registry import RegistryError, ScopeDescription, ScopeRegistry


def scope(**fields: Any) -> dict[str, Any]:
    """A valid scope; keyword arguments override or add fields."""
    return {"id": "sdk", "description": "SDK manual", "category": "knowledge", **fields}


def refused(scopes: list[object], *words: str, **options: Any) -> None:
    with pytest.raises(RegistryError) as caught:
        ScopeRegistry.create(scopes, **options)
    for word in words:
        assert word in str(caught.value), str(caught.value)


LINKS = ["aliases", "goal_ids", "knowledge_topic_ids", "tool_ids"]


def test_a_scope_is_an_immutable_record_with_empty_links_by_default() -> None:
    record = ScopeRegistry.create([scope()]).require("sdk")
    assert record == ScopeDescription(id="sdk", description="SDK manual", category="knowledge")
    for name in LINKS:
        assert getattr(record, name) == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.category = "code"  # type: ignore[misc]


def test_a_record_is_accepted_as_a_scope() -> None:
    record = ScopeRegistry.create([scope(aliases=["manual"])]).require("sdk")
    assert ScopeRegistry.create([record]).require("manual") == record


# --- rules -----------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["sdk", 1])
def test_a_scope_must_be_a_mapping(entry: object) -> None:
    refused([scope(), entry], "scope #2", "expected a mapping")


def test_an_unknown_field_is_refused_with_the_snake_case_hint() -> None:
    refused([scope(goalIds=["explain"])], "'goalIds'", "did you mean 'goal_ids'?")


@pytest.mark.parametrize("bad_id", [None, "", " "])
def test_an_id_must_be_a_non_blank_string(bad_id: object) -> None:
    refused([scope(id=bad_id)], "scope #1", "'id' must be a non-blank string")


@pytest.mark.parametrize("key", ["description", "category"])
@pytest.mark.parametrize("value", [None, "", "\t"])
def test_description_and_category_must_be_non_blank(key: str, value: object) -> None:
    refused([scope(**{key: value})], "scope 'sdk'", f"{key!r} must be a non-blank string")


def test_the_category_is_checked_against_the_declared_categories() -> None:
    refused([scope(category="code")], "category 'code'", "['knowledge']", categories=["knowledge"])
    assert ScopeRegistry.create([scope(category="code")]).require("sdk").category == "code"


def test_invalid_categories_are_refused() -> None:
    refused([scope()], "scope policy", "'categories'", categories=["knowledge", ""])


@pytest.mark.parametrize("key", LINKS)
@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("manual", ["must be a list of strings"]),
        (["manual", " "], ["each must be a non-blank string"]),
        (["manual", "manual"], ["'manual' twice"]),
    ],
)
def test_links_must_be_unique_non_blank_strings(key: str, value: object, words: list[str]) -> None:
    refused([scope(**{key: value})], "scope 'sdk'", f"{key!r}", *words)


@pytest.mark.parametrize(
    ("second", "name"),
    [
        ({"id": "sdk"}, "'sdk'"),
        ({"id": "docs", "aliases": ["sdk"]}, "'sdk'"),
        ({"id": "docs", "aliases": ["agent-core"]}, "'agent-core'"),
        ({"id": "agent-core"}, "'agent-core'"),
    ],
    ids=["duplicate-id", "alias-is-an-id", "shared-alias", "id-is-an-alias"],
)
def test_ids_and_aliases_are_unique_across_scopes(second: dict[str, Any], name: str) -> None:
    refused(
        [scope(aliases=["agent-core"]), scope(**second)],
        f"the name {name} is already used by scope 'sdk'",
    )


def test_require_goals_demands_goal_ids() -> None:
    refused([scope()], "scope 'sdk'", "'goal_ids' is empty", require_goals=True)
    assert ScopeRegistry.create([scope(goal_ids=["explain"])], require_goals=True).ids() == ["sdk"]


def test_require_sources_demands_topics_or_tools() -> None:
    refused([scope(goal_ids=["explain"])], "scope 'sdk'", "no sources", require_sources=True)
    for sources in ({"knowledge_topic_ids": ["manual"]}, {"tool_ids": ["read-source"]}):
        assert ScopeRegistry.create([scope(**sources)], require_sources=True).ids() == ["sdk"]


# --- lookups ---------------------------------------------------------------------------


def registry() -> ScopeRegistry:
    return ScopeRegistry.create(
        [
            scope(
                aliases=["agent-core", "manual"],
                goal_ids=["explain"],
                knowledge_topic_ids=["manual", "faq"],
                tool_ids=["read-source"],
            ),
            scope(id="billing", category="support"),
        ]
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [("sdk", "sdk"), ("agent-core", "sdk"), ("manual", "sdk"), ("billing", "billing"), ("x", None)],
)
def test_normalize_maps_an_id_or_alias_to_the_id(name: str, expected: str | None) -> None:
    assert registry().normalize(name) == expected


def test_require_finds_a_scope_by_id_or_alias() -> None:
    scopes = registry()
    assert scopes.require("agent-core") is scopes.require("sdk")


def test_require_names_an_unknown_scope_and_the_known_ones() -> None:
    with pytest.raises(RegistryError, match=r"scope 'docs': no scope .* \['sdk', 'billing'\]"):
        registry().require("docs")


@pytest.mark.parametrize(
    ("tool_id", "accepted"), [("explain", True), ("read-source", True), ("write", False)]
)
def test_accepts_tool_lists_goals_and_source_tools(tool_id: str, accepted: bool) -> None:
    assert registry().accepts_tool("agent-core", tool_id) is accepted


def test_a_scope_without_links_accepts_no_tool() -> None:
    assert registry().accepts_tool("billing", "explain") is False


def test_topics_are_the_knowledge_topic_ids_in_order() -> None:
    assert registry().topics("manual") == ["manual", "faq"]
    assert registry().topics("billing") == []


def test_lookups_of_an_unknown_scope_raise() -> None:
    with pytest.raises(RegistryError, match="'docs'"):
        registry().accepts_tool("docs", "explain")
    with pytest.raises(RegistryError, match="'docs'"):
        registry().topics("docs")
