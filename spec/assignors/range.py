"""Kafka's RangeAssignor ("range", EAGER only), reference §8.

Per topic, over the members subscribed to it in `MemberInfo` order (static members first by
instance id, then by member id): with P partitions and N members each member gets a contiguous
block of floor(P/N) partitions in partition order, and the first P mod N members one more.
Topics are independent, so the same member gets the extra partition of every topic: the
assignment is balanced per topic, not across topics.

Only topics some member subscribes to that exist in the metadata with at least one partition
are assigned. Every member gets an entry, possibly empty. The result is fully determined by the
input: nothing here depends on Java hash-map order.

Not modelled: rack-aware assignment (KIP-881); every member is treated as having no rack.
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription, Member, RebalanceProtocol
from .ordering import sorted_members
from .owned_partitions import assignable_topics


def range_blocks(
    partitions: tuple[TopicPartition, ...], members: tuple[Member, ...]
) -> dict[str, tuple[TopicPartition, ...]]:
    """One topic's partitions split into contiguous blocks over `members`, taken in order."""
    per_member, extra = divmod(len(partitions), len(members))
    blocks: dict[str, tuple[TopicPartition, ...]] = {}
    start = 0
    for position, member in enumerate(members):
        size = per_member + (1 if position < extra else 0)
        blocks[member.member_id] = partitions[start : start + size]
        start += size
    return blocks


class RangeAssignor:
    """Per topic, contiguous partition ranges over the subscribed members (reference §8)."""

    @property
    def name(self) -> str:
        """The protocol name "range"."""
        return "range"

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """Range only supports EAGER rebalancing."""
        return (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """Range sends no user data."""
        return None

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """Range-assign every assignable topic; every member gets an entry."""
        assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
        for topic in sorted(assignable_topics(group)):
            subscribers = sorted_members(
                member for member in group.members if topic in member.subscription.topics
            )
            blocks = range_blocks(group.cluster.partitions([topic]), subscribers)
            for member_id, block in blocks.items():
                assignment[member_id].extend(block)
        return GroupAssignment.of(assignment)
