"""A decoded kafka-python message as a trace body: JSON values in the Kafka schema's names.

The walk follows the message's own schema at its version, so a body holds exactly the fields
that version has on the wire: nested structs as objects, arrays as lists, `bytes` fields as
base64 text, UUIDs as strings, and DescribeGroups' `authorized_operations` (which kafka-python
decodes to a set of bit positions) back as the int32 on the wire. kafka-python's own
bookkeeping (the header, tagged-field sets) is left out.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

INT32_MIN = -(2**31)
# kafka-python decodes an int32 bit field to the set of its bits (None for INT32_MIN).
_BITFIELD = "bitfield"
_BINARY = frozenset({"bytes", "records"})


def body_of(message: Any) -> dict[str, Any]:
    """The fields of a decoded request or response `message` at its version, as JSON values."""
    message_class: type = type(message)
    return _apply(_plan(message_class, message.API_VERSION), message)


def bytes_field_names(message_class: Any) -> frozenset[str]:
    """The names of every `bytes` field in `message_class`'s schema, at any version and depth
    (the fields a trace carries as base64)."""
    names: set[str] = set()
    pending = list(message_class._struct._fields)
    while pending:
        field = pending.pop()
        if field._fields:
            pending.extend(field._fields)
        elif _kind(field) in _BINARY:
            names.add(field.name)
    return frozenset(names)


# How to read one struct at one version: (field name, converter of its value or None for a
# value kept as it is), in order.
_Plan = tuple[tuple[str, Callable[[Any], Any] | None], ...]


@cache
def _plan(message_class: Any, version: int) -> _Plan:
    """The plan of a message class at a version (the schema walk done once, not per message)."""
    return _struct_plan(message_class._struct._fields, version)


def _struct_plan(fields: Any, version: int) -> _Plan:
    return tuple(
        (field.name, _converter(field, version)) for field in fields if field.for_version_q(version)
    )


def _apply(plan: _Plan, value: Any) -> dict[str, Any]:
    return {
        name: getattr(value, name) if convert is None else convert(getattr(value, name))
        for name, convert in plan
    }


def _converter(field: Any, version: int) -> Callable[[Any], Any] | None:
    kind = _kind(field)
    if kind == _BITFIELD:
        # None is how kafka-python decodes INT32_MIN ("not requested"); the wire has the int.
        return lambda value: INT32_MIN if value is None else _int32_of_bits(value)
    if field.is_struct_array():
        plan = _struct_plan(field._fields, version)
        return lambda value: None if value is None else [_apply(plan, item) for item in value]
    if field.is_struct():
        plan = _struct_plan(field._fields, version)
        return lambda value: None if value is None else _apply(plan, value)
    simple = _simple_converter(kind)
    if field.is_array():
        if simple is None:
            return lambda value: None if value is None else list(value)
        return lambda value: None if value is None else [simple(item) for item in value]
    return simple


def _kind(field: Any) -> str:
    """The schema type of a simple field, or of an array's items ("bytes", "uuid", ...)."""
    return str(field._json["type"]).removeprefix("[]")


def _simple_converter(kind: str) -> Callable[[Any], Any] | None:
    if kind in _BINARY:
        return _as_base64
    # Only a uuid field decodes to a UUID; every other simple value is JSON as it is.
    return _as_text if kind == "uuid" else None


def _as_base64(value: Any) -> str | None:
    return None if value is None else base64.b64encode(bytes(value)).decode("ascii")


def _as_text(value: Any) -> Any:
    return str(value) if isinstance(value, uuid.UUID) else value


def _int32_of_bits(bits: set[int] | frozenset[int]) -> int:
    """The signed int32 whose set bits are `bits`."""
    unsigned = sum(1 << bit for bit in bits)
    return unsigned - 2**32 if unsigned >= 2**31 else unsigned
