"""intent_ui.core.capabilities.intent: the describe_intent capability (§4, §7.1, §8.1, §14)."""

from __future__ import annotations

import json
import logging
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from intent_ui.core.capabilities import intent as intent_mod
from intent_ui.core.capabilities.intent import (
    EXCLUDED_INTENT_TOOL_NAMES,
    INTENT_ARG,
    INTENT_DESCRIPTION,
    INTENT_LABEL_MARKER,
    INTENT_PROPERTY,
    NATIVE_INTENT_TOOL_NAMES,
    apply_intent_labels,
    apply_outcome,
    can_inject_intent_param,
    error_label_text,
    has_intent_arg,
    inject_intent_param,
    is_intent_eligible_tool,
    is_intent_eligible_tool_name,
    is_intent_label_property,
    make_intent_optional,
    mirror_registry,
    read_intent,
    remove_intent_param,
    strip_intent,
    strip_intent_from_tool_definitions,
    strip_intent_from_tool_registry,
    substitute_output_references,
    synthesize_intent_tool_options,
    with_intent,
    with_intent_model,
    without_intent,
)
from intent_ui.core.capabilities.selection import canonical_tool_options
from tests.unit._capability_helpers import (
    business_intent_tool,
    deep_freeze,
    native,
    property_names,
    snapshot,
    string_input_tool,
    thaw,
    third_party,
)

LABEL = dict(INTENT_PROPERTY)

# --- constants -----------------------------------------------------------------------


def test_intent_arg_is_intent() -> None:
    assert INTENT_ARG == "intent"


def test_description_is_the_spec_text_verbatim() -> None:
    assert INTENT_DESCRIPTION == (
        "ALWAYS write this field FIRST, before any other argument. One present-progressive "
        'sentence saying what THIS call is about to do: "Searching for OAuth handling in the '
        "callback router\". Shown to the user as this call's live status. Never name the tool. "
        "Sibling calls to one tool must differ."
    )


def test_description_opens_with_the_marker() -> None:
    assert INTENT_LABEL_MARKER == "ALWAYS write this field FIRST"
    assert INTENT_DESCRIPTION.startswith(INTENT_LABEL_MARKER)


def test_property_is_read_only() -> None:
    assert dict(INTENT_PROPERTY) == {"type": "string", "description": INTENT_DESCRIPTION}
    with pytest.raises(TypeError):
        INTENT_PROPERTY["type"] = "integer"  # type: ignore[index]


def test_native_names_are_the_spec_inventory() -> None:
    assert (
        frozenset(
            {
                "read_file",
                "write_file",
                "edit_file",
                "grep_search",
                "glob_search",
                "list_directory",
                "compile_check",
                "bash_tool",
                "execute_code",
                "run_tools_with_code",
                "run_tools_with_bash",
                "subagent",
                "skill",
                "tool_search",
                "web_search",
                "create_file",
                "set_memory",
                "delete_memory",
                "ask_user_question",
                "file_search",
            }
        )
        == NATIVE_INTENT_TOOL_NAMES
    )


def test_check_background_task_is_excluded_by_name() -> None:
    assert "check_background_task" in EXCLUDED_INTENT_TOOL_NAMES
    assert not is_intent_eligible_tool_name("check_background_task")


def test_handoff_tools_are_excluded_by_prefix() -> None:
    assert not is_intent_eligible_tool_name("lc_transfer_to_researcher")


def test_ordinary_tools_are_eligible() -> None:
    assert is_intent_eligible_tool_name("search_code")
    assert is_intent_eligible_tool(third_party())


def test_code_only_tool_is_not_eligible() -> None:
    assert not is_intent_eligible_tool(third_party(allowed_callers=["code_execution"]))


def test_dual_caller_tool_is_eligible() -> None:
    assert is_intent_eligible_tool(third_party(allowed_callers=["direct", "code_execution"]))


def test_unnamed_tool_is_not_eligible() -> None:
    assert not is_intent_eligible_tool({"parameters": {"type": "object"}})


# --- arguments -----------------------------------------------------------------------


def test_read_intent_from_dict() -> None:
    assert read_intent({"intent": "Searching for OAuth", "q": "x"}) == "Searching for OAuth"


def test_read_intent_from_json_string() -> None:
    assert read_intent('{"intent": "Reading the router", "path": "a"}') == "Reading the router"


