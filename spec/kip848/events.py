"""The inputs of the consumer-protocol coordinator: a request arriving, and its two timers
(docs/protocol.md §12.10).

As in the classic spec (`spec/events.py`), timers are state and the driver decides when one
fires; firing one that is not armed raises `EventNotEnabledError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)
from groupspec.vocabulary.requests import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    RequestRef,
)

# What a consumer-protocol coordinator answers: its own RPCs, and the group RPCs both kinds of
# group share (spec/kip848/offsets.py, spec/kip848/groups.py).
Kip848Request = (
    ConsumerGroupHeartbeatRequest
    | ConsumerGroupDescribeRequest
    | OffsetCommitRequest
    | OffsetFetchRequest
    | ListGroupsRequest
    | DeleteGroupsRequest
)


@dataclass(frozen=True)
class RequestArrived:
    """A KIP-848 request arriving from a client connection."""

    ref: RequestRef
    request: Kip848Request


@dataclass(frozen=True)
class SessionTimeoutExpired:
    """A member's session timeout fired (no heartbeat within group.consumer.session.timeout.ms)."""

    group_id: str
    member_id: str


@dataclass(frozen=True)
class RebalanceTimeoutExpired:
    """A member's rebalance timeout fired (armed while it revokes partitions)."""

    group_id: str
    member_id: str


@dataclass(frozen=True)
class RegexResolutionCompleted:
    """The group's regular-expression resolution, started by a heartbeat, finished (Kafka runs
    it on the coordinator's executor and hands its result back to the group's partition)."""

    group_id: str


@dataclass(frozen=True)
class CoordinatorUnloaded:
    """The group's `__consumer_offsets` partition moved to another broker: memory is dropped."""


@dataclass(frozen=True)
class CoordinatorLoadStarted:
    """This broker leads the partition again and starts replaying its log."""


@dataclass(frozen=True)
class CoordinatorLoaded:
    """Replaying the log finished: the groups are back and their timers armed anew."""


ConsumerGroupInput = (
    RequestArrived
    | SessionTimeoutExpired
    | RebalanceTimeoutExpired
    | RegexResolutionCompleted
    | CoordinatorUnloaded
    | CoordinatorLoadStarted
    | CoordinatorLoaded
)
