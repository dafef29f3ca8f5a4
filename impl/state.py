"""Groups and members as mutable, indexed objects: one dict lookup to reach any member.

A group keeps its members in a dict by member id, a second dict from group.instance.id to
member id (static membership), pending members with their deadlines, the pending-sync set, and
a running count of members parked in JoinGroup, so "has everyone joined?" is O(1).
"""

from __future__ import annotations

from collections.abc import Hashable

from groupspec.vocabulary.errors import IllegalStateTransitionError
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    LEGAL_PREVIOUS_STATES,
    STABLE,
    GroupState,
)
from groupspec.vocabulary.requests import JoinGroupProtocol

from .log import OffsetCommitValue

# Where a response goes. The coordinator never looks inside a ref: it only hands it back with
# the response, so any hashable token (a RequestRef, a test's own type) works.
Ref = Hashable


class Member:
    """A member of a classic group (ClassicGroupMember)."""

    __slots__ = (
        "assignment",
        "awaiting_join",
        "awaiting_sync",
        "client_host",
        "client_id",
        "group_instance_id",
        "heartbeat_deadline_ms",
        "heartbeat_entry",
        "is_new",
        "member_id",
        "protocol_type",
        "protocols",
        "rebalance_timeout_ms",
        "session_timeout_ms",
    )

    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: tuple[JoinGroupProtocol, ...],
        assignment: bytes = b"",
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = protocols
        self.assignment = assignment
        self.is_new = False
        self.awaiting_join: Ref | None = None
        self.awaiting_sync: Ref | None = None
        # The session deadline in force (None: not armed) and the heap entry that will surface
        # at or before it; a heartbeat moves only the deadline (see timer_heap.py).
        self.heartbeat_deadline_ms: int | None = None
        self.heartbeat_entry: tuple[int, int, int, object, object] | None = None

    def metadata_for(self, protocol_name: str) -> bytes:
        """The member's metadata for `protocol_name` (empty if it does not offer it)."""
        for protocol in self.protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        return b""

    def has_satisfied_heartbeat(self) -> bool:
        """Whether a heartbeat expiry spares the member: not new, and parked in Join or Sync."""
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None

    def __repr__(self) -> str:
        return f"Member({self.member_id!r}, instance={self.group_instance_id!r})"


class JoinTimer:
    """An armed join timer; during the initial rebalance it also carries delay and remainder."""

    __slots__ = ("deadline_ms", "initial_delay_ms", "initial_remaining_ms")

    def __init__(
        self,
        deadline_ms: int,
        initial_delay_ms: int | None = None,
        initial_remaining_ms: int | None = None,
    ) -> None:
        self.deadline_ms = deadline_ms
        self.initial_delay_ms = initial_delay_ms
        self.initial_remaining_ms = initial_remaining_ms


class SyncTimer:
    """An armed pending-sync timer, for one generation."""

    __slots__ = ("deadline_ms", "generation_id")

    def __init__(self, deadline_ms: int, generation_id: int) -> None:
        self.deadline_ms = deadline_ms
        self.generation_id = generation_id


class Group:
    """A classic group (ClassicGroup) with its committed offsets."""

    __slots__ = (
        "awaiting_join_count",
        "current_state_timestamp_ms",
        "generation_id",
        "group_id",
        "join_timer",
        "leader_id",
        "members",
        "new_member_added",
        "offsets",
        "partition",
        "pending_members",
        "pending_sync_members",
        "previous_state",
        "protocol_name",
        "protocol_type",
        "state",
        "static_members",
        "subscribed_topics",
        "sync_timer",
    )

    def __init__(self, group_id: str, partition: int) -> None:
        self.group_id = group_id
        self.partition = partition
        self.state = EMPTY
        self.previous_state: GroupState | None = None
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: dict[str, int] = {}  # member id -> expiry deadline (ms)
        self.pending_sync_members: set[str] = set()
        self.awaiting_join_count = 0
        self.new_member_added = False
        self.join_timer: JoinTimer | None = None
        self.sync_timer: SyncTimer | None = None
        self.offsets: dict[tuple[str, int], OffsetCommitValue] = {}
        self.subscribed_topics: frozenset[str] | None = None
        self.current_state_timestamp_ms: int | None = None

    def __repr__(self) -> str:
        return f"Group({self.group_id!r}, {self.state.value}, generation {self.generation_id})"

    # -- membership --------------------------------------------------------------------------

    def add_member(self, member: Member) -> None:
        """Insert `member` (dropping its id from the pending sets, as Kafka's add does)."""
        member_id = member.member_id
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.discard(member_id)
        self.members[member_id] = member
        if member.awaiting_join is not None:
            self.awaiting_join_count += 1
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member_id

    def drop_member(self, member_id: str) -> Member | None:
        """Remove `member_id` from members and the pending sets; the leader is the caller's job."""
        member = self.members.pop(member_id, None)
        if member is not None:
            if member.awaiting_join is not None:
                self.awaiting_join_count -= 1
            instance = member.group_instance_id
            if instance is not None and self.static_members.get(instance) == member_id:
                del self.static_members[instance]
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.discard(member_id)
        return member

    def set_awaiting_join(self, member: Member, ref: Ref | None) -> None:
        """Park (or with None, release) the member's JoinGroup, keeping the count right."""
        if member.awaiting_join is None:
            if ref is not None:
                self.awaiting_join_count += 1
        elif ref is None:
            self.awaiting_join_count -= 1
        member.awaiting_join = ref

    def has_all_members_joined(self) -> bool:
        """Every member is parked in JoinGroup and no pending member is outstanding."""
        return len(self.members) == self.awaiting_join_count and not self.pending_members

    def can_rebalance(self) -> bool:
        """Kafka's canRebalance: Stable, CompletingRebalance or Empty."""
        state = self.state
        return state is STABLE or state is COMPLETING_REBALANCE or state is EMPTY

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members' (0 without members)."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def supports_protocols(
        self, protocol_type: str, protocols: tuple[JoinGroupProtocol, ...]
    ) -> bool:
        """Whether a member offering `protocols` may join (Kafka's supportsProtocols)."""
        if self.state is EMPTY:
            return protocol_type != "" and len(protocols) > 0
        if self.protocol_type != protocol_type:
            return False
        counts = self.supported_protocol_counts()
        size = len(self.members)
        return any(counts.get(p.name, 0) == size for p in protocols)

    def supported_protocol_counts(self) -> dict[str, int]:
        """For each protocol name, how many members offer it."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            for protocol in member.protocols:
                counts[protocol.name] = counts.get(protocol.name, 0) + 1
        return counts

    # -- state -------------------------------------------------------------------------------

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        """Move to `target`, remembering where from and when; illegal moves raise."""
        if self.state not in LEGAL_PREVIOUS_STATES[target]:
            raise IllegalStateTransitionError(
                f"group {self.group_id!r}: {self.state.value} -> {target.value} is not a legal transition"
            )
        self.previous_state = self.state
        self.state = target
        self.current_state_timestamp_ms = now_ms
