"""Factories shared by the capability-family tests (`test_capability_*.py`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from intent_ui.core.capabilities.intent import INTENT_ARG, with_intent


def deep_freeze(value: Any) -> Any:
    """Read-only all the way down: mappings become MappingProxyType, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: deep_freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(deep_freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """Plain dicts and lists again, for comparing frozen inputs with results."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value


def third_party(name: str = "search_code", **extra: Any) -> dict[str, Any]:
    """An MCP-like tool with an object schema and no label."""
    return {
        "name": name,
        "description": f"{name} from a server",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
        **extra,
    }


def native(name: str = "read_file", **extra: Any) -> dict[str, Any]:
    """A native tool whose schema declares the label itself (required)."""
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    return {
        "name": name,
        "description": f"native {name}",
        "parameters": with_intent(schema),
        **extra,
    }


def business_intent_tool(name: str = "classify_ticket") -> dict[str, Any]:
    """A CRM-like tool whose own parameter is called `intent` (no marker)."""
    return {
        "name": name,
        "description": "Files a ticket under an intent category.",
        "parameters": {
            "type": "object",
            "properties": {
                INTENT_ARG: {"type": "string", "enum": ["billing_inquiry", "bug"]},
                "body": {"type": "string"},
            },
            "required": [INTENT_ARG, "body"],
        },
    }


def own_flag_tool(name: str = "job") -> dict[str, Any]:
    """A tool whose own parameter happens to be called run_in_background (no marker)."""
    return {
        "name": name,
        "parameters": {
            "type": "object",
            "properties": {"run_in_background": {"type": "boolean", "description": "nohup"}},
        },
    }


def string_input_tool(name: str = "legacy_tool") -> dict[str, Any]:
    """A DynamicTool-like tool whose input is a plain string."""
    return {"name": name, "description": "takes a string", "parameters": {"type": "string"}}


def property_names(tool: Mapping[str, Any]) -> list[str]:
    return list(tool["parameters"]["properties"])


def snapshot(value: Any) -> Any:
    return copy.deepcopy(thaw(value))
