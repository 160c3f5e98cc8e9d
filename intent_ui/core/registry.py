"""Intent and scope registries: the goals an agent may pursue and the scopes they work in.

An *intent* (a goal) is a registered, model-facing capability: an id, a description
saying when it applies, the `delegates` it may hand work to (tool families such as
`read` or `reply`), an object `input_schema` and a synchronous `resolve` that turns the
model's validated arguments into the value handed back to the caller. `with_intent()`
advertises every active intent marked `as_intent` as ONE selection tool, whose first
property is the usual intent (the call's own sentence), so choosing a goal renders like
any other call.

A *scope* is a body of material an intent works on: a category, aliases the model or
the user may say instead of the id, the goals it serves (`goal_ids`), its knowledge
topics and its source tools.

Both registries validate everything at registration time and raise `RegistryError`
(a `ValueError`) naming the id and the broken rule, so a bad registration fails at
start-up rather than mid-turn. `IntentRegistry` grows by `register`/`register_all` under
an optional policy and is closed by `seal()`; `IntentRegistry.create(list)` is the
sealed, policy-free shorthand. `ScopeRegistry.create(...)` validates a complete list.
`tools_for_goal` narrows a turn's tools to the families a goal delegates to.

Input and output shapes (a Python choice the TypeScript original leaves to its types):

- A registration is a mapping with snake_case keys (`input_schema`, `as_intent`, ...);
  an `IntentDescription` or `ScopeDescription` is accepted as well. Unknown keys are
  refused, so a camelCase key copied from TypeScript gets a hint instead of being
  silently ignored.
- What the registries hand out are frozen dataclasses: list fields are tuples and
  `input_schema` is a read-only mapping (a deep copy, so mutating the registration
  afterwards changes nothing). Query methods (`ids()`, `describe()`, `topics()`)
  return fresh lists.
- `input_schema` and `resolve` may be omitted: an empty object schema and a resolve
  returning its input are used, as the seed's own examples register neither.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, TypeGuard

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from intent_ui.core.capabilities.intent import read_intent, with_intent
from intent_ui.core.capabilities.selection import coerce_args_object

SELECT_INTENT_TOOL_NAME = "select_intent"
"""Name of the one selection tool `IntentRegistry.with_intent()` advertises."""

INTENT_ID_ARG = "intent_id"
"""Selection tool argument naming the chosen goal (`intent` is the call's own intent)."""

INPUT_ARG = "input"
"""Selection tool argument carrying the chosen intent's own arguments."""


class RegistryError(ValueError):
    """An invalid registration, policy or lookup; the message names the id and the rule."""


@dataclass(frozen=True, slots=True)
class ResolveContext:
    """What `resolve` learns about the model call it runs inside."""

    stage_id: str


Resolve = Callable[[Mapping[str, Any], ResolveContext], Any]


def _return_input(input: Mapping[str, Any], context: ResolveContext) -> Any:
    del context
    return input


_EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {"type": "object", "properties": MappingProxyType({})}
)


@dataclass(frozen=True, slots=True)
class IntentDescription:
    """A registered intent. `delegates` lists the tool families it may hand work to."""

    id: str
    description: str
    delegates: tuple[str, ...] = ()
    input_schema: Mapping[str, Any] = field(default_factory=lambda: _EMPTY_OBJECT_SCHEMA)
    resolve: Resolve = _return_input
    active: bool = True
    as_intent: bool | str = False
    scope_policy: str | None = None
    target_policy: str | None = None
    context_tier: str | None = None
    plan_intent: str | None = None
    auxiliary_actions: tuple[str, ...] = ()
    prepared_handoff: str | None = None

    @property
    def advertised(self) -> bool:
        """Whether `with_intent()` offers it: active and marked `as_intent`."""
        return self.active and self.as_intent is not False


@dataclass(frozen=True, slots=True)
class ScopeDescription:
    """A registered scope; `aliases` are other names `normalize` maps to `id`."""

    id: str
    description: str
    category: str
    aliases: tuple[str, ...] = ()
    goal_ids: tuple[str, ...] = ()
    knowledge_topic_ids: tuple[str, ...] = ()
    tool_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Selection:
    """A resolved choice of the selection tool: which goal (`intent_id`), the call's
    intent, its value."""

    intent_id: str
    intent: str | None
    value: Any


# --- shared validation ---------------------------------------------------------------


