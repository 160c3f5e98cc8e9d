"""intent_ui.core.capabilities.intent_schema: the label property and native schemas."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from intent_ui.core.capabilities.intent import inject_intent_param, strip_intent
from intent_ui.core.capabilities.intent_schema import (
    INTENT_DESCRIPTION,
    INTENT_LABEL_MARKER,
    INTENT_PROPERTY,
    is_intent_label_property,
    make_intent_optional,
    with_intent,
    with_intent_model,
    without_intent,
)
from intent_ui.core.capabilities.strict import to_strict_tool
from tests.support.capability_helpers import business_intent_tool, native, snapshot, third_party

LABEL = {"type": "string", "description": INTENT_DESCRIPTION}

# --- what the model is told ----------------------------------------------------------


def test_the_model_is_told_the_instruction_word_for_word() -> None:
    sent = json.loads(json.dumps(inject_intent_param(third_party())))
    assert sent["parameters"]["properties"]["intent"] == {
        "type": "string",
        "description": (
            "ALWAYS write this field FIRST, before any other argument. One "
            'present-progressive sentence saying what THIS call is about to do: "Searching '
            "for OAuth handling in the callback router\". Shown to the user as this call's "
            "live status. Never name the tool. Sibling calls to one tool must differ."
        ),
    }


def test_a_label_is_recognised_by_its_opening_words_whatever_follows() -> None:
    reworded = {"type": "string", "description": f"{INTENT_LABEL_MARKER}. Then the query."}
    schema = {"type": "object", "properties": {"intent": reworded, "q": {"type": "string"}}}
    assert list(without_intent(schema)["properties"]) == ["q"]


def test_a_label_survives_strict_conversion_as_a_label() -> None:
    strict = to_strict_tool(inject_intent_param(third_party()))
    assert strict["parameters"]["properties"]["intent"]["type"] == ["string", "null"]
    assert is_intent_label_property(strict["parameters"]["properties"]["intent"])


def test_the_opening_words_later_in_a_description_do_not_make_a_label() -> None:
    prop = {"type": "string", "description": f"The category. {INTENT_LABEL_MARKER}."}
    schema = {"type": "object", "properties": {"intent": prop}}
    assert without_intent(schema) is schema


def test_the_shared_property_is_read_only() -> None:
    with pytest.raises(TypeError):
        INTENT_PROPERTY["type"] = "integer"  # type: ignore[index]


# --- with_intent / without_intent ----------------------------------------------------

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
    junk: object = "nonsense"
    assert with_intent(junk) == junk  # type: ignore[arg-type]


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


# --- make_intent_optional ------------------------------------------------------------


def test_make_intent_optional_drops_it_from_required() -> None:
    tool = native("write_file")
    assert make_intent_optional(tool)["parameters"]["required"] == ["path"]


def test_make_intent_optional_is_a_noop_when_already_optional() -> None:
    tool = inject_intent_param(third_party())
    assert make_intent_optional(tool) is tool
    plain = third_party()
    assert make_intent_optional(plain) is plain
