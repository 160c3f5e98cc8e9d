"""Read-only JSON values (`core.frozen`): equal to the plain ones, unchangeable, JSON-ready."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest

from intent_ui.core.frozen import FrozenDict, FrozenList, freeze

PLAIN: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "enum": ["a", "b"]}},
    "required": ["q"],
    "pair": (1, {"x": [True, None, 1.5]}),
}


def test_freeze_is_equal_to_the_value_and_encodes_the_same() -> None:
    frozen = freeze(PLAIN)
    assert frozen == PLAIN
    assert json.dumps(frozen) == json.dumps(PLAIN)
    assert isinstance(frozen["properties"]["q"], FrozenDict)
    assert isinstance(frozen["required"], FrozenList)
    assert isinstance(frozen["pair"][1]["x"], FrozenList)


MUTATIONS: dict[str, Callable[[Any], object]] = {
    "set key": lambda v: v.__setitem__("type", "string"),
    "delete key": lambda v: v.__delitem__("type"),
    "update": lambda v: v.update(type="string"),
    "setdefault": lambda v: v.setdefault("new", 1),
    "pop": lambda v: v.pop("type"),
    "popitem": lambda v: v.popitem(),
    "clear": lambda v: v.clear(),
    "merge in place": lambda v: v.__ior__({"new": 1}),
    "nested dict": lambda v: v["properties"]["q"].__setitem__("type", "integer"),
    "append": lambda v: v["required"].append("x"),
    "extend": lambda v: v["required"].extend(["x"]),
    "insert": lambda v: v["required"].insert(0, "x"),
    "set item": lambda v: v["required"].__setitem__(0, "x"),
    "set slice": lambda v: v["required"].__setitem__(slice(0, 1), ["x"]),
    "delete item": lambda v: v["required"].__delitem__(0),
    "list pop": lambda v: v["required"].pop(),
    "remove": lambda v: v["required"].remove("q"),
    "sort": lambda v: v["properties"]["q"]["enum"].sort(reverse=True),
    "reverse": lambda v: v["properties"]["q"]["enum"].reverse(),
    "list clear": lambda v: v["required"].clear(),
    "add in place": lambda v: v["required"].__iadd__(["x"]),
    "multiply in place": lambda v: v["required"].__imul__(2),
    "inside a tuple": lambda v: v["pair"][1]["x"].append(0),
}


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_every_change_is_refused_and_nothing_changes(mutate: Callable[[Any], object]) -> None:
    frozen = freeze(PLAIN)
    with pytest.raises(TypeError, match="read-only"):
        mutate(frozen)
    assert frozen == PLAIN


def test_freezing_copies_so_the_source_cannot_change_it() -> None:
    source = copy.deepcopy(PLAIN)
    frozen = freeze(source)
    source["properties"]["q"]["type"] = "integer"
    source["required"].append("x")
    assert frozen == PLAIN


def test_copies_are_plain_and_mutable() -> None:
    frozen = freeze(PLAIN)
    for made in (copy.deepcopy(frozen), pickle.loads(pickle.dumps(frozen))):
        assert made == PLAIN
        made["properties"]["q"]["type"] = "integer"
        made["required"].append("x")
    shallow = copy.copy(frozen)
    shallow["type"] = "string"
    assert type(shallow) is dict
    assert type(copy.copy(frozen["required"])) is list
    assert type({**frozen}) is dict
    assert frozen == PLAIN


def test_frozen_parts_are_kept_not_copied() -> None:
    inner = freeze({"type": "string"})
    outer = freeze({"properties": {"q": inner}, "items": [inner]})
    assert outer["properties"]["q"] is inner
    assert outer["items"][0] is inner
    assert freeze(outer) is outer


def test_read_only_mappings_and_sets_freeze_to_json_ready_values() -> None:
    frozen = freeze({"proxy": MappingProxyType({"a": [1]}), "names": {"x"}})
    assert isinstance(frozen["proxy"], FrozenDict)
    assert frozen["proxy"] == {"a": [1]}
    assert frozen["names"] == frozenset({"x"})
    assert json.dumps(frozen["proxy"]) == '{"a": [1]}'
