"""The tool-capability family: one module per member, one shared shape.

| module            | tool_options key    | admin capability     | mechanism                    |
|-------------------|---------------------|----------------------|------------------------------|
| `deferred.py`     | `defer_loading`     | `deferred_tools`     | withheld until tool search   |
| `programmatic.py` | `allowed_callers`   | `programmatic_tools` | callable from sandbox code   |
| `background.py`   | `run_in_background` | `run_in_background`  | boolean appended to schema   |
| `intent.py`       | `describe_intent`   | `tool_intents`       | label prepended to schema    |

The shape is written down in docs/capabilities.md. `selection.py` holds the shared
policy (how `tool_options` resolve, model-spec synthesis, arguments and callers);
`_definitions.py` what the siblings share about definitions and schemas. The intent
label's own pieces sit beside `intent.py`: `intent_schema.py` (the property,
`with_intent`), `outcome.py` (the settled label) and `output_references.py`.
`strict.py` converts schemas for strict function calling. `apply_capabilities` runs
the whole family in its one correct order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from intent_ui.core.capabilities._definitions import (
    Tool,
    rewrite_definitions,
    rewrite_registry,
    tool_name,
)
from intent_ui.core.capabilities.background import (
    RUN_IN_BACKGROUND_CAPABILITY,
    apply_background_tool_calls,
    strip_background_from_tool_definitions,
    strip_background_from_tool_registry,
)
from intent_ui.core.capabilities.deferred import DEFERRED_TOOLS_CAPABILITY, apply_deferred_tools
from intent_ui.core.capabilities.intent import (
    TOOL_INTENTS_CAPABILITY,
    apply_intent_labels,
    strip_intent_from_tool_definitions,
    strip_intent_from_tool_registry,
)
from intent_ui.core.capabilities.programmatic import (
    PROGRAMMATIC_TOOLS_CAPABILITY,
    apply_allowed_callers,
)
from intent_ui.core.capabilities.selection import ToolOptions, warn_unknown_option_names
from intent_ui.core.capabilities.strict import to_strict_tool

__all__ = [
    "ALL_CAPABILITIES",
    "DEFERRED_TOOLS_CAPABILITY",
    "PROGRAMMATIC_TOOLS_CAPABILITY",
    "RUN_IN_BACKGROUND_CAPABILITY",
    "TOOL_INTENTS_CAPABILITY",
    "CapabilityResult",
    "apply_capabilities",
    "inherit_for_self_spawn",
]

ALL_CAPABILITIES: frozenset[str] = frozenset(
    {
        TOOL_INTENTS_CAPABILITY,
        RUN_IN_BACKGROUND_CAPABILITY,
        DEFERRED_TOOLS_CAPABILITY,
        PROGRAMMATIC_TOOLS_CAPABILITY,
    }
)
"""The admin gate's vocabulary; all four are on when the config does not say."""


@dataclass(frozen=True, slots=True)
class CapabilityResult:
    """The request's tool list after the capability pipeline.

    `definitions`: what the model sees now (deferred tools withheld).
    `registry`: name -> definition for tool search and promotion; deferred tools are
    here with every injection applied. None when no registry was given and nothing
    was deferred.
    `intent_tool_names`: tools whose calls carry an intent (the label gate): the UI
    renders a call's `intent` as its label only for these (never because the args have
    the key).
    `injected_intent_tool_names`: the host-injected subset (self-spawn stripping).
    `background_tool_names`: tools whose `run_in_background` flag the run loop honours.
    `deferred_names`: tools withheld until discovered.
    """

    definitions: Sequence[Tool]
    registry: Mapping[str, Tool] | None
    intent_tool_names: frozenset[str]
    injected_intent_tool_names: frozenset[str]
    background_tool_names: frozenset[str]
    deferred_names: tuple[str, ...]


def apply_capabilities(
    definitions: Sequence[Tool],
    tool_options: ToolOptions | None,
    *,
    capabilities: frozenset[str],
    registry: Mapping[str, Tool] | None = None,
    tool_ids: Mapping[str, str] | None = None,
    strict: bool = False,
) -> CapabilityResult:
    """Run the family over one request's tools, in order:

    1. callers (`allowed_callers`) first, since intent skips code-only tools and never
       requires a label on code-callable ones;
    2. intent labels BEFORE background, so `intent` is prepended and the flag
       appended (the pair keeps `intent` first in either order, and tests pin both);
    3. deferral last among the capabilities, so a withheld tool's registry entry — the
       schema tool search returns and token accounting counts — is already injected;
    4. strict conversion when asked, to definitions and registry alike.

    A capability missing from `capabilities` is off: intent's kill switch removes
    native labels too; off `programmatic_tools` leaves nothing callable from code.
    """
    # Every member's `apply_*` takes the same arguments (the siblings mirror one
    # signature), so the calls below look alike on purpose.
    ptc = apply_allowed_callers(
        definitions,
        tool_options,
        enabled=PROGRAMMATIC_TOOLS_CAPABILITY in capabilities,
        registry=registry,
        tool_ids=tool_ids,
    )
    labels = apply_intent_labels(
        ptc.definitions,
        tool_options,
        enabled=TOOL_INTENTS_CAPABILITY in capabilities,
        registry=ptc.registry,
        tool_ids=tool_ids,
    )
    background = apply_background_tool_calls(
        labels.definitions,
        tool_options,
        enabled=RUN_IN_BACKGROUND_CAPABILITY in capabilities,
        registry=labels.registry,
        tool_ids=tool_ids,
    )
    prepared = background.definitions
    loaded, deferred_names = apply_deferred_tools(
        prepared,
        tool_options,
        DEFERRED_TOOLS_CAPABILITY in capabilities,
        tool_ids=tool_ids,
    )
    out_registry = background.registry
    if deferred_names and out_registry is None:
        # Without a registry the withheld tools would be lost; keep them discoverable.
        wanted = set(deferred_names)
        out_registry = {
            tool["name"]: tool
            for tool in prepared
            if isinstance(tool, Mapping) and tool.get("name") in wanted
        }
    if strict:
        loaded = rewrite_definitions(loaded, to_strict_tool)
        out_registry = rewrite_registry(out_registry, to_strict_tool)
    known = [tool_name(tool) for tool in definitions if isinstance(tool, Mapping)]
    warn_unknown_option_names(tool_options, [*known, *(registry or {}), *(tool_ids or {}).values()])
    return CapabilityResult(
        definitions=loaded,
        registry=out_registry,
        intent_tool_names=labels.label_tool_names,
        injected_intent_tool_names=labels.injected_tool_names,
        background_tool_names=background.background_tool_names,
        deferred_names=deferred_names,
    )


def inherit_for_self_spawn(result: CapabilityResult) -> CapabilityResult:
    """What a self-spawned child inherits of its parent's shaped tools: the same
    definitions and registry without the intent labels and background flags (both
    marker-guarded, so a tool's own `intent` stays), and so no label gate and no
    background tools. The child renders no labels of its own, cannot rediscover one
    through tool search, and answers its parent rather than dispatching work nobody
    would harvest. The intent strip runs first, mirroring the order they were added in.
    """
    definitions = strip_background_from_tool_definitions(
        strip_intent_from_tool_definitions(result.definitions)
    )
    registry = strip_background_from_tool_registry(strip_intent_from_tool_registry(result.registry))
    return CapabilityResult(
        definitions=definitions,
        registry=registry,
        intent_tool_names=frozenset(),
        injected_intent_tool_names=frozenset(),
        background_tool_names=frozenset(),
        deferred_names=result.deferred_names,
    )
