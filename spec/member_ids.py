"""Which fields of the group APIs carry member ids, read from the vocabulary's own declaration.

Member ids are the coordinator's names for members. Tools that rename them (the model
checker's canonical forms, the oracle's binding of an implementation's ids to the spec's, the
differential tests) must find every one. The vocabulary marks each such field once, with the
`MEMBER_ID` field metadata (and lists whose order means nothing with `UNORDERED`); this module
reads those marks, once per message class, so a new request or response type needs nothing here.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from groupspec.vocabulary.requests import Request
from groupspec.vocabulary.responses import ResponseBody

T = TypeVar("T")


@dataclass(frozen=True)
class FieldRole:
    """One field of a vocabulary message, as its metadata declares it."""

    name: str
    # Holds a member id (in a tuple: each item is one).
    member_id: bool
    # A list whose order carries no meaning.
    unordered: bool
    # The message class of a list field's entries (None: not a list of messages).
    entry: type | None


@cache
def field_roles(cls: type) -> tuple[FieldRole, ...]:
    """The fields of the vocabulary dataclass `cls`, in declaration order, with their roles."""
    hints = typing.get_type_hints(cls)
    return tuple(
        FieldRole(
            f.name,
            bool(f.metadata.get("member_id")),
            bool(f.metadata.get("unordered")),
            _entry_class(hints[f.name]),
        )
        for f in dataclasses.fields(cls)
    )


def _entry_class(annotation: Any) -> type | None:
    """X for `tuple[X, ...]` (or `tuple[X, ...] | None`) when X is a dataclass, else None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) != 1:
            return None
        annotation = options[0]
    if typing.get_origin(annotation) is not tuple:
        return None
    item = typing.get_args(annotation)[0]
    return item if isinstance(item, type) and dataclasses.is_dataclass(item) else None


@dataclass(frozen=True)
class _IdFields:
    """Where a message class keeps member ids: its own fields, and list fields whose entries do."""

    single: tuple[str, ...]
    nested: tuple[tuple[str, _IdFields], ...]


@cache
def _id_fields(cls: type) -> _IdFields | None:
    """The member-id fields of `cls` at any depth; None if it has none."""
    roles = field_roles(cls)
    single = tuple(role.name for role in roles if role.member_id)
    nested = []
    for role in roles:
        inner = _id_fields(role.entry) if role.entry is not None else None
        if inner is not None:
            nested.append((role.name, inner))
    if not single and not nested:
        return None
    return _IdFields(single, tuple(nested))


def _ids(message: Any) -> list[str]:
    cls: type = type(message)
    where = _id_fields(cls)
    return _collect(message, where) if where is not None else []


def _collect(message: Any, where: _IdFields) -> list[str]:
    ids = [getattr(message, name) for name in where.single]
    for name, inner in where.nested:
        for entry in getattr(message, name) or ():
            ids += _collect(entry, inner)
    return ids


def request_member_ids(request: Request) -> list[str]:
    """Every member id a request names: its own fields first, then its lists' entries."""
    return _ids(request)


def response_member_ids(body: ResponseBody) -> list[str]:
    """Every member id a response names (DescribeGroups: every group's members)."""
    return _ids(body)


def rename_request_member_ids(request: T, rename: Callable[[str], str]) -> T:
    """`request` with every member id passed through `rename` (other fields unchanged)."""
    cls: type = type(request)
    where = _id_fields(cls)
    return request if where is None else _renamed(request, where, rename)


def _renamed(message: Any, where: _IdFields, rename: Callable[[str], str]) -> Any:
    changes: dict[str, Any] = {name: rename(getattr(message, name)) for name in where.single}
    for name, inner in where.nested:
        entries = getattr(message, name)
        if entries is not None:
            changes[name] = tuple(_renamed(entry, inner, rename) for entry in entries)
    return dataclasses.replace(message, **changes)
