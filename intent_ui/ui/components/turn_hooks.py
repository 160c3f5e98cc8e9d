"""Page expressions that read the page's turn store (`assets/turn_views.js`).

A memoized component reads what it shows from the store by key, through one React hook
declared at the top of its body: the store notifies the hook when a frame of the turn's
stream changed that key, so a streamed fragment re-renders the one card (or header, or
reply text) it touched, and nothing else of the page (docs/turns.md). Each function here
returns the hook's result as a var, with the hook and its import attached, so using the
var inside a memo is all it takes.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars import ObjectVar, Var
from reflex.vars.function import FunctionStringVar
from reflex_base.vars.base import VarData

__all__ = [
    "TURN_VIEWS",
    "call_view",
    "group_view",
    "js_call",
    "mark_view",
    "store_function",
    "store_hook",
    "subagent_view",
    "text_view",
    "turn_view",
]

TURN_VIEWS = "$/public/turn_views.js"
"""`assets/turn_views.js`: the hooks below, built on the store (`assets/turn_store.js`)."""


def store_hook(name: str, hook: str, *args: Var[Any]) -> ObjectVar[dict[str, Any]]:
    """`const {name} = {hook}(...args);` at the top of the enclosing memo, as a var."""
    call = f"{hook}({', '.join(str(arg) for arg in args)})"
    var: Var[dict[str, Any]] = Var(
        _js_expr=name,
        _var_type=dict[str, Any],
        _var_data=VarData.merge(
            VarData(
                hooks={f"const {name} = {call};": None},
                imports={TURN_VIEWS: [ImportVar(tag=hook)]},
            ),
            *(arg._get_all_var_data() for arg in args),
        ),
    )
    result = var.guess_type()
    assert isinstance(result, ObjectVar)
    return result


def turn_view(message_id: Var[str]) -> ObjectVar[dict[str, Any]]:
    """`{turn, reply}`: the turn's structure (status, goal, failure, parts) and its reply
    as the markdown the model wrote (for the copy button)."""
    return store_hook("iu_turn_view", "useTurnView", message_id)


def group_view(message_id: Var[str], key: Var[str]) -> ObjectVar[dict[str, Any]]:
    """`{group, cards, title, open, compactOpen}` of the group part `key` (`group:{g}`)."""
    return store_hook("iu_group_view", "useGroupView", message_id, key)


def call_view(message_id: Var[str], call_id: Var[str]) -> ObjectVar[dict[str, Any]]:
    """`{card, title, expanded, detail, approval, question, canDecide, editing, waiting}`
    of one call; `detail` (`label`, `arguments`, `result`, and for an approval
    `tool_arguments` and `editable`) is fetched while the card is expanded, or while its
    approval waits for this reader (`canDecide`: the owner's page)."""
    return store_hook("iu_call_view", "useCallView", message_id, call_id)


def subagent_view(message_id: Var[str], call_id: Var[str]) -> ObjectVar[dict[str, Any]]:
    """`{ticker, children}` of a `subagent` call: the line under its card (`name` "" for
    any other call) and its child turn's call ids."""
    return store_hook("iu_subagent_view", "useSubagentView", message_id, call_id)


def mark_view(message_id: Var[str], call_id: Var[str]) -> ObjectVar[dict[str, Any]]:
    """`{card, waiting}` of one call, for its timeline mark."""
    return store_hook("iu_mark_view", "useMarkView", message_id, call_id)


def text_view(message_id: Var[str], key: Var[str]) -> Var[str]:
    """The reply text part `key` (`text:{i}`)."""
    return store_hook("iu_text_view", "useTextView", message_id, key).to(str)


def store_function(name: str) -> FunctionStringVar:
    """A function the views module exports, for an event trigger (`on_click`)."""
    return FunctionStringVar.create(
        name, _var_data=VarData(imports={TURN_VIEWS: [ImportVar(tag=name)]})
    )


def js_call(name: str, *args: Var[Any] | str) -> Any:
    """`name(...args)` as an event trigger's handler: runs in the page, no round trip."""
    return store_function(name).partial(*(rx.Var.create(arg) for arg in args))
