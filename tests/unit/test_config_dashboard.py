"""`dashboard:` in the configuration: the tools whose intents the dashboard keeps no
copy of, named by tool id or name; a wrong shape is refused with the key and an example."""

from __future__ import annotations

from pathlib import Path

import pytest

from intent_ui.config import AppConfig, ConfigError, load_config


def _load(tmp_path: Path, text: str) -> AppConfig:
    path = tmp_path / "intent_ui.yaml"
    path.write_text(text)
    return load_config(path, env={})


def test_no_tool_is_opted_out_by_default(tmp_path: Path) -> None:
    assert _load(tmp_path, "{}\n").dashboard.omit_intents == ()


def test_tools_are_named_by_id_or_name(tmp_path: Path) -> None:
    config = _load(tmp_path, "dashboard:\n  omit_intents: [send_message, ' book_mcp_travel ']\n")
    assert config.dashboard.omit_intents == ("send_message", "book_mcp_travel")


@pytest.mark.parametrize("value", ["send_message", "[1, 2]", "['']"])
def test_anything_but_a_list_of_names_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match=r"dashboard\.omit_intents: expected a list of tool"):
        _load(tmp_path, f"dashboard:\n  omit_intents: {value}\n")