def test_read_intent_trims_whitespace() -> None:
    assert read_intent({"intent": "  Reading the router \n"}) == "Reading the router"


@pytest.mark.parametrize(
    "args",
    [
        {"intent": ""},
        {"intent": "   "},
        {"intent": 42},
        {"intent": None},
        {"intent": ["Searching"]},
        {"query": "no intent"},
        '{"intent": "unterminated',
        "not json at all",
        '["intent", "a list"]',
        "42",
        None,
        17,
        ["intent"],
    ],
)
def test_read_intent_returns_none_for_blank_non_string_or_malformed(args: object) -> None:
    assert read_intent(args) is None


def test_has_intent_arg_sees_any_value() -> None:
    assert has_intent_arg({"intent": None})
    assert has_intent_arg('{"intent": 3}')
    assert not has_intent_arg({"q": 1})
    assert not has_intent_arg("garbage")


def test_strip_intent_removes_the_key_without_mutating() -> None:
    args = {"intent": "Searching", "query": "oauth"}
    assert strip_intent(args) == {"query": "oauth"}
    assert args == {"intent": "Searching", "query": "oauth"}


def test_strip_intent_parses_a_json_string() -> None:
    assert strip_intent('{"intent": "Searching", "query": "oauth"}') == {"query": "oauth"}


def test_strip_intent_without_intent_returns_same_dict() -> None:
    args = {"query": "oauth"}
    assert strip_intent(args) is args


def test_strip_intent_without_intent_returns_same_string() -> None:
    args = '{"query": "oauth"}'
    assert strip_intent(args) is args


def test_strip_intent_leaves_malformed_args_alone() -> None:
    args = '{"intent": "Sea'
    assert strip_intent(args) is args


def test_strip_intent_accepts_read_only_args() -> None:
    args = MappingProxyType({"intent": "Searching", "q": 1})
    assert strip_intent(args) == {"q": 1}


# --- outcome -------------------------------------------------------------------------


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


def test_error_label_prefers_the_tool_outcome() -> None:
    assert error_label_text("Deleting the branch", "Branch is protected") == "Branch is protected"


def test_error_label_ignores_the_success_patch() -> None:
    patch = {"from": "Searching", "to": "Searched"}
    assert error_label_text("Searching for OAuth", None, patch) == "Searching for OAuth"


def test_error_label_without_intent_is_none() -> None:
    assert error_label_text(None, "   ") is None


# --- output references (§10.6) -------------------------------------------------------

OUTPUTS = {"tool0turn0": "x" * 400_000, "tool1turn0": "README contents"}


def test_references_are_substituted_in_ordinary_args() -> None:
    args = {"intent": "Summarising {{tool1turn0}}", "text": "See {{tool1turn0}}"}
    result = substitute_output_references(args, OUTPUTS)
    assert result == {"intent": "Summarising {{tool1turn0}}", "text": "See README contents"}


def test_reference_inside_intent_is_never_substituted() -> None:
    args = {"intent": "Dumping {{tool0turn0}}", "path": "a"}
    result = substitute_output_references(args, OUTPUTS)
    assert result is args
    assert len(read_intent(result) or "") < 100


def test_business_intent_is_substituted_when_the_tool_carries_no_label() -> None:
    args = {"intent": "{{tool1turn0}}"}
    result = substitute_output_references(args, OUTPUTS, label_bearing=False)
    assert result == {"intent": "README contents"}


def test_references_are_substituted_in_nested_values() -> None:
    args = {"files": [{"content": "{{tool1turn0}}"}, "plain"], "n": 3}
    assert substitute_output_references(args, OUTPUTS) == {
        "files": [{"content": "README contents"}, "plain"],
        "n": 3,
    }


def test_unknown_references_stay_as_written() -> None:
    args = {"text": "{{tool9turn9}}"}
    assert substitute_output_references(args, OUTPUTS) is args


def test_references_in_a_json_string_come_back_as_a_dict() -> None:
    result = substitute_output_references('{"text": "{{tool1turn0}}"}', OUTPUTS)
    assert result == {"text": "README contents"}


def test_unchanged_json_string_comes_back_identical() -> None:
    args = '{"text": "nothing here", "list": ["a", ["b"]]}'
    assert substitute_output_references(args, OUTPUTS) is args


def test_non_object_args_are_returned_untouched() -> None:
    assert substitute_output_references("garbage", OUTPUTS) == "garbage"


