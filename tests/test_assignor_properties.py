"""Every assignment property, for every assignor in the registry, on histories of random rounds.

A history builds a cluster and members, runs 1–3 rounds with the assignor under test (members
keep what they were given, with that round's generation), perturbs the group between rounds
(members join and leave, subscriptions change, topics and partitions are added, a member misses
a round and reports a stale generation, two members claim the same partition in the same
generation as in KAFKA-12984) and checks the final round's assignment. cooperative-sticky also
gets its follow-up round, which must be complete and balanced.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.oracle.assignor.assignor_scenarios import Scenario, play
from groupspec.oracle.assignor.random_groups import (
    MAX_EARLIER_ROUNDS,
    MAX_MEMBERS,
    MAX_TOPICS,
    random_scenario,
)
from groupspec.spec.assignment import (
    Cluster,
    GroupAssignment,
    GroupSubscription,
    Member,
    Subscription,
)
from groupspec.spec.assignors.properties import (
    PROPERTY_NAMES,
    check_assignment,
    partition_moves,
    properties_for,
    sticky_balance_violations,
    violated_properties,
)
from groupspec.spec.assignors.registry import ASSIGNORS, COMPLETE_ASSIGNORS
from groupspec.vocabulary.requests import TopicPartition

NAMES = sorted(ASSIGNORS)


@st.composite
def histories(draw: st.DrawFn) -> Scenario:
    """A random group with a history (groupspec.oracle.assignor.random_groups), shape drawn here
    so that Hypothesis shrinks a failure towards fewer members, topics and rounds."""
    return random_scenario(
        draw(st.integers(0, 2**31)),
        members=draw(st.integers(1, MAX_MEMBERS)),
        topics=draw(st.integers(1, MAX_TOPICS)),
        earlier_rounds=draw(st.integers(1, MAX_EARLIER_ROUNDS)),
        identical=draw(st.booleans()),
    )


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=450, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(scenario=histories())
def test_every_property_holds_for_our_assignors(name: str, scenario: Scenario) -> None:
    # Every rebalance of the history is checked, the earlier ones and the measured one.
    played = play(scenario, ASSIGNORS[name])
    assert not played.runner.findings, played.runner.findings
    if name == "cooperative-sticky":
        # After its follow-up rebalance nothing is withheld and the result is balanced.
        assert played.rounds <= 2
        assert set(played.assignment.owners()) == set(played.group.subscribed_partitions)
        assert not sticky_balance_violations(played.group, played.assignment)


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
