"""Our assignors against Apache Kafka's own, group by group (docs/assignors.md).

Each scenario (the fixed suite, the seeded random groups) is played by one of our assignors;
every group its leader sees on the way (subscriptions, owned partitions, user data, generations,
instance ids) is also handed to Kafka's assignor of the same name (`kafka_java`), and the two
assignments are compared exactly. The history follows our assignor, so both always see the same
group.

**Java's hash order, under control.** Where Kafka's sticky assignors visit members in
`java.util.HashMap` order, their result depends on the members' Java hash codes; the spec fixes
member-id order there (spec/assignors/sticky.py). The harness therefore renames the members
before Kafka sees them (`hash_ordered_names`): the new names keep the old ones' Java string
order (so every sort Kafka does is unchanged) and get the Java hash codes 0, 1, 2, … in a
chosen order; a HashMap or HashSet of n such names has more than n buckets and visits them in
hash order. Kafka's answer is renamed back.

A group is compared with member-id hash order first. Where the results differ, other member
orders are tried (higher generations first, the reverse, every permutation of a small group or
seeded random ones of a bigger one), then other hash codes of the topic names (renamed in the
same way, keeping their order; a sticky member's user data is rewritten with the new names),
which reorder Kafka's hash sets of partitions. If one of them gives our assignment, ours is a
result Kafka produces for members and topics whose names hash that way (`HASH_ORDER`); if none
does, the difference is `DIFFERENT`, and every such one is a bug of the port or a Kafka
behaviour documented in docs/assignors.md. Kafka throwing is a `DIFFERENT` too, unless another
order gives ours.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from groupspec.spec.assignment import (
    Cluster,
    GroupAssignment,
    GroupSubscription,
    Member,
    RebalanceProtocol,
    Subscription,
)
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.assignors.ordering import java_string_key
from groupspec.spec.assignors.sticky_user_data import (
    decode_sticky_user_data,
    encode_sticky_user_data,
)
from groupspec.vocabulary.requests import TopicPartition

from .assignor_scenarios import Scenario, play
from .kafka_java import KafkaAssignorError, KafkaAssignorHarness

SAME, HASH_ORDER, DIFFERENT = "same", "hash order", "different"
# Other member orders tried on a group whose results differ: every permutation up to this many,
# else this many (the structured ones first, then seeded random ones); then this many seeded
# random hash codes of the topic names.
MAX_ORDERS = 120
TOPIC_RENAMINGS = 40
_INT = 1 << 32
_FIRST_UNIT = 0x100  # the first UTF-16 unit of renamed member i is this plus i
_SUFFIX_UNITS = 5  # enough units of base 31 to reach any 32-bit hash


def java_hash(text: str) -> int:
    """Java's `String.hashCode` of `text` (over UTF-16 units), as a signed 32-bit int."""
    value = 0
    for unit in java_string_key(text):
        value = (31 * value + unit) % _INT
    return value - _INT if value >= 1 << 31 else value


def name_with_hash(first_unit: int, wanted: int) -> str:
    """A string that starts with the UTF-16 unit `first_unit` and whose Java hash is `wanted`
    (0 ≤ wanted < 2³¹): the remaining units solve the hash equation in base 31."""
    power = 31**_SUFFIX_UNITS
    rest = (wanted - first_unit * power) % _INT
    units = []
    for place in range(_SUFFIX_UNITS - 1, -1, -1):
        digit, rest = divmod(rest, 31**place)
        units.append(digit)  # the first digit is below 2³² / 31⁴ < 4651: never a surrogate
    name = chr(first_unit) + "".join(map(chr, units))
    assert java_hash(name) == wanted
    return name


def hash_ordered_names(member_ids: Iterable[str], order: Sequence[str]) -> dict[str, str]:
    """New names for the members: in the same Java string order as their ids, with Java hash
    codes 0, 1, 2, … in `order`'s sequence (see the module docstring)."""
    rank = {member_id: index for index, member_id in enumerate(order)}
    by_java_order = sorted(member_ids, key=java_string_key)
    if sorted(rank) != sorted(by_java_order):
        raise ValueError("the order must list every member exactly once")
    return {
        member_id: name_with_hash(_FIRST_UNIT + index, rank[member_id])
        for index, member_id in enumerate(by_java_order)
    }


def renamed(
    group: GroupSubscription, names: dict[str, str], topics: dict[str, str] | None = None
) -> GroupSubscription:
    """`group` with every member id replaced by its new name and, given `topics`, every topic
    name too (in the metadata, the subscriptions, the owned partitions and sticky user data)."""
    if topics is None:
        members = (
            Member(names[m.member_id], m.subscription, m.group_instance_id) for m in group.members
        )
        return GroupSubscription.of(group.cluster, members)
    cluster = Cluster.of({topics[t]: count for t, count in group.cluster.partitions_per_topic})
    return GroupSubscription.of(
        cluster,
        (
            Member(
                names[m.member_id],
                _renamed_subscription(m.subscription, topics),
                m.group_instance_id,
            )
            for m in group.members
        ),
    )


