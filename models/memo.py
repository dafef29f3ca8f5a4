"""Bounded memo tables for the models' pure functions.

The specifications are pure and their states immutable, so a model may remember results by the
canonical text of the inputs (see `world_state.canonical_repr`). Tables belong to a model
instance, never to a module: two models never share entries, and a worker process rebuilds its
own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

# A table forgets everything when it grows past this many entries, to bound memory.
DEFAULT_LIMIT = 200_000


class Memo(Generic[K, V]):
    """A dict of results that forgets everything past `limit` entries; `enabled=False` turns
    it into a pass-through (every call computes), which tests use to check the memo changes
    nothing."""

    def __init__(self, enabled: bool = True, limit: int = DEFAULT_LIMIT) -> None:
        self.enabled = enabled
        self.limit = limit
        self._table: dict[K, V] = {}

    def get(self, key: K, compute: Callable[[], V]) -> V:
        """The remembered value for `key`, computing it with `compute()` the first time."""
        if not self.enabled:
            return compute()
        table = self._table
        try:
            return table[key]
        except KeyError:
            pass
        if len(table) >= self.limit:
            table.clear()
        value = table[key] = compute()
        return value

    def lookup(self, key: K) -> V | None:
        """The remembered value for `key`, or None (always None when disabled)."""
        return self._table.get(key)

    def store(self, key: K, value: V) -> V:
        """Remember `value` for `key` (unless disabled) and return it."""
        if self.enabled:
            table = self._table
            if len(table) >= self.limit:
                table.clear()
            table[key] = value
        return value

    def __len__(self) -> int:
        return len(self._table)
