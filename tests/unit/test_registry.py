"""intent_ui.core.registry: the seed's two examples, and IntentRegistry's rules.

ScopeRegistry's rules are in test_registry_scopes.py.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from collections.abc import Coroutine, Mapping
from typing import Any

import jsonschema
import pytest

from intent_ui.core.capabilities.intent import INTENT_ARG, is_intent_label_property
from intent_ui.core.capabilities.strict import to_strict_tool
from intent_ui.core.registry import (
    INPUT_ARG,
    INTENT_ID_ARG,
    SELECT_INTENT_TOOL_NAME,
    IntentDescription,
    IntentRegistry,
    RegistryError,
    ResolveContext,
    ScopeRegistry,
    Selection,
    tools_for_goal,
)

EXPLAIN = "根据资料解释 SDK"
WHEN = "用户希望了解 SDK 接口或用法。"


def intent(**fields: Any) -> dict[str, Any]:
    """A valid registration; keyword arguments override or add fields."""
    return {"id": "explain", "description": EXPLAIN, **fields}


def described(registry: IntentRegistry, intent_id: str = "explain") -> IntentDescription:
    """The record registered as `intent_id`; fails the test if there is none."""
    record = registry.get(intent_id)
    assert record is not None, f"no intent {intent_id!r} is registered"
    return record


def rejected(registry: IntentRegistry, registration: object, *words: str) -> str:
    """Register, expect a RegistryError whose message holds every word; return it."""
    with pytest.raises(RegistryError) as caught:
        registry.register(registration)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


# --- the seed's examples ---------------------------------------------------------------


def test_seed_example_register_one_tool_that_explains_an_interface() -> None:
    tools = IntentRegistry.create(
        [
            {
                "id": "explain",
                "description": EXPLAIN,
                "delegates": ["read", "reply"],
                "as_intent": True,
            }
        ]
    )
    assert tools.ids() == ["explain"]
    assert tools.allows("explain", "read") is True

    scopes = ScopeRegistry.create(
        [{"id": "sdk", "description": "SDK 说明资料", "category": "knowledge"}]
    )
    assert scopes.require("sdk").knowledge_topic_ids == ()


def test_seed_example_constraints_and_scope_relationships() -> None:
    tools = (
        IntentRegistry(id_pattern=re.compile(r"^[a-z-]+$"), delegates=["read", "reply"])
        .register_all(
            [
                {
                    "id": "explain",
                    "description": EXPLAIN,
                    "delegates": ["read", "reply"],
                    "as_intent": WHEN,
                }
            ]
        )
        .seal()
    )
    scopes = ScopeRegistry.create(
        [
            {
                "id": "sdk",
                "description": "SDK 说明资料",
                "category": "knowledge",
                "aliases": ["agent-core"],
                "goal_ids": ["explain"],
                "knowledge_topic_ids": ["manual"],
                "tool_ids": ["read-source"],
            }
        ],
        categories=["knowledge"],
        require_goals=True,
        require_sources=True,
    )

    [described] = tools.describe()
    assert (described.id, described.description) == ("explain", EXPLAIN)
    assert described.delegates == ("read", "reply")
    assert described.as_intent == WHEN
    assert tools.sealed
    assert scopes.normalize("agent-core") == "sdk"
    assert scopes.accepts_tool("agent-core", "explain") is True
    assert scopes.topics("sdk") == ["manual"]


# --- policy ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "words"),
    [
        ({"id_pattern": "([a-z"}, ["id_pattern", "not a valid regular expression"]),
        ({"id_pattern": 42}, ["id_pattern", "must be a regular expression"]),
        ({"delegates": "read"}, ["delegates", "must be a list of strings"]),
        ({"scope_modes": ["narrow", " "]}, ["scope_modes", "non-blank"]),
        ({"actions": ["plan", "plan"]}, ["actions", "'plan' twice"]),
    ],
)
def test_an_invalid_policy_is_refused(policy: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(RegistryError) as caught:
        IntentRegistry(**policy)
    for word in ["intent policy", *words]:
        assert word in str(caught.value)


def test_a_string_id_pattern_is_compiled_and_searched_like_a_regexp_test() -> None:
    # JavaScript's RegExp.test searches: the pattern's own anchors decide.
    loose = IntentRegistry(id_pattern="[a-z]+").register(intent(id="Explain2"))
    assert loose.ids() == ["Explain2"]
    anchored = IntentRegistry(id_pattern="^[a-z-]+$")
    rejected(anchored, intent(id="Explain2"), "'Explain2'", "id_pattern", "^[a-z-]+$")


def test_an_empty_policy_list_allows_nothing() -> None:
    registry = IntentRegistry(delegates=[])
    rejected(registry, intent(delegates=["read"]), "delegate 'read'", "[]")
    assert registry.register(intent()).ids() == ["explain"]


# --- registration rules ----------------------------------------------------------------


@pytest.mark.parametrize("registration", ["explain", 3, ["explain"]])
def test_a_registration_must_be_a_mapping(registration: object) -> None:
    rejected(IntentRegistry(), registration, "intent registration #1", "expected a mapping")


def test_an_unknown_field_is_refused_with_the_snake_case_hint() -> None:
    rejected(IntentRegistry(), intent(asIntent=True), "'asIntent'", "did you mean 'as_intent'?")
    rejected(IntentRegistry(), intent(colour="red"), "'colour'", "known fields:")


@pytest.mark.parametrize("bad_id", [None, "", "   ", 7])
def test_an_id_must_be_a_non_blank_string(bad_id: object) -> None:
    rejected(IntentRegistry(), intent(id=bad_id), "intent registration #1", "'id' must be")


def test_ids_must_be_unique_across_registrations() -> None:
    registry = IntentRegistry().register(intent())
    rejected(registry, intent(), "intent 'explain'", "already registered")


def test_a_batch_with_a_duplicate_id_registers_nothing() -> None:
    registry = IntentRegistry()
    with pytest.raises(RegistryError, match="'explain': already registered"):
        registry.register_all([intent(), intent(id="summarize"), intent()])
    assert registry.ids() == []


def test_a_batch_with_one_invalid_registration_registers_nothing() -> None:
    registry = IntentRegistry()
    with pytest.raises(RegistryError, match="intent registration #2"):
        registry.register_all([intent(), {"description": "no id"}])
    assert registry.ids() == []


@pytest.mark.parametrize("description", [None, "", "  \n", 3])
def test_a_description_must_be_non_blank(description: object) -> None:
    rejected(IntentRegistry(), intent(description=description), "'explain'", "'description'")


@pytest.mark.parametrize(
    ("delegates", "words"),
    [
        ("read", ["must be a list of strings"]),
        (["read", ""], ["each must be a non-blank string"]),
        (["read", "read"], ["'read' twice"]),
    ],
)
def test_delegates_must_be_unique_non_blank_strings(delegates: object, words: list[str]) -> None:
    rejected(IntentRegistry(), intent(delegates=delegates), "'explain'", "'delegates'", *words)


def test_delegates_are_checked_against_the_policy() -> None:
    registry = IntentRegistry(delegates=["read", "reply"])
    rejected(registry, intent(delegates=["read", "write"]), "delegate 'write'", "['read', 'reply']")


def test_delegates_default_to_none_and_are_a_tuple() -> None:
    registry = IntentRegistry.create([intent(), intent(id="reply", delegates=["reply"])])
    assert described(registry).delegates == ()
    assert described(registry, "reply").delegates == ("reply",)


@pytest.mark.parametrize(
    "schema",
    [{"type": "string"}, {"properties": {}}, "object", ["object"]],
    ids=["string", "untyped", "text", "list"],
)
def test_the_input_schema_must_be_an_object_schema(schema: object) -> None:
    rejected(IntentRegistry(), intent(input_schema=schema), "'explain'", "must be an object schema")


def test_the_input_schema_must_be_a_valid_json_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "text"}}}
    rejected(IntentRegistry(), intent(input_schema=schema), "'explain'", "not a valid JSON schema")


def test_resolve_must_be_a_function() -> None:
    rejected(IntentRegistry(), intent(resolve="upper"), "'explain'", "'resolve' must be a function")


def test_an_async_resolve_is_refused_at_registration() -> None:
    async def resolve(input: Mapping[str, Any], context: ResolveContext) -> Any:
        return input

    rejected(IntentRegistry(), intent(resolve=resolve), "'explain'", "must be synchronous")


@pytest.mark.parametrize("active", ["yes", 1])
def test_active_must_be_a_boolean(active: object) -> None:
    rejected(IntentRegistry(), intent(active=active), "'explain'", "'active' must be true or false")


@pytest.mark.parametrize("as_intent", ["", "  ", 1])
def test_as_intent_must_be_a_boolean_or_a_sentence(as_intent: object) -> None:
    rejected(IntentRegistry(), intent(as_intent=as_intent), "'explain'", "'as_intent' must be")


POLICY_FIELDS = [
    ("scope_policy", "scope_modes", "scope mode"),
    ("target_policy", "target_modes", "target mode"),
    ("context_tier", "context_tiers", "context tier"),
    ("plan_intent", "actions", "action"),
    ("prepared_handoff", "handoff_values", "handoff value"),
]


@pytest.mark.parametrize(("key", "policy_key", "what"), POLICY_FIELDS)
def test_app_declared_values_are_checked_when_the_policy_sets_them(
    key: str, policy_key: str, what: str
) -> None:
    policy: dict[str, Any] = {policy_key: ["one", "two"]}
    registry = IntentRegistry(**policy)
    rejected(registry, intent(**{key: "three"}), "'explain'", f"{what} 'three'", "['one', 'two']")
    assert getattr(registry.register(intent(**{key: "two"})).get("explain"), key) == "two"


@pytest.mark.parametrize(("key", "policy_key", "what"), POLICY_FIELDS)
def test_app_declared_values_are_free_without_a_policy_but_never_blank(
    key: str, policy_key: str, what: str
) -> None:
    del policy_key, what
    rejected(IntentRegistry(), intent(**{key: " "}), "'explain'", f"{key!r} must be")
    assert getattr(IntentRegistry.create([intent(**{key: "any"})]).get("explain"), key) == "any"


@pytest.mark.parametrize(
    ("actions", "words"),
    [("summarize", ["must be a list"]), (["summarize", "summarize"], ["'summarize' twice"])],
)
def test_auxiliary_actions_must_be_unique(actions: object, words: list[str]) -> None:
    rejected(IntentRegistry(), intent(auxiliary_actions=actions), "'auxiliary_actions'", *words)


def test_registering_after_seal_is_refused() -> None:
    registry = IntentRegistry().register(intent()).seal()
    rejected(registry, intent(id="reply"), "sealed")
    assert registry.ids() == ["explain"]


def test_create_returns_a_sealed_registry() -> None:
    registry = IntentRegistry.create([intent()])
    assert registry.sealed
    rejected(registry, intent(id="reply"), "sealed")


# --- records ---------------------------------------------------------------------------


def test_a_registered_intent_is_an_immutable_record_with_defaults() -> None:
    record = IntentRegistry.create([intent()]).get("explain")
    assert isinstance(record, IntentDescription)
    assert record.active is True
    assert record.as_intent is False
    assert record.auxiliary_actions == ()
    assert record.scope_policy is None
    assert dict(record.input_schema) == {"type": "object", "properties": {}}
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.id = "other"  # type: ignore[misc]


def test_none_counts_as_omitted() -> None:
    record = described(
        IntentRegistry.create(
            [intent(delegates=None, active=None, input_schema=None, resolve=None)]
        )
    )
    assert (record.delegates, record.active) == ((), True)


def test_the_input_schema_is_a_read_only_copy() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }
    record = described(IntentRegistry.create([intent(input_schema=schema)]))
    schema["properties"]["q"]["type"] = "integer"
    schema["required"].append("x")
    assert record.input_schema["properties"]["q"]["type"] == "string"
    assert record.input_schema["required"] == ("q",)
    with pytest.raises(TypeError):
        record.input_schema["type"] = "string"  # type: ignore[index]


def test_a_record_is_accepted_as_a_registration() -> None:
    record = IntentRegistry.create([intent(delegates=["read"], as_intent=True)]).get("explain")
    copy = IntentRegistry(delegates=["read"]).register(record).get("explain")
    assert copy == record


# --- queries ---------------------------------------------------------------------------


def test_ids_and_describe_follow_registration_order_and_include_inactive_intents() -> None:
    registry = IntentRegistry.create(
        [intent(id="reply"), intent(id="explain", active=False), intent(id="plan")]
    )
    assert registry.ids() == ["reply", "explain", "plan"]
    assert [record.id for record in registry.describe()] == ["reply", "explain", "plan"]


def test_get_returns_none_for_an_unknown_id() -> None:
    assert IntentRegistry.create([intent()]).get("reply") is None


@pytest.mark.parametrize(
    ("intent_id", "delegate", "allowed"),
    [
        ("explain", "read", True),
        ("explain", "write", False),
        ("unknown", "read", False),
        ("paused", "read", False),
    ],
)
def test_allows(intent_id: str, delegate: str, allowed: bool) -> None:
    registry = IntentRegistry.create(
        [intent(delegates=["read"]), intent(id="paused", delegates=["read"], active=False)]
    )
    assert registry.allows(intent_id, delegate) is allowed


# --- the selection tool ----------------------------------------------------------------

QUERY_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def selection_registry(**explain: Any) -> IntentRegistry:
    return IntentRegistry.create(
        [
            intent(as_intent=WHEN, input_schema=QUERY_SCHEMA, **explain),
            intent(id="reply", description="Answer directly", as_intent=True),
            intent(id="hidden", description="Not offered"),
            intent(id="paused", description="Switched off", as_intent=True, active=False),
        ]
    )


def test_with_intent_advertises_active_as_intent_intents_as_one_tool() -> None:
    tool = selection_registry().with_intent()
    assert tool["name"] == SELECT_INTENT_TOOL_NAME
    properties = tool["parameters"]["properties"]
    assert properties[INTENT_ID_ARG]["enum"] == ["explain", "reply"]
    assert f"- explain: {EXPLAIN}\n  Choose it when: {WHEN}\n" in tool["description"]
    assert "- reply: Answer directly\n" not in tool["description"]
    assert tool["description"].endswith("- reply: Answer directly")
    assert "hidden" not in tool["description"] and "paused" not in tool["description"]
    assert [schema["title"] for schema in properties[INPUT_ARG]["anyOf"]] == ["explain", "reply"]
    json.dumps(tool)  # plain JSON: a provider can send it as is


def test_the_selection_tool_carries_the_intent_label_first_and_required() -> None:
    parameters = selection_registry().with_intent()["parameters"]
    assert next(iter(parameters["properties"])) == INTENT_ARG
    assert is_intent_label_property(parameters["properties"][INTENT_ARG])
    assert parameters["required"] == [INTENT_ARG, INTENT_ID_ARG, INPUT_ARG]


def test_the_selection_tool_survives_strict_function_calling() -> None:
    parameters = to_strict_tool(selection_registry().with_intent())["parameters"]
    jsonschema.Draft202012Validator.check_schema(parameters)
    call = {INTENT_ARG: "Explaining hooks", INTENT_ID_ARG: "explain", INPUT_ARG: {"q": "hooks"}}
    jsonschema.validate(call, parameters)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**call, INTENT_ID_ARG: "hidden"}, parameters)


def test_a_single_advertised_intent_gives_its_own_input_schema() -> None:
    tool = IntentRegistry.create([intent(as_intent=True, input_schema=QUERY_SCHEMA)]).with_intent()
    schema = tool["parameters"]["properties"][INPUT_ARG]
    assert (schema["title"], schema["required"]) == ("explain", ["q"])


def test_with_intent_without_advertised_intents_is_an_error() -> None:
    registry = IntentRegistry.create([intent(), intent(id="paused", as_intent=True, active=False)])
    with pytest.raises(RegistryError, match="no active intent is marked as_intent"):
        registry.with_intent()


def test_resolve_receives_the_validated_input_and_the_stage() -> None:
    seen: list[tuple[Mapping[str, Any], ResolveContext]] = []

    def resolve(input: Mapping[str, Any], context: ResolveContext) -> str:
        seen.append((input, context))
        return input["q"].upper()

    registry = selection_registry(resolve=resolve)
    assert registry.resolve("explain", {"q": "hooks"}, stage_id="plan") == "HOOKS"
    assert seen == [({"q": "hooks"}, ResolveContext(stage_id="plan"))]


def test_a_raising_resolve_rejects_the_selection_naming_the_intent() -> None:
    cause = LookupError("no manual for hooks")

    def resolve(input: Mapping[str, Any], context: ResolveContext) -> Any:
        raise cause

    with pytest.raises(RegistryError, match="'explain': resolve rejected") as caught:
        selection_registry(resolve=resolve).resolve("explain", {"q": "hooks"}, stage_id="s")
    assert caught.value.__cause__ is cause
    assert "no manual for hooks" in str(caught.value)


class Pending:
    """An awaitable that is not a coroutine (nothing to close)."""

    def __await__(self) -> Any:
        yield


def test_a_resolve_returning_an_awaitable_is_rejected() -> None:
    registry = selection_registry(resolve=lambda input, context: Pending())
    with pytest.raises(RegistryError, match="'explain': resolve returned an awaitable"):
        registry.resolve("explain", {"q": "hooks"}, stage_id="s")


def test_a_coroutine_returned_by_resolve_is_closed_not_left_pending() -> None:
    async def later() -> str:
        return "too late"

    returned: list[Coroutine[Any, Any, str]] = []

    def resolve(input: Mapping[str, Any], context: ResolveContext) -> Any:
        returned.append(later())
        return returned[0]

    with pytest.raises(RegistryError, match="returned an awaitable"):
        selection_registry(resolve=resolve).resolve("explain", {"q": "hooks"}, stage_id="s")
    assert inspect.getcoroutinestate(returned[0]) == inspect.CORO_CLOSED


@pytest.mark.parametrize(
    ("intent_id", "arguments", "words"),
    [
        ("explain", {}, ["does not match its input_schema at (root)", "'q' is a required"]),
        ("explain", {"q": 3}, ["at q", "not of type 'string'"]),
        ("explain", ["q"], ["must be a JSON object"]),
        ("unknown", {}, ["not registered", "['explain', 'reply', 'hidden', 'paused']"]),
        ("paused", {}, ["inactive"]),
    ],
)
def test_resolve_rejects_what_cannot_be_selected(
    intent_id: str, arguments: object, words: list[str]
) -> None:
    with pytest.raises(RegistryError) as caught:
        selection_registry().resolve(intent_id, arguments, stage_id="s")
    for word in [f"intent {intent_id!r}", *words]:
        assert word in str(caught.value)


def test_select_resolves_a_call_of_the_selection_tool() -> None:
    args = json.dumps(
        {INTENT_ARG: " Explaining hooks ", INTENT_ID_ARG: "explain", INPUT_ARG: {"q": "hooks"}}
    )
    assert selection_registry().select(args, stage_id="s") == Selection(
        intent_id="explain", intent="Explaining hooks", value={"q": "hooks"}
    )


def test_select_without_input_or_label_resolves_an_empty_input() -> None:
    selection = selection_registry().select({INTENT_ID_ARG: "reply"}, stage_id="s")
    assert selection == Selection(intent_id="reply", intent=None, value={})


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ("not json", ["arguments must be a JSON object"]),
        ({INTENT_ID_ARG: "hidden"}, ["'hidden' is not one of", "['explain', 'reply']"]),
        ({INTENT_ID_ARG: "paused"}, ["'paused' is not one of"]),
        ({INTENT_ID_ARG: 3}, ["3 is not one of"]),
        ({}, ["None is not one of"]),
    ],
)
def test_select_refuses_an_intent_that_is_not_advertised(args: object, words: list[str]) -> None:
    with pytest.raises(RegistryError) as caught:
        selection_registry().select(args, stage_id="s")
    for word in [SELECT_INTENT_TOOL_NAME, *words]:
        assert word in str(caught.value)


# --- turn-level goals ------------------------------------------------------------------

TURN_TOOLS = ["read_file", "grep_search", "write_file", "web_search", "search_code_mcp_github"]
FAMILIES = {
    "read_file": "read",
    "grep_search": "read",
    "write_file": "write",
    "search_code_mcp_github": "read",
}


def goals() -> IntentRegistry:
    return IntentRegistry.create(
        [
            intent(delegates=["read", "web_search"]),
            intent(id="edit", delegates=["read", "write"]),
            intent(id="chat"),
            intent(id="paused", delegates=["read"], active=False),
        ]
    )


@pytest.mark.parametrize(
    ("goal_id", "expected"),
    [
        ("explain", ("read_file", "grep_search", "web_search", "search_code_mcp_github")),
        ("edit", ("read_file", "grep_search", "write_file", "search_code_mcp_github")),
        ("chat", ()),
    ],
)
def test_a_goal_keeps_the_tools_of_the_families_it_delegates_to(
    goal_id: str, expected: tuple[str, ...]
) -> None:
    assert tools_for_goal(goals(), goal_id, TURN_TOOLS, FAMILIES) == expected


def test_without_families_a_delegate_names_a_tool() -> None:
    assert tools_for_goal(goals(), "explain", TURN_TOOLS) == ("web_search",)


def test_a_delegate_naming_a_tool_keeps_it_even_when_it_has_a_family() -> None:
    registry = IntentRegistry.create([intent(delegates=["grep_search"])])
    assert tools_for_goal(registry, "explain", TURN_TOOLS, FAMILIES) == ("grep_search",)


@pytest.mark.parametrize(
    ("goal_id", "state"), [("unknown", "not registered"), ("paused", "inactive")]
)
def test_a_goal_that_cannot_be_pursued_is_an_error(goal_id: str, state: str) -> None:
    with pytest.raises(RegistryError) as caught:
        tools_for_goal(goals(), goal_id, TURN_TOOLS, FAMILIES)
    for word in [f"intent {goal_id!r}", state, "['explain', 'edit', 'chat']"]:
        assert word in str(caught.value)