def test_substitution_does_not_mutate_input() -> None:
    args = {"files": [{"content": "{{tool1turn0}}"}]}
    substitute_output_references(args, OUTPUTS)
    assert args == {"files": [{"content": "{{tool1turn0}}"}]}


# --- schema: with_intent / without_intent --------------------------------------------

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def test_with_intent_places_intent_first_and_required() -> None:
    schema = with_intent(SCHEMA)
    assert list(schema["properties"]) == ["intent", "path"]
    assert schema["required"] == ["intent", "path"]
    assert is_intent_label_property(schema["properties"]["intent"])


def test_with_intent_first_in_emitted_json() -> None:
    emitted = json.dumps(with_intent(SCHEMA))
    assert emitted.index('"intent"') < emitted.index('"path"')


def test_with_intent_optional_variant() -> None:
    schema = with_intent(SCHEMA, required=False)
    assert list(schema["properties"]) == ["intent", "path"]
    assert schema["required"] == ["path"]


def test_with_intent_does_not_mutate() -> None:
    before = snapshot(SCHEMA)
    with_intent(SCHEMA)
    assert before == SCHEMA


def test_with_intent_is_idempotent() -> None:
    once = with_intent(SCHEMA)
    assert with_intent(once) is once


def test_with_intent_makes_an_optional_label_required_when_asked() -> None:
    optional = with_intent(SCHEMA, required=False)
    required = with_intent(optional)
    assert required["required"] == ["intent", "path"]


def test_with_intent_moves_a_label_first() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "intent": dict(LABEL)},
        "required": ["path"],
    }
    assert list(with_intent(schema, required=False)["properties"]) == ["intent", "path"]


def test_with_intent_of_none_is_an_object_schema() -> None:
    schema = with_intent(None)
    assert schema == {"type": "object", "properties": {"intent": LABEL}, "required": ["intent"]}


def test_with_intent_gives_each_schema_its_own_property_copy() -> None:
    first, second = with_intent(SCHEMA), with_intent(dict(SCHEMA))
    assert first["properties"]["intent"] is not second["properties"]["intent"]
    assert first["properties"]["intent"] is not INTENT_PROPERTY


def test_with_intent_refuses_a_business_intent(caplog: pytest.LogCaptureFixture) -> None:
    schema = business_intent_tool()["parameters"]
    with caplog.at_level(logging.WARNING):
        assert with_intent(schema) is schema
    assert "own 'intent' parameter" in caplog.text


def test_with_intent_refuses_a_non_object_schema(caplog: pytest.LogCaptureFixture) -> None:
    schema = {"type": "string"}
    with caplog.at_level(logging.WARNING):
        assert with_intent(schema) is schema
    assert "'string'" in caplog.text


def test_with_intent_refuses_non_mapping_properties() -> None:
    schema = {"type": "object", "properties": ["path"]}
    assert with_intent(schema) is schema


def test_with_intent_refuses_a_non_mapping_schema() -> None:
    assert with_intent("nonsense") == "nonsense"  # type: ignore[arg-type]


class ReadArgs(BaseModel):
    path: str = Field(description="File to read")
    limit: int = 100


def test_with_intent_model_places_intent_first_and_required() -> None:
    schema = with_intent_model(ReadArgs)
    assert list(schema["properties"]) == ["intent", "path", "limit"]
    assert schema["required"] == ["intent", "path"]


def test_with_intent_model_keeps_the_model_valid_for_stripped_args() -> None:
    args = {"intent": "Reading the router", "path": "router.py"}
    assert ReadArgs.model_validate(strip_intent(args)).path == "router.py"


def test_with_intent_model_rejects_non_models() -> None:
    with pytest.raises(TypeError, match="pydantic model"):
        with_intent_model(dict)


def test_without_intent_removes_label_and_required() -> None:
    assert without_intent(with_intent(SCHEMA)) == SCHEMA


def test_without_intent_drops_required_it_emptied() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    labelled = with_intent(schema)
    assert labelled["required"] == ["intent"]
    assert without_intent(labelled) == schema


def test_without_intent_keeps_a_business_intent() -> None:
    schema = business_intent_tool()["parameters"]
    assert without_intent(schema) is schema


def test_without_intent_without_label_is_same_object() -> None:
    assert without_intent(SCHEMA) is SCHEMA


