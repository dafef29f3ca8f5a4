"""Consumer-protocol groups and members as mutable, indexed objects.

A group keeps its members by id, an index from instance id to member id (static members), the
target assignment, an index from each owned partition to its owner (Kafka's partition epochs:
a partition is assignable only when no other member owns it), the count of members not yet
reconciled to the target's epoch (so the group state is O(1)), and each member's timers; and,
for regular-expression subscriptions, the topics each expression resolved to, how many members
subscribe with each expression, and the expressions of a resolution under way. Each member
keeps what it subscribes to in all (`subscribed_topics`: its names and the topics its
expression resolved to), updated when either changes, so the assignors read it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from groupspec.vocabulary.consumer_groups import ConsumerGroupState
from groupspec.vocabulary.requests import JoinGroupProtocol, TopicPartition

if TYPE_CHECKING:
    from .config import ConsumerGroupConfig

Partitions = frozenset[TopicPartition]
NO_PARTITIONS: Partitions = frozenset()
# A new group's epochs, and "no target computed yet" (the next may be computed at once).
INITIAL_GROUP_EPOCH = 1
INITIAL_ASSIGNMENT_EPOCH = 1
NO_ASSIGNMENT_TIMESTAMP = 0


class MemberState(Enum):
    """Where a member is in its reconciliation towards the target assignment."""

    STABLE = "Stable"
    UNREVOKED_PARTITIONS = "UnrevokedPartitions"
    UNRELEASED_PARTITIONS = "UnreleasedPartitions"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class ClassicMetadata:
    """What a member that joined with JoinGroup adds: its session timeout and the protocols it
    offered (ConsumerGroupMemberMetadataValue's ClassicMemberMetadata)."""

    session_timeout_ms: int
    protocols: tuple[JoinGroupProtocol, ...]


class Member:
    """A consumer-protocol member (ConsumerGroupMember); `classic` is set for a member that
    speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)."""

    __slots__ = (
        "assigned",
        "assignment_epochs",
        "classic",
        "client_host",
        "client_id",
        "instance_id",
        "member_epoch",
        "member_id",
        "pending_revocation",
        "previous_member_epoch",
        "rack_id",
        "rebalance_timeout_ms",
        "server_assignor",
        "state",
        "subscribed_topic_names",
        "subscribed_topic_regex",
        "subscribed_topics",
    )

    def __init__(self, member_id: str) -> None:
        self.member_id = member_id
        self.instance_id: str | None = None
        self.rack_id: str | None = None
        self.rebalance_timeout_ms = -1
        self.subscribed_topic_names: frozenset[str] = frozenset()
        # The member's regular expression, "" for none.
        self.subscribed_topic_regex = ""
        # Its topic names and the topics its expression resolved to (Group keeps it current).
        self.subscribed_topics: frozenset[str] = frozenset()
        self.server_assignor: str | None = None
        self.member_epoch = 0
        self.previous_member_epoch = -1
        self.state = MemberState.STABLE
        self.assigned: Partitions = NO_PARTITIONS
        self.pending_revocation: Partitions = NO_PARTITIONS
        # KIP-1251 (Kafka 4.3): the epoch each owned partition was assigned to the member at,
        # which OffsetCommit checks a commit at an older epoch against.
        self.assignment_epochs: dict[TopicPartition, int] = {}
        self.classic: ClassicMetadata | None = None
        self.client_id = ""
        self.client_host = ""

    def is_reconciled_to(self, epoch: int) -> bool:
        """Whether the member runs the target assignment of `epoch` in full."""
        return self.state is MemberState.STABLE and self.member_epoch == epoch


@dataclass(frozen=True, slots=True)
class ResolvedRegex:
    """The topics a regular expression matched when it was resolved, and when."""

    topics: frozenset[str]
    timestamp_ms: int


class Group:
    """One consumer-protocol group with its indices and timers."""

    __slots__ = (
        "assignment_epoch",
        "assignment_timestamp_ms",
        "classic_deadlines",
        "classic_entries",
        "group_epoch",
        "group_id",
        "members",
        "metadata_hash",
        "owners",
        "rebalance_deadlines",
        "rebalance_entries",
        "regex_entry",
        "regex_resolution",
        "regex_subscribers",
        "regex_topics_version",
        "resolved_regexes",
        "session_deadlines",
        "session_entries",
        "static_members",
        "target",
        "unreconciled",
    )

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_GROUP_EPOCH
        self.assignment_epoch = INITIAL_ASSIGNMENT_EPOCH
        self.assignment_timestamp_ms = NO_ASSIGNMENT_TIMESTAMP
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}
        self.target: dict[str, Partitions] = {}
        self.owners: dict[TopicPartition, str] = {}
        self.unreconciled = 0
        # Timers by member id. A timer outlives its member when a static member is replaced
        # (Kafka leaves the old id's timers armed; they find no member when they fire).
        self.session_deadlines: dict[str, int] = {}
        self.rebalance_deadlines: dict[str, tuple[int, int]] = {}
        # The heap entry queued for each timer (see coordinator.py: lazy re-arming).
        self.session_entries: dict[str, tuple[int, int, int, str, str]] = {}
        self.rebalance_entries: dict[str, tuple[int, int, int, str, str]] = {}
        # A classic member's join and sync timeouts, by (timer kind, member id), and their
        # queued heap entries.
        self.classic_deadlines: dict[tuple[int, str], int] = {}
        self.classic_entries: dict[tuple[int, str], tuple[int, int, int, str, str]] = {}
        # Each regular expression's resolution, and how many members subscribe with each
        # expression (kept by add, remove and set_subscription).
        self.resolved_regexes: dict[str, ResolvedRegex] = {}
        self.regex_subscribers: dict[str, int] = {}
        # The expressions of the resolution under way (None: none is), and its heap entry.
        self.regex_resolution: tuple[str, ...] | None = None
        self.regex_entry: tuple[int, int, int, str, str] | None = None
        # The runtime's topics version when the last resolution started.
        self.regex_topics_version = 0
        # The metadata hash as of the last group epoch bump (the spec's ConsumerGroup.metadata_hash:
        # the subscribed topics that exist, with their partition counts).
        self.metadata_hash: tuple[tuple[str, int], ...] = ()

    @property
    def state(self) -> ConsumerGroupState:
        """The group state, derived as ConsumerGroup.maybeUpdateGroupState derives it."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if self.unreconciled == 0:
            return ConsumerGroupState.STABLE
        return ConsumerGroupState.RECONCILING

    def static_member(self, instance_id: str) -> Member | None:
        """The member holding `instance_id`, or None."""
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    # -- writing (every change of a member goes through these, to keep the indices) ---------

    def add(self, member: Member) -> None:
        """Add `member` (not yet in the group) and index it."""
        self.members[member.member_id] = member
        self._count_regex(member.subscribed_topic_regex, 1)
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for partition in member.assigned:
            self.owners[partition] = member.member_id
        for partition in member.pending_revocation:
            self.owners[partition] = member.member_id
        if not member.is_reconciled_to(self.assignment_epoch):
            self.unreconciled += 1

    def remove(self, member_id: str) -> Member | None:
        """Remove the member and its target entry (its timers are the caller's), unindexed."""
        member = self.members.pop(member_id, None)
        self.target.pop(member_id, None)
        if member is None:
            return None
        self._count_regex(member.subscribed_topic_regex, -1)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == (
            member_id
        ):
            del self.static_members[member.instance_id]
        owners = self.owners
        for partition in member.assigned:
            if owners.get(partition) == member_id:
                del owners[partition]
        for partition in member.pending_revocation:
            if owners.get(partition) == member_id:
                del owners[partition]
        if not member.is_reconciled_to(self.assignment_epoch):
            self.unreconciled -= 1
        return member

    def set_subscription(self, member: Member, names: frozenset[str], regex: str) -> None:
        """Subscribe `member` (in the group) to `names` and the regular expression `regex`
        ("" for none)."""
        if regex != member.subscribed_topic_regex:
            self._count_regex(member.subscribed_topic_regex, -1)
            self._count_regex(regex, 1)
            member.subscribed_topic_regex = regex
        member.subscribed_topic_names = names
        self.refresh_subscription(member)

    def computed_metadata_hash(self, config: ConsumerGroupConfig) -> tuple[tuple[str, int], ...]:
        """The metadata hash of what the group subscribes to now: the subscribed topics that
        exist, with their partition counts."""
        names = set().union(*(m.subscribed_topics for m in self.members.values()))
        found = []
        for name in sorted(names):
            topic = config.topic_named(name)
            if topic is not None:
                found.append((name, topic.partitions))
        return tuple(found)

    def bump_group_epoch(self, config: ConsumerGroupConfig) -> None:
        """Move the group epoch on, recording the metadata hash of what the group subscribes to
        now (the group epoch record carries it)."""
        self.group_epoch += 1
        self.metadata_hash = self.computed_metadata_hash(config)

    def refresh_subscription(self, member: Member) -> None:
        """Recompute what `member` subscribes to in all, from its names and its expression's
        resolution."""
        resolved = self.resolved_regexes.get(member.subscribed_topic_regex)
        names = member.subscribed_topic_names
        member.subscribed_topics = names if resolved is None else names | resolved.topics

    def _count_regex(self, regex: str, delta: int) -> None:
        if not regex:
            return
        left = self.regex_subscribers.get(regex, 0) + delta
        if left:
            self.regex_subscribers[regex] = left
        else:
            del self.regex_subscribers[regex]

    def replace_member(self, member: Member, member_id: str) -> None:
        """Give static `member`'s place to the new id `member_id` (replaceMember): the same
        member at epoch 0 under the new id, holding what it held, the old id's target moved to
        it. The old id's session and rebalance timeouts stay armed (they find no member when
        they fire); its classic join and sync timeouts go, as the specification's do."""
        old_id = member.member_id
        for key in [key for key in self.classic_deadlines if key[1] == old_id]:
            del self.classic_deadlines[key]
        target = self.target.get(old_id, NO_PARTITIONS)
        self.remove(old_id)
        member.member_id = member_id
        member.member_epoch = 0
        member.previous_member_epoch = 0
        self.add(member)
        self.target[member_id] = target

    def set_instance_id(self, member: Member, instance_id: str) -> None:
        """Give `member` (in the group) the instance id `instance_id`."""
        if member.instance_id == instance_id:
            return
        if member.instance_id is not None and self.static_members.get(member.instance_id) == (
            member.member_id
        ):
            del self.static_members[member.instance_id]
        member.instance_id = instance_id
        self.static_members[instance_id] = member.member_id

    def move(
        self,
        member: Member,
        epoch: int,
        previous_epoch: int,
        state: MemberState,
        assigned: Partitions,
        pending: Partitions,
    ) -> None:
        """Change the member's epochs, state and partitions, keeping the owner index and the
        count of unreconciled members."""
        was_reconciled = member.is_reconciled_to(self.assignment_epoch)
        owners = self.owners
        member_id = member.member_id
        if assigned is not member.assigned or pending is not member.pending_revocation:
            for partition in (member.assigned | member.pending_revocation) - (assigned | pending):
                if owners.get(partition) == member_id:
                    del owners[partition]
            for partition in assigned:
                owners[partition] = member_id
            for partition in pending:
                owners[partition] = member_id
        member.member_epoch = epoch
        member.previous_member_epoch = previous_epoch
        member.state = state
        member.assigned = assigned
        member.pending_revocation = pending
        now_reconciled = member.is_reconciled_to(self.assignment_epoch)
        if was_reconciled != now_reconciled:
            self.unreconciled += -1 if now_reconciled else 1

    def set_assignment_epoch(self, epoch: int) -> None:
        """Move the target's epoch and recount the members not reconciled to it."""
        self.assignment_epoch = epoch
        self.unreconciled = sum(
            1 for member in self.members.values() if not member.is_reconciled_to(epoch)
        )
