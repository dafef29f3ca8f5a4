"""Every assignment property, for every assignor in the registry, on histories of random rounds.

A history builds a cluster and members, runs 1–3 rounds with the assignor under test (members
keep what they were given, with that round's generation), perturbs the group between rounds
(members join and leave, subscriptions change, topics and partitions are added, a member misses
a round and reports a stale generation, two members claim the same partition in the same
generation as in KAFKA-12984) and checks the final round's assignment. cooperative-sticky also
gets its follow-up round, which must be complete and balanced.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.spec.assignment import (
    DEFAULT_GENERATION,
    Cluster,
    GroupAssignment,
    GroupSubscription,
    Member,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.assignors.properties import (
    PROPERTY_NAMES,
    check_assignment,
    partition_moves,
    properties_for,
    violated_properties,
)
from groupspec.spec.assignors.registry import ASSIGNORS, COMPLETE_ASSIGNORS

NAMES = sorted(ASSIGNORS)
MAX_PARTITIONS = 64


@dataclass
class _MemberState:
    topics: set[str]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION
    instance_id: str | None = None


@dataclass
class _History:
    rng: random.Random
    counts: dict[str, int]
    members: dict[str, _MemberState] = field(default_factory=dict)
    generation: int = 0
    next_id: int = 0

    def add_member(self, identical: bool) -> None:
        topics = set(self.counts) if identical else self._random_topics()
        instance = f"i{self.next_id}" if self.rng.random() < 0.3 else None
        self.members[f"m{self.next_id:02}"] = _MemberState(topics, instance_id=instance)
        self.next_id += 1

    def _random_topics(self) -> set[str]:
        names = sorted(self.counts)
        return set(self.rng.sample(names, self.rng.randint(1, len(names))))

    def group(self, assignor: Assignor) -> GroupSubscription:
        cooperative = RebalanceProtocol.COOPERATIVE in assignor.supported_protocols
        members = []
        for member_id, state in sorted(self.members.items()):
            members.append(
                Member(
                    member_id,
                    Subscription.of(
                        state.topics,
                        # EAGER members revoke everything before joining: they own nothing.
                        state.owned if cooperative else (),
                        state.generation if cooperative else DEFAULT_GENERATION,
                        user_data=assignor.subscription_user_data(state.owned, state.generation),
                    ),
                    state.instance_id,
                )
            )
        return GroupSubscription.of(Cluster.of(self.counts), members)

    def apply(self, assignment: GroupAssignment) -> None:
        self.generation += 1
        for member_id, state in self.members.items():
            state.owned = assignment.partitions_of(member_id)
            state.generation = self.generation

    def perturb(self, identical: bool) -> None:
        rng = self.rng
        if rng.random() < 0.3 and len(self.members) > 1:
            del self.members[rng.choice(sorted(self.members))]
        if rng.random() < 0.3 and len(self.members) < 12:
            self.add_member(identical)
        if rng.random() < 0.2 and not identical:
            self.members[rng.choice(sorted(self.members))].topics = self._random_topics()
        if rng.random() < 0.2 and sum(self.counts.values()) < MAX_PARTITIONS:
            if len(self.counts) < 5 and rng.random() < 0.5:
                new_topic = f"t{len(self.counts)}"
                self.counts[new_topic] = rng.randint(1, MAX_PARTITIONS - sum(self.counts.values()))
                if identical:
                    for state in self.members.values():
                        state.topics.add(new_topic)
            else:
                topic = rng.choice(sorted(self.counts))
                self.counts[topic] += 1
        if rng.random() < 0.2:
            # A member that missed the last round: older generation (its claim may be stale).
            state = self.members[rng.choice(sorted(self.members))]
            state.generation = max(DEFAULT_GENERATION, state.generation - rng.randint(1, 2))
        if rng.random() < 0.15 and len(self.members) > 1:
            # KAFKA-12984: a second member claims a partition someone owns, in the same generation.
            owner, other = rng.sample(sorted(self.members), 2)
            if self.members[owner].owned:
                stolen = rng.choice(self.members[owner].owned)
                claimer = self.members[other]
                claimer.owned = tuple(sorted({*claimer.owned, stolen}))
                claimer.generation = self.members[owner].generation


@st.composite
def histories(draw: st.DrawFn) -> tuple[int, int, int, int, bool]:
    """(seed, members, topics, previous rounds, identical subscriptions)."""
    return (
        draw(st.integers(0, 2**31)),
        draw(st.integers(1, 12)),
        draw(st.integers(1, 5)),
        draw(st.integers(1, 3)),
        draw(st.booleans()),
    )


def _run_history(
    name: str, seed: int, members: int, topics: int, rounds: int, identical: bool
) -> tuple[_History, GroupSubscription, GroupAssignment]:
    assignor = ASSIGNORS[name]
    rng = random.Random(seed)
    budget = MAX_PARTITIONS // 2
    counts = {}
    for index in range(topics):
        counts[f"t{index}"] = rng.randint(
            0, max(0, budget - sum(counts.values())) // max(1, topics - index) * 2
        )
    history = _History(rng, counts)
    for _ in range(members):
        history.add_member(identical)
    for _ in range(rounds):
        history.apply(assignor.assign(history.group(assignor)))
        history.perturb(identical)
    group = history.group(assignor)
    return history, group, assignor.assign(group)


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=600, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(history=histories())
def test_every_property_holds_for_our_assignors(name: str, history: tuple) -> None:
    seed, members, topics, rounds, identical = history
    state, group, assignment = _run_history(name, seed, members, topics, rounds, identical)
    violations = check_assignment(name, group, assignment)
    assert not violations, violations
    if name == "cooperative-sticky":
        # The follow-up rebalance: members now own what they were given; nothing is withheld.
        assignor = ASSIGNORS[name]
        state.apply(assignment)
        follow_up = state.group(assignor)
        second = assignor.assign(follow_up)
        violations = check_assignment(name, follow_up, second)
        extra = [
            v
            for prop in properties_for("sticky")
            if prop.name in ("CompleteAssignment", "StickyBalance")
            for v in prop.check(follow_up, second)
        ]
        assert not violations and not extra, (violations, extra)


def test_property_table_agrees_with_the_registry_on_completeness() -> None:
    for name in NAMES:
        promised = "CompleteAssignment" in {p.name for p in properties_for(name)}
        assert promised == (name in COMPLETE_ASSIGNORS), name


# -------------------------------------------------------------------------------------------
# Each property can fail: hand-built bad assignments are flagged under the right name.

T0 = [TopicPartition("a", n) for n in range(4)]
T1 = [TopicPartition("b", n) for n in range(2)]


def _group(
    owned: dict[str, list[TopicPartition]] | None = None, topics: dict[str, list[str]] | None = None
) -> GroupSubscription:
    owned = owned or {}
    topics = topics or {"m1": ["a", "b"], "m2": ["a", "b"], "m3": ["a", "b"]}
    return GroupSubscription.of(
        Cluster.of({"a": 4, "b": 2}),
        [
            Member(m, Subscription.of(ts, owned.get(m, ()), 3 if m in owned else -1))
            for m, ts in topics.items()
        ],
    )


def _flags(
    name: str, group: GroupSubscription, assignment: dict[str, list[TopicPartition]]
) -> frozenset[str]:
    return violated_properties(check_assignment(name, group, GroupAssignment.of(assignment)))


def test_duplicate_partition_is_flagged() -> None:
    bad = {"m1": [T0[0], T0[1]], "m2": [T0[0], T0[2]], "m3": [T0[3], *T1]}
    assert "NoDoubleAssignment" in _flags("roundrobin", _group(), bad)
    within = GroupAssignment((("m1", (T0[0], T0[0])), ("m2", tuple(T0[1:3])), ("m3", (T0[3], *T1))))
    assert "NoDoubleAssignment" in violated_properties(check_assignment("range", _group(), within))


def test_missing_or_nonexistent_partition_is_flagged() -> None:
    bad = {"m1": [T0[0], T0[1], TopicPartition("a", 9)], "m2": [T0[2], T0[3]], "m3": [T1[0]]}
    flags = _flags("sticky", _group(), bad)
    assert {"PartitionsExist", "CompleteAssignment"} <= flags


def test_unsubscribed_topic_is_flagged() -> None:
    group = _group(topics={"m1": ["a"], "m2": ["a", "b"]})
    assert "SubscribedTopicsOnly" in _flags(
        "roundrobin", group, {"m1": [*T0[:2], T1[0]], "m2": [*T0[2:], T1[1]]}
    )


def test_missing_member_and_stranger_are_flagged() -> None:
    flags = _flags("range", _group(), {"m1": T0[:2] + T1[:1], "m2": T0[2:] + T1[1:], "zz": []})
    assert "EveryMemberHasEntry" in flags


def test_unbalanced_assignments_are_flagged() -> None:
    lopsided = {"m1": T0 + T1, "m2": [], "m3": []}
    assert "RoundRobinBalance" in _flags("roundrobin", _group(), lopsided)
    assert "RangeBalance" in _flags("range", _group(), lopsided)
    assert "StickyBalance" in _flags("sticky", _group(), lopsided)
    # Counts 2/2/2 but the extra partitions of topic a go to the last member in order, not the first.
    reordered = {"m1": [T0[0], T1[0]], "m2": [T0[1], T1[1]], "m3": [T0[2], T0[3]]}
    assert "RangeOrder" in _flags("range", _group(), reordered)


def test_sticky_balance_accepts_what_uneven_subscriptions_force() -> None:
    # m2 can only take topic b (2 partitions): 4 vs 2 is balanced in isBalanced's sense.
    group = _group(topics={"m1": ["a", "b"], "m2": ["b"]})
    assert "StickyBalance" not in _flags("sticky", group, {"m1": T0, "m2": T1})
    assert "StickyBalance" in _flags("sticky", group, {"m1": T0 + T1, "m2": []})


def test_add_and_revoke_in_one_round_is_flagged() -> None:
    group = _group(owned={"m1": [T0[0], T0[1]], "m2": [T0[2], T0[3]], "m3": T1})
    moved = {"m1": [T0[1], T0[2]], "m2": [T0[0], T0[3]], "m3": T1}
    assert "CooperativeRevokeBeforeAssign" in _flags("cooperative-sticky", group, moved)


def test_losing_owned_partitions_is_flagged() -> None:
    owned = {"m1": [T0[0], T0[1]], "m2": [T0[2], T0[3]], "m3": T1}
    group = _group(owned=owned)
    # Balanced (2/2/2) but m1 and m2 swapped everything: they keep nothing of minQuota 2.
    swapped = {"m1": [T0[2], T0[3]], "m2": [T0[0], T0[1]], "m3": T1}
    flags = _flags("cooperative-sticky", group, swapped)
    assert {"StickyRetention", "StickyRetentionOptimal"} <= flags
    assert partition_moves(group, GroupAssignment.of(swapped)) == 4


def test_withholding_an_unowned_partition_is_flagged() -> None:
    group = _group(owned={"m1": [T0[0]]})
    flags = _flags(
        "cooperative-sticky", group, {"m1": [T0[0], T0[1]], "m2": [T0[2]], "m3": [T1[0]]}
    )
    assert "CompleteExceptTransferring" in flags


def test_property_names_are_unique_and_documented() -> None:
    import groupspec.spec.assignors.properties as module

    assert len(PROPERTY_NAMES) == len(set(PROPERTY_NAMES))
    for name in PROPERTY_NAMES:
        assert f"| {name} |" in (module.__doc__ or ""), name
