"""Renaming the strings inside immutable values: the engine's tool for canonical forms.

Models rename arbitrary names (ids, connection names) to canonical ones, and judges rename an
implementation's names to the specification's; both rewrite frozen values without changing
their structure.
"""

from __future__ import annotations

from typing import Any

# Rewritten parts by the identity of the original: (original, rewritten). The original is kept
# so that its id cannot be reused by another object while the entry lives.
RewriteMemo = dict[int, tuple[Any, Any]]


def rewrite_strings(value: Any, mapping: dict[str, str], memo: RewriteMemo | None = None) -> Any:
    """`value` with every string that is a key of `mapping` replaced, objects shared if unchanged.

    Walks frozen dataclasses, tuples and frozensets; bytes, numbers and enums stay as they are.
    Dataclasses are rebuilt without running `__post_init__` again: renaming ids cannot make a
    valid value invalid. With a `memo` (one per `mapping`), parts already rewritten are looked
    up by identity instead of walked again: values derived from one another share most parts.
    """
    kind = type(value)
    if kind is str:
        return mapping.get(value, value)
    fields = None
    if kind is not tuple and not isinstance(value, frozenset):
        fields = getattr(kind, "__dataclass_fields__", None)
        if fields is None:
            return value  # bytes, numbers, enums, None
    if memo is not None:
        known = memo.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
    if kind is tuple:
        items = tuple(rewrite_strings(item, mapping, memo) for item in value)
        result = value if all(a is b for a, b in zip(items, value, strict=True)) else items
    elif fields is None:
        renamed = frozenset(rewrite_strings(item, mapping, memo) for item in value)
        result = value if renamed == value else kind(renamed)
    else:
        result = _rewrite_fields(value, fields, mapping, memo)
    if memo is not None:
        memo[id(value)] = (value, result)
    return result


def _rewrite_fields(
    value: Any, fields: dict[str, Any], mapping: dict[str, str], memo: RewriteMemo | None
) -> Any:
    kind = type(value)
    changed = {}
    for name in fields:
        old = getattr(value, name)
        new = rewrite_strings(old, mapping, memo)
        if new is not old:
            changed[name] = new
    if not changed:
        return value
    rebuilt = object.__new__(kind)
    for name in fields:
        object.__setattr__(rebuilt, name, changed.get(name, getattr(value, name)))
    return rebuilt
