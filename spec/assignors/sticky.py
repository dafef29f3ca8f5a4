"""The assignment shared by Kafka's two sticky assignors (`AbstractStickyAssignor`), reference §8.

Goal: a balanced assignment first, then as many previous ownerships kept as possible.

1. Resolve the members' claims into trusted previous owners (`owned_partitions.resolve_claims`).
2. If every member subscribes to the same topics, take the *constrained* path
   (`constrained_assign`): minQuota = floor(P/N), maxQuota = ceil(P/N), exactly P mod N members
   end with maxQuota. Each member keeps its owned partitions up to its quota (the first ones by
   partition number, then topic), the rest are revoked; unassigned partitions (by topic, then
   partition) go round-robin to the members below minQuota (by member id), then one each to
   members at minQuota until P mod N members have maxQuota.
3. Otherwise take the *general* path (`general_assign`): keep the owned partitions of still
   subscribed topics; assign the rest, most constrained first (topics by number of potential
   consumers, then name), each to the eligible member with the fewest partitions; then move
   partitions from members that have more than one partition above another eligible member,
   until `is_balanced`; if that did not lower the balance score, keep the assignment from
   before the moves.

The constrained path also reports which partitions it hands from one owner to another
(`StickyRound.transferring`), for cooperative-sticky; the general path does not, and
cooperative-sticky then derives them from the owned partitions (Kafka does the same).

Implementation-defined in Kafka (Java hash-map order), fixed here by visiting members in Java
string order of member id — so which members keep maxQuota in the constrained path (members
owning maxQuota or more, visited first, keep maxQuota; later ones keep minQuota), and:

- general path: which previous owner from an older generation is remembered when two claim a
  partition in the same generation (the first in member id order);
- general path: which partition is moved back when Kafka undoes an earlier movement between the
  same two members ("getTheActualPartitionToBeMoved" picks any; the spec picks the lowest);
- all subscriptions equal: Kafka's check skips members with an empty subscription visited before
  the first non-empty one; the spec compares all subscriptions as sets, which is Kafka's outcome
  when a non-empty subscription is visited first.

Divergences: Kafka remembers the highest generation it ever saw in the assignor instance across
rebalances; the spec computes it per round (no state between rounds). Kafka's general path may
move a partition back to a previous owner of an older generation that no longer subscribes to its
topic (or crash if that member's assignment is fixed); the spec applies that rule only when the
previous owner can take the partition now.

Not modelled: rack-aware assignment (KIP-881); every member is treated as having no rack.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import DEFAULT_GENERATION, GroupAssignment, GroupSubscription
from .ordering import java_string_key
from .owned_partitions import assignable_topics, max_generation, resolve_claims
from .sticky_user_data import MemberData


class StickyAssignmentError(RuntimeError):
    """The constrained path ran out of members to fill (Kafka's IllegalStateException).

    It cannot happen for valid input; it guards the spec against its own mistakes.
    """


@dataclass(frozen=True)
class StickyRound:
    """The sticky assignment of one round, and the partitions it moves between owners.

    `transferring` pairs each partition handed from a previous owner to a new one with the new
    owner (constrained path only); None means the path did not track it (general path).
    """

    assignment: GroupAssignment
    transferring: tuple[tuple[TopicPartition, str], ...] | None


def all_subscriptions_equal(group: GroupSubscription) -> bool:
    """Whether every member subscribes to exactly the same topics (selects the constrained path)."""
    return len({member.subscription.topics for member in group.members}) <= 1


def partitions_in_order(
    topics: Sequence[str], partitions_per_topic: Mapping[str, int]
) -> list[TopicPartition]:
    """Every partition of `topics`, topic by topic in the given order, partitions ascending."""
    return [
        TopicPartition(topic, number)
        for topic in topics
        for number in range(partitions_per_topic[topic])
    ]


# ---------------------------------------------------------------------------------------------
# Constrained path (identical subscriptions)


def constrained_assign(
    partitions_per_topic: Mapping[str, int],
    owned: Mapping[str, Sequence[TopicPartition]],
    conflicted: Collection[TopicPartition],
) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
    """Kafka's ConstrainedAssignmentBuilder: the assignment and the partitions changing owner.

    `owned` maps every member to its trusted owned partitions; `conflicted` are the partitions
    claimed by several members of one generation (nobody keeps them).
    """
    members = sorted(owned, key=java_string_key)
    total = sum(partitions_per_topic.values())
    min_quota = total // len(members)
    max_quota = -(-total // len(members))
    # How many members end with maxQuota (zero when minQuota == maxQuota).
    expected_members_over_min_quota = total % len(members)
    members_over_min_quota = 0

    assignment: dict[str, list[TopicPartition]] = {member: [] for member in members}
    maybe_revoked: dict[TopicPartition, str] = {}  # owned beyond quota → its owner
    unfilled_under_min_quota: list[str] = []
    unfilled_exactly_min_quota: list[str] = []  # may still take one more, up to maxQuota

    # 1. Keep owned partitions up to the member's quota.
    for member in members:
        kept = sorted(
            (partition for partition in owned[member] if partition not in conflicted),
            key=lambda tp: (tp.partition, java_string_key(tp.topic)),
        )
        if len(kept) < min_quota:
            assignment[member].extend(kept)
            unfilled_under_min_quota.append(member)
        elif len(kept) >= max_quota and members_over_min_quota < expected_members_over_min_quota:
            members_over_min_quota += 1
            if members_over_min_quota == expected_members_over_min_quota:
                unfilled_exactly_min_quota.clear()
            assignment[member].extend(kept[:max_quota])
            maybe_revoked.update((partition, member) for partition in kept[max_quota:])
        else:
            assignment[member].extend(kept[:min_quota])
            maybe_revoked.update((partition, member) for partition in kept[min_quota:])
            if members_over_min_quota < expected_members_over_min_quota:
                unfilled_exactly_min_quota.append(member)

    assigned = {partition for partitions in assignment.values() for partition in partitions}
    all_partitions = partitions_in_order(
        sorted(partitions_per_topic, key=java_string_key), partitions_per_topic
    )
    unassigned = [partition for partition in all_partitions if partition not in assigned]
    unfilled_under_min_quota.sort(key=java_string_key)
    unfilled_exactly_min_quota.sort(key=java_string_key)

    # 2. Round-robin the rest: members under minQuota in turn, then members at minQuota one
    #    partition each until enough members have maxQuota.
    transferring: dict[TopicPartition, str] = {}
    turn = 0  # position in unfilled_under_min_quota
    for partition in unassigned:
        if turn < len(unfilled_under_min_quota):
            member = unfilled_under_min_quota[turn]
        elif not unfilled_under_min_quota and not unfilled_exactly_min_quota:
            raise StickyAssignmentError("no more unfilled members to be assigned")
        elif not unfilled_under_min_quota:
            member = unfilled_exactly_min_quota.pop(0)
        else:
            turn = 0
            member = unfilled_under_min_quota[0]

        assignment[member].append(partition)
        previous_owner = maybe_revoked.get(partition)
        if (previous_owner is not None and previous_owner != member) or partition in conflicted:
            transferring[partition] = member

        count = len(assignment[member])
        if count == min_quota:
            # Only members under minQuota reach it here: move it to the minQuota list.
            unfilled_under_min_quota.pop(turn)
            unfilled_exactly_min_quota.append(member)
        else:
            if count == max_quota:
                members_over_min_quota += 1
            if member in unfilled_under_min_quota:
                turn += 1

    # 3. Every member still under minQuota must have reached it, with the expected number of
    #    members at maxQuota.
    if unfilled_under_min_quota:
        if members_over_min_quota != expected_members_over_min_quota:
            raise StickyAssignmentError("expected members with maxQuota not reached")
        for member in unfilled_under_min_quota:
            if len(assignment[member]) != min_quota:
                raise StickyAssignmentError(f"member {member!r} did not reach minQuota")
    return assignment, transferring


# ---------------------------------------------------------------------------------------------
# General path (differing subscriptions)


def is_balanced(
    assignment: Mapping[str, Sequence[TopicPartition]],
    potential_topics: Mapping[str, Collection[str]],
    partitions_per_topic: Mapping[str, int],
) -> bool:
    """Kafka's isBalanced: no partition could move to a member and leave a better balance.

    True when the members' partition counts differ by at most one, or when every member that
    has fewer partitions than it could get (all partitions of its `potential_topics`) cannot
    take any of those from a member holding more than one partition more than itself.
    Partitions that no member holds are ignored.
    """
    counts = [len(partitions) for partitions in assignment.values()]
    if not counts or min(counts) >= max(counts) - 1:
        return True
    holder = {partition: member for member, ps in assignment.items() for partition in ps}
    for member, partitions in assignment.items():
        topics = potential_topics[member]
        if len(partitions) == sum(partitions_per_topic[topic] for topic in topics):
            continue
        for partition in partitions_in_order(sorted(topics), partitions_per_topic):
            other = holder.get(partition)
            if (
                other is not None
                and other != member
                and len(partitions) + 1 < len(assignment[other])
            ):
                return False
    return True


def assignment_is_balanced(group: GroupSubscription, assignment: GroupAssignment) -> bool:
    """`is_balanced` for a whole assignment of `group`, each member eligible for its topics."""
    topics = assignable_topics(group)
    return is_balanced(
        {mid: assignment.partitions_of(mid) for mid in group.member_ids},
        {m.member_id: topics & set(m.subscription.topics) for m in group.members},
        {topic: group.cluster.partition_count(topic) or 0 for topic in topics},
    )


def balance_score(assignment: Mapping[str, Sequence[TopicPartition]]) -> int:
    """Kafka's getBalanceScore: the sum of count differences over all pairs of members."""
    counts = [len(partitions) for partitions in assignment.values()]
    return sum(
        abs(counts[i] - counts[j]) for i in range(len(counts)) for j in range(i + 1, len(counts))
    )


def previous_generation_owners(
    member_data: Mapping[str, MemberData],
) -> dict[TopicPartition, tuple[str, int]]:
    """Kafka's prevAssignment: partitions claimed in generations older than the newest, with the
    member and generation of the newest such claim (a tie keeps the first in member id order).
    """
    newest = max_generation(member_data)
    previous: dict[TopicPartition, tuple[str, int]] = {}
    for member in sorted(member_data, key=java_string_key):
        data = member_data[member]
        if data.generation is not None and data.generation < newest:
            generation = data.generation
        elif data.generation is None and newest > DEFAULT_GENERATION:
            generation = DEFAULT_GENERATION
        else:
            continue
        for partition in data.partitions:
            if partition not in previous or generation > previous[partition][1]:
                previous[partition] = (member, generation)
    return previous


class PartitionMovements:
    """The moves made so far in the general path: partition → (first source, latest destination).

    Kafka uses it to undo an earlier move between the same two members rather than make a new
    one, which keeps the result stickier.
    """

    def __init__(self) -> None:
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def move(self, partition: TopicPartition, old: str, new: str) -> None:
        """Record that `partition` moves from `old` to `new`."""
        if partition in self.moves:
            source, _ = self.moves.pop(partition)
            if source != new:  # moving back to where it started leaves no record
                self.moves[partition] = (source, new)
        else:
            self.moves[partition] = (old, new)

    def actual_partition_to_move(
        self, partition: TopicPartition, old: str, new: str
    ) -> TopicPartition:
        """Kafka's getTheActualPartitionToBeMoved: a partition of the same topic that earlier
        moved the opposite way (from `new` to where `partition` started), else `partition`.
        """
        if partition in self.moves:
            old = self.moves[partition][0]
        reverse = [
            p for p, pair in self.moves.items() if p.topic == partition.topic and pair == (new, old)
        ]
        # Kafka takes any of them (hash-set order); the lowest keeps the spec deterministic.
        return min(reverse) if reverse else partition


class GeneralAssignmentBuilder:
    """Kafka's GeneralAssignmentBuilder: the sticky assignment when subscriptions differ."""

    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Collection[str]],
        owned: Mapping[str, Sequence[TopicPartition]],
        previous_owners: Mapping[TopicPartition, tuple[str, int]],
    ) -> None:
        self.partitions_per_topic = dict(partitions_per_topic)
        self.subscriptions = subscriptions
        self.previous_owners = previous_owners
        members = sorted(subscriptions, key=java_string_key)
        self.potential_topics: dict[str, list[str]] = {
            member: sorted(t for t in subscriptions[member] if t in partitions_per_topic)
            for member in members
        }
        self.potential_consumers: dict[str, list[str]] = {
            topic: [m for m in members if topic in self.potential_topics[m]]
            for topic in partitions_per_topic
        }
        self.current: dict[str, list[TopicPartition]] = {m: list(owned.get(m, ())) for m in members}
        self.current_owner: dict[TopicPartition, str] = {
            partition: member for member, ps in self.current.items() for partition in ps
        }
        topics_most_constrained_first = sorted(
            partitions_per_topic,
            key=lambda topic: (len(self.potential_consumers[topic]), java_string_key(topic)),
        )
        self.sorted_all_partitions = partitions_in_order(
            topics_most_constrained_first, partitions_per_topic
        )
        self.movements = PartitionMovements()
        self.revocation_required = False

    def members_by_load(self) -> list[str]:
        """Kafka's sortedCurrentSubscriptions: fewest partitions first, then member id."""
        return sorted(self.current, key=lambda m: (len(self.current[m]), java_string_key(m)))

    def max_assignment_size(self, member: str) -> int:
        """How many partitions the member could have at most: all of its potential topics'."""
        return sum(self.partitions_per_topic[t] for t in self.potential_topics[member])

    def build(self) -> dict[str, list[TopicPartition]]:
        """Keep owned partitions, assign the rest, balance; the assignment of every member."""
        assigned = self.assign_owned_partitions()
        unassigned = [p for p in self.sorted_all_partitions if p not in assigned]
        self.balance(unassigned)
        return self.current

    def assign_owned_partitions(self) -> set[TopicPartition]:
        """Drop owned partitions of topics the member no longer subscribes to; the rest stay."""
        assigned: set[TopicPartition] = set()
        for member, partitions in self.current.items():
            # Claims on topics that are gone were dropped already (`resolve_claims`).
            for partition in list(partitions):
                if partition.topic not in self.subscriptions[member]:
                    partitions.remove(partition)
                    del self.current_owner[partition]
                    self.revocation_required = True
                else:
                    assigned.add(partition)
        return assigned

    def maybe_assign(self, unassigned: Sequence[TopicPartition]) -> None:
        """Give each unassigned partition to the least loaded member that subscribes to its topic."""
        for partition in unassigned:
            for member in self.members_by_load():
                if partition.topic in self.potential_topics[member]:
                    self.current[member].append(partition)
                    self.current_owner[partition] = member
                    break

    def can_topic_participate_in_reassignment(self, topic: str) -> bool:
        """A topic with two or more potential consumers may have its partitions moved."""
        return len(self.potential_consumers[topic]) >= 2

    def can_consumer_participate_in_reassignment(self, member: str) -> bool:
        """A member may gain or lose partitions unless it has all it can get, none of them movable."""
        if len(self.current[member]) < self.max_assignment_size(member):
            return True
        return any(
            self.can_topic_participate_in_reassignment(p.topic) for p in self.current[member]
        )

    def is_balanced(self) -> bool:
        """Kafka's isBalanced over the members taking part in reassignment."""
        return is_balanced(self.current, self.potential_topics, self.partitions_per_topic)

    def balance(self, unassigned: list[TopicPartition]) -> None:
        """Assign the unassigned partitions, then move partitions until balanced."""
        initializing = all(not partitions for partitions in self.current.values())
        self.maybe_assign(unassigned)

        # Only partitions of topics with two or more potential consumers can move, and only
        # members that could gain or lose a partition take part.
        reassignable = [
            p
            for p in self.sorted_all_partitions
            if self.can_topic_participate_in_reassignment(p.topic)
        ]
        unassigned = [p for p in unassigned if self.can_topic_participate_in_reassignment(p.topic)]
        fixed = {
            member: self.current.pop(member)
            for member in list(self.current)
            if not self.can_consumer_participate_in_reassignment(member)
        }

        before = copy.deepcopy(self.current)
        owners_before = dict(self.current_owner)
        if not self.revocation_required:
            # No revocation is needed anyway: first try moving only the newly assigned partitions.
            self.perform_reassignments(unassigned)
        performed = self.perform_reassignments(reassignable)
        if not initializing and performed and balance_score(self.current) >= balance_score(before):
            # The moves gave up stickiness without improving the balance: undo them.
            self.current = before
            self.current_owner = owners_before
        self.current.update(fixed)

    def perform_reassignments(self, partitions: Sequence[TopicPartition]) -> bool:
        """Move partitions towards balance until no move helps; whether any partition moved."""
        performed = False
        modified = True
        while modified:
            modified = False
            for partition in partitions:
                if self.is_balanced():
                    break
                owner = self.current_owner[partition]
                previous = self.previous_owners.get(partition)
                previous_owner = previous[0] if previous is not None else None
                if (
                    previous_owner is not None
                    and self.could_take(previous_owner, partition)
                    and len(self.current[owner]) > len(self.current[previous_owner]) + 1
                ):
                    # Give it back to its owner of the older generation.
                    self.reassign_partition(partition, previous_owner)
                    performed = modified = True
                    continue
                if any(
                    len(self.current[owner]) > len(self.current[other]) + 1
                    for other in self.potential_consumers[partition.topic]
                    if other in self.current
                ):
                    self.reassign_partition(partition, self.least_loaded_for(partition))
                    performed = modified = True
        return performed

    def could_take(self, member: str, partition: TopicPartition) -> bool:
        """Whether `member` takes part in reassignment and subscribes to the partition's topic."""
        return member in self.current and partition.topic in self.potential_topics[member]

    def least_loaded_for(self, partition: TopicPartition) -> str:
        """The member with the fewest partitions that subscribes to the partition's topic."""
        return next(
            m for m in self.members_by_load() if partition.topic in self.potential_topics[m]
        )

    def reassign_partition(self, partition: TopicPartition, new_owner: str) -> None:
        """Move `partition` (or the partition that undoes an earlier opposite move) to `new_owner`."""
        old_owner = self.current_owner[partition]
        to_move = self.movements.actual_partition_to_move(partition, old_owner, new_owner)
        self.process_partition_movement(to_move, new_owner)

    def process_partition_movement(self, partition: TopicPartition, new_owner: str) -> None:
        """Move `partition` from its current owner to `new_owner`."""
        old_owner = self.current_owner[partition]
        self.movements.move(partition, old_owner, new_owner)
        self.current[old_owner].remove(partition)
        self.current[new_owner].append(partition)
        self.current_owner[partition] = new_owner


