"""Deferred tools: the `defer_loading` capability.

A deferred tool is withheld from the request's tool list and lives only in the tool
registry until `tool_search` discovers it; discovery then promotes its definition into
the loaded list. Unlike `intent.py` and `background.py` nothing is injected into a
schema: the mechanism is metadata (which list a tool is in).

The family's shape (docs/capabilities.md) still holds, mirrored from `intent.py`: an
admin capability (`deferred_tools`), a per-tool option
(`tool_options[tool_id]["defer_loading"]`, resolved by `selection.py`, with the
definition's own `defer_loading` flag as the capability marker), an eligibility rule
and model-spec synthesis.

The interaction that matters: capabilities that inject into schemas run over the full
set BEFORE the split, with registry parity, so a deferred tool's registry entry (the
schema tool search returns and token accounting counts) already carries the intent
label. Promotion passes it through the same injection again, which is why injection
must be idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from intent_ui.core.capabilities._definitions import (
    Tool,
    is_eligible_tool_name,
    tool_id,
    tool_name,
)
from intent_ui.core.capabilities.background import CHECK_BACKGROUND_TASK_NAME
from intent_ui.core.capabilities.intent import NATIVE_INTENT_TOOL_NAMES, apply_intent_labels
from intent_ui.core.capabilities.selection import (
    ToolOptions,
    resolve_opt_in,
    synthesize_selection_tool_options,
)

logger = logging.getLogger(__name__)

DEFERRED_TOOLS_CAPABILITY = "deferred_tools"
"""Admin capability gating the feature. Mirrors `TOOL_INTENTS_CAPABILITY`."""

DEFER_LOADING_OPTION = "defer_loading"
"""Per-tool `tool_options` key, and the definition-level marker.

Mirrors `DESCRIBE_INTENT_OPTION`."""

TOOL_SEARCH_NAME = "tool_search"

EXCLUDED_DEFERRED_TOOL_NAMES: frozenset[str] = frozenset(
    {TOOL_SEARCH_NAME, CHECK_BACKGROUND_TASK_NAME}
)
"""Never deferred: tool search is how deferred tools are found, and the poll tool is
host machinery. Mirrors `EXCLUDED_INTENT_TOOL_NAMES`."""


def is_defer_eligible_tool_name(name: str) -> bool:
    """Whether a tool of this name may be deferred. Mirrors `is_intent_eligible_tool_name`."""
    return is_eligible_tool_name(name, EXCLUDED_DEFERRED_TOOL_NAMES)


class DeferredTools(NamedTuple):
    """`apply_deferred_tools`' result; unpacks as `(loaded, deferred_names)`."""

    loaded: Sequence[Tool]
    deferred_names: tuple[str, ...]


def apply_deferred_tools(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    enabled: bool = True,
    *,
    tool_ids: Mapping[str, str] | None = None,
) -> DeferredTools:
    """Split definitions into the loaded ones and the names withheld until discovered.

    Opt-in resolves like the other capabilities (explicit id > the definition's own
    `defer_loading` flag > `"*"` > not deferred). With `enabled=False` nothing is
    deferred and `definitions` comes back as the very same object. The caller keeps
    the deferred definitions in its registry and offers `tool_search`. Mirrors
    `apply_intent_labels`.
    """
    if not enabled:
        return DeferredTools(definitions, ())
    loaded: list[Tool] = []
    deferred: list[str] = []
    for tool in definitions:
        name = tool_name(tool)
        wants = isinstance(tool, Mapping) and resolve_opt_in(
            tool_options,
            DEFER_LOADING_OPTION,
            tool_id(tool, tool_ids),
            markers=(tool.get(DEFER_LOADING_OPTION),),
        )
        if wants and is_defer_eligible_tool_name(name):
            deferred.append(name)
        else:
            loaded.append(tool)
    if not deferred:
        return DeferredTools(definitions, ())
    return DeferredTools(loaded, tuple(deferred))


def deferred_definitions(
    registry: Mapping[str, Tool] | None, deferred_names: Iterable[str]
) -> list[Tool]:
    """The registry definitions of the deferred tools: what tool search returns and what
    token accounting must count. They are read after injection, so the count includes
    the injected properties (counting before would understate the schema budget).
    Unknown names are skipped."""
    if registry is None:
        return []
    return [registry[name] for name in deferred_names if name in registry]


@dataclass(frozen=True, slots=True)
class PromotedTools:
    """`promote_deferred_tools`' result: the new loaded list and the promoted tools
    that carry an intent (to add to the label gate)."""

    loaded: Sequence[Tool]
    promoted_names: tuple[str, ...]
    intent_tool_names: frozenset[str]


def promote_deferred_tools(
    loaded: Sequence[Tool],
    registry: Mapping[str, Tool] | None,
    discovered_names: Iterable[str],
    tool_options: ToolOptions | None = None,
    *,
    intents_enabled: bool = True,
    tool_ids: Mapping[str, str] | None = None,
    native_tool_names: Iterable[str] = NATIVE_INTENT_TOOL_NAMES,
    default_native: bool = True,
) -> PromotedTools:
    """Append tools discovered by tool search to the loaded list, labelled.

    Each promoted registry entry passes through `apply_intent_labels` with the same
    policy as at load time, so a tool discovered mid-conversation arrives with its
    intent first even if its registry entry was stored before injection; for an
    entry that already carries it, the pass is a no-op (injection is idempotent, so a
    tool injected at load time and again at discovery carries one label, still
    first). Names already loaded or absent from the registry are skipped. Nothing to
    promote returns `loaded` itself.
    """
    present = {tool_name(tool) for tool in loaded}
    picked: list[Tool] = []
    for name in discovered_names:
        entry = None if registry is None else registry.get(name)
        if entry is None:
            logger.warning("Cannot promote %r: it is not in the tool registry.", name)
            continue
        if name in present:
            continue
        present.add(name)
        picked.append(entry)
    if not picked:
        return PromotedTools(loaded, (), frozenset())
    labelled = apply_intent_labels(
        picked,
        tool_options,
        enabled=intents_enabled,
        tool_ids=tool_ids,
        native_tool_names=native_tool_names,
        default_native=default_native,
    )
    promoted = tuple(tool_name(tool) for tool in labelled.definitions)
    return PromotedTools([*loaded, *labelled.definitions], promoted, labelled.label_tool_names)


def synthesize_deferred_tool_options(
    defer_loading: object, tool_names: Iterable[str] = ()
) -> dict[str, dict[str, bool]] | None:
    """`tool_options` for model specs and ephemeral agents.

    True: defer every eligible tool; a list: only those ids; False or []: none;
    None: no policy. Mirrors `synthesize_intent_tool_options`.
    """
    return synthesize_selection_tool_options(DEFER_LOADING_OPTION, defer_loading, tool_names)
