"""Every group API between Kafka's message fields and the vocabulary: one entry per API.

This is the one place that knows how a group API's Kafka messages map to the vocabulary's
requests and responses. An entry (`GroupApi`) names the API (key and name), kafka-python's
request and response classes, the versions `groupspec serve` advertises, the vocabulary types
it maps to, and three functions:

- `read`: a request's fields -> the vocabulary's request(s) (a batched lookup is several);
- `write_request`: a vocabulary request -> its fields (traces written in process);
- `write_response`: the vocabulary's answer(s) -> the response's fields at a version.

A reader reads Kafka's fields by their schema names in snake_case, from a trace's JSON object
(`bytes` as base64 text) or from the decoded kafka-python message itself (the wire server's:
attributes, `bytes` as bytes), through `_get`, `_need`, `_item` and `_bytes`, which read
either. Writers write nested dicts and lists, spelling bytes as their `raw` argument says.

From the entries follow the codec's message classes and served versions (`codec.MESSAGES`,
`codec.SUPPORTED_VERSIONS`), the APIs a trace carries (`trace_format.API_NAMES`), the wire
server's group handlers, and the oracle's reading of observed requests and writing of the
specification's answers.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafka.protocol.admin.groups import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

from groupspec.vocabulary import consumer_groups as cg
from groupspec.vocabulary import requests as rq
from groupspec.vocabulary import responses as rs
from groupspec.vocabulary.errors import InputError
from groupspec.wire.schemas.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

Body = dict[str, Any]
# What a reader reads: a trace's JSON object, or a decoded kafka-python message.
Fields = Any
# How a writer spells `bytes`: as they are (a frame), or base64 text (a trace).
Raw = Callable[[bytes], Any]
# A reader returns the vocabulary's requests: `rq.Request`s, or for KIP-848's APIs the requests
# of `vocabulary.consumer_groups` (outside the `rq.Request` union, see CONSUMER_GROUP_APIS).
Reader = Callable[[int, Fields, str, str], tuple[Any, ...]]
RequestWriter = Callable[[Any], Body]
ResponseWriter = Callable[[tuple[Any, ...], int, tuple[Any, ...], Raw], Body]
# KIP-848's requests and responses (`vocabulary.consumer_groups`).
ConsumerGroupRequest = cg.ConsumerGroupHeartbeatRequest | cg.ConsumerGroupDescribeRequest
ConsumerGroupResponse = cg.ConsumerGroupHeartbeatResponse | cg.ConsumerGroupDescribeResponse

OFFSET_COMMIT = 8
OFFSET_FETCH = 9
FIND_COORDINATOR = 10
JOIN_GROUP = 11
HEARTBEAT = 12
LEAVE_GROUP = 13
SYNC_GROUP = 14
DESCRIBE_GROUPS = 15
LIST_GROUPS = 16
DELETE_GROUPS = 42
CONSUMER_GROUP_HEARTBEAT = 68
CONSUMER_GROUP_DESCRIBE = 69


class UnmodelledRequest(Exception):
    """A request the vocabulary does not model (a transaction-coordinator lookup, an OffsetFetch
    by topic id, ...): the oracle skips it and counts it."""


class BodyError(Exception):
    """A body that lacks a field its API and version must carry, or holds the wrong type."""


@dataclass(frozen=True)
class GroupApi:
    """One group API: its Kafka messages, the versions served, and its vocabulary mapping."""

    key: int
    name: str
    # kafka-python's request and response classes.
    request_class: Any
    response_class: Any
    # The versions `groupspec serve` advertises (the oracle reads any version `read` can).
    versions: tuple[int, int]
    # The vocabulary's request types `read` returns, and the response type that answers them.
    request_types: tuple[type, ...]
    response_type: type
    read: Reader
    write_request: RequestWriter
    write_response: ResponseWriter


def as_is(data: bytes) -> bytes:
    """`data` as a frame spells bytes."""
    return data


def b64(data: bytes) -> str:
    """`data` as a trace spells bytes."""
    return base64.b64encode(data).decode("ascii")


def client_host_of(connection: str) -> str:
    """The client host Kafka records for a connection named `HOST:PORT` (with a leading /)."""
    return "/" + connection.rpartition(":")[0] if ":" in connection else "/" + connection


# -- reading -------------------------------------------------------------------------------


# A reader touches a body only through these, so that it reads a trace's JSON object and a
# decoded kafka-python message alike (whose fields are attributes, absent where the version
# lacks them).


def _get(body: Any, name: str, default: Any = None) -> Any:
    """A field, or `default` where the body lacks it."""
    if type(body) is dict:
        return body.get(name, default)
    return getattr(body, name, default)


def _need(body: Any, name: str) -> Any:
    """A field the API and version must carry."""
    try:
        return body[name] if type(body) is dict else getattr(body, name)
    except (KeyError, AttributeError):
        raise BodyError(f'missing field "{name}"') from None


def _item(entry: Any, name: str) -> Any:
    """A field of an array's entry (a KeyError or AttributeError where it lacks one)."""
    return entry[name] if type(entry) is dict else getattr(entry, name)