def test_without_intent_keeps_required_without_intent_in_it() -> None:
    schema = with_intent(SCHEMA, required=False)
    assert without_intent(schema) == SCHEMA


json_types = st.sampled_from(["string", "integer", "boolean", "number"])
names = st.text(alphabet="abcdefghij_", min_size=1, max_size=6).filter(lambda n: n != "intent")


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(names, json_types.map(lambda t: {"type": t}), max_size=5))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = [name for name in props if draw(st.booleans())]
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["description"] = "extra keyword"
    return schema


@given(object_schemas(), st.booleans())
def test_without_intent_inverts_with_intent(schema: dict[str, Any], required: bool) -> None:
    labelled = with_intent(schema, required=required)
    assert next(iter(labelled["properties"])) == "intent"
    assert without_intent(labelled) == schema


def test_label_property_is_recognised_by_its_marker() -> None:
    assert is_intent_label_property(LABEL)
    assert is_intent_label_property({"type": ["string", "null"], "description": INTENT_DESCRIPTION})


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string"},
        {"type": "string", "description": "The customer's intent category"},
        {"type": "string", "description": 7},
        "ALWAYS write this field FIRST",
        None,
    ],
)
def test_other_properties_are_not_labels(prop: object) -> None:
    assert not is_intent_label_property(prop)


# --- can_inject / inject / remove ----------------------------------------------------


def test_schema_less_tool_is_injectable() -> None:
    assert can_inject_intent_param({"name": "ping", "description": "no args"})


def test_object_tool_is_injectable() -> None:
    assert can_inject_intent_param(third_party())


def test_non_object_schema_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        assert not can_inject_intent_param(string_input_tool("legacy_tool"))
    assert "legacy_tool" in caplog.text


def test_business_intent_tool_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        assert not can_inject_intent_param(business_intent_tool("classify_ticket"))
    assert "classify_ticket" in caplog.text
    assert "own 'intent'" in caplog.text


def test_tool_already_labelled_is_not_injectable(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        assert not can_inject_intent_param(native("edit_file"))
    assert "edit_file" in caplog.text


def test_code_only_tool_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    tool = third_party("bridge_only", allowed_callers=["code_execution"])
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        assert not can_inject_intent_param(tool)
    assert "bridge_only" in caplog.text


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "t", "parameters": "string"},
        {"name": "t", "parameters": {"type": "object", "properties": ["a"]}},
        "not a tool",
    ],
)
def test_malformed_tools_are_not_injectable(tool: Any) -> None:
    assert not can_inject_intent_param(tool)
    assert inject_intent_param(tool) is tool


def test_inject_places_intent_first() -> None:
    injected = inject_intent_param(third_party())
    assert property_names(injected) == ["intent", "query", "limit"]
    assert injected["parameters"]["properties"]["intent"] == LABEL


def test_inject_is_optional_by_default() -> None:
    assert inject_intent_param(third_party())["parameters"]["required"] == ["query"]


def test_inject_does_not_mutate_the_input() -> None:
    tool = third_party()
    before = snapshot(tool)
    inject_intent_param(tool)
    assert thaw(tool) == before


def test_inject_survives_deep_frozen_input() -> None:
    tool = deep_freeze(third_party(allowed_callers=["direct"]))
    injected = inject_intent_param(tool, required=True)
    assert property_names(injected) == ["intent", "query", "limit"]
    assert injected["parameters"]["required"] == ["intent", "query"]
    assert "intent" not in tool["parameters"]["properties"]


def test_each_schema_gets_its_own_property_copy() -> None:
    first = inject_intent_param(third_party("a"))
    second = inject_intent_param(third_party("b"))
    first_label = first["parameters"]["properties"]["intent"]
    assert first_label is not second["parameters"]["properties"]["intent"]
    assert first_label is not INTENT_PROPERTY
    first_label["description"] = "mutated by a dereferencer"
    assert INTENT_PROPERTY["description"] == INTENT_DESCRIPTION


def test_inject_is_idempotent() -> None:
    once = inject_intent_param(third_party())
    assert inject_intent_param(once) is once


def test_host_inject_over_sdk_native_edit_file_is_the_same_object() -> None:
    sdk_edit_file = native("edit_file")
    assert inject_intent_param(sdk_edit_file) is sdk_edit_file
    assert sdk_edit_file["parameters"]["required"][0] == "intent"


