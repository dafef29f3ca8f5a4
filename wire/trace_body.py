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
from typing import Any

INT32_MIN = -(2**31)
# kafka-python decodes an int32 bit field to the set of its bits (None for INT32_MIN).
_BITFIELD = "bitfield"
_BINARY = frozenset({"bytes", "records"})


def body_of(message: Any) -> dict[str, Any]:
    """The fields of a decoded request or response `message` at its version, as JSON values."""
    version = message.API_VERSION
    return _struct(message, message._struct._fields, version)


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


def _struct(value: Any, fields: Any, version: int) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for field in fields:
        if not field.for_version_q(version):
            continue
        document[field.name] = _value(getattr(value, field.name), field, version)
    return document


def _value(value: Any, field: Any, version: int) -> Any:
    if _kind(field) == _BITFIELD:
        # None is how kafka-python decodes INT32_MIN ("not requested"); the wire has the int.
        return INT32_MIN if value is None else _int32_of_bits(value)
    if value is None:
        return None
    if field.is_struct_array():
        return [_struct(item, field._fields, version) for item in value]
    if field.is_struct():
        return _struct(value, field._fields, version)
    if field.is_array():
        return [_simple(item, _kind(field)) for item in value]
    return _simple(value, _kind(field))


def _kind(field: Any) -> str:
    """The schema type of a simple field, or of an array's items ("bytes", "uuid", ...)."""
    return str(field._json["type"]).removeprefix("[]")


def _simple(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind in _BINARY:
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _int32_of_bits(bits: set[int] | frozenset[int]) -> int:
    """The signed int32 whose set bits are `bits`."""
    unsigned = sum(1 << bit for bit in bits)
    return unsigned - 2**32 if unsigned >= 2**31 else unsigned