def _bytes(value: Any, name: str) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if not isinstance(value, str):
        raise BodyError(f'"{name}" must be a base64 string, got {type(value).__name__}')
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as error:
        raise BodyError(f'"{name}" is not base64: {error}') from None


def _read_find_coordinator(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    key_type = _get(body, "key_type", 0) if version >= 1 else 0
    if key_type != rq.GROUP_KEY_TYPE:
        raise UnmodelledRequest(f"FindCoordinator for key type {key_type} (not a group)")
    keys = _need(body, "coordinator_keys") if version >= 4 else [_need(body, "key")]
    return tuple(rq.FindCoordinatorRequest(key, api_version=version) for key in keys)


def _read_join_group(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    protocols = tuple(
        rq.JoinGroupProtocol(_item(p, "name"), _bytes(_get(p, "metadata"), "metadata"))
        for p in _need(body, "protocols")
    )
    return (
        rq.JoinGroupRequest(
            group_id=_need(body, "group_id"),
            member_id=_need(body, "member_id"),
            protocol_type=_need(body, "protocol_type"),
            protocols=protocols,
            session_timeout_ms=_need(body, "session_timeout_ms"),
            rebalance_timeout_ms=_get(body, "rebalance_timeout_ms", -1) if version >= 1 else -1,
            group_instance_id=_get(body, "group_instance_id") if version >= 5 else None,
            client_id=client_id,
            client_host=client_host,
            reason=_get(body, "reason") if version >= 8 else None,
            api_version=version,
        ),
    )


def _read_sync_group(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    return (
        rq.SyncGroupRequest(
            group_id=_need(body, "group_id"),
            generation_id=_need(body, "generation_id"),
            member_id=_need(body, "member_id"),
            group_instance_id=_get(body, "group_instance_id") if version >= 3 else None,
            protocol_type=_get(body, "protocol_type") if version >= 5 else None,
            protocol_name=_get(body, "protocol_name") if version >= 5 else None,
            assignments=tuple(
                rq.SyncGroupAssignment(
                    _item(a, "member_id"), _bytes(_get(a, "assignment"), "assignment")
                )
                for a in _get(body, "assignments", [])
            ),
            api_version=version,
        ),
    )


def _read_heartbeat(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    return (
        rq.HeartbeatRequest(
            _need(body, "group_id"),
            _need(body, "generation_id"),
            _need(body, "member_id"),
            _get(body, "group_instance_id") if version >= 3 else None,
            api_version=version,
        ),
    )


def _read_leave_group(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    if version < 3:
        members: tuple[rq.MemberIdentity, ...] = (rq.MemberIdentity(_need(body, "member_id")),)
    else:
        members = tuple(
            rq.MemberIdentity(
                _item(m, "member_id"),
                _get(m, "group_instance_id"),
                _get(m, "reason") if version >= 5 else None,
            )
            for m in _need(body, "members")
        )
    return (rq.LeaveGroupRequest(_need(body, "group_id"), members, api_version=version),)


def _read_offset_commit(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    if version > 9:
        raise UnmodelledRequest(f"OffsetCommit v{version} (topic ids)")
    generation = _get(body, "generation_id_or_member_epoch", _get(body, "generation_id", -1))
    partitions = tuple(
        rq.OffsetCommitPartition(
            _item(topic, "name"),
            _item(p, "partition_index"),
            _item(p, "committed_offset"),
            _get(p, "committed_leader_epoch", -1) if version >= 6 else -1,
            _get(p, "committed_metadata"),
        )
        for topic in _need(body, "topics")
        for p in _item(topic, "partitions")
    )
    return (
        rq.OffsetCommitRequest(
            group_id=_need(body, "group_id"),
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
    return tuple(
        rq.TopicPartition(_item(t, "name"), i)
        for t in topics
        for i in _item(t, "partition_indexes")
    )


def _read_offset_fetch(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    if version > 9:
        raise UnmodelledRequest(f"OffsetFetch v{version} (topic ids)")
    stable = bool(_get(body, "require_stable", False)) if version >= 7 else False
    if version < 8:
        return (
            rq.OffsetFetchRequest(
                _need(body, "group_id"),
                _topic_partitions(_need(body, "topics")),
                require_stable=stable,
                api_version=version,
            ),
        )
    return tuple(
        rq.OffsetFetchRequest(
            _item(g, "group_id"),
            _topic_partitions(_get(g, "topics")),
            require_stable=stable,
            api_version=version,
            # v9+ (KIP-848): the member fetching, judged by its epoch in a consumer group.
            member_id=_get(g, "member_id") if version >= 9 else None,
            member_epoch=_get(g, "member_epoch", -1) if version >= 9 else -1,
        )
        for g in _need(body, "groups")
    )


def _read_describe_groups(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    return (rq.DescribeGroupsRequest(tuple(_need(body, "groups")), api_version=version),)


def _read_list_groups(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    states = tuple(_get(body, "states_filter", ()) or ()) if version >= 4 else ()
    types = tuple(_get(body, "types_filter", ()) or ()) if version >= 5 else ()
    return (rq.ListGroupsRequest(states, types, api_version=version),)


def _read_delete_groups(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[rq.Request, ...]:
    return (rq.DeleteGroupsRequest(tuple(_need(body, "groups_names")), api_version=version),)


# -- writing requests (traces written in process) ------------------------------------------


def _write_find_coordinator(request: rq.FindCoordinatorRequest) -> Body:
    if request.api_version >= 4:
        return {"key_type": 0, "coordinator_keys": [request.key]}
    return {"key": request.key, "key_type": 0}


def _write_join_group(request: rq.JoinGroupRequest) -> Body:
    return {
        "group_id": request.group_id,
        "session_timeout_ms": request.session_timeout_ms,
        "rebalance_timeout_ms": request.rebalance_timeout_ms,
        "member_id": request.member_id,
        "group_instance_id": request.group_instance_id,
        "protocol_type": request.protocol_type,
        "protocols": [{"name": p.name, "metadata": b64(p.metadata)} for p in request.protocols],
        "reason": request.reason,
    }


def _write_sync_group(request: rq.SyncGroupRequest) -> Body:
    return {
        "group_id": request.group_id,
        "generation_id": request.generation_id,
        "member_id": request.member_id,
        "group_instance_id": request.group_instance_id,
        "protocol_type": request.protocol_type,
        "protocol_name": request.protocol_name,
        "assignments": [
            {"member_id": a.member_id, "assignment": b64(a.assignment)} for a in request.assignments
        ],
    }


def _write_heartbeat(request: rq.HeartbeatRequest) -> Body:
    return {
        "group_id": request.group_id,
        "generation_id": request.generation_id,
        "member_id": request.member_id,
        "group_instance_id": request.group_instance_id,
    }


def _write_leave_group(request: rq.LeaveGroupRequest) -> Body:
    if request.api_version < 3:
        return {"group_id": request.group_id, "member_id": request.members[0].member_id}
    return {
        "group_id": request.group_id,
        "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "reason": m.reason}
            for m in request.members
        ],
    }


def _write_offset_commit(request: rq.OffsetCommitRequest) -> Body:
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
    return {
        "group_id": request.group_id,
        "generation_id_or_member_epoch": request.generation_id,
        "member_id": request.member_id,
        "group_instance_id": request.group_instance_id,
        "retention_time_ms": request.retention_time_ms,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
    }


def _write_offset_fetch(request: rq.OffsetFetchRequest) -> Body:
    wanted = None
    if request.partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in request.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        wanted = [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
    if request.api_version >= 9:
        member = {"member_id": request.member_id, "member_epoch": request.member_epoch}
        return {
            "groups": [{"group_id": request.group_id, **member, "topics": wanted}],
            "require_stable": request.require_stable,
        }
    if request.api_version >= 8:
        return {
            "groups": [{"group_id": request.group_id, "topics": wanted}],
            "require_stable": request.require_stable,
        }
    return {
        "group_id": request.group_id,
        "topics": wanted,
        "require_stable": request.require_stable,
    }


def _write_describe_groups(request: rq.DescribeGroupsRequest) -> Body:
    return {"groups": list(request.group_ids)}


def _write_list_groups(request: rq.ListGroupsRequest) -> Body:
    return {
        "states_filter": list(request.states_filter),
        "types_filter": list(request.types_filter),
    }


def _write_delete_groups(request: rq.DeleteGroupsRequest) -> Body:
    return {"groups_names": list(request.group_ids)}


# -- writing responses ---------------------------------------------------------------------


def _find_coordinator_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    # What is compared of a FindCoordinator answer: the wire server adds its own address.
    found = [a for a in answers if isinstance(a, rs.FindCoordinatorResponse)]
    if version >= 4:
        return {
            "coordinators": [
                {"key": a.key, "node_id": a.node_id, "error_code": int(a.error_code)} for a in found
            ]
        }
    return {"error_code": int(found[0].error_code), "node_id": found[0].node_id}


def _join_group_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    response: rs.JoinGroupResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "generation_id": response.generation_id,
        "protocol_type": response.protocol_type,
        # Before v7 the protocol name is not nullable.
        "protocol_name": response.protocol_name if version >= 7 else response.protocol_name or "",
        "leader": response.leader,
        "skip_assignment": response.skip_assignment,
        "member_id": response.member_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "metadata": raw(m.metadata),
            }
            for m in response.members
        ],
    }


def _sync_group_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    response: rs.SyncGroupResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "protocol_type": response.protocol_type,
        "protocol_name": response.protocol_name,
        "assignment": raw(response.assignment),
    }


def _heartbeat_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    return {"throttle_time_ms": 0, "error_code": int(answers[0].error_code)}


def _leave_group_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    # v3+ lists the members; older versions drop the list.
    response: rs.LeaveGroupResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "error_code": int(m.error_code),
            }
            for m in response.members
        ],
    }


def _offset_commit_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    by_topic: dict[str, list[Body]] = {}
    for p in answers[0].partitions:
        by_topic.setdefault(p.topic, []).append(
            {"partition_index": p.partition, "error_code": int(p.error_code)}
        )
    return {"throttle_time_ms": 0, "topics": _topics(by_topic)}


def _offset_fetch_group(response: rs.OffsetFetchResponse, version: int) -> Body:
    """One group's answer in the v1–v7 shape (v8+ nests this in `groups`)."""
    error = int(response.error_code)
    by_topic: dict[str, list[Body]] = {}
    for p in response.partitions:
        by_topic.setdefault(p.topic, []).append(
            {
                "partition_index": p.partition,
                "committed_offset": p.committed_offset,
                "committed_leader_epoch": p.committed_leader_epoch,
                "metadata": p.metadata,
                # v0–v1 have no top-level error: Kafka puts it on every partition.
                "error_code": error if version < 2 and error else int(p.error_code),
            }
        )
    return {"throttle_time_ms": 0, "topics": _topics(by_topic), "error_code": error}


def _offset_fetch_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    groups = [
        _offset_fetch_group(a, version) for a in answers if isinstance(a, rs.OffsetFetchResponse)
    ]
    if version < 8:
        return groups[0]
    # v8+ batches groups: each answer names its group, in the order they were asked.
    names = [getattr(r, "group_id", "") for r in requests]
    return {
        "throttle_time_ms": 0,
        "groups": [
            {"group_id": n, "topics": g["topics"], "error_code": g["error_code"]}
            for n, g in zip(names, groups, strict=False)
        ],
    }


def _describe_groups_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    response: rs.DescribeGroupsResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "groups": [
            {
                "error_code": int(g.error_code),
                "group_id": g.group_id,
                "group_state": g.group_state,
                "protocol_type": g.protocol_type,
                "protocol_data": g.protocol_data,
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "member_metadata": raw(m.member_metadata),
                        "member_assignment": raw(m.member_assignment),
                    }
                    for m in g.members
                ],
            }
            for g in response.groups
        ],
    }


def _list_groups_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    response: rs.ListGroupsResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "groups": [
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type,
                "group_state": g.group_state,
                "group_type": g.group_type,
            }
            for g in response.groups
        ],
    }


