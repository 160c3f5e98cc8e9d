"""A setting a user picks from a fixed list (the display density, the colour theme): its
values, its default, and the one way a stored or sent value becomes one of them. A value
this version does not know (a picker's stray value, a row written by a newer version) is
refused by `parse` with the accepted values, and read as the default by `or_default`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Choice"]

T = TypeVar("T", bound=str)


@dataclass(frozen=True, slots=True)
class Choice(Generic[T]):
    what: str  # how messages name the setting: "display density"
    values: tuple[T, ...]
    default: T

    def parse(self, value: object) -> T:
        """`value` as one of the values; anything else raises `ValueError` naming them."""
        for known in self.values:
            if value == known:
                return known
        raise ValueError(f"Unknown {self.what} {value!r}: use one of {', '.join(self.values)}.")

    def or_default(self, value: object) -> T:
        """`value` as one of the values, or the default when it is none of them."""
        return next((known for known in self.values if value == known), self.default)
