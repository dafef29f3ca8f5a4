"""Coordinator state: groups, members, pending members, timers, offsets and the log.

Every value is immutable and kept in a canonical order (members by id, groups by id), so equal
states compare equal and can be fingerprinted stably (DESIGN decision 3). Timers are state: an
armed timer is a deadline in milliseconds stored where Kafka keys it (per member, per group).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from groupspec.vocabulary.errors import IllegalStateTransitionError
from groupspec.vocabulary.group_state import (
    CAN_REBALANCE_STATES,
    EMPTY,
    GroupState,
    is_legal_transition,
)
from groupspec.vocabulary.requests import JoinGroupProtocol, RequestRef, TopicPartition

from .log import OffsetCommitValue, OffsetsLog


@dataclass(frozen=True)
class Member:
    """A member of a classic group (ClassicGroupMember)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[JoinGroupProtocol, ...]
    assignment: bytes = b""
    is_new: bool = False
    awaiting_join: RequestRef | None = None
    awaiting_sync: RequestRef | None = None
    heartbeat_deadline_ms: int | None = None

    @property
    def is_static(self) -> bool:
        """Whether the member has a group.instance.id (KIP-345)."""
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        """Whether a JoinGroup of this member is parked."""
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        """Whether a SyncGroup of this member is parked."""
        return self.awaiting_sync is not None

    def protocol_names(self) -> tuple[str, ...]:
        """The protocol names the member offers, in its order of preference."""
        return tuple(protocol.name for protocol in self.protocols)

    def metadata_for(self, protocol_name: str) -> bytes:
        """The member's metadata for `protocol_name` (empty if it does not offer it)."""
        for protocol in self.protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        return b""

    def matches(self, protocols: tuple[JoinGroupProtocol, ...]) -> bool:
        """Kafka's `matches`: same protocols, names and metadata, in the same order."""
        return self.protocols == protocols

    def vote(self, candidates: frozenset[str]) -> str:
        """The member's vote: the first protocol in its own list that every member supports."""
        for name in self.protocol_names():
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def has_satisfied_heartbeat(self) -> bool:
        """Whether a heartbeat expiry spares the member: not new, and parked in Join or Sync."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync


@dataclass(frozen=True)
class PendingMember:
    """A dynamic member that was given an id (MEMBER_ID_REQUIRED) but has not joined with it."""

    member_id: str
    expiry_deadline_ms: int


@dataclass(frozen=True)
class JoinTimer:
    """The group's join timer.

    During the initial rebalance (from Empty) it carries the delay it was armed with and the
    time remaining, for the re-arming rule; otherwise both are None and firing completes the join.
    """

    deadline_ms: int
    initial_delay_ms: int | None = None
    initial_remaining_ms: int | None = None

    @property
    def is_initial_rebalance(self) -> bool:
        """Whether this timer is the initial-rebalance delay."""
        return self.initial_delay_ms is not None


@dataclass(frozen=True)
class SyncTimer:
    """The group's pending-sync timer, armed for one generation."""

    deadline_ms: int
    generation_id: int


OffsetEntry = tuple[TopicPartition, OffsetCommitValue]


def _by_member_id(members: tuple[Member, ...]) -> tuple[Member, ...]:
    return tuple(sorted(members, key=lambda m: m.member_id))


