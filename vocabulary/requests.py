"""Requests a group coordinator receives, shaped like Kafka's messages, validated on construction.

Field names follow the Kafka message schemas in snake_case. A value a Kafka broker would answer
with an error code (a session timeout out of bounds, an unknown member id) is a valid request;
a value no wire frame can carry (a wrong type, an int32 out of range, a field the API version
does not have) raises `MalformedRequestError` when the request is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .errors import MalformedRequestError

# Field metadata, declared once on the field and read by the tools (never behaviour here):
# MEMBER_ID marks a field holding a member id the coordinator hands out (in a list field: each
# entry's), which every tool that renames ids must find (the model checker's canonical forms,
# the oracle's binding, the differential tests); UNORDERED marks a list whose order carries no
# meaning (a response lists the group's members in whatever order its collection keeps them),
# compared as a multiset. A list that follows the request's order is left unmarked.
MEMBER_ID: Mapping[str, bool] = MappingProxyType({"member_id": True})
UNORDERED: Mapping[str, bool] = MappingProxyType({"unordered": True})

INT16 = (-(2**15), 2**15 - 1)
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def _check_int(request: str, name: str, value: Any, bounds: tuple[int, int]) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedRequestError(request, name, f"expected an integer, got {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise MalformedRequestError(request, name, f"{value} is outside [{low}, {high}]")


def _check_str(request: str, name: str, value: Any, *, nullable: bool = False) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str):
        kind = "a string or None" if nullable else "a string"
        raise MalformedRequestError(request, name, f"expected {kind}, got {value!r}")


def _check_bytes(request: str, name: str, value: Any) -> None:
    if not isinstance(value, bytes):
        raise MalformedRequestError(request, name, f"expected bytes, got {type(value).__name__}")


def _check_version(request: str, version: Any, highest: int) -> None:
    _check_int(request, "api_version", version, (0, highest))


def _check_tuple(request: str, name: str, value: Any, item_type: type) -> None:
    if not isinstance(value, tuple):
        raise MalformedRequestError(request, name, f"expected a tuple, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, item_type):
            raise MalformedRequestError(
                request, f"{name}[{index}]", f"expected {item_type.__name__}, got {item!r}"
            )


@dataclass(frozen=True)
class RequestRef:
    """Where a response goes: the client connection and the request's correlation id."""

    connection: str
    correlation_id: int

    def __str__(self) -> str:
        return f"{self.connection}#{self.correlation_id}"


GROUP_KEY_TYPE = 0


@dataclass(frozen=True)
class FindCoordinatorRequest:
    """FindCoordinator for a group key (key type 0)."""

    key: str
    key_type: int = GROUP_KEY_TYPE
    api_version: int = 3

    def __post_init__(self) -> None:
        _check_str("FindCoordinator", "key", self.key)
        _check_version("FindCoordinator", self.api_version, 6)
        if self.key_type != GROUP_KEY_TYPE:
            raise MalformedRequestError(
                "FindCoordinator",
                "key_type",
                f"only GROUP (0) keys are served, got {self.key_type!r}",
            )


@dataclass(frozen=True)
class JoinGroupProtocol:
    """One protocol a member offers: its name and opaque metadata (the subscription)."""

    name: str
    metadata: bytes = b""

    def __post_init__(self) -> None:
        _check_str("JoinGroup", "protocols.name", self.name)
        _check_bytes("JoinGroup", "protocols.metadata", self.metadata)


@dataclass(frozen=True)
class JoinGroupRequest:
    """JoinGroup v0–v9. `rebalance_timeout_ms` is -1 on v0, which has no such field."""

    group_id: str
    member_id: str = field(metadata=MEMBER_ID)
    protocol_type: str
    protocols: tuple[JoinGroupProtocol, ...]
    session_timeout_ms: int
    rebalance_timeout_ms: int = -1
    group_instance_id: str | None = None
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    reason: str | None = None
    api_version: int = 9

    def __post_init__(self) -> None:
        name = "JoinGroup"
        _check_version(name, self.api_version, 9)
        _check_str(name, "group_id", self.group_id)
        _check_str(name, "member_id", self.member_id)
        _check_str(name, "protocol_type", self.protocol_type)
        _check_str(name, "group_instance_id", self.group_instance_id, nullable=True)
        _check_str(name, "client_id", self.client_id)
        _check_str(name, "client_host", self.client_host)
        _check_str(name, "reason", self.reason, nullable=True)
        _check_int(name, "session_timeout_ms", self.session_timeout_ms, INT32)
        _check_int(name, "rebalance_timeout_ms", self.rebalance_timeout_ms, INT32)
        _check_tuple(name, "protocols", self.protocols, JoinGroupProtocol)
        names = [protocol.name for protocol in self.protocols]
        if len(set(names)) != len(names):
            raise MalformedRequestError(name, "protocols", f"duplicate protocol names {names}")
        if self.api_version == 0 and self.rebalance_timeout_ms != -1:
            raise MalformedRequestError(
                name, "rebalance_timeout_ms", "JoinGroup v0 has no such field"
            )
        if self.api_version >= 1 and self.rebalance_timeout_ms < 0:
            raise MalformedRequestError(
                name,
                "rebalance_timeout_ms",
                f"a timeout cannot be negative: {self.rebalance_timeout_ms}",
            )
        if self.api_version < 5 and self.group_instance_id is not None:
            raise MalformedRequestError(name, "group_instance_id", "needs JoinGroup v5 or later")

    @property
    def effective_rebalance_timeout_ms(self) -> int:
        """The rebalance timeout in force: v0 uses the session timeout."""
        return self.session_timeout_ms if self.api_version == 0 else self.rebalance_timeout_ms

    @property
    def requires_known_member_id(self) -> bool:
        """v4+ dynamic members must first obtain a member id (MEMBER_ID_REQUIRED)."""
        return self.api_version >= 4

    @property
    def supports_skip_assignment(self) -> bool:
        """v9+ responses may tell a static leader to skip computing an assignment."""
        return self.api_version >= 9


