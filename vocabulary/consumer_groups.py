"""KIP-848's two group APIs, ConsumerGroupHeartbeat (key 68) and ConsumerGroupDescribe (key 69),
and the group states of a consumer-protocol group.

Field names follow Kafka's message schemas (`clients/src/main/resources/common/message/
ConsumerGroupHeartbeatRequest.json` and its siblings, Kafka 4.3.0) in snake_case. As in
`requests.py`, a value a broker answers with an error code (an empty member id on v1, a join
without a rebalance timeout) is a valid request; only what no wire frame can carry raises
`MalformedRequestError`.

These types live in their own module rather than in `requests.REQUEST_TYPES` and
`responses.ResponseBody`: every type there must have the eight places of the request-type recipe
(docs/extending.md), and the first KIP-848 slice builds the specification only
(`groupspec.spec.kip848`), not the wire entry, the optimized coordinator or the oracle. They
join those unions when the server and the oracle serve them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .errors import ErrorCode, MalformedRequestError
from .requests import INT32, MEMBER_ID, UNORDERED, _check_int, _check_str

# The member epochs with a meaning of their own (ConsumerGroupHeartbeatRequest.json).
JOIN_GROUP_MEMBER_EPOCH = 0
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

HIGHEST_HEARTBEAT_VERSION = 1
HIGHEST_DESCRIBE_VERSION = 1


def _check_strings(request: str, name: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, tuple):
        raise MalformedRequestError(request, name, f"expected a tuple or None, got {value!r}")
    for index, item in enumerate(value):
        _check_str(request, f"{name}[{index}]", item)


class ConsumerGroupState(Enum):
    """A consumer-protocol group's state (`ConsumerGroup.ConsumerGroupState`); the value is the
    name ConsumerGroupDescribe and ListGroups report."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class ConsumerGroupTopicPartitions:
    """The partitions of one topic, by topic id, as both heartbeat messages carry them."""

    topic_id: str
    partitions: tuple[int, ...]

    def __post_init__(self) -> None:
        name = "ConsumerGroupHeartbeat"
        _check_str(name, "topic_partitions.topic_id", self.topic_id)
        if not isinstance(self.partitions, tuple):
            raise MalformedRequestError(
                name, "topic_partitions.partitions", f"expected a tuple, got {self.partitions!r}"
            )
        for index, partition in enumerate(self.partitions):
            _check_int(name, f"topic_partitions.partitions[{index}]", partition, INT32)


@dataclass(frozen=True)
class ConsumerGroupHeartbeatRequest:
    """ConsumerGroupHeartbeat v0–v1. A nullable field left None means "unchanged since the last
    heartbeat"; `rebalance_timeout_ms` -1 means the same. v1 adds `subscribed_topic_regex` and
    requires a member id the client generated (KIP-1082); on v0 a join sends member id "" and
    the coordinator generates one."""

    group_id: str
    member_id: str = field(metadata=MEMBER_ID)
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[ConsumerGroupTopicPartitions, ...] | None = None
    api_version: int = HIGHEST_HEARTBEAT_VERSION

    def __post_init__(self) -> None:
        name = "ConsumerGroupHeartbeat"
        _check_int(name, "api_version", self.api_version, (0, HIGHEST_HEARTBEAT_VERSION))
        _check_str(name, "group_id", self.group_id)
        _check_str(name, "member_id", self.member_id)
        _check_int(name, "member_epoch", self.member_epoch, INT32)
        _check_str(name, "instance_id", self.instance_id, nullable=True)
        _check_str(name, "rack_id", self.rack_id, nullable=True)
        _check_int(name, "rebalance_timeout_ms", self.rebalance_timeout_ms, INT32)
        _check_strings(name, "subscribed_topic_names", self.subscribed_topic_names)
        _check_str(name, "subscribed_topic_regex", self.subscribed_topic_regex, nullable=True)
        _check_str(name, "server_assignor", self.server_assignor, nullable=True)
        if self.topic_partitions is not None and (
            not isinstance(self.topic_partitions, tuple)
            or not all(
                isinstance(item, ConsumerGroupTopicPartitions) for item in self.topic_partitions
            )
        ):
            raise MalformedRequestError(
                name,
                "topic_partitions",
                f"expected a tuple of ConsumerGroupTopicPartitions, got {self.topic_partitions!r}",
            )
        if self.api_version < 1 and self.subscribed_topic_regex is not None:
            raise MalformedRequestError(
                name, "subscribed_topic_regex", "needs ConsumerGroupHeartbeat v1 or later"
            )


@dataclass(frozen=True)
class ConsumerGroupHeartbeatAssignment:
    """The partitions a heartbeat response hands the member (its assigned partitions only)."""

    topic_partitions: tuple[ConsumerGroupTopicPartitions, ...] = field(
        default=(), metadata=UNORDERED
    )


@dataclass(frozen=True)
class ConsumerGroupHeartbeatResponse:
    """The answer to a ConsumerGroupHeartbeat. `assignment` is None when the response carries no
    assignment (the member's assigned partitions did not change and the request was not full)."""

    error_code: ErrorCode
    member_id: str | None = field(default=None, metadata=MEMBER_ID)
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: ConsumerGroupHeartbeatAssignment | None = None


@dataclass(frozen=True)
class ConsumerGroupDescribeRequest:
    """ConsumerGroupDescribe v0–v1 for several groups."""

    group_ids: tuple[str, ...]
    include_authorized_operations: bool = False
    api_version: int = HIGHEST_DESCRIBE_VERSION

    def __post_init__(self) -> None:
        name = "ConsumerGroupDescribe"
        _check_int(name, "api_version", self.api_version, (0, HIGHEST_DESCRIBE_VERSION))
        _check_strings(name, "group_ids", self.group_ids)
        if self.group_ids is None:
            raise MalformedRequestError(name, "group_ids", "expected a tuple, got None")
        if not isinstance(self.include_authorized_operations, bool):
            raise MalformedRequestError(
                name,
                "include_authorized_operations",
                f"expected a bool, got {self.include_authorized_operations!r}",
            )


# ConsumerGroupDescribe v1's MemberType (KAFKA-17750): which protocol a member speaks.
MEMBER_TYPE_UNKNOWN = -1
MEMBER_TYPE_CLASSIC = 0
MEMBER_TYPE_CONSUMER = 1


@dataclass(frozen=True)
class DescribedConsumerGroupMember:
    """One member as ConsumerGroupDescribe shows it: its current and its target assignment."""

    member_id: str = field(metadata=MEMBER_ID)
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[ConsumerGroupTopicPartitions, ...] = field(metadata=UNORDERED)
    target_assignment: tuple[ConsumerGroupTopicPartitions, ...] = field(metadata=UNORDERED)
    member_type: int = MEMBER_TYPE_CONSUMER


@dataclass(frozen=True)
class DescribedConsumerGroup:
    """One group as ConsumerGroupDescribe shows it: both epochs, the assignor and the members."""

    error_code: ErrorCode
    group_id: str
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedConsumerGroupMember, ...] = field(default=(), metadata=UNORDERED)


@dataclass(frozen=True)
class ConsumerGroupDescribeResponse:
    """The answer to a ConsumerGroupDescribe, one entry per requested group (Kafka gathers them
    per offsets partition, so their order carries no meaning)."""

    groups: tuple[DescribedConsumerGroup, ...] = field(metadata=UNORDERED)