def _delete_groups_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[rq.Request, ...], raw: Raw
) -> Body:
    return {
        "throttle_time_ms": 0,
        "results": [
            {"group_id": r.group_id, "error_code": int(r.error_code)} for r in answers[0].results
        ],
    }


def _topics(by_topic: dict[str, list[Body]]) -> list[Body]:
    return [{"name": name, "partitions": parts} for name, parts in by_topic.items()]


# -- KIP-848's group APIs --------------------------------------------------------------------


def _topic_partitions_of(entries: Any) -> tuple[cg.ConsumerGroupTopicPartitions, ...]:
    """The vocabulary's topic partitions of a heartbeat message's entries (topic ids as text:
    a trace has them as text, kafka-python decodes them to `uuid.UUID`)."""
    return tuple(
        cg.ConsumerGroupTopicPartitions(
            str(_item(entry, "topic_id")), tuple(_item(entry, "partitions"))
        )
        for entry in entries
    )


def _read_consumer_group_heartbeat(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[Any, ...]:
    names = _get(body, "subscribed_topic_names")
    owned = _get(body, "topic_partitions")
    return (
        cg.ConsumerGroupHeartbeatRequest(
            group_id=_need(body, "group_id"),
            member_id=_need(body, "member_id"),
            member_epoch=_need(body, "member_epoch"),
            instance_id=_get(body, "instance_id"),
            rack_id=_get(body, "rack_id"),
            rebalance_timeout_ms=_get(body, "rebalance_timeout_ms", -1),
            subscribed_topic_names=None if names is None else tuple(names),
            subscribed_topic_regex=_get(body, "subscribed_topic_regex") if version >= 1 else None,
            server_assignor=_get(body, "server_assignor"),
            topic_partitions=None if owned is None else _topic_partitions_of(owned),
            api_version=version,
        ),
    )


def _read_consumer_group_describe(
    version: int, body: Fields, client_id: str, client_host: str
) -> tuple[Any, ...]:
    return (
        cg.ConsumerGroupDescribeRequest(
            tuple(_need(body, "group_ids")),
            bool(_get(body, "include_authorized_operations", False)),
            api_version=version,
        ),
    )


def _topic_partitions_body(
    entries: tuple[cg.ConsumerGroupTopicPartitions, ...] | None,
) -> list[Body] | None:
    if entries is None:
        return None
    return [{"topic_id": e.topic_id, "partitions": list(e.partitions)} for e in entries]


def _write_consumer_group_heartbeat(request: cg.ConsumerGroupHeartbeatRequest) -> Body:
    names = request.subscribed_topic_names
    return {
        "group_id": request.group_id,
        "member_id": request.member_id,
        "member_epoch": request.member_epoch,
        "instance_id": request.instance_id,
        "rack_id": request.rack_id,
        "rebalance_timeout_ms": request.rebalance_timeout_ms,
        "subscribed_topic_names": None if names is None else list(names),
        "subscribed_topic_regex": request.subscribed_topic_regex,
        "server_assignor": request.server_assignor,
        "topic_partitions": _topic_partitions_body(request.topic_partitions),
    }


def _write_consumer_group_describe(request: cg.ConsumerGroupDescribeRequest) -> Body:
    return {
        "group_ids": list(request.group_ids),
        "include_authorized_operations": request.include_authorized_operations,
    }


def _consumer_group_heartbeat_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[Any, ...], raw: Raw
) -> Body:
    response: cg.ConsumerGroupHeartbeatResponse = answers[0]
    assignment = response.assignment
    return {
        "throttle_time_ms": 0,
        "error_code": int(response.error_code),
        "error_message": None,
        "member_id": response.member_id,
        "member_epoch": response.member_epoch,
        "heartbeat_interval_ms": response.heartbeat_interval_ms,
        "assignment": None
        if assignment is None
        else {"topic_partitions": _topic_partitions_body(assignment.topic_partitions)},
    }


