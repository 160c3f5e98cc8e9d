"""intent_ui.core.capabilities.output_references: placeholders, never inside a label."""

from __future__ import annotations

from intent_ui.core.capabilities.intent import read_intent
from intent_ui.core.capabilities.output_references import substitute_output_references

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
