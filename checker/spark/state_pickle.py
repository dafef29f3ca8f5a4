"""Compact pickles of model states, for engines that ship states between machines (Spark).

A group world's state is a tree of frozen dataclasses on which the models remember things
outside the fields (canonical texts, member ids, invariant findings; see
`models/world_state.py`). A plain pickle carries all of it: about 15 kB per state, ten times the
fields alone. `encode_state` pickles every dataclass instance as its class and its field values
only, and `decode_state` rebuilds the instances without running `__init__` (the way the models'
own `evolve` copies them), so the receiver recomputes what it needs. Everything else (tuples,
enums, strings, numbers) pickles as usual.

Spark's engine ships a state as its tuple of components (`ComponentCodec`): each component is
encoded this way once per process and the bytes are remembered, and on the receiving side each
component's bytes are decoded and interned once per process, so a state already met costs a
few dict lookups at both ends, not a pickle of its whole tree. States stay in that form from
the executor that found them to the one that expands them, through shuffles, caches and
checkpoint files.
"""

from __future__ import annotations

import io
import pickle
import struct
from collections.abc import Callable, Sequence
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


class ComponentCodec:
    """Vectors of interned component ids as bytes and back, for one process's expander.

    The bytes are a count, each component's length, then the components (`encode_state`).
    `values` is the expander's table of component values by id and `intern` gives the id of
    a value, so the ids a state decodes to are the receiving process's own."""

    def __init__(self, values: Sequence[Any], intern: Callable[[Any], int]) -> None:
        self._values = values
        self._intern = intern
        self._bytes: dict[int, bytes] = {}
        self._ids: dict[bytes, int] = {}

    def encode(self, ids: Sequence[int]) -> bytes:
        """The bytes of a state's component ids."""
        parts = []
        for component in ids:
            data = self._bytes.get(component)
            if data is None:
                data = self._bytes[component] = encode_state(self._values[component])
                self._ids.setdefault(data, component)
            parts.append(data)
        header = struct.pack(f"<H{len(parts)}I", len(parts), *[len(part) for part in parts])
        return header + b"".join(parts)

    def decode(self, data: bytes) -> tuple[int, ...]:
        """The component ids (this process's) that `encode` wrote as `data`."""
        (count,) = struct.unpack_from("<H", data)
        lengths = struct.unpack_from(f"<{count}I", data, 2)
        position = 2 + 4 * count
        ids = []
        for length in lengths:
            if position + length > len(data):
                raise ValueError(f"a state's bytes end inside its parts (at byte {len(data)})")
            part = data[position : position + length]
            position += length
            component = self._ids.get(part)
            if component is None:
                component = self._ids[part] = self._intern(decode_state(part))
            ids.append(component)
        if position != len(data):
            raise ValueError(f"a state's bytes end {len(data) - position} bytes after its parts")
        return tuple(ids)
