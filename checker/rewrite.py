"""Renaming the strings inside immutable values: the engine's tool for canonical forms.

Models rename arbitrary names (ids, connection names) to canonical ones, and judges rename an
implementation's names to the specification's; both rewrite frozen values without changing
their structure.
"""

from __future__ import annotations

from typing import Any


def rewrite_strings(value: Any, mapping: dict[str, str]) -> Any:
    """`value` with every string that is a key of `mapping` replaced, objects shared if unchanged.

    Walks frozen dataclasses, tuples and frozensets; bytes, numbers and enums stay as they are.
    Dataclasses are rebuilt without running `__post_init__` again: renaming ids cannot make a
    valid value invalid.
    """
    kind = type(value)
    if kind is str:
        return mapping.get(value, value)
    if kind is tuple:
        items = tuple(rewrite_strings(item, mapping) for item in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, frozenset):
        renamed = frozenset(rewrite_strings(item, mapping) for item in value)
        return value if renamed == value else kind(renamed)
    fields = getattr(kind, "__dataclass_fields__", None)
    if fields is None:
        return value
    changed = {}
    for name in fields:
        old = getattr(value, name)
        new = rewrite_strings(old, mapping)
        if new is not old:
            changed[name] = new
    if not changed:
        return value
    rebuilt = object.__new__(kind)
    for name in fields:
        object.__setattr__(rebuilt, name, changed.get(name, getattr(value, name)))
    return rebuilt