# The topic name ConsumerGroupDescribe shows next to each topic id: the vocabulary keeps topics
# by id only (the name is the cluster's metadata image's), so the written answer leaves it empty
# and a comparison of described assignments compares ids (oracle/trace/kip848.py).
UNNAMED_TOPIC = ""


def _described_assignment(entries: tuple[cg.ConsumerGroupTopicPartitions, ...]) -> Body:
    return {
        "topic_partitions": [
            {"topic_id": e.topic_id, "topic_name": UNNAMED_TOPIC, "partitions": list(e.partitions)}
            for e in entries
        ]
    }


def _consumer_group_describe_fields(
    answers: tuple[Any, ...], version: int, requests: tuple[Any, ...], raw: Raw
) -> Body:
    response: cg.ConsumerGroupDescribeResponse = answers[0]
    return {
        "throttle_time_ms": 0,
        "groups": [
            {
                "error_code": int(g.error_code),
                "error_message": None,
                "group_id": g.group_id,
                "group_state": g.group_state,
                "group_epoch": g.group_epoch,
                "assignment_epoch": g.assignment_epoch,
                "assignor_name": g.assignor_name,
                "members": [
                    {
                        "member_id": m.member_id,
                        "instance_id": m.instance_id,
                        "rack_id": m.rack_id,
                        "member_epoch": m.member_epoch,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "subscribed_topic_names": list(m.subscribed_topic_names),
                        "subscribed_topic_regex": m.subscribed_topic_regex,
                        "assignment": _described_assignment(m.assignment),
                        "target_assignment": _described_assignment(m.target_assignment),
                        "member_type": m.member_type,
                    }
                    for m in g.members
                ],
                # Not requested (the specification answers without authorized operations).
                "authorized_operations": -(2**31),
            }
            for g in response.groups
        ],
    }


