"""One shared copy of values that thousands of objects repeat.

A fleet's objects repeat the same strings, rule lists and sets ten thousand times;
each parsed copy would otherwise keep its own. A bounded table of our own rather than
``sys.intern``: interned strings are immortal on some interpreters (CPython 3.12.0 to
3.12.5, free-threaded builds), and the values come from user input. When the table is
full it starts again: values already shared stay shared, only new ones start over.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedValues(Generic[K, V]):
    def __init__(self, make: Callable[[K], V], *, limit: int) -> None:
        self._make = make
        self._limit = limit
        self._values: dict[K, V] = {}

    def get(self, key: K) -> V:
        """The shared value for ``key``, made from it the first time."""
        found = self._values.get(key)
        if found is None:
            if len(self._values) >= self._limit:
                self._values.clear()
            found = self._values[key] = self._make(key)
        return found

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values
