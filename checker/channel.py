"""Sending states between two processes without sending the same part twice.

States are immutable trees of frozen dataclasses, tuples, enums and plain values, and the states
of one search share most of their parts: a successor keeps its parent's coordinator, most of its
clients, its cluster. A `Channel` is one end of a link between two processes (the merging
process and one worker). Each end remembers every shared part it has sent or received, under a
number both ends agree on; a part already known to the other end travels as that number, a new
one travels once with its contents. So a state usually costs a few dozen bytes on the wire
instead of kilobytes, and pickling and unpickling it costs little.

Which parts are shared: instances of dataclasses that keep a `__dict__`, and enum members.
Such objects are sent with their whole `__dict__`, including anything a model remembered on
them (a canonical text, say), so the receiver need not compute it again. The top-level states
of a message are not shared parts (each state is sent about once, and keeping every state
alive at both ends would cost the memory the search saves by forgetting expanded states).

Both ends must process their messages in the order they were sent: a part's contents travel
with the first message that mentions it. Numbers are even for parts the merging end
introduced and odd for the worker's, so the two ends never hand out the same number. `reset`
forgets everything; both ends must reset at the same point of the conversation (the engine
does so between BFS levels, when nothing is in flight).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import pickle
from enum import Enum
from typing import Any

_PROTOCOL = pickle.HIGHEST_PROTOCOL
# Values pickle writes directly; they are never shared parts (checked first, for speed).
_PLAIN = frozenset({str, int, float, bool, bytes, type(None), tuple, frozenset, list, dict})

_CLASS, _ENUM, _OBJECT = 0, 1, 2


class Channel:
    """One end of a link: `encode` messages for the other end, `decode` messages from it.

    `side` is 0 for the merging process and 1 for a worker.
    """

    def __init__(self, side: int) -> None:
        if side not in (0, 1):
            raise ValueError(f"side must be 0 or 1, got {side}")
        self._side = side
        self._buffer = io.BytesIO()
        self._pickler = pickle.Pickler(self._buffer, _PROTOCOL)
        self._pickler.persistent_id = self._persistent_id  # type: ignore[method-assign]
        self._fields: dict[type, tuple[str, ...]] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every shared part (both ends must reset at the same point)."""
        self._next = self._side
        # Numbers of known parts by object identity; `_parts` keeps those objects alive, so
        # an identity is never reused while it is in the table.
        self._numbers: dict[int, int] = {}
        self._parts: dict[int, object] = {}

    @property
    def known_parts(self) -> int:
        """How many shared parts this end knows (sent or received)."""
        return len(self._parts)

    # -- encoding --------------------------------------------------------------------------

    def encode(self, message: object) -> bytes:
        """The message as bytes; states in it must be wrapped by `envelope`."""
        buffer = self._buffer
        self._pickler.dump(message)
        self._pickler.clear_memo()
        data = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return data

    def envelope(self, state: object) -> object:
        """A state ready for `encode`: its fields travel, the state itself is not a shared part."""
        kind = type(state)
        if kind in _PLAIN or not dataclasses.is_dataclass(state) or isinstance(state, type):
            return (None, state)
        names = self._field_names(kind)
        return (kind, tuple([getattr(state, name) for name in names]))

    def _field_names(self, kind: type) -> tuple[str, ...]:
        names = self._fields.get(kind)
        if names is None:
            names = self._fields[kind] = tuple(f.name for f in dataclasses.fields(kind))
        return names

    def _persistent_id(self, obj: Any) -> object:
        kind = type(obj)
        if kind in _PLAIN:
            return None
        number = self._numbers.get(id(obj))
        if number is not None:
            return number
        if isinstance(obj, type):
            # Classes travel by name, once; the definition must not mention the class itself.
            return self._introduce(obj, (_CLASS, obj.__module__, obj.__qualname__))
        if isinstance(obj, Enum):
            return self._introduce(obj, (_ENUM, kind, obj.value))
        if dataclasses.is_dataclass(obj) and hasattr(obj, "__dict__"):
            return self._introduce(obj, (_OBJECT, kind, obj.__dict__))
        return None

    def _introduce(self, obj: object, contents: tuple[Any, ...]) -> tuple[Any, ...]:
        number = self._next
        self._next += 2
        self._numbers[id(obj)] = number
        self._parts[number] = obj
        return (number, *contents)

    # -- decoding --------------------------------------------------------------------------

    def decode(self, data: bytes) -> Any:
        """The message `data` encodes; states in it must be unwrapped by `open`."""
        unpickler = pickle.Unpickler(io.BytesIO(data))
        # pickle documents setting `persistent_load` on an Unpickler; typeshed declares a method.
        unpickler.persistent_load = self._persistent_load  # type: ignore[method-assign]
        return unpickler.load()

    def open(self, envelope: Any) -> Any:
        """The state an `envelope` carries."""
        kind, fields = envelope
        if kind is None:
            return fields
        state = object.__new__(kind)
        names = self._field_names(kind)
        if hasattr(state, "__dict__"):
            state.__dict__.update(zip(names, fields, strict=True))
        else:
            for name, value in zip(names, fields, strict=True):
                object.__setattr__(state, name, value)
        return state

    def _persistent_load(self, pid: Any) -> object:
        if type(pid) is int:
            return self._parts[pid]
        number, tag, *contents = pid
        obj: Any
        if tag == _CLASS:
            module, qualname = contents
            obj = importlib.import_module(module)
            for name in qualname.split("."):
                obj = getattr(obj, name)
        elif tag == _ENUM:
            kind, value = contents
            obj = kind(value)
        else:
            kind, namespace = contents
            obj = object.__new__(kind)
            obj.__dict__.update(namespace)
        self._numbers[id(obj)] = number
        self._parts[number] = obj
        return obj