# -- the registry --------------------------------------------------------------------------

GROUP_APIS: tuple[GroupApi, ...] = (
    GroupApi(
        OFFSET_COMMIT,
        "OffsetCommit",
        OffsetCommitRequest,
        OffsetCommitResponse,
        # v9 carries a consumer-protocol member's epoch (KIP-848).
        (2, 9),
        (rq.OffsetCommitRequest,),
        rs.OffsetCommitResponse,
        _read_offset_commit,
        _write_offset_commit,
        _offset_commit_fields,
    ),
    GroupApi(
        OFFSET_FETCH,
        "OffsetFetch",
        OffsetFetchRequest,
        OffsetFetchResponse,
        # v8 batches groups (each answered on its own); v9 names the member and its epoch.
        (1, 9),
        (rq.OffsetFetchRequest,),
        rs.OffsetFetchResponse,
        _read_offset_fetch,
        _write_offset_fetch,
        _offset_fetch_fields,
    ),
    GroupApi(
        FIND_COORDINATOR,
        "FindCoordinator",
        FindCoordinatorRequest,
        FindCoordinatorResponse,
        (0, 4),
        (rq.FindCoordinatorRequest,),
        rs.FindCoordinatorResponse,
        _read_find_coordinator,
        _write_find_coordinator,
        _find_coordinator_fields,
    ),
    GroupApi(
        JOIN_GROUP,
        "JoinGroup",
        JoinGroupRequest,
        JoinGroupResponse,
        (0, 9),
        (rq.JoinGroupRequest,),
        rs.JoinGroupResponse,
        _read_join_group,
        _write_join_group,
        _join_group_fields,
    ),
    GroupApi(
        HEARTBEAT,
        "Heartbeat",
        HeartbeatRequest,
        HeartbeatResponse,
        (0, 4),
        (rq.HeartbeatRequest,),
        rs.HeartbeatResponse,
        _read_heartbeat,
        _write_heartbeat,
        _heartbeat_fields,
    ),
    GroupApi(
        LEAVE_GROUP,
        "LeaveGroup",
        LeaveGroupRequest,
        LeaveGroupResponse,
        (0, 5),
        (rq.LeaveGroupRequest,),
        rs.LeaveGroupResponse,
        _read_leave_group,
        _write_leave_group,
        _leave_group_fields,
    ),
    GroupApi(
        SYNC_GROUP,
        "SyncGroup",
        SyncGroupRequest,
        SyncGroupResponse,
        (0, 5),
        (rq.SyncGroupRequest,),
        rs.SyncGroupResponse,
        _read_sync_group,
        _write_sync_group,
        _sync_group_fields,
    ),
    GroupApi(
        DESCRIBE_GROUPS,
        "DescribeGroups",
        DescribeGroupsRequest,
        DescribeGroupsResponse,
        (0, 5),
        (rq.DescribeGroupsRequest,),
        rs.DescribeGroupsResponse,
        _read_describe_groups,
        _write_describe_groups,
        _describe_groups_fields,
    ),
    GroupApi(
        LIST_GROUPS,
        "ListGroups",
        ListGroupsRequest,
        ListGroupsResponse,
        # v5 filters by group type and reports it (classic or consumer).
        (0, 5),
        (rq.ListGroupsRequest,),
        rs.ListGroupsResponse,
        _read_list_groups,
        _write_list_groups,
        _list_groups_fields,
    ),
    GroupApi(
        DELETE_GROUPS,
        "DeleteGroups",
        DeleteGroupsRequest,
        DeleteGroupsResponse,
        (0, 2),
        (rq.DeleteGroupsRequest,),
        rs.DeleteGroupsResponse,
        _read_delete_groups,
        _write_delete_groups,
        _delete_groups_fields,
    ),
)

