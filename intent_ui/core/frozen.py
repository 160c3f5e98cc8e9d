"""Read-only JSON values that stay JSON: what a cache may hand to every caller at once.

`MappingProxyType` and tuples (the read-only constants elsewhere in `core`) cannot go
into a request body as they are: `json.dumps` refuses a proxy, so every consumer would
copy them first, and copying a thousand tool schemas costs more than building them.
`FrozenDict` and `FrozenList` are a `dict` and a `list` (the JSON encoder, `==` with
plain values and every `isinstance` check treat them as such) whose mutating methods
raise, so a value shared between callers cannot be changed by one of them.

`copy.copy`, `copy.deepcopy` and pickling give plain, mutable copies: a copy belongs to
whoever made it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

__all__ = ["FrozenDict", "FrozenList", "freeze"]

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only; copy it (dict(x), list(x)) to change it")


class FrozenDict(dict[_K, _V]):
    """A `dict` that refuses every change."""

    __slots__ = ()

    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only

    def __copy__(self) -> dict[_K, _V]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[_K, _V]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple[type[dict[_K, _V]], tuple[dict[_K, _V]]]:
        return dict, (dict(self),)


class FrozenList(list[_T]):
    """A `list` that refuses every change."""

    __slots__ = ()

    __setitem__ = _read_only
    __delitem__ = _read_only
    __iadd__ = _read_only
    __imul__ = _read_only
    append = _read_only
    clear = _read_only
    extend = _read_only
    insert = _read_only
    pop = _read_only
    remove = _read_only
    reverse = _read_only
    sort = _read_only

    def __copy__(self) -> list[_T]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[_T]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[type[list[_T]], tuple[list[_T]]]:
        return list, (list(self),)


_KEPT = frozenset({str, int, float, bool, type(None), bytes, FrozenDict, FrozenList})
"""What freezing returns as it is: immutable leaves, and what is frozen already."""


def freeze(value: Any) -> Any:
    """`value` read-only all the way down, equal to it: every mapping a `FrozenDict`, every
    list a `FrozenList`, tuples' items frozen, sets `frozenset`s.

    What is frozen already comes back as the very same object, so freezing a value built
    around frozen parts copies only the new parts. Other objects pass unchanged.
    """
    # Plain dicts and lists first, and what is kept without a call: a thousand tool
    # schemas are tens of thousands of nodes, and this runs on every cache miss.
    kind = type(value)
    if kind is dict:
        return FrozenDict(
            {key: item if type(item) in _KEPT else freeze(item) for key, item in value.items()}
        )
    if kind is list:
        return FrozenList([item if type(item) in _KEPT else freeze(item) for item in value])
    if kind in _KEPT or isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return FrozenList([freeze(item) for item in value])
    if isinstance(value, tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, set):
        return frozenset(value)
    return value
