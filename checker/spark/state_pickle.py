"""Compact pickles of model states, for engines that ship states between machines (Spark).

A group world's state is a tree of frozen dataclasses on which the models remember things
outside the fields (canonical texts, member ids, invariant findings; see
`models/world_state.py`). A plain pickle carries all of it: about 15 kB per state, ten times the
fields alone. `encode_state` pickles every dataclass instance as its class and its field values
only, and `decode_state` rebuilds the instances without running `__init__` (the way the models'
own `evolve` copies them), so the receiver recomputes what it needs. Everything else (tuples,
enums, strings, numbers) pickles as usual.

Spark's engine keeps states in this encoded form from the executor that found them to the one
that expands them, through shuffles, caches and checkpoint files, and decodes each once.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

_PROTOCOL = pickle.HIGHEST_PROTOCOL


def _rebuild(kind: type, values: tuple[Any, ...]) -> Any:
    obj: object = object.__new__(kind)
    object.__setattr__(obj, "__dict__", dict(zip(kind.__dataclass_fields__, values, strict=True)))  # type: ignore[attr-defined]
    return obj


class _FieldsPickler(pickle.Pickler):
    """A pickler that writes dataclass instances (with a `__dict__`) as class + field values."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        fields = getattr(kind, "__dataclass_fields__", None)
        if fields is None or isinstance(obj, type) or not hasattr(obj, "__dict__"):
            return NotImplemented
        return _rebuild, (kind, tuple([getattr(obj, name) for name in fields]))


def encode_state(state: object) -> bytes:
    """`state` as a pickle of its fields only (see the module docstring)."""
    buffer = io.BytesIO()
    _FieldsPickler(buffer, _PROTOCOL).dump(state)
    return buffer.getvalue()


def decode_state(data: bytes) -> Any:
    """The state `encode_state` wrote."""
    return pickle.loads(data)
