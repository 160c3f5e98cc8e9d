"""intent_ui.core.capabilities.selection: the shared tool_options policy."""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any

import pytest

from intent_ui.core.capabilities.selection import (
    MARKER_SOURCE,
    TOOL_SELECTION_WILDCARD,
    ResolvedToolOption,
    canonical_tool_options,
    coerce_args_object,
    is_code_callable,
    is_code_only,
    is_direct_only,
    merge_tool_options,
    normalize_action_tool_id,
    resolve_opt_in,
    resolve_tool_option,
    synthesize_selection_tool_options,
    tool_callers,
)

KEY = "describe_intent"

# --- coerce_args_object --------------------------------------------------------------


def test_dict_args_come_back_as_the_same_object() -> None:
    args = {"a": 1}
    assert coerce_args_object(args) is args


def test_json_object_string_is_parsed() -> None:
    assert coerce_args_object('{"a": 1}') == {"a": 1}


def test_json_bytes_are_parsed() -> None:
    assert coerce_args_object(b'{"a": 1}') == {"a": 1}


def test_read_only_mapping_is_copied_into_a_dict() -> None:
    assert coerce_args_object(MappingProxyType({"a": 1})) == {"a": 1}


@pytest.mark.parametrize(
    "args", ['{"a": ', "[1, 2]", '"text"', "", "   ", None, 3, [("a", 1)], "[" * 100_000]
)
def test_non_object_args_are_none(args: object) -> None:
    assert coerce_args_object(args) is None


# --- action aliasing -----------------------------------------------------------------


def test_encoded_domain_collapses_to_underscores() -> None:
    assert normalize_action_tool_id("getPets_action_medium---com") == "getPets_action_medium_com"


def test_operation_id_is_never_collapsed() -> None:
    assert (
        normalize_action_tool_id("get---pets_action_api---x---io") == "get---pets_action_api_x_io"
    )


def test_non_action_ids_are_unchanged() -> None:
    assert normalize_action_tool_id("search---code") == "search---code"


# --- resolve_tool_option -------------------------------------------------------------


def test_explicit_entry_wins_over_marker_and_wildcard() -> None:
    options = {"t": {KEY: False}, "*": {KEY: True}}
    assert resolve_tool_option(options, KEY, "t", markers=(True,)) == ResolvedToolOption(False, "t")


def test_marker_wins_over_wildcard() -> None:
    options = {"*": {KEY: False}}
    assert resolve_tool_option(options, KEY, "t", markers=(True,)) == ResolvedToolOption(
        True, MARKER_SOURCE
    )


def test_opting_in_marker_beats_an_opting_out_one() -> None:
    assert resolve_tool_option({}, KEY, "t", markers=(False, True)) == ResolvedToolOption(
        True, MARKER_SOURCE
    )
    assert resolve_tool_option({}, KEY, "t", markers=(False,)) == ResolvedToolOption(
        False, MARKER_SOURCE
    )


def test_wildcard_applies_without_entry_or_marker() -> None:
    assert resolve_tool_option({"*": {KEY: True}}, KEY, "t") == ResolvedToolOption(
        True, TOOL_SELECTION_WILDCARD
    )


def test_nothing_speaks_returns_none() -> None:
    assert resolve_tool_option(None, KEY, "t") is None
    assert resolve_tool_option({"other": {KEY: True}}, KEY, "t") is None


@pytest.mark.parametrize(
    "entry", [{KEY: "yes"}, {KEY: 1}, {KEY: None}, {"run_in_background": True}, "on", None]
)
def test_non_boolean_values_do_not_speak(entry: Any) -> None:
    assert resolve_tool_option({"t": entry}, KEY, "t", markers=("true", None)) is None


def test_raw_action_key_aliases_the_runtime_id() -> None:
    options = {"getPets_action_medium---com": {KEY: True}}
    folded = canonical_tool_options(options, ["getPets_action_medium_com"])
    resolved = resolve_tool_option(folded, KEY, "getPets_action_medium_com")
    assert resolved is not None and resolved.value is True
    assert options == {"getPets_action_medium---com": {KEY: True}}  # input untouched


def test_ids_not_named_as_actions_are_never_aliased_by_their_shape() -> None:
    # An MCP tool whose name merely contains the action delimiter.
    options = {"foo_action_slack---com_mcp_github": {KEY: True}}
    folded = canonical_tool_options(options, [])
    assert folded is options
    assert resolve_tool_option(folded, KEY, "foo_action_slack_com_mcp_github") is None


def test_exact_action_key_wins_over_its_raw_alias() -> None:
    options = {
        "getPets_action_medium---com": {KEY: True},
        "getPets_action_medium_com": {KEY: False},
    }
    folded = canonical_tool_options(options, ["getPets_action_medium_com"])
    resolved = resolve_tool_option(folded, KEY, "getPets_action_medium_com")
    assert resolved == ResolvedToolOption(False, "getPets_action_medium_com")


def test_several_actions_fold_each_alias_onto_its_own_id() -> None:
    options = {
        "getPets_action_medium---com": {KEY: True},
        "listRepos_action_git---io": {KEY: False},
    }
    ids = ["getPets_action_medium_com", "plain_action_example_org", "listRepos_action_git_io"]
    folded = canonical_tool_options(options, ids)
    assert folded["getPets_action_medium_com"] == {KEY: True}
    assert folded["listRepos_action_git_io"] == {KEY: False}
    assert "plain_action_example_org" not in folded


