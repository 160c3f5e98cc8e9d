"""`apply_capabilities`, remembered: a request built from unchanged inputs costs a lookup.

A turn shapes its tools afresh, and over an agent with a thousand MCP tools the pipeline
costs tens of milliseconds a turn for the very same answer. `CapabilityCache.apply`
takes `apply_capabilities`' arguments and returns its result, computed once per
distinct input.

The key is the inputs' content, exactly: each value encoded by `marshal` (version 2,
which has no back-references, so the bytes depend on nothing but the value: its types,
`True` apart from `1`, and its key order, which the pipeline preserves). Equal bytes are
equal inputs and a changed definition, option or flag is other bytes, so an entry can
never answer for inputs it was not built from. Encoding a thousand schemas still reads
them all (about as long as building one turn's request body); a `FrozenDefinition` was
encoded once, when it was frozen, and its content cannot change since, so a build whose
definitions are frozen reads only the small inputs.

Results are frozen (`core.frozen`): shared between every caller that hits the entry, a
result cannot be changed through any of them, and it goes into a request body as it is.
Inputs are never mutated. A hit logs nothing: the pipeline's warnings (a tool that
cannot take a label, say) were logged when the entry was built. Inputs the encoder
cannot read (an object that is not JSON) are shaped uncached, every time.
"""

from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from intent_ui.core.capabilities import CapabilityResult, apply_capabilities
from intent_ui.core.capabilities._definitions import Tool, tool_name
from intent_ui.core.capabilities.selection import ToolOptions
from intent_ui.core.frozen import FrozenDict, freeze

__all__ = ["DEFAULT_MAX_ENTRIES", "CapabilityCache", "FrozenDefinition", "frozen_definition"]

DEFAULT_MAX_ENTRIES = 16
"""Distinct inputs remembered: one per agent, endpoint dialect and tool set in use. Over a
thousand MCP tools an entry holds about 1 MB of frozen schemas (3 MB strict)."""

_MARSHAL_VERSION = 2


class FrozenDefinition(FrozenDict[str, Any]):
    """A frozen tool definition that carries the encoding of its content (`content`)."""

    __slots__ = ("content",)

    content: bytes


def frozen_definition(definition: Tool) -> FrozenDefinition:
    """`definition` frozen, with its content encoded once for every later cache key.

    The frozen value is decoded from the very bytes its key is, so the two cannot
    disagree even if the caller changes `definition` afterwards. Raises `ValueError` for
    a definition that is not JSON.
    """
    content = _encode(definition)
    if content is None:
        raise ValueError(f"not a JSON tool definition: {tool_name(definition)}")
    try:
        frozen = FrozenDefinition(freeze(marshal.loads(content)))
    except RecursionError:
        raise ValueError(f"tool definition nested too deeply: {tool_name(definition)}") from None
    frozen.content = content
    return frozen


class CapabilityCache:
    """`apply_capabilities` by input content, for at most `max_entries` inputs (the least
    recently used goes first). Thread-safe; two threads missing at once both compute."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self._max_entries = max_entries
        self._entries: OrderedDict[Hashable, CapabilityResult] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    # `apply_capabilities`'s own parameters, spelled out on purpose: the key is built
    # from each of them by name.
    def apply(
        self,
        definitions: Sequence[Tool],
        tool_options: ToolOptions | None,
        *,
        capabilities: frozenset[str],
        registry: Mapping[str, Tool] | None = None,
        tool_ids: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> CapabilityResult:
        """What `apply_capabilities` returns for these arguments, frozen."""
        key = _key(definitions, tool_options, capabilities, registry, tool_ids, strict)
        if key is not None:
            with self._lock:
                found = self._entries.get(key)
                if found is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return found
        result = _frozen_result(
            apply_capabilities(
                definitions,
                tool_options,
                capabilities=capabilities,
                registry=registry,
                tool_ids=tool_ids,
                strict=strict,
            )
        )
        with self._lock:
            self.misses += 1
            if key is not None:
                self._entries[key] = result
                self._entries.move_to_end(key)
                while len(self._entries) > self._max_entries:
                    self._entries.popitem(last=False)
        return result

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def _frozen_result(result: CapabilityResult) -> CapabilityResult:
    return CapabilityResult(
        definitions=freeze(list(result.definitions)),
        registry=None if result.registry is None else freeze(result.registry),
        intent_tool_names=frozenset(result.intent_tool_names),
        injected_intent_tool_names=frozenset(result.injected_intent_tool_names),
        background_tool_names=frozenset(result.background_tool_names),
        deferred_names=tuple(result.deferred_names),
    )


def _key(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    capabilities: frozenset[str],
    registry: Mapping[str, Tool] | None,
    tool_ids: Mapping[str, str] | None,
    strict: bool,
) -> Hashable | None:
    """The inputs' content as one hashable value; None when some input cannot be encoded."""
    tools = _definitions_key(definitions)
    options = _encode(tool_options)
    ids = _encode(tool_ids)
    if tools is None or options is None or ids is None:
        return None
    names: tuple[bytes, ...] | None = None
    shelf: tuple[Hashable, ...] | None = None
    if registry is not None:
        names = _encode_each(registry.keys())
        shelf = _definitions_key(list(registry.values()))
        if names is None or shelf is None:
            return None
    # No registry and an empty one differ: the pipeline answers None for the first.
    shelved = (registry is None, names, shelf)
    return (bool(strict), frozenset(capabilities), tools, options, ids, shelved)


def _definitions_key(definitions: Sequence[Tool]) -> tuple[bytes, ...] | None:
    parts: list[bytes] = []
    for definition in definitions:
        if type(definition) is FrozenDefinition:
            parts.append(definition.content)
            continue
        encoded = _encode(definition)
        if encoded is None:
            return None
        parts.append(encoded)
    # A tuple, never a list: `definitions` being a list or a tuple does not change the result.
    return tuple(parts)


def _encode_each(values: Any) -> tuple[bytes, ...] | None:
    parts: list[bytes] = []
    for value in values:
        encoded = _encode(value)
        if encoded is None:
            return None
        parts.append(encoded)
    return tuple(parts)


def _encode(value: Any) -> bytes | None:
    """The exact encoding of a JSON-like value; None when it holds something else."""
    try:
        return marshal.dumps(value, _MARSHAL_VERSION)
    except ValueError:
        pass
    # Read-only mappings, frozen values and other Mapping types are encoded as the dicts
    # they equal: the pipeline reads every Mapping alike.
    try:
        return marshal.dumps(_plain(value), _MARSHAL_VERSION)
    except (ValueError, RecursionError):  # not JSON, or nested past what marshal encodes
        return None


def _plain(value: Any) -> Any:
    if type(value) is FrozenDefinition:
        return marshal.loads(value.content)
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value
