"""Between Kafka-shaped message bodies (a trace's) and the specification's requests and responses.

A trace carries each message as Kafka's schema names it, at the version the client spoke
(docs/trace-format.md). The oracle turns an observed request into the specification's request,
and turns each response the specification allows back into Kafka's shape at the same version,
so that `comparison.comparable` reads both sides alike.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from groupspec.vocabulary import requests as rq
from groupspec.vocabulary import responses as rs
from groupspec.vocabulary.errors import InputError
from groupspec.wire import group_fields
from groupspec.wire.trace_format import API_KEYS

Body = dict[str, Any]

FIND_COORDINATOR = API_KEYS["FindCoordinator"]
JOIN_GROUP = API_KEYS["JoinGroup"]
SYNC_GROUP = API_KEYS["SyncGroup"]
HEARTBEAT = API_KEYS["Heartbeat"]
LEAVE_GROUP = API_KEYS["LeaveGroup"]
OFFSET_COMMIT = API_KEYS["OffsetCommit"]
OFFSET_FETCH = API_KEYS["OffsetFetch"]
DESCRIBE_GROUPS = API_KEYS["DescribeGroups"]
LIST_GROUPS = API_KEYS["ListGroups"]
DELETE_GROUPS = API_KEYS["DeleteGroups"]


class UnmodelledRequest(Exception):
    """A request the specification does not model (a transaction-coordinator lookup, an
    OffsetFetch by topic id, ...): the oracle skips it and counts it."""


class BodyError(Exception):
    """A body that lacks a field its API and version must carry, or holds the wrong type."""


def _get(body: Body, name: str, default: Any = None, *, required: bool = False) -> Any:
    if name in body:
        return body[name]
    if required:
        raise BodyError(f'missing field "{name}"')
    return default


def _bytes(value: Any, name: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise BodyError(f'"{name}" must be a base64 string, got {type(value).__name__}')
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as error:
        raise BodyError(f'"{name}" is not base64: {error}') from None


def b64(data: bytes) -> str:
    """`data` as a trace spells bytes."""
    return base64.b64encode(data).decode("ascii")


# -- observed requests -> the specification's ----------------------------------------------


def spec_requests(
    api_key: int, version: int, body: Body, client_id: str | None, connection: str
) -> tuple[rq.Request, ...]:
    """The specification's request(s) for a trace request (a batched lookup is several).

    Raises `UnmodelledRequest` for what the specification does not model and `BodyError` for a
    body that cannot be read; a value the specification rejects is a `BodyError` too.
    """
    reader = _READERS.get(api_key)
    if reader is None:
        raise UnmodelledRequest(f"API key {api_key}")
    try:
        return reader(version, body, client_id or "", connection)
    except InputError as error:
        raise BodyError(str(error)) from None
    except (TypeError, AttributeError, KeyError) as error:
        raise BodyError(f"unreadable body: {error}") from None


def _client_host(connection: str) -> str:
    return "/" + connection.rpartition(":")[0] if ":" in connection else "/" + connection


def _find_coordinator(
    version: int, body: Body, client_id: str, conn: str
) -> tuple[rq.Request, ...]:
    key_type = _get(body, "key_type", 0) if version >= 1 else 0
    if key_type != rq.GROUP_KEY_TYPE:
        raise UnmodelledRequest(f"FindCoordinator for key type {key_type} (not a group)")
    keys = (
        _get(body, "coordinator_keys", required=True)
        if version >= 4
        else [_get(body, "key", required=True)]
    )
    return tuple(rq.FindCoordinatorRequest(key, api_version=version) for key in keys)


def _join_group(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    protocols = tuple(
        rq.JoinGroupProtocol(p["name"], _bytes(p.get("metadata"), "metadata"))
        for p in _get(body, "protocols", required=True)
    )
    return (
        rq.JoinGroupRequest(
            group_id=_get(body, "group_id", required=True),
            member_id=_get(body, "member_id", required=True),
            protocol_type=_get(body, "protocol_type", required=True),
            protocols=protocols,
            session_timeout_ms=_get(body, "session_timeout_ms", required=True),
            rebalance_timeout_ms=_get(body, "rebalance_timeout_ms", -1) if version >= 1 else -1,
            group_instance_id=_get(body, "group_instance_id") if version >= 5 else None,
            client_id=client_id,
            client_host=_client_host(conn),
            reason=_get(body, "reason") if version >= 8 else None,
            api_version=version,
        ),
    )


def _sync_group(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    return (
        rq.SyncGroupRequest(
            group_id=_get(body, "group_id", required=True),
            generation_id=_get(body, "generation_id", required=True),
            member_id=_get(body, "member_id", required=True),
            group_instance_id=_get(body, "group_instance_id") if version >= 3 else None,
            protocol_type=_get(body, "protocol_type") if version >= 5 else None,
            protocol_name=_get(body, "protocol_name") if version >= 5 else None,
            assignments=tuple(
                rq.SyncGroupAssignment(a["member_id"], _bytes(a.get("assignment"), "assignment"))
                for a in _get(body, "assignments", [])
            ),
            api_version=version,
        ),
    )


def _heartbeat(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    return (
        rq.HeartbeatRequest(
            _get(body, "group_id", required=True),
            _get(body, "generation_id", required=True),
            _get(body, "member_id", required=True),
            _get(body, "group_instance_id") if version >= 3 else None,
            api_version=version,
        ),
    )


def _leave_group(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    if version < 3:
        members: tuple[rq.MemberIdentity, ...] = (
            rq.MemberIdentity(_get(body, "member_id", required=True)),
        )
    else:
        members = tuple(
            rq.MemberIdentity(
                m["member_id"],
                m.get("group_instance_id"),
                m.get("reason") if version >= 5 else None,
            )
            for m in _get(body, "members", required=True)
        )
    return (
        rq.LeaveGroupRequest(_get(body, "group_id", required=True), members, api_version=version),
    )


def _offset_commit(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    if version > 9:
        raise UnmodelledRequest(f"OffsetCommit v{version} (topic ids)")
    generation = _get(body, "generation_id_or_member_epoch", _get(body, "generation_id", -1))
    partitions = tuple(
        rq.OffsetCommitPartition(
            topic["name"],
            p["partition_index"],
            p["committed_offset"],
            p.get("committed_leader_epoch", -1) if version >= 6 else -1,
            p.get("committed_metadata"),
        )
        for topic in _get(body, "topics", required=True)
        for p in topic["partitions"]
    )
    return (
        rq.OffsetCommitRequest(
            group_id=_get(body, "group_id", required=True),
            partitions=partitions,
            generation_id=generation if version >= 1 else -1,
            member_id=_get(body, "member_id", "") if version >= 1 else "",
            group_instance_id=_get(body, "group_instance_id") if version >= 7 else None,
            retention_time_ms=_get(body, "retention_time_ms", -1) if 2 <= version <= 4 else -1,
            api_version=version,
        ),
    )


def _topic_partitions(topics: Any) -> tuple[rq.TopicPartition, ...] | None:
    if topics is None:
        return None
    return tuple(rq.TopicPartition(t["name"], i) for t in topics for i in t["partition_indexes"])


def _offset_fetch(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    if version > 9:
        raise UnmodelledRequest(f"OffsetFetch v{version} (topic ids)")
    stable = bool(_get(body, "require_stable", False)) if version >= 7 else False
    if version < 8:
        return (
            rq.OffsetFetchRequest(
                _get(body, "group_id", required=True),
                _topic_partitions(_get(body, "topics", required=True)),
                require_stable=stable,
                api_version=version,
            ),
        )
    return tuple(
        rq.OffsetFetchRequest(
            g["group_id"],
            _topic_partitions(g.get("topics")),
            require_stable=stable,
            api_version=version,
        )
        for g in _get(body, "groups", required=True)
    )


def _describe_groups(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    return (
        rq.DescribeGroupsRequest(tuple(_get(body, "groups", required=True)), api_version=version),
    )


def _list_groups(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    states = tuple(_get(body, "states_filter", ()) or ()) if version >= 4 else ()
    types = tuple(_get(body, "types_filter", ()) or ()) if version >= 5 else ()
    return (rq.ListGroupsRequest(states, types, api_version=version),)


def _delete_groups(version: int, body: Body, client_id: str, conn: str) -> tuple[rq.Request, ...]:
    return (
        rq.DeleteGroupsRequest(
            tuple(_get(body, "groups_names", required=True)), api_version=version
        ),
    )


_READERS: dict[int, Callable[[int, Body, str, str], tuple[rq.Request, ...]]] = {
    FIND_COORDINATOR: _find_coordinator,
    JOIN_GROUP: _join_group,
    SYNC_GROUP: _sync_group,
    HEARTBEAT: _heartbeat,
    LEAVE_GROUP: _leave_group,
    OFFSET_COMMIT: _offset_commit,
    OFFSET_FETCH: _offset_fetch,
    DESCRIBE_GROUPS: _describe_groups,
    LIST_GROUPS: _list_groups,
    DELETE_GROUPS: _delete_groups,
}


# -- the specification's requests -> Kafka's shape (for traces written in process) ---------


def request_body(request: rq.Request) -> tuple[int, Body]:
    """The API key and Kafka-shaped body of a specification request, at its version."""
    v = request.api_version
    if isinstance(request, rq.FindCoordinatorRequest):
        if v >= 4:
            return FIND_COORDINATOR, {"key_type": 0, "coordinator_keys": [request.key]}
        return FIND_COORDINATOR, {"key": request.key, "key_type": 0}
    if isinstance(request, rq.JoinGroupRequest):
        return JOIN_GROUP, {
            "group_id": request.group_id,
            "session_timeout_ms": request.session_timeout_ms,
            "rebalance_timeout_ms": request.rebalance_timeout_ms,
            "member_id": request.member_id,
            "group_instance_id": request.group_instance_id,
            "protocol_type": request.protocol_type,
            "protocols": [{"name": p.name, "metadata": b64(p.metadata)} for p in request.protocols],
            "reason": request.reason,
        }
    if isinstance(request, rq.SyncGroupRequest):
        return SYNC_GROUP, {
            "group_id": request.group_id,
            "generation_id": request.generation_id,
            "member_id": request.member_id,
            "group_instance_id": request.group_instance_id,
            "protocol_type": request.protocol_type,
            "protocol_name": request.protocol_name,
            "assignments": [
                {"member_id": a.member_id, "assignment": b64(a.assignment)}
                for a in request.assignments
            ],
        }
    if isinstance(request, rq.HeartbeatRequest):
        return HEARTBEAT, {
            "group_id": request.group_id,
            "generation_id": request.generation_id,
            "member_id": request.member_id,
            "group_instance_id": request.group_instance_id,
        }
    if isinstance(request, rq.LeaveGroupRequest):
        if v < 3:
            return LEAVE_GROUP, {
                "group_id": request.group_id,
                "member_id": request.members[0].member_id,
            }
        return LEAVE_GROUP, {
            "group_id": request.group_id,
            "members": [
                {
                    "member_id": m.member_id,
                    "group_instance_id": m.group_instance_id,
                    "reason": m.reason,
                }
                for m in request.members
            ],
        }
    if isinstance(request, rq.OffsetCommitRequest):
        topics: dict[str, list[Body]] = {}
        for p in request.partitions:
            topics.setdefault(p.topic, []).append(
                {
                    "partition_index": p.partition,
                    "committed_offset": p.committed_offset,
                    "committed_leader_epoch": p.committed_leader_epoch,
                    "committed_metadata": p.committed_metadata,
                }
            )
        return OFFSET_COMMIT, {
            "group_id": request.group_id,
            "generation_id_or_member_epoch": request.generation_id,
            "member_id": request.member_id,
            "group_instance_id": request.group_instance_id,
            "retention_time_ms": request.retention_time_ms,
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
        }
    if isinstance(request, rq.OffsetFetchRequest):
        wanted = None
        if request.partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in request.partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            wanted = [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
        if v >= 8:
            return OFFSET_FETCH, {
                "groups": [{"group_id": request.group_id, "topics": wanted}],
                "require_stable": request.require_stable,
            }
        return OFFSET_FETCH, {
            "group_id": request.group_id,
            "topics": wanted,
            "require_stable": request.require_stable,
        }
    if isinstance(request, rq.DescribeGroupsRequest):
        return DESCRIBE_GROUPS, {"groups": list(request.group_ids)}
    if isinstance(request, rq.ListGroupsRequest):
        return LIST_GROUPS, {
            "states_filter": list(request.states_filter),
            "types_filter": list(request.types_filter),
        }
    assert isinstance(request, rq.DeleteGroupsRequest)
    return DELETE_GROUPS, {"groups_names": list(request.group_ids)}


# -- the specification's responses -> Kafka's shape ----------------------------------------


def response_body(
    bodies: tuple[rs.ResponseBody, ...], version: int, requests: tuple[rq.Request, ...] = ()
) -> Body:
    """The Kafka-shaped response at `version` to `requests` (the specification's form of one
    trace request), which the specification answered with `bodies` (one, or one per key or
    group of a batched request); bytes in base64."""
    first = bodies[0]
    if isinstance(first, rs.FindCoordinatorResponse):
        found = [b for b in bodies if isinstance(b, rs.FindCoordinatorResponse)]
        if version >= 4:
            return {
                "coordinators": [
                    {"key": b.key, "node_id": b.node_id, "error_code": int(b.error_code)}
                    for b in found
                ]
            }
        return {"error_code": int(first.error_code), "node_id": first.node_id}
    if isinstance(first, rs.JoinGroupResponse):
        return group_fields.join_fields(first, version, b64)
    if isinstance(first, rs.SyncGroupResponse):
        return group_fields.sync_fields(first, b64)
    if isinstance(first, rs.HeartbeatResponse):
        return {"throttle_time_ms": 0, "error_code": int(first.error_code)}
    if isinstance(first, rs.LeaveGroupResponse):
        return group_fields.leave_fields(first)
    if isinstance(first, rs.OffsetCommitResponse):
        return group_fields.commit_fields(first)
    if isinstance(first, rs.OffsetFetchResponse):
        groups = [
            group_fields.fetch_fields(b, version)
            for b in bodies
            if isinstance(b, rs.OffsetFetchResponse)
        ]
        if version < 8:
            return groups[0]
        # v8+ batches groups: each answer names its group, in the order they were asked.
        names = [getattr(r, "group_id", "") for r in requests]
        return {"groups": [{"group_id": n, **g} for n, g in zip(names, groups, strict=False)]}
    if isinstance(first, rs.DescribeGroupsResponse):
        return group_fields.describe_fields(first, b64)
    if isinstance(first, rs.ListGroupsResponse):
        return group_fields.list_fields(first)
    assert isinstance(first, rs.DeleteGroupsResponse)
    return group_fields.delete_fields(first)