def _freeze(value: Any) -> Any:
    """A read-only deep copy: mappings become read-only, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    return value


def _thaw(value: Any) -> Any:
    """A plain JSON-shaped copy of a frozen value (what providers and jsonschema expect)."""
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    return value


def _is_text(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and value.strip() != ""


def _snake_case(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _record_input(entry: object, record_type: type[Any], where: str) -> tuple[dict[str, Any], str]:
    """The registration as a dict, and the name errors use for it until its id is known."""
    if isinstance(entry, record_type):
        data = {item.name: getattr(entry, item.name) for item in fields(record_type)}
    elif isinstance(entry, Mapping):
        # None means omitted, as an absent optional property does in TypeScript.
        data = {key: value for key, value in entry.items() if value is not None}
    else:
        raise RegistryError(
            f"{where}: expected a mapping with 'id' and 'description', got {type(entry).__name__}"
        )
    known = {item.name for item in fields(record_type)}
    for key in data:
        if key not in known:
            hint = _snake_case(str(key))
            fix = f"; did you mean {hint!r}?" if hint in known else ""
            raise RegistryError(
                f"{where}: unknown field {key!r}{fix} (known fields: {', '.join(sorted(known))})"
            )
    ident = data.get("id")
    if not _is_text(ident):
        raise RegistryError(f"{where}: 'id' must be a non-blank string, got {ident!r}")
    return data, ident


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not _is_text(value):
        raise RegistryError(f"{where}: {key!r} must be a non-blank string, got {value!r}")
    return value


def _names(value: object, key: str, where: str) -> tuple[str, ...]:
    """A list of unique non-blank strings (None means empty)."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise RegistryError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    seen: set[str] = set()
    for item in value:
        if not _is_text(item):
            raise RegistryError(f"{where}: {key!r} holds {item!r}; each must be a non-blank string")
        if item in seen:
            raise RegistryError(f"{where}: {key!r} lists {item!r} twice; each must be unique")
        seen.add(item)
    return tuple(value)


def _one_of(value: str, allowed: tuple[str, ...] | None, what: str, where: str) -> None:
    if allowed is not None and value not in allowed:
        raise RegistryError(
            f"{where}: {what} {value!r} is not one of the policy's {list(allowed)!r}"
        )


# --- intents -------------------------------------------------------------------------

_POLICY_FIELDS = (
    # (registration field, policy list, what the error calls it)
    ("scope_policy", "scope_modes", "scope mode"),
    ("target_policy", "target_modes", "target mode"),
    ("context_tier", "context_tiers", "context tier"),
    ("plan_intent", "actions", "action"),
    ("prepared_handoff", "handoff_values", "handoff value"),
)


