"""What an assignor sees and what it returns: topic partitions, subscriptions, assignments.

These are the values of Kafka's `ConsumerPartitionAssignor.GroupSubscription` and
`GroupAssignment`, together with the cluster metadata the leader reads (partitions per topic).
All of them are immutable with collections in a canonical order, so equal inputs are equal
values and can be keys, compared, and fingerprinted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from groupspec.vocabulary.requests import TopicPartition

DEFAULT_GENERATION = -1  # ConsumerProtocolSubscription.GenerationId when unknown


class RebalanceProtocol(IntEnum):
    """KIP-429 rebalance protocols; a higher value is preferred when both sides support it."""

    EAGER = 0
    COOPERATIVE = 1


def sorted_partitions(partitions: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
    """Partitions without duplicates, by topic then partition number."""
    return tuple(sorted(set(partitions)))


@dataclass(frozen=True)
class Cluster:
    """The leader's metadata snapshot: how many partitions each topic has."""

    partitions_per_topic: tuple[tuple[str, int], ...]

    def __post_init__(self) -> None:
        names = [topic for topic, _ in self.partitions_per_topic]
        if names != sorted(set(names)):
            raise ValueError(f"topics must be unique and sorted, got {names}")
        for topic, count in self.partitions_per_topic:
            if count < 0:
                raise ValueError(f"topic {topic!r} has a negative partition count {count}")

    @classmethod
    def of(cls, partitions_per_topic: Mapping[str, int]) -> Cluster:
        """A cluster from a topic → partition-count mapping."""
        return cls(tuple(sorted(partitions_per_topic.items())))

    def partition_count(self, topic: str) -> int | None:
        """The topic's partition count, or None when the topic is not in the metadata."""
        for name, count in self.partitions_per_topic:
            if name == topic:
                return count
        return None

    @property
    def topics(self) -> frozenset[str]:
        """Every topic in the metadata."""
        return frozenset(topic for topic, _ in self.partitions_per_topic)

    def partitions(self, topics: Iterable[str]) -> tuple[TopicPartition, ...]:
        """Every partition of those of `topics` that exist, by topic then partition."""
        wanted = set(topics)
        return tuple(
            TopicPartition(topic, number)
            for topic, count in self.partitions_per_topic
            if topic in wanted
            for number in range(count)
        )

    def contains(self, partition: TopicPartition) -> bool:
        """Whether the partition exists in this snapshot."""
        count = self.partition_count(partition.topic)
        return count is not None and 0 <= partition.partition < count


@dataclass(frozen=True)
class Subscription:
    """One member's subscription as the leader decodes it (ConsumerProtocolSubscription v0–v3)."""

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION
    rack: str | None = None
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        if list(self.topics) != sorted(set(self.topics)):
            raise ValueError(f"topics must be unique and sorted, got {list(self.topics)}")
        if list(self.owned_partitions) != sorted(set(self.owned_partitions)):
            raise ValueError("owned partitions must be unique and sorted")

    @classmethod
    def of(
        cls,
        topics: Iterable[str],
        owned: Iterable[TopicPartition] = (),
        generation: int = DEFAULT_GENERATION,
        rack: str | None = None,
        user_data: bytes | None = None,
    ) -> Subscription:
        """A subscription with its collections put in canonical order."""
        return cls(
            tuple(sorted(set(topics))), sorted_partitions(owned), generation, rack, user_data
        )


@dataclass(frozen=True)
class Member:
    """A group member as the leader's JoinGroup response lists it, with its subscription."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None


@dataclass(frozen=True)
class GroupSubscription:
    """Everything an assignor is given: the metadata snapshot and every member's subscription."""

    cluster: Cluster
    members: tuple[Member, ...]

    def __post_init__(self) -> None:
        ids = [member.member_id for member in self.members]
        if ids != sorted(set(ids)):
            raise ValueError(f"member ids must be unique and sorted, got {ids}")

    @classmethod
    def of(cls, cluster: Cluster, members: Iterable[Member]) -> GroupSubscription:
        """A group subscription with members sorted by member id."""
        return cls(cluster, tuple(sorted(members, key=lambda member: member.member_id)))

    def member(self, member_id: str) -> Member:
        """The member with this id."""
        for member in self.members:
            if member.member_id == member_id:
                return member
        raise KeyError(member_id)

    @property
    def member_ids(self) -> tuple[str, ...]:
        """Every member id, sorted."""
        return tuple(member.member_id for member in self.members)

    @property
    def subscribed_partitions(self) -> tuple[TopicPartition, ...]:
        """Every existing partition of every topic some member subscribes to."""
        topics = {topic for member in self.members for topic in member.subscription.topics}
        return self.cluster.partitions(topics)


@dataclass(frozen=True)
class GroupAssignment:
    """An assignor's result: for each member id, its partitions (both sorted).

    `user_data` carries per-member assignment user data for assignors that send it.
    """

    assignments: tuple[tuple[str, tuple[TopicPartition, ...]], ...]
    user_data: tuple[tuple[str, bytes], ...] = field(default=())

    def __post_init__(self) -> None:
        ids = [member_id for member_id, _ in self.assignments]
        if ids != sorted(set(ids)):
            raise ValueError(f"member ids must be unique and sorted, got {ids}")
        for member_id, partitions in self.assignments:
            if list(partitions) != sorted(partitions):
                raise ValueError(f"partitions of {member_id!r} must be sorted")

    @classmethod
    def of(cls, assignments: Mapping[str, Iterable[TopicPartition]]) -> GroupAssignment:
        """An assignment from a member id → partitions mapping; duplicates are kept so oracles see them."""
        return cls(
            tuple(
                (member_id, tuple(sorted(partitions)))
                for member_id, partitions in sorted(assignments.items())
            )
        )

    def as_dict(self) -> dict[str, tuple[TopicPartition, ...]]:
        """Member id → partitions."""
        return dict(self.assignments)

    def partitions_of(self, member_id: str) -> tuple[TopicPartition, ...]:
        """The partitions given to `member_id` (empty when it has no entry)."""
        return self.as_dict().get(member_id, ())

    def owners(self) -> dict[TopicPartition, tuple[str, ...]]:
        """Partition → every member it was given to (more than one means the result is invalid)."""
        result: dict[TopicPartition, list[str]] = {}
        for member_id, partitions in self.assignments:
            for partition in partitions:
                result.setdefault(partition, []).append(member_id)
        return {partition: tuple(ids) for partition, ids in sorted(result.items())}