def test_inject_moves_a_label_that_is_not_first() -> None:
    tool = {
        "name": "t",
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}, "intent": LABEL}},
    }
    assert property_names(inject_intent_param(tool)) == ["intent", "a"]


def test_inject_into_schema_less_tool_makes_an_object_schema() -> None:
    injected = inject_intent_param({"name": "ping", "description": "no args"})
    assert injected["parameters"] == {"type": "object", "properties": {"intent": LABEL}}


def test_inject_into_untyped_schema_makes_it_explicit() -> None:
    injected = inject_intent_param({"name": "t", "parameters": {"properties": {}}})
    assert injected["parameters"]["type"] == "object"


def test_inject_required_on_a_direct_only_tool() -> None:
    injected = inject_intent_param(third_party(), required=True)
    assert injected["parameters"]["required"] == ["intent", "query"]


def test_inject_required_adds_required_to_a_tool_without_it() -> None:
    injected = inject_intent_param({"name": "ping"}, required=True)
    assert injected["parameters"]["required"] == ["intent"]


def test_inject_never_requires_on_a_dual_caller_tool() -> None:
    tool = third_party(allowed_callers=["direct", "code_execution"])
    injected = inject_intent_param(tool, required=True)
    assert property_names(injected)[0] == "intent"
    assert "intent" not in injected["parameters"]["required"]


def test_inject_skips_code_only_tools() -> None:
    tool = third_party(allowed_callers=["code_execution"])
    assert inject_intent_param(tool) is tool


def test_inject_skips_non_object_and_business_intent_tools() -> None:
    legacy, crm = string_input_tool(), business_intent_tool()
    assert inject_intent_param(legacy) is legacy
    assert inject_intent_param(crm) is crm


def test_remove_is_marker_guarded() -> None:
    crm = business_intent_tool()
    assert remove_intent_param(crm) is crm
    plain = third_party()
    assert remove_intent_param(plain) is plain
    assert remove_intent_param(inject_intent_param(plain)) == plain


def test_remove_tolerates_non_tools() -> None:
    assert remove_intent_param("x") == "x"  # type: ignore[arg-type]


def test_make_intent_optional_drops_it_from_required() -> None:
    tool = native("write_file")
    assert make_intent_optional(tool)["parameters"]["required"] == ["path"]


def test_make_intent_optional_is_a_noop_when_already_optional() -> None:
    tool = inject_intent_param(third_party())
    assert make_intent_optional(tool) is tool
    plain = third_party()
    assert make_intent_optional(plain) is plain


# --- apply_intent_labels -------------------------------------------------------------


def test_opted_in_third_party_tool_gets_an_optional_label() -> None:
    result = apply_intent_labels([third_party()], {"search_code": {"describe_intent": True}})
    (tool,) = result.definitions
    assert property_names(tool)[0] == "intent"
    assert tool["parameters"]["required"] == ["query"]
    assert result.injected_tool_names == {"search_code"}
    assert result.label_tool_names == {"search_code"}


def test_third_party_tool_without_opt_in_is_untouched() -> None:
    defs = [third_party()]
    result = apply_intent_labels(defs, {})
    assert result.definitions is defs
    assert result.label_tool_names == frozenset()


def test_native_tool_defaults_on_and_is_not_host_injected() -> None:
    defs = [native("read_file")]
    result = apply_intent_labels(defs, None)
    assert result.definitions is defs
    assert result.injected_tool_names == frozenset()
    assert result.label_tool_names == {"read_file"}


def test_native_tool_opted_out_is_stripped() -> None:
    result = apply_intent_labels([native("read_file")], {"read_file": {"describe_intent": False}})
    assert property_names(result.definitions[0]) == ["path"]
    assert result.definitions[0]["parameters"]["required"] == ["path"]
    assert result.label_tool_names == frozenset()


def test_host_native_without_schema_label_is_injected_by_default() -> None:
    result = apply_intent_labels([third_party("web_search")], None)
    assert property_names(result.definitions[0])[0] == "intent"
    assert result.injected_tool_names == {"web_search"}


def test_default_native_false_strips_native_labels() -> None:
    result = apply_intent_labels([native("read_file")], None, default_native=False)
    assert "intent" not in property_names(result.definitions[0])


