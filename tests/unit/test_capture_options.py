"""The capture switch: code options, `INTENT_CAPTURE`, and the `INTENT_CAPTURE_CONFIG` file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intent_ui.capture import CaptureConfigError, IntentOptions
from intent_ui.capture.options import resolve_intent


def _file(tmp_path: Path, name: str, text: str) -> dict[str, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return {"INTENT_CAPTURE_CONFIG": str(path)}


def test_off_without_code_env_or_file() -> None:
    assert resolve_intent(None, {}).options is None


@pytest.mark.parametrize("value", ["1", "true", "ON", "yes"])
def test_env_switches_on(value: str) -> None:
    assert resolve_intent(None, {"INTENT_CAPTURE": value}).options == IntentOptions()


def test_yaml_file_supplies_options_and_sink(tmp_path: Path) -> None:
    env = _file(
        tmp_path,
        "capture.yaml",
        "intent:\n  required: false\n  exclude: [send_message]\nsink:\n  jsonl: out.jsonl\n",
    )
    resolved = resolve_intent(None, env)
    assert resolved.options == IntentOptions(required=False, exclude=frozenset({"send_message"}))
    assert resolved.sink is not None and resolved.sink.jsonl == "out.jsonl"


def test_env_off_beats_the_file(tmp_path: Path) -> None:
    env = _file(tmp_path, "capture.json", json.dumps({"intent": True}))
    assert resolve_intent(None, {**env, "INTENT_CAPTURE": "0"}).options is None


def test_code_options_beat_env_and_file(tmp_path: Path) -> None:
    env = _file(tmp_path, "capture.json", json.dumps({"intent": {"required": False}}))
    env["INTENT_CAPTURE"] = "0"
    chosen = IntentOptions(description="Why?")
    assert resolve_intent(chosen, env).options is chosen
    assert resolve_intent(True, env).options == IntentOptions(required=False)
    assert resolve_intent(False, {"INTENT_CAPTURE": "1"}).options is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"intent": "yes please"}', "intent"),
        ('{"intent": true, "sink": {"jsonl": "a", "http": "b"}}', "exactly one of"),
        ('{"intnet": true}', "intnet"),
        ("{not json", "not valid JSON"),
    ],
)
def test_invalid_file_names_the_file_and_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    env = _file(tmp_path, "capture.json", text)
    with pytest.raises(CaptureConfigError, match=message) as caught:
        resolve_intent(None, env)
    assert "capture.json" in str(caught.value)


def test_missing_file_says_which_variable_named_it(tmp_path: Path) -> None:
    with pytest.raises(CaptureConfigError, match="INTENT_CAPTURE_CONFIG"):
        resolve_intent(None, {"INTENT_CAPTURE_CONFIG": str(tmp_path / "absent.json")})


def test_code_intent_of_the_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(CaptureConfigError, match="IntentOptions"):
        resolve_intent("on", {})  # type: ignore[arg-type]
