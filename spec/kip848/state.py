"""The state of consumer-protocol groups as the coordinator holds it (docs/protocol.md §12.1).

Immutable and hashable, like the classic spec's state: a step returns a new state. Names follow
Kafka 4.3.0's `group-coordinator` module: `ConsumerGroup` (`modern/consumer/ConsumerGroup.java`,
`modern/ModernGroup.java`), `ConsumerGroupMember` (`modern/consumer/ConsumerGroupMember.java`)
and `MemberState` (`modern/MemberState.java`). Partitions are kept by topic name; the messages
carry topic ids, which the handler translates with the cluster's metadata (`config.topics`).

Not kept, because no rule reads them: the client id and host, the subscribed regular
expression and the metadata hash.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from groupspec.vocabulary.consumer_groups import ConsumerGroupState
from groupspec.vocabulary.requests import JoinGroupProtocol, TopicPartition

if TYPE_CHECKING:
    from .config import ConsumerGroupConfig
    from .records import Record

T = TypeVar("T")
Partitions = frozenset[TopicPartition]
NO_PARTITIONS: Partitions = frozenset()

# A new group's epochs: ModernGroup sets the group epoch to 1 and TargetAssignmentMetadata.INITIAL
# is (epoch 1, timestamp 0) in Kafka 4.3.0.
INITIAL_GROUP_EPOCH = 1
INITIAL_ASSIGNMENT_EPOCH = 1
# No target assignment computed yet (or its time unknown): the next one may be computed at once.
NO_ASSIGNMENT_TIMESTAMP = 0


class CoordinatorPhase(Enum):
    """Whether this broker serves the group's `__consumer_offsets` partition (docs/protocol.md
    §12.15): it does, it does not (another broker leads it), or it is replaying the log."""

    ACTIVE = "Active"
    UNLOADED = "Unloaded"
    LOADING = "Loading"


class MemberState(Enum):
    """Where a member is in its reconciliation towards the target assignment."""

    STABLE = "Stable"
    UNREVOKED_PARTITIONS = "UnrevokedPartitions"
    UNRELEASED_PARTITIONS = "UnreleasedPartitions"
    UNKNOWN = "Unknown"


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member that speaks the classic protocol adds (ConsumerGroupMemberMetadataValue's
    ClassicMemberMetadata): its JoinGroup session timeout and the protocols it offered."""

    session_timeout_ms: int
    protocols: tuple[JoinGroupProtocol, ...]


@dataclass(frozen=True)
class ConsumerGroupMember:
    """A member: what it subscribes to, the epoch of the assignment it runs, its partitions.

    `assigned` is what the member may consume now; `pending_revocation` what it must give up
    before it may move to the next epoch. Both count as owned by it.
    """

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: frozenset[str] = frozenset()
    # The member's regular expression, "" for none (Kafka keeps "" where the request gave none).
    subscribed_topic_regex: str = ""
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: Partitions = NO_PARTITIONS
    pending_revocation: Partitions = NO_PARTITIONS
    # Set for a member that joined with JoinGroup (docs/protocol.md §12.15); None otherwise.
    classic: ClassicMemberMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        """Whether the member speaks JoinGroup/SyncGroup/Heartbeat (useClassicProtocol)."""
        return self.classic is not None

    # KIP-1251 (the 4.3+ profile only): the epoch each owned partition was assigned at, sorted.
    assignment_epochs: tuple[tuple[TopicPartition, int], ...] = ()

    def assignment_epoch_of(self, partition: TopicPartition) -> int | None:
        """The epoch `partition` was assigned to the member at, or None when not recorded."""
        return dict(self.assignment_epochs).get(partition)

    def is_reconciled_to(self, epoch: int) -> bool:
        """Whether the member runs the target assignment of `epoch` in full."""
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def moved_to_epoch(self, epoch: int) -> ConsumerGroupMember:
        """The member at `epoch`, its current epoch becoming the previous one (updateMemberEpoch)."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch)

    @property
    def owned(self) -> Partitions:
        """The partitions the coordinator counts as the member's: assigned or pending revocation."""
        return self.assigned | self.pending_revocation


