"""Shared policy for the tool-capability family: how `tool_options` resolve.

Every per-tool capability (`describe_intent`, `run_in_background`, `defer_loading`,
`allowed_callers`) is switched by an entry in an agent's `tool_options`, keyed by the
tool id (`read_file`, `search_code_mcp_github`, `getPets_action_medium_com`). This
module answers, once for all of them, "does this option apply to this tool?":

1. an explicit entry under the tool's own id (an action's raw `---` domain spelling
   aliases its `_`-collapsed runtime id, the builder bug #14407 fixed);
2. a capability marker: a definition-level flag the tool carries itself (native tools
   carry `"intent": True`). When several markers speak, an opting-in one wins;
3. the `"*"` wildcard entry (only synthesized for model specs and ephemeral agents);
4. the caller's default (native tools on, everything else off).

It also holds what every capability shares about a call and its callers: reading and
stripping arguments (`coerce_args_object`, `arg_value`, `without_arg`;
providers send arguments as an object or as a JSON string) and the `allowed_callers`
predicates (re-exported by `programmatic.py`, kept here so `intent.py` can use them
without an import cycle). What the siblings share about definitions and schemas is in
`_definitions.py`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

ToolOptions = Mapping[str, Mapping[str, Any]]
"""`tool_options`: tool id -> {option key -> value}."""

TOOL_SELECTION_WILDCARD = "*"
"""Reserved `tool_options` key: the default for every tool without its own entry.

Provider tool-name grammars (`^[a-zA-Z0-9_-]+$`) cannot produce it, so it never
collides with a real tool id."""

ACTION_DELIMITER = "_action_"
"""Separates an action's operation id from its encoded domain in its tool id."""

ACTION_DOMAIN_SEPARATOR = "---"
"""How a short hostname's dots are encoded in a persisted action tool id."""

DIRECT_CALLER = "direct"
CODE_EXECUTION_CALLER = "code_execution"
KNOWN_CALLERS = frozenset({DIRECT_CALLER, CODE_EXECUTION_CALLER})
_DIRECT_ONLY = frozenset({DIRECT_CALLER})


@dataclass(frozen=True, slots=True)
class ResolvedToolOption:
    """Which value an option resolved to, and the `tool_options` key (or `marker`) that said so."""

    value: bool
    source: str


MARKER_SOURCE = "marker"
"""`ResolvedToolOption.source` when a definition-level flag decided."""


def coerce_args_object(args: object) -> dict[str, Any] | None:
    """Return tool-call args as a dict: a mapping as is, a JSON object string parsed.

    Anything else (a list, a number, malformed or non-object JSON) is None. A dict
    comes back as the very same object; other mappings are copied into a dict.
    """
    if isinstance(args, dict):
        return args
    if isinstance(args, Mapping):
        return dict(args)
    if isinstance(args, str | bytes | bytearray):
        try:
            parsed = json.loads(args)
        except (ValueError, RecursionError):
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def arg_value(args: object, key: str) -> object:
    """The value of `key` in the args; None when absent or the args are malformed."""
    obj = coerce_args_object(args)
    return None if obj is None else obj.get(key)


def without_arg(args: object, key: str) -> object:
    """The args without `key`, so a tool body never sees a parameter it did not declare.

    A JSON string is parsed and returned as a dict. Args without the key (or
    malformed args) come back as the very same object.
    """
    obj = coerce_args_object(args)
    if obj is None or key not in obj:
        return args
    return {name: value for name, value in obj.items() if name != key}


def normalize_action_tool_id(tool_id: str) -> str:
    """Collapse an action's `---`-encoded domain to the `_` form runtime ids use.

    Only the part after the last `_action_` is touched: operation ids may
    legitimately contain `---` and two of them must not merge into one slot.
    """
    index = tool_id.rfind(ACTION_DELIMITER)
    if index == -1:
        return tool_id
    cut = index + len(ACTION_DELIMITER)
    return tool_id[:cut] + tool_id[cut:].replace(ACTION_DOMAIN_SEPARATOR, "_")


def _option_value(entry: object, key: str) -> bool | None:
    """The entry's boolean for `key`; anything that is not a real bool does not speak."""
    # The concrete dict check answers before the ABC's slower one: every tool of a
    # request asks several times.
    if not isinstance(entry, (dict, Mapping)):
        return None
    value = entry.get(key)
    return value if isinstance(value, bool) else None


def _explicit_value(tool_options: ToolOptions, key: str, tool_id: str) -> bool | None:
    return _option_value(tool_options.get(tool_id), key)


def canonical_tool_options(
    tool_options: ToolOptions | None, action_tool_ids: Iterable[str]
) -> ToolOptions:
    """Fold the other spelling of each ACTION's id onto the id itself.

    The builder may store an action's options under the raw `---` encoded domain or the
    `_` form (#14407's short-hostname bug: `slack.com` -> `slack---com` / `slack_com`);
    without this an opt-in silently no-ops. Only the ids the caller names as actions
    (it knows each tool's kind) are folded: an MCP tool whose name merely contains
    `_action_` is never aliased. The exact entry wins key by key; returns a new mapping,
    or the very same one when nothing needed folding.
    """
    options: ToolOptions = tool_options if isinstance(tool_options, Mapping) else {}
    folded: dict[str, Any] | None = None
    for tool_id in action_tool_ids:
        wanted = normalize_action_tool_id(tool_id)
        merged: dict[str, Any] = {}
        for name, entry in options.items():
            alias = name != tool_id and normalize_action_tool_id(name) == wanted
            if alias and isinstance(entry, Mapping):
                merged.update(entry)
        if not merged:
            continue
        own = options.get(tool_id)
        if isinstance(own, Mapping):
            merged.update(own)
        if folded is None:
            folded = dict(options)
        folded[tool_id] = merged
    return options if folded is None else folded