class IntentRegistry:
    """Registered intents under an optional policy; `seal()` closes it to registration."""

    def __init__(
        self,
        *,
        id_pattern: str | re.Pattern[str] | None = None,
        delegates: Sequence[str] | None = None,
        scope_modes: Sequence[str] | None = None,
        target_modes: Sequence[str] | None = None,
        context_tiers: Sequence[str] | None = None,
        actions: Sequence[str] | None = None,
        handoff_values: Sequence[str] | None = None,
    ) -> None:
        if isinstance(id_pattern, str):
            try:
                id_pattern = re.compile(id_pattern)
            except re.error as exc:
                raise RegistryError(
                    f"intent policy: 'id_pattern' {id_pattern!r} is not a valid regular "
                    f"expression ({exc})"
                ) from exc
        elif id_pattern is not None and not isinstance(id_pattern, re.Pattern):
            raise RegistryError(
                f"intent policy: 'id_pattern' must be a regular expression, got {id_pattern!r}"
            )
        lists = {
            "delegates": delegates,
            "scope_modes": scope_modes,
            "target_modes": target_modes,
            "context_tiers": context_tiers,
            "actions": actions,
            "handoff_values": handoff_values,
        }
        allowed = {
            key: None if value is None else _names(value, key, "intent policy")
            for key, value in lists.items()
        }
        self._id_pattern = id_pattern
        self._allowed = allowed  # policy list name -> allowed values, None: any
        self._intents: dict[str, IntentDescription] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._sealed = False

    @classmethod
    def create(cls, registrations: Iterable[object]) -> IntentRegistry:
        """A sealed registry holding these registrations, with no policy."""
        return cls().register_all(registrations).seal()

    # registration

    def register(self, registration: object) -> IntentRegistry:
        """Validate and add one intent; returns the registry for chaining."""
        return self.register_all([registration])

    def register_all(self, registrations: Iterable[object]) -> IntentRegistry:
        """Validate and add every intent, or none of them when one is invalid."""
        if self._sealed:
            raise RegistryError(
                "intent registry is sealed; register every intent before calling seal()"
            )
        batch: dict[str, tuple[IntentDescription, Draft202012Validator]] = {}
        for position, registration in enumerate(registrations, start=1):
            record, validator = self._validate(registration, position)
            if record.id in self._intents or record.id in batch:
                raise RegistryError(
                    f"intent {record.id!r}: already registered; intent ids must be unique"
                )
            batch[record.id] = (record, validator)
        for ident, (record, validator) in batch.items():
            self._intents[ident] = record
            self._validators[ident] = validator
        return self

    def seal(self) -> IntentRegistry:
        """Close the registry: later registrations raise. Returns the registry."""
        self._sealed = True
        return self

    @property
    def sealed(self) -> bool:
        return self._sealed

    def _validate(
        self, registration: object, position: int
    ) -> tuple[IntentDescription, Draft202012Validator]:
        data, ident = _record_input(
            registration, IntentDescription, f"intent registration #{position}"
        )
        where = f"intent {ident!r}"
        pattern = self._id_pattern
        if pattern is not None and pattern.search(ident) is None:
            raise RegistryError(
                f"{where}: id does not match the policy's id_pattern {pattern.pattern!r}"
            )
        description = _text(data, "description", where)

        delegates = _names(data.get("delegates"), "delegates", where)
        for delegate in delegates:
            _one_of(delegate, self._allowed["delegates"], "delegate", where)

        schema = data.get("input_schema", _EMPTY_OBJECT_SCHEMA)
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            raise RegistryError(
                f"{where}: 'input_schema' must be an object schema "
                f'({{"type": "object", ...}}), got {schema!r}'
            )
        try:
            Draft202012Validator.check_schema(_thaw(schema))
        except SchemaError as exc:
            raise RegistryError(
                f"{where}: 'input_schema' is not a valid JSON schema: {exc.message}"
            ) from exc

        resolve = data.get("resolve", _return_input)
        if not callable(resolve):
            raise RegistryError(f"{where}: 'resolve' must be a function, got {resolve!r}")
        if inspect.iscoroutinefunction(resolve) or inspect.isasyncgenfunction(resolve):
            raise RegistryError(
                f"{where}: 'resolve' must be synchronous (it runs inside the model call); "
                "make it a plain function"
            )

        active = data.get("active", True)
        if not isinstance(active, bool):
            raise RegistryError(f"{where}: 'active' must be true or false, got {active!r}")
        as_intent = data.get("as_intent", False)
        if not isinstance(as_intent, bool) and not _is_text(as_intent):
            raise RegistryError(
                f"{where}: 'as_intent' must be true, false or a non-blank sentence saying "
                f"when to choose it, got {as_intent!r}"
            )

        values: dict[str, str | None] = {}
        for key, policy_key, what in _POLICY_FIELDS:
            value = data.get(key)
            if value is not None:
                value = _text(data, key, where)
                _one_of(value, self._allowed[policy_key], what, where)
            values[key] = value

        frozen_schema = _freeze(schema)
        record = IntentDescription(
            id=ident,
            description=description,
            delegates=delegates,
            input_schema=frozen_schema,
            resolve=resolve,
            active=active,
            as_intent=as_intent,
            auxiliary_actions=_names(data.get("auxiliary_actions"), "auxiliary_actions", where),
            **values,
        )
        return record, Draft202012Validator(_thaw(frozen_schema))

    # queries

    def ids(self) -> list[str]:
        """Registered ids, in registration order."""
        return list(self._intents)

    def get(self, intent_id: str) -> IntentDescription | None:
        """The registered intent, or None."""
        return self._intents.get(intent_id)

    def describe(self) -> list[IntentDescription]:
        """Every registered intent, in registration order (inactive ones included)."""
        return list(self._intents.values())

    def allows(self, intent_id: str, delegate: str) -> bool:
        """Whether this intent may delegate to `delegate`.

        False for an unknown or inactive intent: an intent the model cannot choose
        delegates nothing. This is not authorization, which stays a separate check
        where the delegated tool runs.
        """
        record = self._intents.get(intent_id)
        return record is not None and record.active and delegate in record.delegates

    # selection

    def with_intent(self) -> dict[str, Any]:
        """One selection tool advertising every active intent marked `as_intent`.

        The model picks an `intent_id` from the enum and gives that intent's `input`;
        the tool's first property is the call's intent. Raises when nothing is
        advertised, since a choice among no intents is not a tool.
        """
        offered = [record for record in self._intents.values() if record.advertised]
        if not offered:
            raise RegistryError(
                "intent registry: no active intent is marked as_intent, so there is "
                "nothing to select; set as_intent on the intents the model may choose"
            )
        lines = []
        for record in offered:
            when = f"\n  Choose it when: {record.as_intent}" if record.as_intent is not True else ""
            lines.append(f"- {record.id}: {record.description}{when}")
        inputs = [{"title": record.id, **_thaw(record.input_schema)} for record in offered]
        input_schema = inputs[0] if len(inputs) == 1 else {"anyOf": inputs}
        parameters = {
            "type": "object",
            "properties": {
                INTENT_ID_ARG: {
                    "type": "string",
                    "enum": [record.id for record in offered],
                    "description": "The id of the one intent that matches the request.",
                },
                INPUT_ARG: {
                    **input_schema,
                    "description": "The chosen intent's arguments (the schema titled by its id).",
                },
            },
            "required": [INTENT_ID_ARG, INPUT_ARG],
            "additionalProperties": False,
        }
        return {
            "name": SELECT_INTENT_TOOL_NAME,
            "description": (
                "Choose the one intent that matches the user's request and give its input.\n"
                + "\n".join(lines)
            ),
            "parameters": with_intent(parameters),
        }

    def resolve(self, intent_id: str, input: object, *, stage_id: str) -> Any:
        """Validate `input` against the intent's schema and run its `resolve`.

        Synchronous: a `resolve` that raises, or returns an awaitable, rejects the
        selection with a `RegistryError` naming the intent (the cause chained).
        """
        record = self._intents.get(intent_id)
        where = f"intent {intent_id!r}"
        if record is None:
            raise RegistryError(f"{where}: not registered; registered intents are {self.ids()!r}")
        if not record.active:
            raise RegistryError(f"{where}: inactive, so it cannot be selected")
        if not isinstance(input, Mapping):
            raise RegistryError(f"{where}: the input must be a JSON object, got {input!r}")
        arguments = dict(input)
        try:
            self._validators[intent_id].validate(arguments)
        except ValidationError as exc:
            path = "/".join(str(part) for part in exc.absolute_path) or "(root)"
            raise RegistryError(
                f"{where}: the input does not match its input_schema at {path}: {exc.message}"
            ) from exc
        try:
            value = record.resolve(arguments, ResolveContext(stage_id=stage_id))
        except Exception as exc:
            raise RegistryError(f"{where}: resolve rejected the selection: {exc}") from exc
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if callable(close):
                close()  # never awaited: close it so no "never awaited" warning leaks
            raise RegistryError(
                f"{where}: resolve returned an awaitable; it runs inside the model call "
                "and must return its value synchronously"
            )
        return value

    def select(self, args: object, *, stage_id: str) -> Selection:
        """Resolve a call of the selection tool (args as a dict or a JSON string)."""
        obj = coerce_args_object(args)
        if obj is None:
            raise RegistryError(
                f"{SELECT_INTENT_TOOL_NAME}: the arguments must be a JSON object, got {args!r}"
            )
        intent_id = obj.get(INTENT_ID_ARG)
        record = self._intents.get(intent_id) if isinstance(intent_id, str) else None
        if record is None or not record.advertised:
            offered = [item.id for item in self._intents.values() if item.advertised]
            raise RegistryError(
                f"{SELECT_INTENT_TOOL_NAME}: {INTENT_ID_ARG} {intent_id!r} is not one of "
                f"the advertised intents {offered!r}"
            )
        value = self.resolve(record.id, obj.get(INPUT_ARG, {}), stage_id=stage_id)
        return Selection(intent_id=record.id, intent=read_intent(obj), value=value)