def test_alias_without_the_key_does_not_speak() -> None:
    options = {"getPets_action_medium---com": {"defer_loading": True}}
    assert resolve_tool_option(options, KEY, "getPets_action_medium_com") is None


def test_unrelated_action_does_not_alias() -> None:
    options = {"getCats_action_medium---com": {KEY: True}}
    assert resolve_tool_option(options, KEY, "getPets_action_medium_com") is None


def test_resolve_opt_in_falls_back_to_default() -> None:
    assert resolve_opt_in({}, KEY, "t", default=True) is True
    assert resolve_opt_in({}, KEY, "t") is False
    assert resolve_opt_in({"t": {KEY: False}}, KEY, "t", default=True) is False


# --- synthesis -----------------------------------------------------------------------


def test_true_means_every_tool() -> None:
    assert synthesize_selection_tool_options(KEY, True, ["a"]) == {"*": {KEY: True}}


def test_none_means_no_policy() -> None:
    assert synthesize_selection_tool_options(KEY, None, ["a"]) is None


def test_list_means_only_those() -> None:
    assert synthesize_selection_tool_options(KEY, ["b"], ["a", "b"]) == {
        "*": {KEY: False},
        "a": {KEY: False},
        "b": {KEY: True},
    }


def test_listed_names_not_in_tool_names_are_kept_verbatim() -> None:
    assert synthesize_selection_tool_options(KEY, ["z"]) == {"*": {KEY: False}, "z": {KEY: True}}


def test_single_name_string_is_a_one_item_list() -> None:
    assert synthesize_selection_tool_options(KEY, "b") == {"*": {KEY: False}, "b": {KEY: True}}


@pytest.mark.parametrize("selection", [False, [], ()])
def test_false_or_empty_means_none(selection: object) -> None:
    assert synthesize_selection_tool_options(KEY, selection, ["a"]) == {
        "*": {KEY: False},
        "a": {KEY: False},
    }


@pytest.mark.parametrize("selection", [3, {"a": True}, [1, 2], 1.5])
def test_malformed_selection_is_ignored_with_a_warning(
    selection: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert synthesize_selection_tool_options(KEY, selection) is None
    assert KEY in caplog.text


def test_a_star_in_a_list_is_not_the_wildcard_and_is_warned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        options = synthesize_selection_tool_options(KEY, ["*", "b"], ["a", "b"])
    assert options == {"*": {KEY: False}, "a": {KEY: False}, "b": {KEY: True}}
    assert resolve_opt_in(options, KEY, "unlisted", default=True) is False
    assert "'*'" in caplog.text and KEY in caplog.text


def test_synthesized_options_resolve_as_described() -> None:
    options = synthesize_selection_tool_options(KEY, ["b"], ["a", "b"])
    assert resolve_opt_in(options, KEY, "a", markers=(True,), default=True) is False
    assert resolve_opt_in(options, KEY, "b") is True
    assert resolve_opt_in(options, KEY, "unlisted", default=True) is False


# --- merge ---------------------------------------------------------------------------


def test_merge_keeps_sibling_keys() -> None:
    base = {"a": {KEY: True}}
    extra = {"a": {"run_in_background": True}, "b": {KEY: False}}
    assert merge_tool_options(base, extra) == {
        "a": {KEY: True, "run_in_background": True},
        "b": {KEY: False},
    }
    assert base == {"a": {KEY: True}}


def test_merge_with_an_empty_side_returns_the_other() -> None:
    base = {"a": {KEY: True}}
    assert merge_tool_options(base, None) is base
    assert merge_tool_options(None, base) is base


def test_merge_replaces_a_malformed_entry() -> None:
    malformed = {"a": "junk"}  # options read from a file: not what the signature admits
    assert merge_tool_options(malformed, {"a": {KEY: True}}) == {"a": {KEY: True}}  # type: ignore[arg-type]


# --- callers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("callers", "expected"),
    [
        (None, {"direct"}),
        (["direct"], {"direct"}),
        (["code_execution"], {"code_execution"}),
        (["direct", "code_execution"], {"direct", "code_execution"}),
        ([], {"direct"}),
        ("code_execution", {"direct"}),
        ([3], {"direct"}),
    ],
)
def test_tool_callers(callers: object, expected: set[str]) -> None:
    tool: dict[str, Any] = {"name": "t"}
    if callers is not None:
        tool["allowed_callers"] = callers
    assert tool_callers(tool) == expected


def test_caller_predicates() -> None:
    direct: dict[str, Any] = {"name": "t"}
    dual = {"name": "t", "allowed_callers": ["direct", "code_execution"]}
    code = {"name": "t", "allowed_callers": ["code_execution"]}
    assert (is_direct_only(direct), is_code_callable(direct), is_code_only(direct)) == (
        True,
        False,
        False,
    )
    assert (is_direct_only(dual), is_code_callable(dual), is_code_only(dual)) == (
        False,
        True,
        False,
    )
    assert (is_direct_only(code), is_code_callable(code), is_code_only(code)) == (
        False,
        True,
        True,
    )
