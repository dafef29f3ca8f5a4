"""The server-side assignors of a consumer-protocol group, as relations: every target assignment
the assignor may return for the group's members (docs/protocol.md §12.7).

Kafka 4.3.0 ships two (`group-coordinator/.../assignor/RangeAssignor.java` and
`UniformAssignor.java`); `group.consumer.assignors` lists those the broker offers, the first
being the default. Both assign every partition of every subscribed topic to exactly one member
subscribed to that topic. Where their result depends on something the spec does not model, the
relation returns every outcome that dependence allows:

- **range** orders members by instance id (static members first), then by member id. Kafka's
  member ids are random UUIDs, so the relative order of dynamic members is every order. Each
  topic is cut into contiguous ranges over its subscribers in that order, the first
  `partitions % subscribers` getting one more.
- **uniform** balances and keeps partitions where they were, with rack awareness, in two
  builders (homogeneous and heterogeneous subscriptions). The spec holds it to its contract,
  not its algorithm: with identical subscriptions, member sizes differ by at most one; with
  differing subscriptions, any assignment of each partition to a subscriber. This is a superset
  of what Kafka returns; every property the coordinator must keep holds for all of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import permutations, product

from groupspec.vocabulary.requests import TopicPartition

from .config import RANGE_ASSIGNOR, ConsumerGroupConfig
from .state import ConsumerGroupMember, Partitions

Target = Mapping[str, Partitions]


def subscribed_partitions(config: ConsumerGroupConfig, topics: Iterable[str]) -> Partitions:
    """Every partition of the named topics the cluster holds (unknown topics have none)."""
    found: set[TopicPartition] = set()
    for name in topics:
        topic = config.topic_named(name)
        if topic is not None:
            found.update(TopicPartition(name, p) for p in range(topic.partitions))
    return frozenset(found)


def candidate_targets(
    config: ConsumerGroupConfig, assignor: str, members: Iterable[ConsumerGroupMember]
) -> tuple[dict[str, Partitions], ...]:
    """Every target assignment `assignor` may compute for `members`, in a stable order."""
    ordered = sorted(members, key=lambda m: m.member_id)
    if assignor == RANGE_ASSIGNOR:
        found = [_range(config, order) for order in _range_orders(ordered)]
    else:
        found = _uniform(config, ordered)
    unique: list[dict[str, Partitions]] = []
    for target in found:
        if target not in unique:
            unique.append(target)
    return tuple(unique)


def _range_orders(
    members: list[ConsumerGroupMember],
) -> Iterable[tuple[ConsumerGroupMember, ...]]:
    static = sorted(
        (m for m in members if m.instance_id is not None), key=lambda m: m.instance_id or ""
    )
    dynamic = [m for m in members if m.instance_id is None]
    for order in permutations(dynamic):
        yield (*static, *order)


def _range(
    config: ConsumerGroupConfig, order: tuple[ConsumerGroupMember, ...]
) -> dict[str, Partitions]:
    assigned: dict[str, set[TopicPartition]] = {m.member_id: set() for m in order}
    topics = sorted({name for m in order for name in m.subscribed_topic_names})
    for name in topics:
        topic = config.topic_named(name)
        if topic is None:
            continue
        subscribers = [m.member_id for m in order if name in m.subscribed_topic_names]
        quota, extra = divmod(topic.partitions, len(subscribers))
        start = 0
        for index, member_id in enumerate(subscribers):
            size = quota + (1 if index < extra else 0)
            assigned[member_id].update(TopicPartition(name, p) for p in range(start, start + size))
            start += size
    return {member_id: frozenset(parts) for member_id, parts in assigned.items()}


def _uniform(
    config: ConsumerGroupConfig, members: list[ConsumerGroupMember]
) -> list[dict[str, Partitions]]:
    partitions = sorted(
        subscribed_partitions(config, {n for m in members for n in m.subscribed_topic_names})
    )
    eligible = [
        [m.member_id for m in members if partition.topic in m.subscribed_topic_names]
        for partition in partitions
    ]
    homogeneous = len({m.subscribed_topic_names for m in members}) <= 1
    found: list[dict[str, Partitions]] = []
    for owners in product(*eligible):
        assigned: dict[str, set[TopicPartition]] = {m.member_id: set() for m in members}
        for partition, owner in zip(partitions, owners, strict=True):
            assigned[owner].add(partition)
        sizes = [len(parts) for parts in assigned.values()]
        if homogeneous and sizes and max(sizes) - min(sizes) > 1:
            continue
        found.append({member_id: frozenset(parts) for member_id, parts in assigned.items()})
    return found