# KIP-848's group APIs, kept apart from GROUP_APIS as docs/extending.md says: their types live in
# `vocabulary.consumer_groups`, outside the `Request` and `ResponseBody` unions, until the classic
# coordinator's seven other places serve them. The codec decodes them and a trace carries them
# (`codec.MESSAGES`, `trace_format.API_NAMES`), so `groupspec record` records them and the
# consumer-protocol oracle (oracle/trace/kip848.py) reads them; `groupspec serve` advertises and
# serves them (`codec.SUPPORTED_VERSIONS`, impl/server/consumer_groups.py) and the classic oracle
# skips them as unmodelled (`BY_KEY` and `read_requests` know GROUP_APIS only).
CONSUMER_GROUP_APIS: tuple[GroupApi, ...] = (
    GroupApi(
        CONSUMER_GROUP_HEARTBEAT,
        "ConsumerGroupHeartbeat",
        ConsumerGroupHeartbeatRequest,
        ConsumerGroupHeartbeatResponse,
        (0, cg.HIGHEST_HEARTBEAT_VERSION),
        (cg.ConsumerGroupHeartbeatRequest,),
        cg.ConsumerGroupHeartbeatResponse,
        _read_consumer_group_heartbeat,
        _write_consumer_group_heartbeat,
        _consumer_group_heartbeat_fields,
    ),
    GroupApi(
        CONSUMER_GROUP_DESCRIBE,
        "ConsumerGroupDescribe",
        ConsumerGroupDescribeRequest,
        ConsumerGroupDescribeResponse,
        (0, cg.HIGHEST_DESCRIBE_VERSION),
        (cg.ConsumerGroupDescribeRequest,),
        cg.ConsumerGroupDescribeResponse,
        _read_consumer_group_describe,
        _write_consumer_group_describe,
        _consumer_group_describe_fields,
    ),
)

