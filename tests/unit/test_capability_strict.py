"""intent_ui.core.capabilities.strict: strict function schemas (every property required)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from intent_ui.core.capabilities.intent import (
    INTENT_DESCRIPTION,
    inject_intent_param,
    is_intent_label_property,
    with_intent,
)
from intent_ui.core.capabilities.strict import to_strict_parameters, to_strict_tool
from tests.support.capability_helpers import deep_freeze, snapshot, thaw, third_party


def test_every_property_is_required_in_property_order() -> None:
    strict = to_strict_parameters(third_party()["parameters"])
    assert strict["required"] == ["query", "limit"]
    assert strict["additionalProperties"] is False


def test_optional_properties_become_nullable() -> None:
    strict = to_strict_parameters(third_party()["parameters"])
    assert strict["properties"]["query"] == {"type": "string"}
    assert strict["properties"]["limit"] == {"type": ["integer", "null"]}


def test_optional_intent_becomes_nullable_and_stays_first() -> None:
    params = inject_intent_param(third_party())["parameters"]
    strict = to_strict_parameters(params)
    assert next(iter(strict["properties"])) == "intent"
    assert strict["required"][0] == "intent"
    assert strict["properties"]["intent"] == {
        "type": ["string", "null"],
        "description": INTENT_DESCRIPTION,
    }
    assert is_intent_label_property(strict["properties"]["intent"])


def test_required_native_intent_stays_a_plain_string() -> None:
    strict = to_strict_parameters(with_intent({"type": "object", "properties": {}}))
    assert strict["properties"]["intent"]["type"] == "string"
    assert strict["required"] == ["intent"]


def test_nested_objects_are_strict_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"lang": {"type": "string"}, "path": {"type": "string"}},
                "required": ["lang"],
            },
            "tags": {
                "type": "array",
                "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            },
        },
        "required": ["filter"],
    }
    strict = to_strict_parameters(schema)
    nested = strict["properties"]["filter"]
    assert nested["required"] == ["lang", "path"]
    assert nested["additionalProperties"] is False
    assert nested["properties"]["path"]["type"] == ["string", "null"]
    item = strict["properties"]["tags"]["items"]
    assert item["required"] == ["k"]
    assert item["additionalProperties"] is False
    assert strict["properties"]["tags"]["type"] == ["array", "null"]


def test_compositions_defs_and_tuple_items_are_converted() -> None:
    obj = {"type": "object", "properties": {"x": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "either": {"anyOf": [obj, {"type": "string"}]},
            "pair": {"type": "array", "items": [obj, obj]},
            "ref": {"$ref": "#/$defs/Thing", "description": "a thing"},
        },
        "$defs": {"Thing": obj},
    }
    strict = to_strict_parameters(schema)
    either = strict["properties"]["either"]
    assert either["anyOf"][0]["additionalProperties"] is False
    assert either["anyOf"][-1] == {"type": "null"}
    assert strict["properties"]["pair"]["items"][1]["required"] == ["x"]
    assert strict["$defs"]["Thing"]["additionalProperties"] is False
    assert strict["properties"]["ref"] == {
        "description": "a thing",
        "anyOf": [{"$ref": "#/$defs/Thing"}, {"type": "null"}],
    }


def test_optional_enum_accepts_null() -> None:
    schema = {"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]}}}
    mode = to_strict_parameters(schema)["properties"]["mode"]
    assert mode == {"type": ["string", "null"], "enum": ["a", "b", None]}
    jsonschema.validate(None, mode)


def test_already_nullable_properties_are_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
            "c": {"type": ["string", "integer"]},
            "d": {"enum": ["x"]},
        },
    }
    props = to_strict_parameters(schema)["properties"]
    assert props["a"] == {"type": ["string", "null"]}
    assert props["b"] == {"oneOf": [{"type": "null"}, {"type": "integer"}]}
    assert props["c"] == {"type": ["string", "integer", "null"]}
    assert props["d"] == {"anyOf": [{"enum": ["x"]}, {"type": "null"}]}


def test_untyped_object_with_properties_is_treated_as_object() -> None:
    strict = to_strict_parameters({"properties": {"a": {"type": "string"}}})
    assert strict["required"] == ["a"]


def test_object_typed_as_a_list_is_treated_as_object() -> None:
    strict = to_strict_parameters({"type": ["object", "null"], "properties": {}})
    assert strict["additionalProperties"] is False


def test_free_form_object_becomes_empty_object_only() -> None:
    strict = to_strict_parameters({"type": "object"})
    assert strict == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_no_schema_becomes_an_empty_strict_object() -> None:
    assert to_strict_parameters(None)["additionalProperties"] is False


def test_non_object_top_level_schema_is_unchanged() -> None:
    schema = {"type": "string"}
    assert to_strict_parameters(schema) is schema


def test_already_strict_schema_is_the_same_object() -> None:
    once = to_strict_parameters(third_party()["parameters"])
    assert to_strict_parameters(once) is once


def test_conversion_does_not_mutate_frozen_input() -> None:
    params = deep_freeze(inject_intent_param(third_party())["parameters"])
    before = snapshot(params)
    strict = to_strict_parameters(params)
    assert thaw(params) == before
    assert strict["required"][0] == "intent"


def test_strict_schema_validates_calls_with_and_without_intent() -> None:
    strict = to_strict_parameters(inject_intent_param(third_party())["parameters"])
    jsonschema.Draft202012Validator.check_schema(strict)
    jsonschema.validate({"intent": "Searching", "query": "q", "limit": 3}, strict)
    jsonschema.validate({"intent": None, "query": "q", "limit": None}, strict)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"intent": None, "query": "q", "limit": None, "extra": 1}, strict)


def test_to_strict_tool() -> None:
    tool = third_party()
    strict = to_strict_tool(tool)
    assert strict["name"] == tool["name"]
    assert strict["parameters"]["additionalProperties"] is False
    assert to_strict_tool(strict) is strict


@pytest.mark.parametrize(
    ("bad", "sent"),
    [
        # Properties that are not a mapping are no properties: a free-form object.
        (
            {"type": "object", "properties": ["a"]},
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        ),
        # Not a schema at all: passed on as it came, for the provider to judge.
        ("text", "text"),
    ],
)
def test_malformed_schemas_are_sent_rather_than_refused(bad: Any, sent: Any) -> None:
    assert to_strict_parameters(bad) == sent