def _renamed_subscription(subscription: Subscription, topics: dict[str, str]) -> Subscription:
    def moved(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
        return [TopicPartition(topics.get(tp.topic, tp.topic), tp.partition) for tp in partitions]

    user_data = subscription.user_data
    data = decode_sticky_user_data(user_data)
    # StickyAssignor's user data names topics; rewritten only when it is that (it reads back
    # and writes again to the same bytes), not cooperative-sticky's generation.
    generation = data.generation
    if generation is not None and encode_sticky_user_data(data.partitions, generation) == user_data:
        user_data = encode_sticky_user_data(tuple(moved(data.partitions)), generation)
    return Subscription.of(
        [topics.get(t, t) for t in subscription.topics],
        moved(subscription.owned_partitions),
        subscription.generation,
        subscription.rack,
        user_data,
    )


def topic_renamings(group: GroupSubscription, seed: int) -> Iterable[dict[str, str]]:
    """Seeded new names for the topics of the metadata: the same Java string order, random
    Java hash codes (`TOPIC_RENAMINGS` of them)."""
    rng = random.Random(seed)
    ranked = sorted((topic for topic, _ in group.cluster.partitions_per_topic), key=java_string_key)
    for _ in range(TOPIC_RENAMINGS):
        yield {
            topic: name_with_hash(_FIRST_UNIT + index, rng.randrange(1 << 31))
            for index, topic in enumerate(ranked)
        }


def member_id_order(group: GroupSubscription) -> tuple[str, ...]:
    """The members in Java string order of member id: the order the spec fixes."""
    return tuple(sorted(group.member_ids, key=java_string_key))


def other_orders(group: GroupSubscription, seed: int) -> Iterable[tuple[str, ...]]:
    """Member orders to try after member-id order: higher generations first, the reverse of
    member-id order, then every permutation (small groups) or seeded random ones."""
    natural = member_id_order(group)
    generation = {m.member_id: m.subscription.generation for m in group.members}
    tried = {natural}
    candidates: list[Iterable[tuple[str, ...]]] = [
        [tuple(sorted(natural, key=lambda m: -generation[m]))],
        [tuple(reversed(natural))],
    ]
    if math.factorial(len(natural)) <= MAX_ORDERS:
        candidates.append(itertools.permutations(natural))
    else:
        rng = random.Random(seed)
        candidates.append(tuple(rng.sample(natural, len(natural))) for _ in range(MAX_ORDERS))
    count = 0
    for order in itertools.chain.from_iterable(candidates):
        if order not in tried and count < MAX_ORDERS:
            tried.add(order)
            count += 1
            yield order


@dataclass(frozen=True)
class Comparison:
    """One group assigned by ours and by Kafka's assignor of the same name.

    `kafka` is Kafka's assignment under member-id hash order (None if it threw: `kafka_error`);
    `verdict` is SAME, HASH_ORDER or DIFFERENT. For HASH_ORDER, `order` is the member order and
    `topics` the topic renaming (None: the topics' own names) under which Kafka gives ours.
    `round` counts the rebalances of the scenario from 1.
    """

    scenario: str
    round: int
    assignor: str
    group: GroupSubscription
    ours: GroupAssignment
    kafka: GroupAssignment | None
    kafka_error: str | None
    verdict: str
    order: tuple[str, ...] | None = None
    topics: tuple[tuple[str, str], ...] | None = None

    def describe(self) -> str:
        """One line: where, and how the assignments differ (members whose partitions differ)."""
        where = f"{self.scenario} round {self.round} / {self.assignor}"
        if self.kafka is None:
            return f"{where}: Kafka threw {self.kafka_error}"
        ours, theirs = self.ours.as_dict(), self.kafka.as_dict()
        members = sorted(set(ours) | set(theirs), key=java_string_key)
        differing = [
            f"{m}: ours {_short(ours.get(m, ()))} kafka {_short(theirs.get(m, ()))}"
            for m in members
            if ours.get(m, ()) != theirs.get(m, ())
        ]
        return f"{where}: {'; '.join(differing)}"


def _short(partitions: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions) + "]"


def _normalised(group: GroupSubscription, assignment: GroupAssignment) -> GroupAssignment:
    """Every member of the group with an entry, empty if it had none."""
    given = assignment.as_dict()
    return GroupAssignment.of({m: given.get(m, ()) for m in group.member_ids} | given)


def kafka_under(
    harness: KafkaAssignorHarness,
    assignor: str,
    group: GroupSubscription,
    order: Sequence[str],
    topics: dict[str, str] | None = None,
) -> GroupAssignment:
    """Kafka's `assignor` on `group`, its members hashing in `order` and its topics renamed to
    `topics` if given (KafkaAssignorError if it throws), under the original names."""
    names = hash_ordered_names(group.member_ids, order)
    back = {new: old for old, new in names.items()}
    topic_back = {new: old for old, new in (topics or {}).items()}
    answer = harness.assign(assignor, renamed(group, names, topics))
    return GroupAssignment.of(
        {
            back.get(member_id, member_id): [
                TopicPartition(topic_back.get(tp.topic, tp.topic), tp.partition) for tp in ps
            ]
            for member_id, ps in answer.assignments
        }
    )


def compare_group(
    harness: KafkaAssignorHarness,
    assignor: str,
    group: GroupSubscription,
    ours: GroupAssignment,
    where: tuple[str, int] = ("", 0),
) -> Comparison:
    """Compare our assignment of `group` with Kafka's (see the module docstring)."""
    ours = _normalised(group, ours)
    scenario, round_number = where

    def result(
        kafka: GroupAssignment | None,
        error: str | None,
        verdict: str,
        order: tuple[str, ...] | None = None,
        topics: dict[str, str] | None = None,
    ) -> Comparison:
        return Comparison(
            scenario,
            round_number,
            assignor,
            group,
            ours,
            kafka,
            error,
            verdict,
            order,
            None if topics is None else tuple(sorted(topics.items())),
        )

    kafka: GroupAssignment | None
    try:
        kafka = _normalised(group, kafka_under(harness, assignor, group, member_id_order(group)))
        error = None
    except KafkaAssignorError as thrown:
        kafka, error = None, str(thrown)
    if kafka == ours:
        return result(kafka, None, SAME)
    seed = zlib.crc32(f"{scenario} {round_number} {assignor}".encode())
    natural = member_id_order(group)
    tries = itertools.chain(
        ((order, None) for order in other_orders(group, seed)),
        ((natural, topics) for topics in topic_renamings(group, seed)),
    )
    for order, topics in tries:
        try:
            other = _normalised(group, kafka_under(harness, assignor, group, order, topics))
        except KafkaAssignorError:
            continue
        if other == ours:
            return result(kafka, error, HASH_ORDER, order, topics)
    return result(kafka, error, DIFFERENT)


class _Recording:
    """An assignor that hands every group it assigns, and its answer, to `seen`."""

    def __init__(
        self, inner: Assignor, seen: Callable[[GroupSubscription, GroupAssignment], None]
    ) -> None:
        self.inner = inner
        self.seen = seen

    @property
    def name(self) -> str:
        """The inner assignor's name."""
        return self.inner.name

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """The inner assignor's protocols."""
        return self.inner.supported_protocols

    def subscription_user_data(
        self, owned: tuple[TopicPartition, ...], generation: int
    ) -> bytes | None:
        """The inner assignor's user data."""
        return self.inner.subscription_user_data(owned, generation)

    def assign(self, group: GroupSubscription) -> GroupAssignment:
        """The inner assignor's assignment, recorded."""
        assignment = self.inner.assign(group)
        self.seen(group, assignment)
        return assignment


def compare_scenario(
    harness: KafkaAssignorHarness, scenario: Scenario, assignor: Assignor
) -> list[Comparison]:
    """Play `scenario` with `assignor` (ours) and compare every group of it with Kafka's."""
    groups: list[tuple[GroupSubscription, GroupAssignment]] = []
    play(scenario, _Recording(assignor, lambda g, a: groups.append((g, a))), checked=False)
    return [
        compare_group(harness, assignor.name, group, ours, (scenario.name, number))
        for number, (group, ours) in enumerate(groups, start=1)
    ]


@dataclass
class DifferentialReport:
    """Every comparison of a run, and its counts per assignor and verdict."""

    comparisons: list[Comparison] = field(default_factory=list)

    def counts(self) -> Counter[tuple[str, str]]:
        """(assignor, verdict) → number of groups."""
        return Counter((c.assignor, c.verdict) for c in self.comparisons)

    def of(self, verdict: str) -> list[Comparison]:
        """The comparisons with this verdict."""
        return [c for c in self.comparisons if c.verdict == verdict]


def run_differential(
    harness: KafkaAssignorHarness, scenarios: Iterable[Scenario], assignors: Iterable[Assignor]
) -> DifferentialReport:
    """Compare every group of every scenario, played by each of `assignors`, with Kafka's."""
    report = DifferentialReport()
    chosen = tuple(assignors)
    for scenario in scenarios:
        for assignor in chosen:
            report.comparisons.extend(compare_scenario(harness, scenario, assignor))
    return report
