"""An agent's goals and scopes on the agents page: the edits a user makes, and what the
page shows of them. Pure: no Reflex state, store or clock.

A goal (`core.goals`) names the tool families it may delegate to; the families offered are
those of the agent's picked tools. A scope names the goals it serves. `GoalsDraft` holds
both lists as edited, each row with a key that keeps its fields mounted while the user
types; every edit returns a new draft (or None when it changes nothing), and `problem`
says why the pair may not be written yet. A renamed goal stays served by its scopes; a
removed one leaves them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, TypeVar

from intent_ui.core.builder import BuilderTool
from intent_ui.core.goals import GoalError, goal_registry, scope_registry
from intent_ui.core.locale import DEFAULT_LANGUAGE, translate

__all__ = [
    "GOAL",
    "ROW_KINDS",
    "SCOPE",
    "DelegateVM",
    "GoalVM",
    "GoalsDraft",
    "RowKind",
    "RowVM",
    "ScopeGoalVM",
    "ScopeVM",
    "build_goals",
    "build_scopes",
    "goal_families",
    "goals_view",
]

Row = Mapping[str, Any]
_T = TypeVar("_T")


@dataclass
class DelegateVM:
    family: str = ""
    checked: bool = False
    tools: str = ""  # the picked tools of the family (its title), or why there are none
    label: str = ""  # the checkbox's accessible name


@dataclass
class RowVM:
    """What a goal's row and a scope's row share."""

    key: str = ""  # stable while the row is on screen, so typing is never remounted away
    index: int = 0
    id: str = ""
    description: str = ""
    remove_label: str = ""


@dataclass
class GoalVM(RowVM):
    delegates: list[DelegateVM] = field(default_factory=list)


@dataclass
class ScopeGoalVM:
    goal_id: str = ""
    checked: bool = False
    label: str = ""  # the checkbox's accessible name


@dataclass
class ScopeVM(RowVM):
    category: str = ""
    goals: list[ScopeGoalVM] = field(default_factory=list)


# --- editing -------------------------------------------------------------------------------

GOAL = "goal"
SCOPE = "scope"


@dataclass(frozen=True)
class RowKind:
    """What a goal's or a scope's row holds besides its id, and what the page edits."""

    blank: Mapping[str, Any]
    """A new row's other fields."""
    texts: Mapping[str, bool]
    """The fields typed in, each with whether surrounding spaces are dropped."""
    choices: str
    """The list its checkboxes tick: a goal's families, a scope's goals."""


ROW_KINDS: Mapping[str, RowKind] = {
    GOAL: RowKind(
        blank={"description": "", "delegates": []},
        texts={"id": True, "description": False},
        choices="delegates",
    ),
    SCOPE: RowKind(
        blank={"description": "", "category": "", "goal_ids": []},
        texts={"id": True, "description": False, "category": True},
        choices="goal_ids",
    ),
}