def test_kill_switch_strips_every_label_but_keeps_business_intent() -> None:
    injected = inject_intent_param(third_party())
    crm = business_intent_tool()
    result = apply_intent_labels(
        [native("read_file"), injected, crm], {"*": {"describe_intent": True}}, enabled=False
    )
    read_file, search, ticket = result.definitions
    assert "intent" not in property_names(read_file)
    assert "intent" not in property_names(search)
    assert ticket is crm
    assert result.label_tool_names == frozenset()


def test_wildcard_opts_in_every_eligible_tool() -> None:
    defs = [
        third_party("a"),
        third_party("check_background_task"),
        third_party("lc_transfer_to_writer"),
        third_party("c", allowed_callers=["code_execution"]),
    ]
    result = apply_intent_labels(defs, {"*": {"describe_intent": True}})
    assert result.label_tool_names == {"a"}
    assert [property_names(tool)[0] for tool in result.definitions] == [
        "intent",
        "query",
        "query",
        "query",
    ]


def test_code_only_native_loses_its_label() -> None:
    result = apply_intent_labels([native("grep_search", allowed_callers=["code_execution"])], None)
    assert "intent" not in property_names(result.definitions[0])
    assert result.label_tool_names == frozenset()


def test_dual_caller_native_label_is_made_optional() -> None:
    tool = native("write_file", allowed_callers=["direct", "code_execution"])
    result = apply_intent_labels([tool], None)
    params = result.definitions[0]["parameters"]
    assert next(iter(params["properties"])) == "intent"
    assert "intent" not in params["required"]


def test_tool_ids_key_the_options() -> None:
    result = apply_intent_labels(
        [third_party("search_code")],
        {"search_code_mcp_github": {"describe_intent": True}},
        tool_ids={"search_code": "search_code_mcp_github"},
    )
    assert result.label_tool_names == {"search_code"}


def test_action_alias_with_encoded_domain_resolves() -> None:
    stored = {"getPets_action_medium---com": {"describe_intent": True}}
    result = apply_intent_labels(
        [third_party("getPets_action_medium_com")],
        canonical_tool_options(stored, ["getPets_action_medium_com"]),
    )
    assert result.label_tool_names == {"getPets_action_medium_com"}


def test_a_tool_not_named_as_an_action_is_not_aliased_by_its_shape() -> None:
    stored = {"foo_action_medium---com": {"describe_intent": True}}
    result = apply_intent_labels([third_party("foo_action_medium_com")], stored)
    assert result.label_tool_names == frozenset()


def test_definition_marker_opts_a_tool_in() -> None:
    result = apply_intent_labels([third_party("x", intent=True)], None)
    assert result.injected_tool_names == {"x"}


def test_explicit_opt_out_beats_the_definition_marker() -> None:
    defs = [third_party("x", intent=True)]
    result = apply_intent_labels(defs, {"x": {"describe_intent": False}})
    assert result.definitions is defs


def test_business_intent_tool_opted_in_is_skipped_and_survives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    crm = business_intent_tool("classify_ticket")
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        result = apply_intent_labels([crm], {"classify_ticket": {"describe_intent": True}})
    assert result.definitions[0] is crm
    assert result.label_tool_names == frozenset()
    assert "classify_ticket" in caplog.text


def test_business_intent_survives_opt_out() -> None:
    crm = business_intent_tool()
    result = apply_intent_labels([crm], {crm["name"]: {"describe_intent": False}})
    assert result.definitions[0] is crm


def test_non_object_tool_opted_in_is_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=intent_mod.__name__):
        result = apply_intent_labels(
            [string_input_tool("legacy")], {"*": {"describe_intent": True}}
        )
    assert result.definitions[0]["parameters"] == {"type": "string"}
    assert "legacy" in caplog.text


def test_registry_entries_mirror_the_definitions() -> None:
    search = third_party()
    registry = {"search_code": search}
    result = apply_intent_labels(
        [search], {"search_code": {"describe_intent": True}}, registry=registry
    )
    assert result.registry is not registry
    assert result.registry is not None
    assert result.registry["search_code"]["parameters"] is result.definitions[0]["parameters"]
    assert registry["search_code"] is search


def test_registry_only_deferred_tool_is_injected_too() -> None:
    registry = {"deferred_tool": third_party("deferred_tool")}
    result = apply_intent_labels([], {"*": {"describe_intent": True}}, registry=registry)
    assert result.registry is not None
    assert property_names(result.registry["deferred_tool"])[0] == "intent"
    assert result.label_tool_names == {"deferred_tool"}
    assert result.injected_tool_names == {"deferred_tool"}


