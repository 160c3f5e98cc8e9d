"""intent_ui.core.capabilities.programmatic: the allowed_callers capability.

Behaviour every capability sibling shares is tested once in test_capability_siblings.py.
"""

from __future__ import annotations

import logging

import pytest

from intent_ui.core.capabilities import programmatic as programmatic_mod
from intent_ui.core.capabilities.programmatic import (
    apply_allowed_callers,
    code_bridge_definitions,
    is_code_callable,
    is_code_only,
    resolve_allowed_callers,
    strip_intent_for_code_bridge,
)
from intent_ui.core.capabilities.selection import canonical_tool_options
from tests.support.capability_helpers import (
    business_intent_tool,
    native,
    property_names,
    third_party,
)

DUAL = ["direct", "code_execution"]
CODE = ["code_execution"]


def test_resolve_explicit_then_wildcard() -> None:
    options = {"a": {"allowed_callers": CODE}, "*": {"allowed_callers": DUAL}}
    assert resolve_allowed_callers(options, "a") == ("code_execution",)
    assert resolve_allowed_callers(options, "b") == ("direct", "code_execution")
    assert resolve_allowed_callers({}, "a") is None
    assert resolve_allowed_callers(None, "a") is None


def test_resolve_deduplicates_and_keeps_order() -> None:
    assert resolve_allowed_callers({"a": {"allowed_callers": ["direct", "direct"]}}, "a") == (
        "direct",
    )


def test_resolve_action_alias() -> None:
    options = canonical_tool_options(
        {"op_action_x---io": {"allowed_callers": CODE}}, ["op_action_x_io"]
    )
    assert resolve_allowed_callers(options, "op_action_x_io") == ("code_execution",)


@pytest.mark.parametrize("bad", [[], "code_execution", ["sandbox"], [3], None])
def test_malformed_callers_are_ignored_with_a_warning(
    bad: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=programmatic_mod.__name__):
        assert resolve_allowed_callers({"tool_x": {"allowed_callers": bad}}, "tool_x") is None
    assert "tool_x" in caplog.text


def test_apply_sets_callers_from_options() -> None:
    result = apply_allowed_callers(
        [third_party("a"), third_party("b")],
        {"a": {"allowed_callers": DUAL}, "b": {"allowed_callers": CODE}},
    )
    a, b = result.definitions
    assert a["allowed_callers"] == DUAL
    assert is_code_only(b)
    assert result.code_callable_names == {"a", "b"}


def test_direct_only_drops_the_key() -> None:
    result = apply_allowed_callers(
        [third_party("a", allowed_callers=DUAL)], {"a": {"allowed_callers": ["direct"]}}
    )
    assert "allowed_callers" not in result.definitions[0]


def test_unconfigured_tools_are_untouched() -> None:
    defs = [third_party("a"), third_party("b", allowed_callers=DUAL)]
    result = apply_allowed_callers(defs, {})
    assert result.definitions is defs
    assert result.code_callable_names == {"b"}


def test_same_callers_are_a_noop() -> None:
    defs = [third_party("a", allowed_callers=DUAL)]
    assert apply_allowed_callers(defs, {"a": {"allowed_callers": DUAL}}).definitions is defs


def test_dual_caller_native_label_becomes_optional() -> None:
    result = apply_allowed_callers(
        [native("write_file")], {"write_file": {"allowed_callers": DUAL}}
    )
    params = result.definitions[0]["parameters"]
    assert property_names(result.definitions[0])[0] == "intent"
    assert "intent" not in params["required"]


def test_capability_off_leaves_nothing_callable_from_code() -> None:
    defs = [
        third_party("a", allowed_callers=DUAL),
        third_party("b", allowed_callers=CODE),
        third_party("c"),
    ]
    result = apply_allowed_callers(defs, {"*": {"allowed_callers": CODE}}, enabled=False)
    a, b, c = result.definitions
    assert "allowed_callers" not in a
    assert "allowed_callers" not in b
    assert c is defs[2]
    assert result.code_callable_names == frozenset()


def test_ptc_runners_are_never_touched() -> None:
    runner = native("run_tools_with_code")
    result = apply_allowed_callers([runner], {"*": {"allowed_callers": CODE}})
    assert result.definitions[0] is runner


def test_registry_follows_callers_and_parameters() -> None:
    tool = native("write_file")
    registry = {"write_file": tool, "deferred": third_party("deferred")}
    result = apply_allowed_callers([tool], {"*": {"allowed_callers": DUAL}}, registry=registry)
    assert result.registry is not None
    assert result.registry["write_file"]["allowed_callers"] == DUAL
    assert "intent" not in result.registry["write_file"]["parameters"]["required"]
    assert result.registry["deferred"]["allowed_callers"] == DUAL
    assert "allowed_callers" not in registry["deferred"]


def test_registry_drops_callers_when_the_definition_did() -> None:
    tool = third_party("a", allowed_callers=DUAL)
    result = apply_allowed_callers([tool], {}, enabled=False, registry={"a": tool})
    assert result.registry is not None
    assert "allowed_callers" not in result.registry["a"]


def test_code_bridge_sees_only_code_callable_tools_without_labels() -> None:
    crm = business_intent_tool()
    crm_dual = {**crm, "allowed_callers": DUAL}
    defs = [
        native("write_file", allowed_callers=DUAL),
        third_party("direct_only"),
        crm_dual,
    ]
    bridge = code_bridge_definitions(defs)
    assert [tool["name"] for tool in bridge] == ["write_file", "classify_ticket"]
    assert "intent" not in property_names(bridge[0])
    assert bridge[1] is crm_dual
    assert all(is_code_callable(tool) for tool in bridge)


def test_inner_call_args_lose_the_label() -> None:
    assert strip_intent_for_code_bridge({"intent": "Writing", "path": "a"}) == {"path": "a"}
    assert strip_intent_for_code_bridge('{"intent": "Writing", "path": "a"}') == {"path": "a"}


def test_inner_call_without_label_is_the_same_object() -> None:
    args = {"path": "a"}
    assert strip_intent_for_code_bridge(args) is args


def test_business_intent_reaches_the_tool_body() -> None:
    args = {"intent": "billing_inquiry", "body": "refund"}
    assert strip_intent_for_code_bridge(args, label_bearing=False) is args


def test_direct_only_on_a_tool_without_callers_is_a_noop() -> None:
    defs = [third_party("a")]
    assert apply_allowed_callers(defs, {"a": {"allowed_callers": ["direct"]}}).definitions is defs