@dataclass(frozen=True)
class GoalsDraft:
    """An agent's goals and scopes as edited, with one on-screen key per row.

    Every edit names the list (`GOAL` or `SCOPE`) and returns a new draft, or None when it
    changes nothing (an unknown list, field or row, or the value already there)."""

    goals: tuple[Row, ...] = ()
    goal_keys: tuple[str, ...] = ()
    scopes: tuple[Row, ...] = ()
    scope_keys: tuple[str, ...] = ()

    @classmethod
    def stored(cls, goals: Iterable[Row], scopes: Iterable[Row], prefix: str) -> GoalsDraft:
        """An agent's stored lists; row `i` is keyed `{prefix}:{i}`."""
        goal_rows = tuple(dict(goal) for goal in goals)
        scope_rows = tuple(dict(scope) for scope in scopes)
        return cls(
            goal_rows,
            tuple(f"{prefix}:{index}" for index in range(len(goal_rows))),
            scope_rows,
            tuple(f"{prefix}:{index}" for index in range(len(scope_rows))),
        )

    def problem(self) -> str:
        """Why the two lists may not be written (naming the goal or scope and the rule),
        or "" when they are valid together."""
        try:
            scope_registry(self.scopes, goal_registry(self.goals).ids())
        except GoalError as exc:
            return str(exc)
        return ""

    def add(self, kind: str, key: str) -> GoalsDraft | None:
        """A new row at the end, `{kind}-{n}` by the next number no row uses."""
        spec = ROW_KINDS.get(kind)
        if spec is None:
            return None
        rows, keys = self._rows(kind)
        return self._with(kind, (*rows, {"id": _next_id(kind, rows), **spec.blank}), (*keys, key))

    def remove(self, kind: str, index: int) -> GoalsDraft | None:
        """Without row `index`; a removed goal leaves the scopes that served it."""
        rows, keys = self._rows(kind)
        if not 0 <= index < len(rows):
            return None
        draft = self._with(kind, _without(rows, index), _without(keys, index))
        return draft._goal_renamed(rows[index], None) if kind == GOAL else draft

    def set_text(self, kind: str, index: int, field: str, value: str) -> GoalsDraft | None:
        """Row `index` with the typed `field` set to `value`."""
        spec = ROW_KINDS.get(kind)
        if spec is None or field not in spec.texts:
            return None
        return self._set(kind, index, field, value.strip() if spec.texts[field] else value)

    def toggle(self, kind: str, index: int, item: str) -> GoalsDraft | None:
        """Row `index` with `item` ticked if it was not, else unticked."""
        spec = ROW_KINDS.get(kind)
        rows, _keys = self._rows(kind)
        if spec is None or not 0 <= index < len(rows):
            return None
        return self._set(kind, index, spec.choices, _toggled(rows[index].get(spec.choices), item))

    def _rows(self, kind: str) -> tuple[tuple[Row, ...], tuple[str, ...]]:
        if kind == GOAL:
            return self.goals, self.goal_keys
        if kind == SCOPE:
            return self.scopes, self.scope_keys
        return (), ()

    def _with(self, kind: str, rows: tuple[Row, ...], keys: tuple[str, ...]) -> GoalsDraft:
        if kind == GOAL:
            return replace(self, goals=rows, goal_keys=keys)
        return replace(self, scopes=rows, scope_keys=keys)

    def _set(self, kind: str, index: int, field: str, value: Any) -> GoalsDraft | None:
        rows, keys = self._rows(kind)
        edited = _edited(rows, index, field, value)
        if edited is None:
            return None
        draft = self._with(kind, edited, keys)
        # A renamed goal stays served by its scopes.
        return draft._goal_renamed(rows[index], value) if (kind, field) == (GOAL, "id") else draft

    def _goal_renamed(self, goal: Row, new_id: str | None) -> GoalsDraft:
        """The scopes following `goal` to its new id (`None`: the goal was removed)."""
        old_id = str(goal.get("id"))
        scopes = []
        for scope in self.scopes:
            served = [new_id if g == old_id else g for g in scope.get("goal_ids") or ()]
            scopes.append({**scope, "goal_ids": [g for g in served if g is not None]})
        return replace(self, scopes=tuple(scopes))


def _next_id(prefix: str, rows: Sequence[Row]) -> str:
    """`{prefix}-{n}` for a new row: its number, or the next one no row uses yet."""
    taken = {row.get("id") for row in rows}
    number = len(rows) + 1
    while f"{prefix}-{number}" in taken:
        number += 1
    return f"{prefix}-{number}"


def _without(items: tuple[_T, ...], index: int) -> tuple[_T, ...]:
    return items[:index] + items[index + 1 :]


def _edited(rows: tuple[Row, ...], index: int, key: str, value: Any) -> tuple[Row, ...] | None:
    """`rows` with row `index`'s `key` set to `value`; None when out of range or unchanged."""
    if not 0 <= index < len(rows) or rows[index].get(key) == value:
        return None
    return (*rows[:index], {**rows[index], key: value}, *rows[index + 1 :])


def _toggled(items: Iterable[object] | None, item: str) -> list[str]:
    """`items` (as strings) without `item` if it was there, else with it at the end."""
    named = [str(i) for i in items or ()]
    return [i for i in named if i != item] if item in named else [*named, item]


# --- the view ------------------------------------------------------------------------------


