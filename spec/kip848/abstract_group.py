"""What a consumer-protocol group guarantees: the abstract group the KIP-848 coordinator refines
(docs/refinement.md, "The consumer protocol").

The abstract state of one group is what KIP-848 promises its members, in the KIP's terms: the
group epoch, the members (with their instance ids and subscriptions, and whether a static member
is away after a temporary leave), each member's epoch, the target assignment and its epoch, and
who owns each partition, a member owning what it was given until it has revoked it. Nothing of
how the coordinator gets there (member states, timers, the assignor's choice) is in it.
`abstract_groups` is the refinement mapping from the coordinator's state; spec/kip848/refinement.py
holds its steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from groupspec.vocabulary.requests import TopicPartition

from .regex import awaits_resolution
from .state import ConsumerGroup, ConsumerGroupsState, Partitions

# The member epoch of a static member that left temporarily (epoch -2), as KIP-848 names it.
AWAY_EPOCH = -2


@dataclass(frozen=True, order=True)
class AbstractMember:
    """A member: its id, its group.instance.id (static members), its subscription (topic names
    and the topics its regular expression resolved to), its epoch, and whether its expression
    awaits a resolution (`resolving`: its subscription is not settled, the target predates it)."""

    member_id: str
    instance_id: str | None
    subscription: frozenset[str]
    epoch: int
    resolving: bool = False

    @property
    def away(self) -> bool:
        """Whether the member is a static member that left temporarily."""
        return self.epoch == AWAY_EPOCH


@dataclass(frozen=True)
class AbstractConsumerGroup:
    """One group as KIP-848 describes it (see the module docstring). `owners` maps each owned
    partition to the members that own it: a correct group never has two."""

    group_id: str
    epoch: int
    members: tuple[AbstractMember, ...]
    target_epoch: int
    target: tuple[tuple[str, Partitions], ...]
    owners: tuple[tuple[TopicPartition, tuple[str, ...]], ...]

    def member(self, member_id: str) -> AbstractMember | None:
        """The member with `member_id`, or None."""
        return next((m for m in self.members if m.member_id == member_id), None)

    def owner_of(self, partition: TopicPartition) -> tuple[str, ...]:
        """The members owning `partition` (none, or one in a correct group)."""
        return dict(self.owners).get(partition, ())

    def target_of(self, member_id: str) -> Partitions:
        """The member's target partitions."""
        return dict(self.target).get(member_id, frozenset())

    def owned_by(self, member_id: str) -> Partitions:
        """The partitions the member owns."""
        return frozenset(p for p, owners in self.owners if member_id in owners)


def abstract_group(group: ConsumerGroup) -> AbstractConsumerGroup:
    """The refinement mapping of one group."""
    owners: dict[TopicPartition, list[str]] = {}
    for member in group.iter_members():
        for partition in member.owned:
            owners.setdefault(partition, []).append(member.member_id)
    return AbstractConsumerGroup(
        group.group_id,
        group.group_epoch,
        tuple(
            AbstractMember(
                m.member_id,
                m.instance_id,
                group.subscribed_topics_of(m),
                m.member_epoch,
                resolving=awaits_resolution(group, m),
            )
            for m in group.iter_members()
        ),
        group.assignment_epoch,
        group.target_by_id,
        tuple((p, tuple(sorted(ids))) for p, ids in sorted(owners.items())),
    )


def abstract_groups(state: ConsumerGroupsState) -> dict[str, AbstractConsumerGroup]:
    """The refinement mapping: every group of the coordinator, by group id."""
    return {group.group_id: abstract_group(group) for group in state.iter_groups()}
