"""The server-side assignors, each returning one target assignment (docs/impl.md, KIP-848).

The specification allows every outcome Kafka's assignors may return where they depend on what it
does not model (the order of random member ids, the uniform assignor's tie-breaking); this
implementation picks one, deterministically:

- **range**: static members by instance id, then dynamic members by member id; each topic cut
  into contiguous ranges over its subscribers in that order, the first `partitions %
  subscribers` taking one more.
- **uniform**: sticky. With identical subscriptions, each member keeps up to its quota of the
  partitions its previous target gave it, and the rest go to the members below quota (then one
  extra each to the first members, in member-id order, until the remainder is placed), so sizes
  differ by at most one. With differing subscriptions, a partition stays with its previous
  target owner if that member still subscribes to its topic, else goes to the subscriber with
  the fewest partitions so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from groupspec.vocabulary.requests import TopicPartition

from .config import RANGE_ASSIGNOR, ConsumerGroupConfig
from .state import NO_PARTITIONS, Member, Partitions


def subscribed_partitions(
    config: ConsumerGroupConfig, topics: Iterable[str]
) -> list[TopicPartition]:
    """Every partition of the named topics the cluster holds, in (topic, partition) order."""
    found: list[TopicPartition] = []
    for name in sorted(topics):
        topic = config.topic_named(name)
        if topic is not None:
            found.extend(TopicPartition(name, p) for p in range(topic.partitions))
    return found


def compute_target(
    config: ConsumerGroupConfig,
    assignor: str,
    members: Iterable[Member],
    previous: Mapping[str, Partitions],
) -> dict[str, Partitions]:
    """The target assignment `assignor` computes for `members` (every member gets an entry)."""
    ordered = sorted(members, key=lambda m: m.member_id)
    if assignor == RANGE_ASSIGNOR:
        return _range(config, ordered)
    return _uniform(config, ordered, previous)


def _range(config: ConsumerGroupConfig, members: list[Member]) -> dict[str, Partitions]:
    static = sorted(
        (m for m in members if m.instance_id is not None), key=lambda m: m.instance_id or ""
    )
    order = static + [m for m in members if m.instance_id is None]
    assigned: dict[str, list[TopicPartition]] = {m.member_id: [] for m in order}
    subscribers: dict[str, list[str]] = {}
    for member in order:
        for name in member.subscribed_topics:
            subscribers.setdefault(name, []).append(member.member_id)
    for name, names in subscribers.items():
        topic = config.topic_named(name)
        if topic is None:
            continue
        quota, extra = divmod(topic.partitions, len(names))
        start = 0
        for index, member_id in enumerate(names):
            size = quota + (1 if index < extra else 0)
            assigned[member_id].extend(TopicPartition(name, p) for p in range(start, start + size))
            start += size
    return {member_id: frozenset(parts) for member_id, parts in assigned.items()}


def _uniform(
    config: ConsumerGroupConfig, members: list[Member], previous: Mapping[str, Partitions]
) -> dict[str, Partitions]:
    if not members:
        return {}
    subscriptions = {m.subscribed_topics for m in members}
    topics = set().union(*subscriptions)
    partitions = subscribed_partitions(config, topics)
    if len(subscriptions) == 1:
        return _uniform_homogeneous(members, partitions, previous)
    return _uniform_heterogeneous(members, partitions, previous)


def _uniform_homogeneous(
    members: list[Member], partitions: list[TopicPartition], previous: Mapping[str, Partitions]
) -> dict[str, Partitions]:
    quota, extra = divmod(len(partitions), len(members))
    valid = set(partitions)
    assigned: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    taken: set[TopicPartition] = set()
    for member in members:
        kept = sorted(p for p in previous.get(member.member_id, NO_PARTITIONS) if p in valid)
        kept = kept[:quota]
        assigned[member.member_id].extend(kept)
        taken.update(kept)
    free = [p for p in partitions if p not in taken]
    position = 0
    for member in members:
        parts = assigned[member.member_id]
        while len(parts) < quota:
            parts.append(free[position])
            position += 1
    for member in members:
        if position >= len(free):
            break
        if extra == 0:
            break
        assigned[member.member_id].append(free[position])
        position += 1
        extra -= 1
    return {member_id: frozenset(parts) for member_id, parts in assigned.items()}


def _uniform_heterogeneous(
    members: list[Member], partitions: list[TopicPartition], previous: Mapping[str, Partitions]
) -> dict[str, Partitions]:
    by_id = {m.member_id: m for m in members}
    previous_owner = {
        partition: member_id
        for member_id, parts in previous.items()
        if member_id in by_id
        for partition in parts
    }
    assigned: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    for partition in partitions:
        owner = previous_owner.get(partition)
        if owner is not None and partition.topic in by_id[owner].subscribed_topics:
            assigned[owner].append(partition)
            continue
        subscribers = [m.member_id for m in members if partition.topic in m.subscribed_topics]
        least = min(subscribers, key=lambda member_id: (len(assigned[member_id]), member_id))
        assigned[least].append(partition)
    return {member_id: frozenset(parts) for member_id, parts in assigned.items()}