def general_assign(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Collection[str]],
    owned: Mapping[str, Sequence[TopicPartition]],
    previous_owners: Mapping[TopicPartition, tuple[str, int]],
) -> dict[str, list[TopicPartition]]:
    """The general-path sticky assignment (see `GeneralAssignmentBuilder`)."""
    return GeneralAssignmentBuilder(
        partitions_per_topic, subscriptions, owned, previous_owners
    ).build()


# ---------------------------------------------------------------------------------------------


def sticky_assign(group: GroupSubscription, member_data: Mapping[str, MemberData]) -> StickyRound:
    """The sticky assignment of `group`, given each member's claim as its assignor reads it."""
    if not group.members:
        return StickyRound(GroupAssignment(()), ())
    topics = assignable_topics(group)
    partitions_per_topic = {topic: group.cluster.partition_count(topic) or 0 for topic in topics}
    ownership = resolve_claims(group, member_data)
    owned = {member_id: ownership.owned_by(member_id) for member_id in group.member_ids}

    if all_subscriptions_equal(group):
        assignment, transferring = constrained_assign(
            partitions_per_topic, owned, frozenset(ownership.conflicted)
        )
        return StickyRound(GroupAssignment.of(assignment), tuple(sorted(transferring.items())))
    assignment = general_assign(
        partitions_per_topic,
        {member.member_id: member.subscription.topics for member in group.members},
        owned,
        previous_generation_owners(member_data),
    )
    return StickyRound(GroupAssignment.of(assignment), None)
