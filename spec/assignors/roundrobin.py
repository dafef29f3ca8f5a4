"""Kafka's RoundRobinAssignor ("roundrobin", EAGER only), reference §8.

All partitions of all subscribed topics are laid out by topic name, then partition number.
Members are cycled in `MemberInfo` order (static members first by instance id, then by member
id); each partition goes to the next member in the cycle that subscribes to its topic, skipping
the others. The cycle carries on from topic to topic. With identical subscriptions the counts
differ by at most one; with differing subscriptions the result can be badly skewed.

Topics missing from the metadata are skipped. Every member gets an entry, possibly empty. The
result is fully determined by the input: nothing here depends on Java hash-map order.
"""

from __future__ import annotations

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import GroupAssignment, GroupSubscription, RebalanceProtocol
from .ordering import java_string_key, sorted_members


class RoundRobinAssignor:
    """Partitions dealt out one by one to the subscribed members in turn (reference §8)."""

    @property
    def name(self) -> str:
        """The protocol name "roundrobin"."""
        return "roundrobin"

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """Roundrobin only supports EAGER rebalancing."""
        return (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """Roundrobin sends no user data."""
        return None

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """Deal every partition of every subscribed topic round-robin; every member gets an entry."""
        members = sorted_members(group.members)
        assignment: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
        topics = sorted(
            {topic for member in members for topic in member.subscription.topics},
            key=java_string_key,
        )
        turn = 0  # index into `members` of the member whose turn it is
        for topic in topics:
            for partition in group.cluster.partitions([topic]):
                # Some member subscribes to `topic`, so this stops within one cycle.
                while topic not in members[turn].subscription.topics:
                    turn = (turn + 1) % len(members)
                assignment[members[turn].member_id].append(partition)
                turn = (turn + 1) % len(members)
        return GroupAssignment.of(assignment)
