"""What a classic consumer group guarantees: the abstract group the coordinator refines.

This is the small specification the detailed coordinator (spec/coordinator.py and its handlers)
is held to, step by step: a refinement mapping (`abstract_view`) takes any coordinator state to
the abstract state of one group, and every detailed step must be one of the abstract steps
below, or change nothing abstract at all (a stutter). The steps follow Kafka's documented
guarantees, not its code paths: a reader should recognise each from the consumer-group docs and
KIP-345 (static membership), and docs/refinement.md explains each with the Kafka behaviour it
stands for. The checker verifies the refinement on every explored transition
(spec/refinement.py; the world property Refinement).

The abstract group, `AbstractGroup`, is what the coordinator holds in memory for the group, seen
through Kafka's guarantees: the phase (Empty, a rebalance under way, a generation awaiting its
assignment, Stable), the generation, the protocol the generation runs, its leader, its members
with their instance ids, the assignment in force (only a Stable generation has one), and the
committed offsets. Beside it, `Durable` is what the log holds: the last group record written
and the committed offsets written. `AbstractView` is both, and whether the group's offsets
partition is loaded (when it is not, the coordinator holds nothing in memory for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.requests import TopicPartition

from .log import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from .state import CoordinatorState, Group


class Phase(Enum):
    """Where a group is in its life, as Kafka's guarantees speak of it."""

    EMPTY = "Empty"  # no member: offsets are kept, nothing else runs
    REBALANCING = "Rebalancing"  # members are (re)joining; the generation has not moved yet
    AWAITING_SYNC = "AwaitingSync"  # a new generation is formed; its leader's assignment is due
    STABLE = "Stable"  # the generation runs with the assignment its leader chose


_PHASE_OF = {
    EMPTY: Phase.EMPTY,
    PREPARING_REBALANCE: Phase.REBALANCING,
    COMPLETING_REBALANCE: Phase.AWAITING_SYNC,
    STABLE: Phase.STABLE,
}

Offsets = tuple[tuple[TopicPartition, int], ...]


@dataclass(frozen=True, order=True)
class AbstractMember:
    """A member: its id, for a static member (KIP-345) its group.instance.id, and the names of
    the protocols (assignors) it supports."""

    member_id: str
    instance_id: str | None
    protocols: tuple[str, ...] = ()


@dataclass(frozen=True)
class AbstractGroup:
    """A group as its guarantees describe it (see the module docstring).

    `assignment` maps members to the assignment bytes the leader gave them, and is empty unless
    the phase is Stable: a generation that has not synced has no assignment in force."""

    phase: Phase
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[AbstractMember, ...]
    assignment: tuple[tuple[str, bytes], ...]
    offsets: Offsets

    def member_ids(self) -> frozenset[str]:
        """The ids of the members."""
        return frozenset(member.member_id for member in self.members)

    def instance_of(self, member_id: str) -> str | None:
        """The instance id of member `member_id` (None: dynamic, or not a member)."""
        for member in self.members:
            if member.member_id == member_id:
                return member.instance_id
        return None

    def member_of(self, instance_id: str) -> str | None:
        """The member id of static instance `instance_id`, if it is a member."""
        for member in self.members:
            if member.instance_id == instance_id:
                return member.member_id
        return None

    def assignment_of(self, member_id: str) -> bytes:
        """The assignment in force for `member_id` (empty bytes if none)."""
        return dict(self.assignment).get(member_id, b"")


# A group that does not exist (never created, or deleted) is this one: Empty, generation 0, no
# offsets. Kafka cannot tell the two apart either: a JoinGroup or a commit creates it again.
ABSENT = AbstractGroup(Phase.EMPTY, 0, None, None, (), (), ())


@dataclass(frozen=True)
class Durable:
    """What the log holds for the group: the last group record (generation, protocol, leader,
    members, the assignment stored with them) and the committed offsets."""

    group: AbstractGroup | None
    offsets: Offsets


@dataclass(frozen=True)
class AbstractView:
    """One group as the abstract specification sees a coordinator: in memory (None when the
    offsets partition is not loaded), and in the log."""

    memory: AbstractGroup | None
    durable: Durable


def abstract_group(group: Group | None) -> AbstractGroup:
    """The refinement mapping of an in-memory group (None or Dead: the absent group)."""
    if group is None or group.state not in _PHASE_OF:
        return ABSENT
    phase = _PHASE_OF[group.state]
    members = tuple(
        sorted(
            AbstractMember(m.member_id, m.group_instance_id, m.protocol_names())
            for m in group.members
        )
    )
    assignment = (
        tuple((m.member_id, m.assignment) for m in group.members) if phase is Phase.STABLE else ()
    )
    offsets = tuple((partition, value.offset) for partition, value in group.offsets)
    # A generation's protocol and leader are what it runs with once formed; while members
    # (re)join, the next generation's are not chosen yet.
    formed = phase in (Phase.AWAITING_SYNC, Phase.STABLE)
    protocol = group.protocol_name if formed else None
    leader = group.leader_id if formed else None
    return AbstractGroup(phase, group.generation_id, protocol, leader, members, assignment, offsets)


def durable_group(record: GroupMetadataValue | None, offsets: Offsets) -> AbstractGroup | None:
    """The group a group record stands for (a record with members is a Stable generation)."""
    if record is None:
        return None
    members = tuple(
        sorted(
            AbstractMember(m.member_id, m.group_instance_id, (record.protocol_name or "",))
            for m in record.members
        )
    )
    phase = Phase.STABLE if members else Phase.EMPTY
    assignment = tuple((m.member_id, m.assignment) for m in record.members) if members else ()
    return AbstractGroup(
        phase,
        record.generation_id,
        record.protocol_name if members else None,
        record.leader if members else None,
        members,
        assignment,
        offsets,
    )


def abstract_view(state: CoordinatorState, group_id: str, partition: int) -> AbstractView:
    """The refinement mapping: the abstract view of group `group_id`, whose offsets partition
    is `partition`, in coordinator state `state`."""
    loaded = partition not in state.unowned_partitions and partition not in state.loading_partitions
    record: GroupMetadataValue | None = None
    offsets: list[tuple[TopicPartition, int]] = []
    for key, value in state.log.entries:
        if isinstance(key, GroupMetadataKey) and key.group_id == group_id:
            assert isinstance(value, GroupMetadataValue)
            record = value
        elif isinstance(key, OffsetCommitKey) and key.group_id == group_id:
            assert isinstance(value, OffsetCommitValue)
            offsets.append((TopicPartition(key.topic, key.partition), value.offset))
    durable_offsets = tuple(sorted(offsets))
    memory = abstract_group(state.group(group_id)) if loaded else None
    return AbstractView(memory, Durable(durable_group(record, durable_offsets), durable_offsets))


def loaded_from(durable: Durable) -> AbstractGroup:
    """The group a coordinator rebuilds from the log when it loads the partition: the record's
    generation (Stable with its members and their stored assignments, else Empty), and the
    committed offsets."""
    if durable.group is None:
        return AbstractGroup(Phase.EMPTY, 0, None, None, (), (), durable.offsets)
    return durable.group