@dataclass(frozen=True)
class SyncGroupAssignment:
    """The leader's assignment for one member."""

    member_id: str = field(metadata=MEMBER_ID)
    assignment: bytes

    def __post_init__(self) -> None:
        _check_str("SyncGroup", "assignments.member_id", self.member_id)
        _check_bytes("SyncGroup", "assignments.assignment", self.assignment)


@dataclass(frozen=True)
class SyncGroupRequest:
    """SyncGroup v0–v5; only the leader sends assignments."""

    group_id: str
    generation_id: int
    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[SyncGroupAssignment, ...] = ()
    api_version: int = 5

    def __post_init__(self) -> None:
        name = "SyncGroup"
        _check_version(name, self.api_version, 5)
        _check_str(name, "group_id", self.group_id)
        _check_int(name, "generation_id", self.generation_id, INT32)
        _check_str(name, "member_id", self.member_id)
        _check_str(name, "group_instance_id", self.group_instance_id, nullable=True)
        _check_str(name, "protocol_type", self.protocol_type, nullable=True)
        _check_str(name, "protocol_name", self.protocol_name, nullable=True)
        _check_tuple(name, "assignments", self.assignments, SyncGroupAssignment)
        ids = [a.member_id for a in self.assignments]
        if len(set(ids)) != len(ids):
            raise MalformedRequestError(name, "assignments", f"duplicate member ids {ids}")
        if self.api_version < 3 and self.group_instance_id is not None:
            raise MalformedRequestError(name, "group_instance_id", "needs SyncGroup v3 or later")


@dataclass(frozen=True)
class HeartbeatRequest:
    """Heartbeat v0–v4."""

    group_id: str
    generation_id: int
    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None = None
    api_version: int = 4

    def __post_init__(self) -> None:
        name = "Heartbeat"
        _check_version(name, self.api_version, 4)
        _check_str(name, "group_id", self.group_id)
        _check_int(name, "generation_id", self.generation_id, INT32)
        _check_str(name, "member_id", self.member_id)
        _check_str(name, "group_instance_id", self.group_instance_id, nullable=True)
        if self.api_version < 3 and self.group_instance_id is not None:
            raise MalformedRequestError(name, "group_instance_id", "needs Heartbeat v3 or later")


@dataclass(frozen=True)
class MemberIdentity:
    """One member a LeaveGroup removes: by member id, or by instance id with member id ""."""

    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        _check_str("LeaveGroup", "members.member_id", self.member_id)
        _check_str("LeaveGroup", "members.group_instance_id", self.group_instance_id, nullable=True)
        _check_str("LeaveGroup", "members.reason", self.reason, nullable=True)


@dataclass(frozen=True)
class LeaveGroupRequest:
    """LeaveGroup v0–v5; v0–v2 carry exactly one member id (normalised to one identity)."""

    group_id: str
    members: tuple[MemberIdentity, ...]
    api_version: int = 5

    def __post_init__(self) -> None:
        name = "LeaveGroup"
        _check_version(name, self.api_version, 5)
        _check_str(name, "group_id", self.group_id)
        _check_tuple(name, "members", self.members, MemberIdentity)
        if self.api_version < 3 and (
            len(self.members) != 1 or self.members[0].group_instance_id is not None
        ):
            raise MalformedRequestError(
                name,
                "members",
                "LeaveGroup v0–v2 carries exactly one member id and no instance id",
            )


@dataclass(frozen=True)
class OffsetCommitPartition:
    """One partition's offset in an OffsetCommit."""

    topic: str
    partition: int
    committed_offset: int
    committed_leader_epoch: int = -1
    committed_metadata: str | None = ""

    def __post_init__(self) -> None:
        name = "OffsetCommit"
        _check_str(name, "topics.name", self.topic)
        _check_int(name, "partitions.partition_index", self.partition, INT32)
        _check_int(name, "partitions.committed_offset", self.committed_offset, INT64)
        _check_int(name, "partitions.committed_leader_epoch", self.committed_leader_epoch, INT32)
        _check_str(name, "partitions.committed_metadata", self.committed_metadata, nullable=True)