def test_unchanged_registry_is_the_same_object() -> None:
    registry = {"search_code": third_party()}
    result = apply_intent_labels(list(registry.values()), {}, registry=registry)
    assert result.registry is registry


def test_mirror_registry_keeps_entries_already_in_parity() -> None:
    changed = inject_intent_param(third_party())
    entry = {**changed, "extra": "registry-only field"}
    registry = {"search_code": entry}
    assert mirror_registry(registry, {"search_code": changed}, lambda tool: tool) is registry


def test_opt_out_is_mirrored_into_the_registry() -> None:
    tool = native("read_file")
    result = apply_intent_labels(
        [tool], {"read_file": {"describe_intent": False}}, registry={"read_file": tool}
    )
    assert result.registry is not None
    assert "intent" not in property_names(result.registry["read_file"])


def test_frozen_definitions_survive_apply() -> None:
    defs = deep_freeze([third_party(), native("read_file")])
    result = apply_intent_labels(defs, {"*": {"describe_intent": True}})
    assert property_names(result.definitions[0])[0] == "intent"
    assert "intent" not in defs[0]["parameters"]["properties"]


def test_non_mapping_entries_do_not_crash() -> None:
    defs: list[Any] = ["garbage", third_party()]
    result = apply_intent_labels(defs, {"*": {"describe_intent": True}})
    assert result.definitions[0] == "garbage"


# --- self-spawn stripping ------------------------------------------------------------


def test_strip_from_definitions_removes_every_label() -> None:
    defs = [native("read_file"), inject_intent_param(third_party()), business_intent_tool()]
    stripped = strip_intent_from_tool_definitions(defs)
    assert ["intent" in property_names(tool) for tool in stripped] == [False, False, True]


def test_strip_from_definitions_limited_to_names() -> None:
    defs = [native("read_file"), inject_intent_param(third_party())]
    stripped = strip_intent_from_tool_definitions(defs, ["search_code"])
    assert stripped[0] is defs[0]
    assert "intent" not in property_names(stripped[1])


def test_strip_from_definitions_noop_is_the_same_list() -> None:
    defs = [third_party(), business_intent_tool()]
    assert strip_intent_from_tool_definitions(defs) is defs


def test_strip_from_registry_returns_a_new_registry() -> None:
    registry = {"read_file": native("read_file"), "b": third_party("b")}
    stripped = strip_intent_from_tool_registry(registry)
    assert stripped is not registry
    assert stripped is not None
    assert "intent" not in property_names(stripped["read_file"])
    assert stripped["b"] is registry["b"]
    assert "intent" in property_names(registry["read_file"])


def test_strip_from_registry_limited_to_names() -> None:
    registry = {"read_file": native("read_file")}
    assert strip_intent_from_tool_registry(registry, ["other"]) is registry


def test_strip_from_registry_noop_and_none() -> None:
    registry = {"b": third_party("b")}
    assert strip_intent_from_tool_registry(registry) is registry
    assert strip_intent_from_tool_registry(None) is None


# --- synthesis (model specs and ephemeral agents) ------------------------------------


def test_synthesize_true_is_the_wildcard() -> None:
    assert synthesize_intent_tool_options(True) == {"*": {"describe_intent": True}}


def test_synthesize_none_is_no_policy() -> None:
    assert synthesize_intent_tool_options(None) is None


def test_ephemeral_agent_describes_every_eligible_tool() -> None:
    options = synthesize_intent_tool_options(True, ["read_file", "search_code"])
    result = apply_intent_labels([native("read_file"), third_party()], options)
    assert result.label_tool_names == {"read_file", "search_code"}


def test_model_spec_list_describes_only_those_tools() -> None:
    names = ["read_file", "search_code", "other"]
    options = synthesize_intent_tool_options(["search_code"], names)
    result = apply_intent_labels(
        [native("read_file"), third_party(), third_party("other")], options
    )
    assert result.label_tool_names == {"search_code"}


@pytest.mark.parametrize("selection", [False, []])
def test_model_spec_none_describes_nothing_even_natives(selection: object) -> None:
    options = synthesize_intent_tool_options(selection, ["read_file", "search_code"])
    result = apply_intent_labels([native("read_file"), third_party()], options)
    assert result.label_tool_names == frozenset()