def _sorted_items(mapping: Mapping[str, T]) -> tuple[tuple[str, T], ...]:
    return tuple(sorted(mapping.items(), key=lambda item: item[0]))


@dataclass(frozen=True, order=True)
class ResolvedRegex:
    """A regular expression of the group resolved into the topics it matches, and when
    (ResolvedRegularExpression: its topics and timestamp; the metadata image version is left
    out, since the specification's topics do not change)."""

    regex: str
    topics: tuple[str, ...]
    timestamp_ms: int


@dataclass(frozen=True)
class ConsumerGroup:
    """One consumer-protocol group: its epochs, its members, its target assignment, its timers.

    Mappings are kept as tuples sorted by member id so that the state is hashable; read them
    through the methods. `session_deadlines` holds each member's session-timeout deadline,
    `rebalance_deadlines` the rebalance timeout armed while a member revokes, with the epoch it
    was armed at.
    """

    group_id: str
    group_epoch: int = INITIAL_GROUP_EPOCH
    assignment_epoch: int = INITIAL_ASSIGNMENT_EPOCH
    assignment_timestamp_ms: int = NO_ASSIGNMENT_TIMESTAMP
    members_by_id: tuple[tuple[str, ConsumerGroupMember], ...] = ()
    target_by_id: tuple[tuple[str, Partitions], ...] = ()
    session_deadlines: tuple[tuple[str, int], ...] = ()
    rebalance_deadlines: tuple[tuple[str, tuple[int, int]], ...] = field(default=())
    # A classic member's join and sync timeouts (docs/protocol.md §12.15), member id -> deadline.
    classic_join_deadlines: tuple[tuple[str, int], ...] = ()
    classic_sync_deadlines: tuple[tuple[str, int], ...] = ()
    # The regular expressions resolved into topics (docs/protocol.md §12.13), sorted by regex.
    resolved_regexes: tuple[ResolvedRegex, ...] = ()
    # The regular expressions a resolution under way will resolve (Kafka's executor task for the
    # group), or None when none is: in memory only, a failover forgets it.
    regex_resolution: tuple[str, ...] | None = None
    # The group's metadata hash as of its last epoch bump (Kafka 4.1.0+ `ModernGroup.metadataHash`,
    # carried by the group's epoch record; 4.0.0 kept the subscription metadata itself): see
    # `computed_metadata_hash`. handleRegularExpressionsResult bumps the epoch when it differs.
    metadata_hash: tuple[tuple[str, int], ...] = ()

    # Reading
    @property
    def members(self) -> dict[str, ConsumerGroupMember]:
        """The members by member id."""
        return dict(self.members_by_id)

    @property
    def target(self) -> dict[str, Partitions]:
        """The target assignment by member id."""
        return dict(self.target_by_id)

    def member(self, member_id: str) -> ConsumerGroupMember | None:
        """The member with `member_id`, or None."""
        return self.members.get(member_id)

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        """The member holding `instance_id`, or None."""
        return next((m for m in self.iter_members() if m.instance_id == instance_id), None)

    def iter_members(self) -> Iterator[ConsumerGroupMember]:
        """The members in member-id order."""
        return (member for _, member in self.members_by_id)

    def target_of(self, member_id: str) -> Partitions:
        """The member's target partitions (none when it has no entry)."""
        return self.target.get(member_id, NO_PARTITIONS)

    def resolved_regex(self, regex: str) -> ResolvedRegex | None:
        """The resolution of `regex`, or None when it has not been resolved."""
        return next((r for r in self.resolved_regexes if r.regex == regex), None)

    def regex_subscribers(self, regex: str) -> int:
        """How many members subscribe with `regex` (numSubscribedMembers)."""
        return sum(1 for m in self.iter_members() if m.subscribed_topic_regex == regex)

    def subscribed_regexes(self) -> frozenset[str]:
        """The regular expressions some member subscribes with."""
        return frozenset(m.subscribed_topic_regex for m in self.iter_members()) - {""}

    def subscribed_topics_of(self, member: ConsumerGroupMember) -> frozenset[str]:
        """What the member subscribes to: its topic names and the topics its regular expression
        resolved to (none until it is resolved)."""
        resolved = self.resolved_regex(member.subscribed_topic_regex)
        topics = resolved.topics if resolved is not None and member.subscribed_topic_regex else ()
        return member.subscribed_topic_names | frozenset(topics)

    def computed_metadata_hash(self, config: ConsumerGroupConfig) -> tuple[tuple[str, int], ...]:
        """ModernGroup.computeMetadataHash's stand-in: the topics the group subscribes to now that
        exist, with their partition counts. Kafka hashes each such topic's id, name, partition
        count and racks; this changes exactly when that hash does (up to hash collisions) in a
        cluster whose racks do not change."""
        names = {name for m in self.iter_members() for name in self.subscribed_topics_of(m)}
        found = []
        for name in sorted(names):
            topic = config.topic_named(name)
            if topic is not None:
                found.append((name, topic.partitions))
        return tuple(found)

    def owner_of(self, partition: TopicPartition) -> str | None:
        """Which member owns `partition` (assigned or pending revocation): Kafka's
        currentPartitionEpoch is that member's epoch, and -1 when this is None."""
        return next((m.member_id for m in self.iter_members() if partition in m.owned), None)

    @property
    def state(self) -> ConsumerGroupState:
        """The group state, derived as ConsumerGroup.maybeUpdateGroupState derives it."""
        if not self.members_by_id:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if all(m.is_reconciled_to(self.assignment_epoch) for m in self.iter_members()):
            return ConsumerGroupState.STABLE
        return ConsumerGroupState.RECONCILING

    # Writing
    def with_member(self, member: ConsumerGroupMember) -> ConsumerGroup:
        """The group with `member` added or replaced."""
        members = self.members
        members[member.member_id] = member
        return replace(self, members_by_id=_sorted_items(members))

    def without_member(self, member_id: str) -> ConsumerGroup:
        """The group without the member, its target entry and its timers."""
        members = self.members
        members.pop(member_id, None)
        target = self.target
        target.pop(member_id, None)
        return replace(
            self,
            members_by_id=_sorted_items(members),
            target_by_id=_sorted_items(target),
            session_deadlines=tuple(e for e in self.session_deadlines if e[0] != member_id),
            rebalance_deadlines=tuple(e for e in self.rebalance_deadlines if e[0] != member_id),
            classic_join_deadlines=tuple(
                e for e in self.classic_join_deadlines if e[0] != member_id
            ),
            classic_sync_deadlines=tuple(
                e for e in self.classic_sync_deadlines if e[0] != member_id
            ),
        )

    def with_resolved_regex(self, resolved: ResolvedRegex) -> ConsumerGroup:
        """The group with `resolved` as its regular expression's resolution."""
        kept = [r for r in self.resolved_regexes if r.regex != resolved.regex]
        return replace(self, resolved_regexes=tuple(sorted([*kept, resolved])))

    def with_group_epoch(self, epoch: int, config: ConsumerGroupConfig) -> ConsumerGroup:
        """The group at group epoch `epoch`; a new epoch records the group's metadata hash as it
        is now, as Kafka's group epoch record carries it (the same epoch keeps the hash)."""
        if epoch == self.group_epoch:
            return self
        return replace(self, group_epoch=epoch, metadata_hash=self.computed_metadata_hash(config))

    def without_resolved_regex(self, regex: str) -> ConsumerGroup:
        """The group without `regex`'s resolution."""
        kept = tuple(r for r in self.resolved_regexes if r.regex != regex)
        return replace(self, resolved_regexes=kept)

    def with_target(self, target: Mapping[str, Partitions]) -> ConsumerGroup:
        """The group with `target` as its target assignment."""
        return replace(self, target_by_id=_sorted_items(dict(target)))

    def with_session_deadline(self, member_id: str, deadline_ms: int) -> ConsumerGroup:
        """The group with the member's session timeout (re)armed for `deadline_ms`."""
        deadlines = dict(self.session_deadlines)
        deadlines[member_id] = deadline_ms
        return replace(self, session_deadlines=tuple(sorted(deadlines.items())))

    def without_session_deadline(self, member_id: str) -> ConsumerGroup:
        """The group with the member's session timeout cancelled."""
        kept = tuple(e for e in self.session_deadlines if e[0] != member_id)
        return replace(self, session_deadlines=kept)

    def with_rebalance_deadline(
        self, member_id: str, epoch: int, deadline_ms: int
    ) -> ConsumerGroup:
        """The group with the member's rebalance timeout armed for `epoch`."""
        deadlines = dict(self.rebalance_deadlines)
        deadlines[member_id] = (epoch, deadline_ms)
        return replace(self, rebalance_deadlines=tuple(sorted(deadlines.items())))

    def without_rebalance_deadline(self, member_id: str) -> ConsumerGroup:
        """The group with the member's rebalance timeout cancelled."""
        kept = tuple(e for e in self.rebalance_deadlines if e[0] != member_id)
        return replace(self, rebalance_deadlines=kept)


