"""`CapabilityCache`: `apply_capabilities` remembered by the content of its inputs.

Pinned: a hit answers exactly what the pipeline would; any change to a definition, an
option, the capabilities, the strictness, the tool ids or the registry misses; inputs
are never mutated, and neither the caller's inputs nor the shared results can change
what a later caller gets; the cache is bounded.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from intent_ui.core.capabilities import (
    ALL_CAPABILITIES,
    TOOL_INTENTS_CAPABILITY,
    CapabilityResult,
    apply_capabilities,
)
from intent_ui.core.capabilities.cache import CapabilityCache, frozen_definition
from tests.support.capability_helpers import (
    business_intent_tool,
    deep_freeze,
    native,
    snapshot,
    third_party,
)

Args = dict[str, Any]

OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"describe_intent": True},
    "search_code_mcp_github": {"run_in_background": True},
    "crm_lookup": {"defer_loading": True, "describe_intent": True},
    "bridge": {"allowed_callers": ["direct", "code_execution"]},
}


def tools() -> list[dict[str, Any]]:
    """A mixed agent: native, third-party, deferred, dual-caller, a business `intent`."""
    return [
        native("read_file"),
        third_party(),
        third_party("crm_lookup"),
        third_party("bridge"),
        business_intent_tool(),
    ]


def args(**changes: Any) -> Args:
    base: Args = {
        "definitions": tools(),
        "tool_options": copy.deepcopy(OPTIONS),
        "capabilities": ALL_CAPABILITIES,
        "tool_ids": {"search_code": "search_code_mcp_github"},
        "strict": False,
    }
    return base | changes


def shape(cache: CapabilityCache, call: Args) -> CapabilityResult:
    definitions, options = call["definitions"], call["tool_options"]
    rest = {k: v for k, v in call.items() if k not in ("definitions", "tool_options")}
    return cache.apply(definitions, options, **rest)


def uncached(call: Args) -> CapabilityResult:
    definitions, options = call["definitions"], call["tool_options"]
    rest = {k: v for k, v in call.items() if k not in ("definitions", "tool_options")}
    return apply_capabilities(definitions, options, **rest)


def as_json(result: CapabilityResult) -> str:
    """Everything the result says, types and key order included (lists, not tuples)."""
    return json.dumps(
        {
            "definitions": result.definitions,
            "registry": result.registry,
            "intent": sorted(result.intent_tool_names),
            "injected": sorted(result.injected_intent_tool_names),
            "background": sorted(result.background_tool_names),
            "deferred": list(result.deferred_names),
        },
        default=dict,
    )


def test_miss_then_hit_answer_what_the_pipeline_answers() -> None:
    cache = CapabilityCache()
    first = shape(cache, args())
    second = shape(cache, args())  # equal inputs, built afresh
    assert (cache.misses, cache.hits) == (1, 1)
    assert second is first
    assert as_json(first) == as_json(uncached(args()))
    assert first.definitions == uncached(args()).definitions


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(
    "capabilities", [ALL_CAPABILITIES, frozenset(), frozenset({TOOL_INTENTS_CAPABILITY})]
)
def test_cached_results_equal_uncached_ones(strict: bool, capabilities: frozenset[str]) -> None:
    cache = CapabilityCache()
    registry = {"crm_lookup": third_party("crm_lookup"), "extra": third_party("extra")}
    call = args(strict=strict, capabilities=capabilities, registry=registry)
    shape(cache, call)
    hit = shape(cache, args(strict=strict, capabilities=capabilities, registry=registry))
    assert cache.hits == 1
    assert as_json(hit) == as_json(uncached(call))


def _edit(path: list[Any], value: Any) -> Callable[[Args], None]:
    def edit(call: Args) -> None:
        node = call
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _reorder_properties(call: Args) -> None:
    params = call["definitions"][1]["parameters"]
    params["properties"] = dict(reversed(params["properties"].items()))


CHANGES: dict[str, Callable[[Args], None]] = {
    "a description": _edit(["definitions", 1, "description"], "Search all the code."),
    "a property's type": _edit(
        ["definitions", 1, "parameters", "properties", "limit", "type"], "number"
    ),
    "the properties' order": _reorder_properties,
    "1 for True in a schema": _edit(
        ["definitions", 1, "parameters", "properties", "limit", "default"], 1
    ),
    "True for 1 in a schema": _edit(
        ["definitions", 1, "parameters", "properties", "limit", "default"], True
    ),
    "a tool more": lambda call: call["definitions"].append(third_party("another")),
    "a tool less": lambda call: call["definitions"].pop(1),
    "the tools' order": lambda call: call["definitions"].reverse(),
    "an option off": _edit(["tool_options", "*", "describe_intent"], False),
    "an option that is 1, not True": _edit(
        ["tool_options", "search_code_mcp_github", "run_in_background"], 1
    ),
    "an option more": _edit(["tool_options", "read_file"], {"run_in_background": True}),
    "no options": lambda call: call.update(tool_options=None),
    "strict": _edit(["strict"], True),
    "the capabilities": _edit(["capabilities"], frozenset({TOOL_INTENTS_CAPABILITY})),
    "a tool id": _edit(["tool_ids", "search_code"], "search_code_mcp_gitlab"),
    "an empty registry": lambda call: call.update(registry={}),
    "a registry": lambda call: call.update(registry={"crm_lookup": third_party("crm_lookup")}),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_misses_and_answers_for_the_changed_inputs(
    change: Callable[[Args], None],
) -> None:
    cache = CapabilityCache()
    before = shape(cache, args())
    changed = args()
    change(changed)
    expected = uncached(copy.deepcopy(changed))
    after = shape(cache, changed)
    assert (cache.misses, cache.hits) == (2, 0)
    assert as_json(after) == as_json(expected)
    assert shape(cache, args()) is before  # the first entry still answers for its inputs


def test_values_equal_under_eq_are_still_different_inputs() -> None:
    # `1 == True` and dicts compare equal in any key order, but the pipeline's answer
    # keeps both the type and the order: neither may answer for the other.
    cache = CapabilityCache()
    one, true, reordered = args(), args(), args()
    _edit(["definitions", 1, "parameters", "properties", "limit", "default"], 1)(one)
    _edit(["definitions", 1, "parameters", "properties", "limit", "default"], True)(true)
    _reorder_properties(reordered)
    shape(cache, one)
    assert reordered["definitions"] == args()["definitions"]
    shape(cache, args())
    flag = shape(cache, true).definitions[1]["parameters"]["properties"]["limit"]["default"]
    order = list(shape(cache, reordered).definitions[1]["parameters"]["properties"])
    assert cache.misses == 4
    assert flag is True
    assert order == ["intent", "limit", "query", "run_in_background"]


def test_changing_the_callers_inputs_afterwards_changes_no_entry() -> None:
    cache = CapabilityCache()
    call = args()
    expected = as_json(uncached(args()))
    shape(cache, call)
    # Mutating what was passed in: the entry holds none of it.
    call["definitions"][1]["parameters"]["properties"]["query"]["type"] = "integer"
    call["definitions"][0]["description"] = "changed"
    call["tool_options"]["*"]["describe_intent"] = False
    assert as_json(shape(cache, args())) == expected
    assert cache.hits == 1


@pytest.mark.parametrize("strict", [False, True])
def test_inputs_are_never_mutated(strict: bool) -> None:
    cache = CapabilityCache()
    registry = {"crm_lookup": third_party("crm_lookup")}
    for _ in range(2):  # a miss, then a hit
        call = args(strict=strict, registry=registry)
        before = snapshot(call)
        shape(cache, call)
        assert snapshot(call) == before


def test_results_refuse_changes_so_no_caller_corrupts_the_next() -> None:
    cache = CapabilityCache()
    result = shape(cache, args(registry={"crm_lookup": third_party("crm_lookup")}))
    expected = as_json(uncached(args(registry={"crm_lookup": third_party("crm_lookup")})))
    definitions: Any = result.definitions
    registry: Any = result.registry
    label = definitions[1]["parameters"]["properties"]["intent"]
    attempts: list[Callable[[], object]] = [
        lambda: definitions.append(third_party("x")),
        lambda: definitions.pop(),
        lambda: definitions[1].__setitem__("description", "x"),
        lambda: label.__setitem__("description", "x"),
        lambda: definitions[1]["parameters"]["required"].append("x"),
        lambda: registry.pop("crm_lookup"),
        lambda: registry["crm_lookup"]["parameters"]["properties"].clear(),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError):
            attempt()
    again = shape(cache, args(registry={"crm_lookup": third_party("crm_lookup")}))
    assert again is result
    assert as_json(again) == expected


def test_a_copy_of_a_result_is_the_callers_own() -> None:
    result = shape(CapabilityCache(), args())
    mine = copy.deepcopy(list(result.definitions))
    mine[1]["parameters"]["properties"].pop("intent")
    assert "intent" in result.definitions[1]["parameters"]["properties"]


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = CapabilityCache(max_entries=2)
    first, second, third = args(), args(strict=True), args(capabilities=frozenset())
    shape(cache, first)
    shape(cache, second)
    shape(cache, args())  # `first` is the most recent now
    shape(cache, third)  # evicts `second`
    assert len(cache) == 2
    assert (cache.misses, cache.hits) == (3, 1)
    shape(cache, args())
    assert cache.hits == 2
    shape(cache, args(strict=True))
    assert cache.misses == 4


def test_frozen_definitions_key_like_their_plain_content() -> None:
    cache = CapabilityCache()
    plain = shape(cache, args())
    frozen = [frozen_definition(tool) for tool in tools()]
    assert frozen == tools()
    assert shape(cache, args(definitions=frozen)) is plain
    assert cache.hits == 1


def test_a_frozen_definition_keeps_the_content_it_was_frozen_with() -> None:
    source = third_party()
    frozen = frozen_definition(source)
    source["parameters"]["properties"]["query"]["type"] = "integer"
    assert frozen == third_party()
    cache = CapabilityCache()
    assert as_json(shape(cache, args(definitions=[frozen]))) == as_json(
        uncached(args(definitions=[third_party()]))
    )
    with pytest.raises(TypeError):
        frozen["parameters"]["properties"]["query"]["type"] = "integer"


def test_read_only_inputs_are_cached_too() -> None:
    cache = CapabilityCache()

    def read_only() -> Args:
        return args(definitions=deep_freeze(tools()), tool_options=deep_freeze(OPTIONS))

    first = shape(cache, read_only())
    assert shape(cache, read_only()) is first
    assert as_json(first) == as_json(uncached(read_only()))


def test_inputs_that_are_not_json_are_shaped_uncached_every_time() -> None:
    cache = CapabilityCache()
    odd = third_party(extra=object())
    for _ in range(2):
        result = shape(cache, args(definitions=[odd]))
        assert (
            result.definitions[0]["parameters"]
            == uncached(args(definitions=[odd])).definitions[0]["parameters"]
        )
    assert (len(cache), cache.misses, cache.hits) == (0, 2, 0)


def test_a_hit_does_not_repeat_the_pipelines_warnings(caplog: pytest.LogCaptureFixture) -> None:
    cache = CapabilityCache()
    clash = args(tool_options={"classify_ticket": {"describe_intent": True}})
    with caplog.at_level(logging.WARNING):
        shape(cache, clash)
        logged = len(caplog.records)
        shape(cache, args(tool_options={"classify_ticket": {"describe_intent": True}}))
    assert logged >= 1
    assert len(caplog.records) == logged


def test_max_entries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        CapabilityCache(max_entries=0)
