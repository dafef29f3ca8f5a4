"""Who owned which partition before this rebalance, as the sticky assignors judge it (KIP-792).

Every member reports the partitions it owns and the generation in which it got them
(reference §7). The sticky assignors trust a claim only when:

1. the partition's topic is assignable now: some member subscribes to it and it exists in the
   metadata with at least one partition (claims on deleted or unsubscribed topics are dropped);
2. no other member has a better claim on it. Two members claiming the same partition in the
   same generation both lose it and the partition is *conflicted* (cooperative-sticky treats it
   as transferring ownership: nobody gets it this round); if their generations differ, the
   member with the higher generation keeps it.

A member's generation comes from ConsumerProtocolSubscription v2+ (`Subscription.generation`);
`previous_owners` reads only the subscription fields. The assignors themselves read their own
user data where Kafka does (see `sticky_user_data`), through `resolve_claims`.

Implementation-defined in Kafka, fixed here:

- Kafka visits members in Java hash-map order, and with three or more claimants of mixed
  generations the outcome depends on that order. The spec visits members by descending
  generation, then member id, which gives the order-independent rule: the single claimant with the highest generation keeps the partition;
  if several share the highest generation, nobody keeps it and it is conflicted.

Divergence: Kafka compares the visiting member's generation as its assignor reads it with the
holder's generation *as the holder's subscription states it* (−1 when absent). The two differ
only when a subscription carries no generation (v0/v1, or −1 after a reset) while the assignor's
user data does; then in Kafka the claimant visited last (hash-map order) wins and same-generation
claims are not detected. The spec uses the assignor's reading for both sides, so the
highest-generation rule above holds there too.

Also a divergence: Kafka checks only the topic of a claim, not the partition number. A claim on a
partition number the topic does not have (possible only after a topic is deleted and re-created
with fewer partitions) would be kept and could even be assigned; the spec drops it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import DEFAULT_GENERATION, GroupSubscription, Subscription
from .ordering import java_string_key
from .sticky_user_data import MemberData


@dataclass(frozen=True)
class PreviousOwnership:
    """The trusted previous owner of each partition, and the partitions claimed in conflict.

    `owner` pairs each trusted partition with its owner, sorted by partition; `conflicted`
    lists partitions that members of the same generation both claimed (sorted).
    """

    owner: tuple[tuple[TopicPartition, str], ...]
    conflicted: tuple[TopicPartition, ...]

    def as_dict(self) -> dict[TopicPartition, str]:
        """Partition → its trusted previous owner."""
        return dict(self.owner)

    def owner_of(self, partition: TopicPartition) -> str | None:
        """The trusted previous owner of `partition`, or None."""
        return self.as_dict().get(partition)

    def owned_by(self, member_id: str) -> tuple[TopicPartition, ...]:
        """The partitions `member_id` is trusted to have owned, sorted."""
        return tuple(partition for partition, owner in self.owner if owner == member_id)


def assignable_topics(group: GroupSubscription) -> frozenset[str]:
    """Topics some member subscribes to that exist in the metadata with at least one partition."""
    subscribed = {topic for member in group.members for topic in member.subscription.topics}
    return frozenset(
        topic
        for topic, count in group.cluster.partitions_per_topic
        if topic in subscribed and count > 0
    )


def subscription_generation(subscription: Subscription) -> int | None:
    """The generation a subscription states; None when it has none (Kafka reads −1 as absent)."""
    return subscription.generation if subscription.generation >= 0 else None


def member_data_from_subscription(subscription: Subscription) -> MemberData:
    """The claim the subscription fields make: its owned partitions and its generation."""
    return MemberData(subscription.owned_partitions, subscription_generation(subscription))


def max_generation(member_data: Mapping[str, MemberData]) -> int:
    """The highest generation any member claims (−1 when none does)."""
    generations = [data.generation for data in member_data.values() if data.generation is not None]
    return max([DEFAULT_GENERATION, *generations])


def resolve_claims(
    group: GroupSubscription, member_data: Mapping[str, MemberData]
) -> PreviousOwnership:
    """Resolve every member's claim (as its assignor reads it) into trusted owners and conflicts."""
    topics = assignable_topics(group)

    def generation_of(member_id: str) -> int:
        generation = member_data[member_id].generation
        return DEFAULT_GENERATION if generation is None else generation

    def valid(partition: TopicPartition) -> bool:
        return partition.topic in topics and group.cluster.contains(partition)

    visiting_order = sorted(
        group.member_ids, key=lambda mid: (-generation_of(mid), java_string_key(mid))
    )
    owned: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
    holder: dict[TopicPartition, str] = {}  # the last member whose claim was looked at
    conflicted: set[TopicPartition] = set()
    for member_id in visiting_order:
        generation = generation_of(member_id)
        for partition in member_data[member_id].partitions:
            if not valid(partition):
                continue
            other = holder.get(partition)
            if other is None:
                owned[member_id].append(partition)
                holder[partition] = member_id
                continue
            other_generation = generation_of(other)
            if generation == other_generation:
                conflicted.add(partition)
                if partition in owned[other]:
                    owned[other].remove(partition)
                holder[partition] = member_id
            elif generation > other_generation:
                owned[member_id].append(partition)
                if partition in owned[other]:
                    owned[other].remove(partition)
                holder[partition] = member_id
    owner = {partition: mid for mid, partitions in owned.items() for partition in partitions}
    return PreviousOwnership(tuple(sorted(owner.items())), tuple(sorted(conflicted)))


def previous_owners(group: GroupSubscription) -> PreviousOwnership:
    """Who owned what before this round, judged from the subscriptions' owned partitions and generations."""
    return resolve_claims(
        group,
        {
            member.member_id: member_data_from_subscription(member.subscription)
            for member in group.members
        },
    )