@dataclass(frozen=True)
class Group:
    """A classic group (ClassicGroup) with its committed offsets."""

    group_id: str
    state: GroupState = EMPTY
    previous_state: GroupState | None = None
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: tuple[Member, ...] = ()
    pending_members: tuple[PendingMember, ...] = ()
    pending_sync_members: frozenset[str] = frozenset()
    new_member_added: bool = False
    join_timer: JoinTimer | None = None
    sync_timer: SyncTimer | None = None
    offsets: tuple[OffsetEntry, ...] = ()
    subscribed_topics: frozenset[str] | None = None
    current_state_timestamp_ms: int | None = None

    # -- queries -------------------------------------------------------------------------------

    def member(self, member_id: str) -> Member | None:
        """The member with `member_id`, if any."""
        for member in self.members:
            if member.member_id == member_id:
                return member
        return None

    def has_member(self, member_id: str) -> bool:
        """Whether `member_id` is a (non-pending) member."""
        return self.member(member_id) is not None

    def is_pending_member(self, member_id: str) -> bool:
        """Whether `member_id` was handed out with MEMBER_ID_REQUIRED and has not joined yet."""
        return any(p.member_id == member_id for p in self.pending_members)

    def static_member_id(self, group_instance_id: str) -> str | None:
        """The member id currently mapped to `group_instance_id`, if any."""
        for member in self.members:
            if member.group_instance_id == group_instance_id:
                return member.member_id
        return None

    def is_leader(self, member_id: str) -> bool:
        """Whether `member_id` leads the group."""
        return self.leader_id is not None and self.leader_id == member_id

    def can_rebalance(self) -> bool:
        """Kafka's canRebalance: Stable, CompletingRebalance or Empty."""
        return self.state in CAN_REBALANCE_STATES

    def num_awaiting_join(self) -> int:
        """How many members have a parked JoinGroup."""
        return sum(1 for member in self.members if member.is_awaiting_join)

    def has_all_members_joined(self) -> bool:
        """Every member is parked in JoinGroup and no pending member is outstanding."""
        return len(self.members) == self.num_awaiting_join() and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members' (0 with no members)."""
        return max((m.rebalance_timeout_ms for m in self.members), default=0)

    def supported_protocol_counts(self) -> Counter[str]:
        """For each protocol name, how many members offer it."""
        return Counter(name for member in self.members for name in member.protocol_names())

    def candidate_protocols(self) -> frozenset[str]:
        """Protocol names every member supports."""
        counts = self.supported_protocol_counts()
        return frozenset(name for name, count in counts.items() if count == len(self.members))

    def supports_protocols(self, protocol_type: str, protocol_names: tuple[str, ...]) -> bool:
        """Whether a member offering these protocols may join (reference §2.2, step 4)."""
        if self.state is EMPTY:
            return protocol_type != "" and len(protocol_names) > 0
        counts = self.supported_protocol_counts()
        return self.protocol_type == protocol_type and any(
            counts.get(name, 0) == len(self.members) for name in protocol_names
        )

    def offset(self, partition: TopicPartition) -> OffsetCommitValue | None:
        """The committed offset of `partition`, if any."""
        for key, value in self.offsets:
            if key == partition:
                return value
        return None

    # -- functional updates --------------------------------------------------------------------

    def with_member(self, member: Member) -> Group:
        """The group with `member` added or replaced."""
        others = tuple(m for m in self.members if m.member_id != member.member_id)
        return replace(self, members=_by_member_id((*others, member)))

    def update_member(self, member_id: str, **changes: object) -> Group:
        """The group with some fields of member `member_id` changed."""
        member = self.member(member_id)
        if member is None:
            raise KeyError(f"group {self.group_id} has no member {member_id}")
        return self.with_member(replace(member, **changes))  # type: ignore[arg-type]

    def without_member(self, member_id: str) -> Group:
        """The group with member `member_id` dropped from members and the pending sets."""
        return replace(
            self,
            members=tuple(m for m in self.members if m.member_id != member_id),
            pending_members=tuple(p for p in self.pending_members if p.member_id != member_id),
            pending_sync_members=self.pending_sync_members - {member_id},
        )

    def with_pending_member(self, pending: PendingMember) -> Group:
        """The group with a pending member added."""
        others = tuple(p for p in self.pending_members if p.member_id != pending.member_id)
        ordered = tuple(sorted((*others, pending), key=lambda p: p.member_id))
        return replace(self, pending_members=ordered)

    def with_offset(self, partition: TopicPartition, value: OffsetCommitValue | None) -> Group:
        """The group with the offset of `partition` set (None deletes it)."""
        kept = [(tp, v) for tp, v in self.offsets if tp != partition]
        if value is not None:
            kept.append((partition, value))
        return replace(self, offsets=tuple(sorted(kept, key=lambda entry: entry[0])))

    def transition_to(self, target: GroupState, now_ms: int) -> Group:
        """The group in state `target`; raises if reference §1 forbids the move."""
        if not is_legal_transition(self.state, target):
            raise IllegalStateTransitionError(
                f"group {self.group_id!r}: {self.state.value} -> {target.value} is not a legal "
                "transition (reference §1)"
            )
        return replace(
            self, state=target, previous_state=self.state, current_state_timestamp_ms=now_ms
        )


def _by_group_id(groups: tuple[Group, ...]) -> tuple[Group, ...]:
    return tuple(sorted(groups, key=lambda g: g.group_id))


@dataclass(frozen=True)
class CoordinatorState:
    """Everything one group coordinator knows, including its durable log.

    `unowned_partitions` are offsets-topic partitions another broker leads; `loading_partitions`
    are being replayed. `next_member_seq` makes generated member ids unique (Kafka uses UUIDs).
    """

    groups: tuple[Group, ...] = ()
    log: OffsetsLog = field(default_factory=OffsetsLog)
    loading_partitions: frozenset[int] = frozenset()
    unowned_partitions: frozenset[int] = frozenset()
    next_member_seq: int = 0
    retention_check_deadline_ms: int = 0

    def group(self, group_id: str) -> Group | None:
        """The group `group_id` held in memory, if any."""
        for group in self.groups:
            if group.group_id == group_id:
                return group
        return None

    def with_group(self, group: Group) -> CoordinatorState:
        """The state with `group` added or replaced."""
        others = tuple(g for g in self.groups if g.group_id != group.group_id)
        return replace(self, groups=_by_group_id((*others, group)))

    def without_group(self, group_id: str) -> CoordinatorState:
        """The state with group `group_id` dropped from memory (the log is untouched)."""
        return replace(self, groups=tuple(g for g in self.groups if g.group_id != group_id))
