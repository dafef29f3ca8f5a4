"""JSON for the specification's inputs and outputs, as the conformance vectors carry them.

Requests, responses and internal events are frozen dataclasses of the spec. In JSON an object
carries its class name under "type" wherever the schema allows several classes (an input, a
request, a response body); nested values follow their field's declared type. Bytes are base64,
error codes are their Kafka names (for example "REBALANCE_IN_PROGRESS"), tuples are arrays.
docs/vectors.md documents every type and field.
"""

from __future__ import annotations

import base64
import dataclasses
import types
import typing
from collections.abc import Mapping
from enum import Enum
from functools import cache
from typing import Any

from groupspec.spec import events
from groupspec.spec.config import CoordinatorConfig
from groupspec.vocabulary import requests, responses
from groupspec.vocabulary.errors import ErrorCode

from .coordinator_runs import ConnectionClosed
from .vector_state import GroupProjection

# The classes an object's "type" may name: every dataclass of the spec's requests, responses
# and events, plus the one input the spec does not have (a connection closing), the coordinator
# configuration, and a version-2 step's projection of a group.
_MODULES = (requests, responses, events)
TYPES: Mapping[str, type] = types.MappingProxyType(
    {
        **{
            cls.__name__: cls
            for module in _MODULES
            for cls in vars(module).values()
            if isinstance(cls, type)
            and dataclasses.is_dataclass(cls)
            and cls.__module__ == module.__name__
        },
        ConnectionClosed.__name__: ConnectionClosed,
        CoordinatorConfig.__name__: CoordinatorConfig,
        GroupProjection.__name__: GroupProjection,
    }
)


class VectorDecodeError(ValueError):
    """A JSON value that is not a valid encoding; the message names the path inside it."""


def encode(value: Any) -> Any:
    """The JSON form of a spec value (dataclasses tagged with their "type")."""
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, tuple | list):
        return [encode(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        document: dict[str, Any] = {"type": type(value).__name__}
        for field in dataclasses.fields(value):
            document[field.name] = encode(getattr(value, field.name))
        return document
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"cannot encode a {type(value).__name__} in a vector")


def decode(document: Any, where: str = "$") -> Any:
    """The spec value a tagged JSON object encodes; `where` names it in errors."""
    if not isinstance(document, dict) or not isinstance(document.get("type"), str):
        raise VectorDecodeError(f'{where}: expected an object with a "type"')
    cls = TYPES.get(document["type"])
    if cls is None:
        raise VectorDecodeError(f"{where}: unknown type {document['type']!r}")
    return _decode_as(cls, document, where)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode_as(annotation: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        concrete = [option for option in options if option is not type(None)]
        if isinstance(value, dict) and "type" in value:
            return decode(value, where)
        if len(concrete) == 1:
            return _decode_as(concrete[0], value, where)
        for option in concrete:
            try:
                return _decode_as(option, value, where)
            except VectorDecodeError:
                continue
        raise VectorDecodeError(f"{where}: {value!r} matches none of {annotation}")
    if origin is tuple:
        if not isinstance(value, list):
            raise VectorDecodeError(f"{where}: expected an array")
        (item,) = typing.get_args(annotation)[:1]
        return tuple(_decode_as(item, entry, f"{where}[{i}]") for i, entry in enumerate(value))
    if annotation is Any:
        return value
    if isinstance(annotation, type):
        return _decode_plain(annotation, value, where)
    raise VectorDecodeError(f"{where}: cannot decode a value of type {annotation}")


def _decode_plain(cls: type, value: Any, where: str) -> Any:
    if issubclass(cls, ErrorCode):
        if not isinstance(value, str) or value not in ErrorCode.__members__:
            raise VectorDecodeError(f"{where}: unknown error code {value!r}")
        return ErrorCode[value]
    if cls is bytes:
        if not isinstance(value, str):
            raise VectorDecodeError(f"{where}: expected base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except ValueError as error:
            raise VectorDecodeError(f"{where}: bad base64 ({error})") from None
    if cls is bool:
        if not isinstance(value, bool):
            raise VectorDecodeError(f"{where}: expected true or false")
        return value
    if cls is int or cls is str:
        if not isinstance(value, cls) or isinstance(value, bool):
            raise VectorDecodeError(f"{where}: expected {'an integer' if cls is int else 'text'}")
        return value
    if dataclasses.is_dataclass(cls):
        if not isinstance(value, dict):
            raise VectorDecodeError(f"{where}: expected an object")
        if "type" in value and value["type"] != cls.__name__:
            raise VectorDecodeError(f"{where}: expected a {cls.__name__}, got {value['type']!r}")
        hints = _hints(cls)
        arguments = {}
        for field in dataclasses.fields(cls):
            if field.name in value:
                arguments[field.name] = _decode_as(
                    hints[field.name], value[field.name], f"{where}.{field.name}"
                )
        unknown = set(value) - {field.name for field in dataclasses.fields(cls)} - {"type"}
        if unknown:
            raise VectorDecodeError(f"{where}: unknown fields {sorted(unknown)}")
        try:
            return cls(**arguments)
        except (TypeError, ValueError) as error:
            raise VectorDecodeError(f"{where}: {error}") from None
    raise VectorDecodeError(f"{where}: cannot decode a {cls.__name__}")