# Every API a trace carries and the codec decodes: the classic group APIs and KIP-848's.
TRACED_APIS: tuple[GroupApi, ...] = GROUP_APIS + CONSUMER_GROUP_APIS

BY_KEY: dict[int, GroupApi] = {api.key: api for api in GROUP_APIS}
CONSUMER_BY_KEY: dict[int, GroupApi] = {api.key: api for api in CONSUMER_GROUP_APIS}
_BY_REQUEST: dict[type, GroupApi] = {t: api for api in TRACED_APIS for t in api.request_types}
_BY_RESPONSE: dict[type, GroupApi] = {api.response_type: api for api in TRACED_APIS}


def api_of_request(request_type: type) -> GroupApi:
    """The group API whose `read` returns `request_type`."""
    return _BY_REQUEST[request_type]


def api_of_response(response_type: type) -> GroupApi:
    """The group API that answers with `response_type`."""
    return _BY_RESPONSE[response_type]


def read_requests(
    api_key: int, version: int, body: Fields, client_id: str | None, client_host: str
) -> tuple[rq.Request, ...]:
    """The vocabulary's request(s) for a group-API request's fields, a trace's JSON object or
    a decoded kafka-python message (a batched lookup is several); `client_host` as Kafka
    records it (`/HOST`).

    Raises `UnmodelledRequest` for what the vocabulary does not model and `BodyError` for a
    body that cannot be read; a value the vocabulary rejects is a `BodyError` too.
    """
    api = BY_KEY.get(api_key)
    if api is None:
        raise UnmodelledRequest(f"API key {api_key}")
    try:
        return api.read(version, body, client_id or "", client_host)
    except InputError as error:
        raise BodyError(str(error)) from None
    except (TypeError, AttributeError, KeyError) as error:
        raise BodyError(f"unreadable body: {error}") from None