# --- scopes --------------------------------------------------------------------------


class ScopeRegistry:
    """Registered scopes, looked up by id or alias. Built complete by `create`."""

    def __init__(
        self,
        scopes: Iterable[object],
        *,
        categories: Sequence[str] | None = None,
        require_goals: bool = False,
        require_sources: bool = False,
    ) -> None:
        allowed = None if categories is None else _names(categories, "categories", "scope policy")
        self._scopes: dict[str, ScopeDescription] = {}
        self._names: dict[str, str] = {}  # id or alias -> id
        for position, entry in enumerate(scopes, start=1):
            record = self._validate(
                entry,
                position,
                categories=allowed,
                require_goals=require_goals,
                require_sources=require_sources,
            )
            for name in (record.id, *record.aliases):
                owner = self._names.get(name)
                if owner is not None:
                    raise RegistryError(
                        f"scope {record.id!r}: the name {name!r} is already used by scope "
                        f"{owner!r}; ids and aliases must be unique across scopes"
                    )
                self._names[name] = record.id
            self._scopes[record.id] = record

    @classmethod
    def create(
        cls,
        scopes: Iterable[object],
        *,
        categories: Sequence[str] | None = None,
        require_goals: bool = False,
        require_sources: bool = False,
    ) -> ScopeRegistry:
        """Validate every scope; `require_goals`/`require_sources` demand non-empty links."""
        return cls(
            scopes,
            categories=categories,
            require_goals=require_goals,
            require_sources=require_sources,
        )

    @staticmethod
    def _validate(
        entry: object,
        position: int,
        *,
        categories: tuple[str, ...] | None,
        require_goals: bool,
        require_sources: bool,
    ) -> ScopeDescription:
        data, ident = _record_input(entry, ScopeDescription, f"scope #{position}")
        where = f"scope {ident!r}"
        category = _text(data, "category", where)
        _one_of(category, categories, "category", where)
        record = ScopeDescription(
            id=ident,
            description=_text(data, "description", where),
            category=category,
            aliases=_names(data.get("aliases"), "aliases", where),
            goal_ids=_names(data.get("goal_ids"), "goal_ids", where),
            knowledge_topic_ids=_names(
                data.get("knowledge_topic_ids"), "knowledge_topic_ids", where
            ),
            tool_ids=_names(data.get("tool_ids"), "tool_ids", where),
        )
        if require_goals and not record.goal_ids:
            raise RegistryError(
                f"{where}: 'goal_ids' is empty but goals are required; list the intents "
                "this scope serves"
            )
        if require_sources and not (record.knowledge_topic_ids or record.tool_ids):
            raise RegistryError(
                f"{where}: no sources but sources are required; list its "
                "'knowledge_topic_ids' or 'tool_ids'"
            )
        return record

    def normalize(self, id_or_alias: str) -> str | None:
        """The scope id an id or alias names, or None when it names no scope."""
        return self._names.get(id_or_alias)

    def require(self, id_or_alias: str) -> ScopeDescription:
        """The scope an id or alias names; raises `RegistryError` when there is none."""
        ident = self.normalize(id_or_alias)
        if ident is None:
            raise RegistryError(
                f"scope {id_or_alias!r}: no scope has this id or alias; known scopes are "
                f"{list(self._scopes)!r}"
            )
        return self._scopes[ident]

    def ids(self) -> list[str]:
        """Registered scope ids, in registration order."""
        return list(self._scopes)

    def accepts_tool(self, id_or_alias: str, tool_id: str) -> bool:
        """Whether the scope lists `tool_id` among its goals or its source tools."""
        scope = self.require(id_or_alias)
        return tool_id in scope.goal_ids or tool_id in scope.tool_ids

    def topics(self, id_or_alias: str) -> list[str]:
        """The scope's knowledge topic ids."""
        return list(self.require(id_or_alias).knowledge_topic_ids)


# --- turn-level goals ----------------------------------------------------------------


def tools_for_goal(
    registry: IntentRegistry,
    goal_id: str,
    tool_ids: Iterable[str],
    families: Mapping[str, str] | None = None,
) -> tuple[str, ...]:
    """The tools a turn pursuing `goal_id` may offer, in the order of `tool_ids`.

    A tool is kept when the goal delegates to its family (`families[tool_id]`) or to the
    tool id itself, so a delegate may name a family (`read`) or a single tool
    (`web_search`), whether or not that tool has a family. An unknown or inactive goal is
    an error rather than an empty tool list, so a misconfigured agent fails loudly
    instead of running toolless.
    """
    record = registry.get(goal_id)
    if record is None or not record.active:
        state = "not registered" if record is None else "inactive"
        raise RegistryError(
            f"intent {goal_id!r}: {state}, so it cannot restrict a turn's tools; "
            f"pick one of {[item.id for item in registry.describe() if item.active]!r}"
        )
    family_of = families or {}
    return tuple(
        tool_id
        for tool_id in tool_ids
        if registry.allows(goal_id, family_of.get(tool_id, tool_id))
        or registry.allows(goal_id, tool_id)
    )