def resolve_tool_option(
    tool_options: ToolOptions | None,
    key: str,
    tool_id: str,
    *,
    markers: Iterable[object] = (),
) -> ResolvedToolOption | None:
    """Resolve one boolean option for one tool; None when no policy speaks.

    Precedence: explicit entry > capability markers (opt-in beats opt-out) >
    `"*"` wildcard. `markers` are definition-level flags; only real bools count.
    """
    options: ToolOptions = tool_options if isinstance(tool_options, Mapping) else {}
    explicit = _explicit_value(options, key, tool_id)
    if explicit is not None:
        return ResolvedToolOption(explicit, tool_id)
    marker_values = [marker for marker in markers if isinstance(marker, bool)]
    if marker_values:
        return ResolvedToolOption(any(marker_values), MARKER_SOURCE)
    wildcard = _option_value(options.get(TOOL_SELECTION_WILDCARD), key)
    if wildcard is not None:
        return ResolvedToolOption(wildcard, TOOL_SELECTION_WILDCARD)
    return None


def resolve_opt_in(
    tool_options: ToolOptions | None,
    key: str,
    tool_id: str,
    *,
    markers: Iterable[object] = (),
    default: bool = False,
) -> bool:
    """`resolve_tool_option`'s value, or `default` when nothing speaks."""
    resolved = resolve_tool_option(tool_options, key, tool_id, markers=markers)
    return default if resolved is None else resolved.value


def synthesize_selection_tool_options(
    key: str,
    selection: object,
    tool_names: Iterable[str] = (),
) -> dict[str, dict[str, bool]] | None:
    """Turn a model spec's / ephemeral agent's selection into `tool_options`.

    - None: no policy (returns None), the callers' defaults hold;
    - True: every tool (`{"*": {key: True}}`);
    - a list (or one name): only those tool ids;
    - an empty list or False: none.

    A narrowing selection also writes an explicit False for every other id in
    `tool_names`, because an explicit entry is the only thing that outranks a
    tool's own capability marker: without it "none" would leave native tools on.
    A `"*"` in a list is no tool id: it is skipped with a warning, since writing it
    would switch every tool on, the ones not listed too.
    """
    if selection is None:
        return None
    if selection is True:
        return {TOOL_SELECTION_WILDCARD: {key: True}}
    if selection is False:
        chosen: list[str] = []
    elif isinstance(selection, str):
        chosen = [selection]
    elif isinstance(selection, Sequence | frozenset | set) and all(
        isinstance(name, str) for name in selection
    ):
        chosen = list(selection)
    else:
        logger.warning(
            "Ignoring %s selection %r: expected true, false, or a list of tool names.",
            key,
            selection,
        )
        return None
    if TOOL_SELECTION_WILDCARD in chosen:
        logger.warning(
            "Ignoring %r in the %s selection %r: it is not a tool id; select true for every "
            "tool, or list only tool ids.",
            TOOL_SELECTION_WILDCARD,
            key,
            chosen,
        )
    options: dict[str, dict[str, bool]] = {TOOL_SELECTION_WILDCARD: {key: False}}
    for name in tool_names:
        options[name] = {key: False}
    for name in chosen:
        if name != TOOL_SELECTION_WILDCARD:
            options[name] = {key: True}
    return options


def merge_tool_options(base: ToolOptions | None, extra: ToolOptions | None) -> ToolOptions | None:
    """Merge two `tool_options` per tool id, so synthesized selections compose.

    `extra` wins key by key; sibling keys of one tool survive. Returns `base` itself
    when `extra` is empty, and `extra` itself when `base` is.
    """
    if not extra:
        return base
    if not base:
        return extra
    merged: dict[str, Mapping[str, Any]] = dict(base)
    for name, entry in extra.items():
        previous = merged.get(name)
        merged[name] = {**previous, **entry} if isinstance(previous, Mapping) else entry
    return merged


def tool_callers(tool: Mapping[str, Any]) -> frozenset[str]:
    """The tool's `allowed_callers`; absent or malformed means direct only."""
    callers = tool.get("allowed_callers")
    if callers is None or isinstance(callers, str):
        return _DIRECT_ONLY
    if not isinstance(callers, list | Sequence | frozenset | set):
        return _DIRECT_ONLY
    names = frozenset(caller for caller in callers if isinstance(caller, str))
    return names or _DIRECT_ONLY


def is_code_only(tool: Mapping[str, Any]) -> bool:
    """Callable only from the code sandbox: no UI card ever renders for it."""
    return DIRECT_CALLER not in tool_callers(tool)


def is_code_callable(tool: Mapping[str, Any]) -> bool:
    """Callable from the code sandbox (alone or besides direct calls)."""
    return CODE_EXECUTION_CALLER in tool_callers(tool)


def is_direct_only(tool: Mapping[str, Any]) -> bool:
    """Callable only directly by the model: the one case a label may be required."""
    return tool_callers(tool) == {DIRECT_CALLER}


def warn_unknown_option_names(tool_options: ToolOptions | None, known: Iterable[str]) -> None:
    """Log each `tool_options` entry that asks for something (a true value) of a tool that
    is not among `known` (the turn's tool ids and names): a typo or a tool gone since, so
    it takes no effect, and whoever wrote it should learn which."""
    if not tool_options:
        return
    names = set(known)
    for key in sorted(tool_options):
        entry = tool_options[key]
        if key == TOOL_SELECTION_WILDCARD or key in names or not isinstance(entry, Mapping):
            continue
        asked = sorted(str(option) for option, value in entry.items() if value)
        if asked:
            logger.warning(
                "tool_options[%r] (%s) names no tool of this turn, so it takes no effect.",
                key,
                ", ".join(asked),
            )
