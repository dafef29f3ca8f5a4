"""What the oracle compares in a response: the parts that carry group semantics.

Both sides are Kafka-shaped bodies (a trace's, and the specification's through
`group_apis.response_body`), read by the one function `comparable`, so what is compared is
written once. Member ids are wrapped in `MemberId` (the sides spell them differently; the
binder matches them) and member lists become `Bag`s (order carries no meaning).

An API without a form of its own here gets the default (`default_comparable`): every field its
response has at that version but the throttle time and error message, member ids and unordered
lists as the vocabulary marks them. An API needs a form of its own only to leave more out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from groupspec.spec.member_ids import field_roles
from groupspec.wire.group_apis import (
    BY_KEY,
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SYNC_GROUP,
    Body,
    BodyError,
)


@dataclass(frozen=True)
class MemberId:
    """A member id inside a comparable response: the two sides may spell it differently."""

    value: str


@dataclass(frozen=True)
class Bag:
    """A list whose order carries no meaning (members of a group): compared as a multiset."""

    items: tuple[Any, ...]


def _bag(items: Any) -> Bag:
    # Sorted by the parts that are not ids, so equal multisets usually print alike; the binder
    # still matches them as multisets, since ids may be spelled differently on the two sides.
    return Bag(tuple(sorted(items, key=_member_order)))


def comparable(api_key: int, version: int, body: Body) -> Any:
    """The parts of a Kafka-shaped response that carry group semantics, as a hashable value.

    Lists whose order means nothing become sorted tuples; member ids are wrapped in `MemberId`
    so the comparison can bind them; bytes stay base64 text. Left out, on purpose: throttle
    times, error messages, broker addresses and node ids, client hosts (a recorder sees the
    proxy's, the broker its own), and fields of error responses beyond the error code (except
    the member id MEMBER_ID_REQUIRED hands out).
    """
    reader = _COMPARABLE.get(api_key)
    try:
        if reader is None:
            return default_comparable(api_key, version, body)
        return reader(version, body)
    except (TypeError, KeyError, AttributeError) as error:
        raise BodyError(f"unreadable response body: {error!r}") from None


def _cmp_find(version: int, body: Body) -> Any:
    if version >= 4:
        return tuple(sorted((c["key"], c["error_code"]) for c in body["coordinators"]))
    return (body["error_code"],)


MEMBER_ID_REQUIRED = 79


def _cmp_join(version: int, body: Body) -> Any:
    error = body["error_code"]
    if error == MEMBER_ID_REQUIRED:
        return (error, MemberId(body["member_id"]))
    if error != 0:
        return (error,)
    members = _bag(
        (
            MemberId(m["member_id"]),
            m.get("group_instance_id") if version >= 5 else None,
            m.get("metadata") or "",
        )
        for m in body.get("members", [])
    )
    return (
        error,
        body["generation_id"],
        body.get("protocol_type") if version >= 7 else None,
        body.get("protocol_name") or "",
        MemberId(body["leader"]),
        bool(body.get("skip_assignment", False)) if version >= 9 else False,
        MemberId(body["member_id"]),
        members,
    )


def _member_order(item: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(repr(part) for part in item if not isinstance(part, MemberId))


def _cmp_sync(version: int, body: Body) -> Any:
    error = body["error_code"]
    if error != 0:
        return (error,)
    names = (body.get("protocol_type"), body.get("protocol_name")) if version >= 5 else (None, None)
    return (error, *names, body.get("assignment") or "")


def _cmp_heartbeat(version: int, body: Body) -> Any:
    return (body["error_code"],)


def _cmp_leave(version: int, body: Body) -> Any:
    members = Bag(())
    if version >= 3:
        members = _bag(
            (MemberId(m["member_id"]), m.get("group_instance_id"), m["error_code"])
            for m in body.get("members", [])
        )
    return (body["error_code"], members)


def _cmp_commit(version: int, body: Body) -> Any:
    return tuple(
        sorted(
            (t["name"], p["partition_index"], p["error_code"])
            for t in body["topics"]
            for p in t["partitions"]
        )
    )


def _cmp_fetch_group(version: int, group: Body) -> Any:
    partitions = tuple(
        sorted(
            (
                t["name"],
                p["partition_index"],
                p["committed_offset"],
                p.get("committed_leader_epoch", -1) if version >= 5 else -1,
                p.get("metadata"),
                p["error_code"],
            )
            for t in group.get("topics") or []
            for p in t["partitions"]
        )
    )
    return (group.get("error_code", 0) if version >= 2 else 0, partitions)


def _cmp_fetch(version: int, body: Body) -> Any:
    if version >= 8:
        return tuple(sorted((g["group_id"], _cmp_fetch_group(version, g)) for g in body["groups"]))
    return _cmp_fetch_group(version, body)


def _cmp_describe(version: int, body: Body) -> Any:
    groups = []
    for g in body["groups"]:
        members = _bag(
            (
                MemberId(m["member_id"]),
                m.get("group_instance_id") if version >= 4 else None,
                m.get("client_id"),
                m.get("member_metadata") or "",
                m.get("member_assignment") or "",
            )
            for m in g.get("members", [])
        )
        groups.append(
            (
                g["group_id"],
                g["error_code"],
                g["group_state"],
                g.get("protocol_type") or "",
                g.get("protocol_data") or "",
                members,
            )
        )
    return tuple(sorted(groups, key=lambda g: g[0]))


def _cmp_list(version: int, body: Body) -> Any:
    groups = tuple(
        sorted(
            (
                g["group_id"],
                g.get("protocol_type") or "",
                g.get("group_state") if version >= 4 else None,
            )
            for g in body["groups"]
        )
    )
    return (body["error_code"], groups)


def _cmp_delete(version: int, body: Body) -> Any:
    return tuple(sorted((r["group_id"], r["error_code"]) for r in body["results"]))


_COMPARABLE: dict[int, Callable[[int, Body], Any]] = {
    FIND_COORDINATOR: _cmp_find,
    JOIN_GROUP: _cmp_join,
    SYNC_GROUP: _cmp_sync,
    HEARTBEAT: _cmp_heartbeat,
    LEAVE_GROUP: _cmp_leave,
    OFFSET_COMMIT: _cmp_commit,
    OFFSET_FETCH: _cmp_fetch,
    DESCRIBE_GROUPS: _cmp_describe,
    LIST_GROUPS: _cmp_list,
    DELETE_GROUPS: _cmp_delete,
}


# -- the default form ------------------------------------------------------------------------

# Never group semantics: left out of the default form.
_LEFT_OUT = frozenset({"throttle_time_ms", "error_message"})

# Per field of a response at a version: (name, holds member ids, unordered list, the plan of
# its struct entries or None).
_Plan = tuple[tuple[str, bool, bool, Any], ...]


def default_comparable(api_key: int, version: int, body: Body) -> Any:
    """The default form of a group API's Kafka-shaped response: each field its schema has at
    `version` (a missing one reads as null) but `_LEFT_OUT`, in schema order; member ids (by the
    vocabulary's MEMBER_ID marks) wrapped in `MemberId`, lists it marks UNORDERED as `Bag`s."""
    return _frozen(body, _default_plan(api_key, version))


@cache
def _default_plan(api_key: int, version: int) -> _Plan:
    api = BY_KEY[api_key]
    member_ids, unordered = _marked_names(api.response_type)
    return _schema_plan(api.response_class._struct._fields, version, member_ids, unordered)


def _marked_names(response_type: type) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the fields marked MEMBER_ID and UNORDERED anywhere in a response type."""
    member_ids: set[str] = set()
    unordered: set[str] = set()
    pending, seen = [response_type], set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for role in field_roles(cls):
            if role.member_id:
                member_ids.add(role.name)
            if role.unordered:
                unordered.add(role.name)
            if role.entry is not None:
                pending.append(role.entry)
    return frozenset(member_ids), frozenset(unordered)


def _schema_plan(
    fields: Any, version: int, member_ids: frozenset[str], unordered: frozenset[str]
) -> _Plan:
    return tuple(
        (
            field.name,
            field.name in member_ids,
            field.name in unordered,
            _schema_plan(field._fields, version, member_ids, unordered)
            if field.is_struct() or field.is_struct_array()
            else None,
        )
        for field in fields
        if field.for_version_q(version) and field.name not in _LEFT_OUT
    )


def _frozen(body: Body, plan: _Plan) -> tuple[Any, ...]:
    return tuple(
        (name, _frozen_value(body.get(name), member_id, unordered, inner))
        for name, member_id, unordered, inner in plan
    )


def _frozen_value(value: Any, member_id: bool, unordered: bool, inner: Any) -> Any:
    if isinstance(value, list):
        items = [_frozen_value(item, member_id, False, inner) for item in value]
        return Bag(tuple(sorted(items, key=repr))) if unordered else tuple(items)
    if inner is not None and isinstance(value, dict):
        return _frozen(value, inner)
    if member_id and isinstance(value, str):
        return MemberId(value)
    return value