@dataclass(frozen=True, order=True)
class CommittedOffset:
    """A partition's committed offset as the coordinator keeps it: the offset, the leader epoch
    (-1: none) and the metadata (a null one kept as "": OffsetAndMetadata.fromRequest, 4.3.0).
    The commit's timestamps are left out: nothing the specification answers reads them."""

    offset: int
    leader_epoch: int = -1
    metadata: str = ""


@dataclass(frozen=True)
class ConsumerGroupsState:
    """Every consumer-protocol group of the coordinator, and the counter behind the member ids it
    generates for v0 joins (Kafka draws a random UUID; ids are compared only for equality).

    `log` is the groups' part of `__consumer_offsets`, as a coordinator loading it would find it
    (spec/kip848/records.py `appended`: compacted, or every record in the order written): it
    outlives a failover, the groups in memory do not. `phase` says whether the coordinator serves
    the partition, and is ACTIVE except around a failover."""

    groups_by_id: tuple[tuple[str, ConsumerGroup], ...] = ()
    next_member_number: int = 0
    log: tuple[Record, ...] = ()
    phase: CoordinatorPhase = CoordinatorPhase.ACTIVE
    # The committed offsets by group id, each sorted by partition (OffsetMetadataManager keeps
    # them apart from the groups; spec/kip848/offsets.py writes them).
    offsets_by_group: tuple[
        tuple[str, tuple[tuple[TopicPartition, CommittedOffset], ...]], ...
    ] = ()

    def offsets(self, group_id: str) -> dict[TopicPartition, CommittedOffset]:
        """The offsets committed for `group_id`."""
        return dict(dict(self.offsets_by_group).get(group_id, ()))

    def with_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> ConsumerGroupsState:
        """The state with `offsets` as the group's committed offsets (none: the entry goes)."""
        by_group = dict(self.offsets_by_group)
        by_group.pop(group_id, None)
        if offsets:
            by_group[group_id] = tuple(sorted(offsets.items()))
        return replace(self, offsets_by_group=tuple(sorted(by_group.items())))

    def deleted(self, group_id: str) -> ConsumerGroupsState:
        """The state without the group and its offsets (DeleteGroups)."""
        return self.without_group(group_id).with_offsets(group_id, {})

    def group(self, group_id: str) -> ConsumerGroup | None:
        """The group called `group_id`, or None."""
        return dict(self.groups_by_id).get(group_id)

    def with_group(self, group: ConsumerGroup) -> ConsumerGroupsState:
        """The state with `group` stored."""
        groups = dict(self.groups_by_id)
        groups[group.group_id] = group
        return replace(self, groups_by_id=tuple(sorted(groups.items())))

    def iter_groups(self) -> Iterator[ConsumerGroup]:
        """The groups in group-id order."""
        return (group for _, group in self.groups_by_id)

    def without_group(self, group_id: str) -> ConsumerGroupsState:
        """The state without the group called `group_id`."""
        kept = tuple(entry for entry in self.groups_by_id if entry[0] != group_id)
        return replace(self, groups_by_id=kept)