def read_consumer_requests(
    api_key: int, version: int, body: Fields, client_id: str | None, client_host: str
) -> tuple[Any, ...]:
    """The vocabulary's request for a KIP-848 group-API request's fields (a trace's JSON object
    or a decoded kafka-python message), as `read_requests` does for the classic APIs.

    Raises `UnmodelledRequest` for an API key that is not KIP-848's and `BodyError` for a body
    that cannot be read or a value the vocabulary rejects.
    """
    api = CONSUMER_BY_KEY.get(api_key)
    if api is None:
        raise UnmodelledRequest(f"API key {api_key}")
    try:
        return api.read(version, body, client_id or "", client_host)
    except InputError as error:
        raise BodyError(str(error)) from None
    except (TypeError, AttributeError, KeyError, ValueError) as error:
        raise BodyError(f"unreadable body: {error}") from None


def request_body(request: rq.Request | ConsumerGroupRequest) -> tuple[int, Body]:
    """The API key and Kafka-shaped body (bytes in base64) of a vocabulary request, at its
    version."""
    api = api_of_request(type(request))
    return api.key, api.write_request(request)


def response_body(
    answers: tuple[rs.ResponseBody | ConsumerGroupResponse, ...],
    version: int,
    requests: tuple[rq.Request | ConsumerGroupRequest, ...] = (),
    raw: Raw = b64,
) -> Body:
    """The Kafka-shaped response at `version` to `requests` (the vocabulary's form of one
    Kafka request), answered with `answers` (one, or one per key or group of a batched
    request); bytes spelled by `raw` (base64, as a trace has them, unless told otherwise)."""
    return api_of_response(type(answers[0])).write_response(answers, version, requests, raw)
