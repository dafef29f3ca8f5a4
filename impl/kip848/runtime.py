"""What every handler of the consumer-protocol coordinator reads and writes: the settings, the
groups, the time of the input being served, the timer heap, the member-id source and the
callback responses go to."""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Callable
from itertools import count
from typing import TYPE_CHECKING

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.vocabulary.requests import TopicPartition
from groupspec.vocabulary.responses import (
    DeleteGroupsResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    ListGroupsResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    SyncGroupResponse,
)

from ..state import Ref
from .config import ConsumerGroupConfig
from .state import Group, Partitions

if TYPE_CHECKING:
    from .offsets import CommittedOffset

ResponseBody = (
    ConsumerGroupHeartbeatResponse
    | ConsumerGroupDescribeResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | ListGroupsResponse
    | DeleteGroupsResponse
    | JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
)
# Given a group id and the target the assignor computed, the target to install: a harness's way
# to steer the impl onto another outcome the specification allows (the conformance vectors'
# hints); None keeps the assignor's.
TargetChoice = Callable[[str, dict[str, Partitions]], dict[str, Partitions]]
Responder = Callable[[Ref, ResponseBody], None]

# Timer kinds in heap entries.
SESSION = 0
REBALANCE = 1
CLASSIC_JOIN = 2
CLASSIC_SYNC = 3
# A group's regular-expression resolution, queued due at once (its member id is "").
REGEX = 4
# (deadline_ms, sequence, kind, group id, member id); the sequence orders equal deadlines.
TimerEntry = tuple[int, int, int, str, str]


def random_classic_member_id(prefix: str) -> str:
    """A classic member id as Kafka generates one: `prefix` (the instance id of a static
    member, else the client id), a dash, a random UUID."""
    return f"{prefix}-{uuid.uuid4()}"


class Runtime:
    """The coordinator's mutable context."""

    __slots__ = (
        "_sequence",
        "client",
        "config",
        "groups",
        "heap",
        "new_classic_member_id",
        "new_member_id",
        "now",
        "offsets",
        "respond",
        "settle_target",
        "topics_version",
    )

    def __init__(
        self,
        config: ConsumerGroupConfig,
        respond: Responder,
        new_member_id: Callable[[], str],
        now: int,
        settle_target: TargetChoice | None = None,
    ) -> None:
        self.config = config
        self.respond = respond
        self.new_member_id = new_member_id
        self.settle_target = settle_target
        # The id a classic member joining without one gets, from its instance id (a static
        # member) or client id (Kafka's is that, a dash and a random UUID).
        self.new_classic_member_id: Callable[[str], str] = random_classic_member_id
        self.now = now
        self.groups: dict[str, Group] = {}
        self.heap: list[TimerEntry] = []
        # The client id and host of the request being served.
        self.client: tuple[str, str] = ("", "")
        # The committed offsets by group id (kept apart from the groups, as Kafka's
        # OffsetMetadataManager keeps them).
        self.offsets: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        # How many times the cluster gained topics: a group whose expressions were resolved
        # before the last time resolves them again (Kafka's lastMetadataImageWithNewTopics).
        self.topics_version = 0
        self._sequence = count()

    def arm_session(self, group: Group, member_id: str, deadline_ms: int) -> None:
        """(Re)arm the member's session timeout. A queued entry at or before the new deadline
        is kept (it re-queues itself when it surfaces early), so a heartbeat costs no heap push."""
        group.session_deadlines[member_id] = deadline_ms
        entry = group.session_entries.get(member_id)
        if entry is None or entry[0] > deadline_ms:
            group.session_entries[member_id] = self.push(deadline_ms, SESSION, group, member_id)

    def arm_rebalance(self, group: Group, member_id: str, epoch: int, deadline_ms: int) -> None:
        """Arm the member's rebalance timeout for `epoch`."""
        group.rebalance_deadlines[member_id] = (epoch, deadline_ms)
        entry = group.rebalance_entries.get(member_id)
        if entry is None or entry[0] > deadline_ms:
            group.rebalance_entries[member_id] = self.push(deadline_ms, REBALANCE, group, member_id)

    def arm_classic(self, group: Group, kind: int, member_id: str, deadline_ms: int) -> None:
        """Arm a classic member's join (CLASSIC_JOIN) or sync (CLASSIC_SYNC) timeout."""
        key = (kind, member_id)
        group.classic_deadlines[key] = deadline_ms
        entry = group.classic_entries.get(key)
        if entry is None or entry[0] > deadline_ms:
            group.classic_entries[key] = self.push(deadline_ms, kind, group, member_id)

    def push(self, deadline_ms: int, kind: int, group: Group, member_id: str) -> TimerEntry:
        """Queue a heap entry and return it."""
        entry = (deadline_ms, next(self._sequence), kind, group.group_id, member_id)
        heapq.heappush(self.heap, entry)
        return entry