@dataclass(frozen=True)
class OffsetCommitRequest:
    """OffsetCommit v0–v9. Generation -1 and member "" mean: not using group management."""

    group_id: str
    partitions: tuple[OffsetCommitPartition, ...]
    generation_id: int = -1
    member_id: str = field(default="", metadata=MEMBER_ID)
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    api_version: int = 9

    def __post_init__(self) -> None:
        name = "OffsetCommit"
        _check_version(name, self.api_version, 9)
        _check_str(name, "group_id", self.group_id)
        _check_int(name, "generation_id", self.generation_id, INT32)
        _check_str(name, "member_id", self.member_id)
        _check_str(name, "group_instance_id", self.group_instance_id, nullable=True)
        _check_int(name, "retention_time_ms", self.retention_time_ms, INT64)
        _check_tuple(name, "partitions", self.partitions, OffsetCommitPartition)
        keys = [(p.topic, p.partition) for p in self.partitions]
        if len(set(keys)) != len(keys):
            raise MalformedRequestError(name, "partitions", f"duplicate partitions {keys}")
        if self.retention_time_ms < -1:
            raise MalformedRequestError(
                name,
                "retention_time_ms",
                f"a retention time cannot be negative: {self.retention_time_ms}",
            )
        if self.retention_time_ms != -1 and not 2 <= self.api_version <= 4:
            raise MalformedRequestError(
                name, "retention_time_ms", "only OffsetCommit v2–v4 carry it"
            )
        if self.api_version < 7 and self.group_instance_id is not None:
            raise MalformedRequestError(name, "group_instance_id", "needs OffsetCommit v7 or later")


@dataclass(frozen=True, order=True)
class TopicPartition:
    """One partition of one topic."""

    topic: str
    partition: int

    def __post_init__(self) -> None:
        _check_str("TopicPartition", "topic", self.topic)
        _check_int("TopicPartition", "partition", self.partition, INT32)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class OffsetFetchRequest:
    """OffsetFetch for one group; `partitions=None` fetches every committed offset."""

    group_id: str
    partitions: tuple[TopicPartition, ...] | None
    require_stable: bool = False
    api_version: int = 9
    # v9+ (KIP-848): the fetching member of a consumer-protocol group; None and -1 for others.
    member_id: str | None = None
    member_epoch: int = -1

    def __post_init__(self) -> None:
        name = "OffsetFetch"
        _check_version(name, self.api_version, 9)
        _check_str(name, "group_id", self.group_id)
        _check_str(name, "member_id", self.member_id, nullable=True)
        _check_int(name, "member_epoch", self.member_epoch, INT32)
        if not isinstance(self.require_stable, bool):
            raise MalformedRequestError(
                name, "require_stable", f"expected a bool, got {self.require_stable!r}"
            )
        if self.partitions is not None:
            _check_tuple(name, "partitions", self.partitions, TopicPartition)


@dataclass(frozen=True)
class DescribeGroupsRequest:
    """DescribeGroups v0–v6 for several groups (v6 answers a group it does not hold with
    GROUP_ID_NOT_FOUND)."""

    group_ids: tuple[str, ...]
    api_version: int = 5

    def __post_init__(self) -> None:
        _check_version("DescribeGroups", self.api_version, 6)
        _check_tuple("DescribeGroups", "groups", self.group_ids, str)


@dataclass(frozen=True)
class ListGroupsRequest:
    """ListGroups with optional, case-insensitive state and type filters (empty = all)."""

    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()
    api_version: int = 5

    def __post_init__(self) -> None:
        _check_version("ListGroups", self.api_version, 5)
        _check_tuple("ListGroups", "states_filter", self.states_filter, str)
        _check_tuple("ListGroups", "types_filter", self.types_filter, str)


@dataclass(frozen=True)
class DeleteGroupsRequest:
    """DeleteGroups for several groups."""

    group_ids: tuple[str, ...]
    api_version: int = 2

    def __post_init__(self) -> None:
        _check_version("DeleteGroups", self.api_version, 2)
        _check_tuple("DeleteGroups", "groups_names", self.group_ids, str)


Request = (
    FindCoordinatorRequest
    | JoinGroupRequest
    | SyncGroupRequest
    | HeartbeatRequest
    | LeaveGroupRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
    | DescribeGroupsRequest
    | ListGroupsRequest
    | DeleteGroupsRequest
)

REQUEST_TYPES: tuple[type, ...] = (
    FindCoordinatorRequest,
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    DeleteGroupsRequest,
)


@dataclass(frozen=True)
class Received:
    """A request arriving at the coordinator from a client connection."""

    ref: RequestRef
    request: Request = field()