def goal_families(tools: Sequence[BuilderTool], picked: Iterable[str]) -> dict[str, list[str]]:
    """The families a goal may delegate to: those of the picked tools, in catalogue order,
    each with its picked tools' names."""
    chosen = set(picked)
    families: dict[str, list[str]] = {}
    for tool in tools:
        if tool.tool_id in chosen:
            families.setdefault(tool.family or tool.tool_id, []).append(tool.name)
    return families


def build_goals(
    goals: Sequence[Row],
    keys: Sequence[str],
    families: Mapping[str, Sequence[str]],
    lang: str = DEFAULT_LANGUAGE,
    picked_names: Mapping[str, str] | None = None,
) -> list[GoalVM]:
    """One row per goal, each listing the families it may use: the picked tools' families,
    then what it already names beyond them: a picked tool's own id (`picked_names` maps
    those ids to names; a delegate may name one tool), or a family no picked tool has
    (kept, so unpicking a tool never silently drops a goal's choice)."""
    singles = picked_names or {}
    rows = []
    for index, goal in enumerate(goals):
        named = [str(d) for d in goal.get("delegates") or ()]
        shown = [*families, *(d for d in named if d not in families)]
        name = _row_name(goal, index)
        delegates = [
            DelegateVM(
                family=family,
                checked=family in named,
                tools=", ".join(families[family])
                if family in families
                else singles.get(family) or translate("builder.goal_family_unpicked", lang),
                label=translate("builder.goal_delegate_label", lang, goal=name, family=family),
            )
            for family in shown
        ]
        rows.append(GoalVM(**_row_fields(GOAL, goal, index, keys, lang), delegates=delegates))
    return rows


def build_scopes(
    scopes: Sequence[Row],
    keys: Sequence[str],
    goal_ids: Sequence[str],
    lang: str = DEFAULT_LANGUAGE,
) -> list[ScopeVM]:
    """One row per scope, each listing the agent's goals it may serve."""
    rows = []
    for index, scope in enumerate(scopes):
        name = _row_name(scope, index)
        served = [str(g) for g in scope.get("goal_ids") or ()]
        shown = [*goal_ids, *(g for g in served if g not in goal_ids)]
        rows.append(
            ScopeVM(
                **_row_fields(SCOPE, scope, index, keys, lang),
                category=str(scope.get("category") or ""),
                goals=[
                    ScopeGoalVM(
                        goal_id=goal_id,
                        checked=goal_id in served,
                        label=translate("builder.scope_goal_label", lang, scope=name, goal=goal_id),
                    )
                    for goal_id in shown
                    if goal_id
                ],
            )
        )
    return rows


class _RowFields(TypedDict):
    key: str
    index: int
    id: str
    description: str
    remove_label: str


def _row_fields(kind: str, row: Row, index: int, keys: Sequence[str], lang: str) -> _RowFields:
    """The fields every row has (`RowVM`)."""
    return {
        "key": keys[index] if index < len(keys) else f"{kind}-{index}",
        "index": index,
        "id": str(row.get("id") or ""),
        "description": str(row.get("description") or ""),
        "remove_label": translate(f"builder.{kind}_remove", lang, **{kind: _row_name(row, index)}),
    }


def _row_name(row: Row, index: int) -> str:
    """How labels name a row: its id, or its position while it has none."""
    return str(row.get("id") or "") or f"#{index + 1}"


def goals_view(
    draft: GoalsDraft,
    tools: Sequence[BuilderTool],
    picked: Iterable[str],
    lang: str = DEFAULT_LANGUAGE,
) -> tuple[list[GoalVM], list[ScopeVM]]:
    """The goal rows (offering the picked tools' families) and the scope rows."""
    chosen = set(picked)
    goals = build_goals(
        draft.goals,
        draft.goal_keys,
        goal_families(tools, chosen),
        lang,
        {t.tool_id: t.name for t in tools if t.tool_id in chosen},
    )
    goal_ids = [str(g.get("id") or "") for g in draft.goals]
    return goals, build_scopes(draft.scopes, draft.scope_keys, goal_ids, lang)
