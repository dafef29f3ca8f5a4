"""Responses the coordinator sends, shaped like Kafka's messages (fields that matter to groups)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ErrorCode
from .requests import MEMBER_ID, UNORDERED, RequestRef

UNKNOWN_MEMBER_ID = ""
NO_GENERATION = -1


@dataclass(frozen=True)
class FindCoordinatorResponse:
    """Which broker coordinates the group."""

    error_code: ErrorCode
    key: str
    node_id: int = -1


@dataclass(frozen=True)
class JoinGroupResponseMember:
    """A member as the leader sees it in its JoinGroup response."""

    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinGroupResponse:
    """The (possibly deferred) answer to a JoinGroup."""

    error_code: ErrorCode
    member_id: str = field(default=UNKNOWN_MEMBER_ID, metadata=MEMBER_ID)
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = field(default="", metadata=MEMBER_ID)
    skip_assignment: bool = False
    members: tuple[JoinGroupResponseMember, ...] = field(default=(), metadata=UNORDERED)


@dataclass(frozen=True)
class SyncGroupResponse:
    """The (possibly deferred) answer to a SyncGroup."""

    error_code: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class HeartbeatResponse:
    """The answer to a Heartbeat."""

    error_code: ErrorCode


@dataclass(frozen=True)
class LeaveGroupMemberResponse:
    """The outcome for one member of a batched LeaveGroup."""

    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None
    error_code: ErrorCode


@dataclass(frozen=True)
class LeaveGroupResponse:
    """The answer to a LeaveGroup: a top-level error and one entry per member."""

    error_code: ErrorCode
    members: tuple[LeaveGroupMemberResponse, ...] = ()


@dataclass(frozen=True)
class OffsetCommitPartitionResponse:
    """The outcome of committing one partition's offset."""

    topic: str
    partition: int
    error_code: ErrorCode


@dataclass(frozen=True)
class OffsetCommitResponse:
    """The answer to an OffsetCommit: one entry per partition."""

    partitions: tuple[OffsetCommitPartitionResponse, ...]


@dataclass(frozen=True)
class OffsetFetchPartitionResponse:
    """A committed offset as OffsetFetch reports it (-1 when there is none)."""

    topic: str
    partition: int
    committed_offset: int
    committed_leader_epoch: int
    metadata: str | None
    error_code: ErrorCode


@dataclass(frozen=True)
class OffsetFetchResponse:
    """The answer to an OffsetFetch."""

    error_code: ErrorCode
    partitions: tuple[OffsetFetchPartitionResponse, ...] = field(default=(), metadata=UNORDERED)


@dataclass(frozen=True)
class DescribedMember:
    """A member as DescribeGroups shows it."""

    member_id: str = field(metadata=MEMBER_ID)
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


@dataclass(frozen=True)
class DescribedGroup:
    """One group as DescribeGroups shows it."""

    error_code: ErrorCode
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedMember, ...] = field(default=(), metadata=UNORDERED)


@dataclass(frozen=True)
class DescribeGroupsResponse:
    """The answer to a DescribeGroups."""

    groups: tuple[DescribedGroup, ...]


@dataclass(frozen=True)
class ListedGroup:
    """One group as ListGroups shows it."""

    group_id: str
    protocol_type: str
    group_state: str
    group_type: str = "classic"


@dataclass(frozen=True)
class ListGroupsResponse:
    """The answer to a ListGroups."""

    error_code: ErrorCode
    groups: tuple[ListedGroup, ...] = field(default=(), metadata=UNORDERED)


@dataclass(frozen=True)
class DeleteGroupsResult:
    """The outcome of deleting one group."""

    group_id: str
    error_code: ErrorCode


@dataclass(frozen=True)
class DeleteGroupsResponse:
    """The answer to a DeleteGroups."""

    results: tuple[DeleteGroupsResult, ...]


ResponseBody = (
    FindCoordinatorResponse
    | JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | DescribeGroupsResponse
    | ListGroupsResponse
    | DeleteGroupsResponse
)


@dataclass(frozen=True)
class Response:
    """A response addressed to the request it answers."""

    ref: RequestRef
    body: ResponseBody
