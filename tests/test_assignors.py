"""Worked examples for Kafka's four assignors (reference §7, §8).

Expected assignments are reasoned from Kafka's Java behaviour and the scenarios of its own
tests and Javadoc (RangeAssignor, RoundRobinAssignor, StickyAssignor, AbstractStickyAssignorTest,
CooperativeStickyAssignorTest).
"""

from __future__ import annotations

import itertools
import random

import pytest

from groupspec.spec.assignment import (
    Cluster,
    GroupAssignment,
    GroupSubscription,
    Member,
    Subscription,
)
from groupspec.spec.assignors.cooperative import (
    IllegalCooperativeAssignmentError,
    transferring_partitions,
    validate_cooperative_assignment,
)
from groupspec.spec.assignors.ordering import java_string_key, sorted_members
from groupspec.spec.assignors.owned_partitions import member_data_from_subscription, previous_owners
from groupspec.spec.assignors.registry import (
    ASSIGNORS,
    COMPLETE_ASSIGNORS,
    UnknownAssignorError,
    assignor_named,
)
from groupspec.spec.assignors.sticky import assignment_is_balanced, is_balanced, sticky_assign
from groupspec.spec.assignors.sticky_user_data import (
    MemberData,
    decode_cooperative_sticky_generation,
    decode_sticky_user_data,
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from groupspec.vocabulary.errors import InputError
from groupspec.vocabulary.requests import TopicPartition


def tp(name: str) -> TopicPartition:
    """ "t0-3" → TopicPartition("t0", 3)."""
    topic, _, number = name.rpartition("-")
    return TopicPartition(topic, int(number))


def tps(*names: str) -> tuple[TopicPartition, ...]:
    return tuple(sorted(tp(name) for name in names))


def member(member_id, topics, owned=(), generation=-1, instance=None, user_data=None):
    return Member(
        member_id,
        Subscription.of(topics, [tp(o) for o in owned], generation, user_data=user_data),
        instance,
    )


def group(topics: dict[str, int], *members: Member) -> GroupSubscription:
    return GroupSubscription.of(Cluster.of(topics), members)


def expect(assignment: GroupAssignment, **expected: tuple[str, ...]) -> None:
    assert assignment.as_dict() == {mid: tps(*names) for mid, names in expected.items()}


RANGE = ASSIGNORS["range"]
ROUNDROBIN = ASSIGNORS["roundrobin"]
STICKY = ASSIGNORS["sticky"]
COOP = ASSIGNORS["cooperative-sticky"]


# --- ordering -------------------------------------------------------------------------------


def test_java_string_order_differs_from_python_for_astral_characters():
    astral, bmp = "\U0001f600", "\ufffd"
    assert astral > bmp  # Python: code points
    assert java_string_key(astral) < java_string_key(bmp)  # Java: UTF-16 units (0xD83D < 0xFFFD)
    assert java_string_key("ab") < java_string_key("abc") < java_string_key("b")


def test_static_members_come_first_by_instance_id_then_dynamic_by_member_id():
    members = [
        member("a", ["t"]),
        member("b", ["t"], instance="z"),
        member("c", ["t"], instance="y"),
        member("0", ["t"]),
    ]
    assert [m.member_id for m in sorted_members(members)] == ["c", "b", "0", "a"]


# --- range ----------------------------------------------------------------------------------


def test_range_javadoc_example_gives_contiguous_blocks_per_topic():
    g = group({"t0": 3, "t1": 3}, member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"]))
    expect(RANGE.assign(g), C0=("t0-0", "t0-1", "t1-0", "t1-1"), C1=("t0-2", "t1-2"))


def test_range_extra_partitions_go_to_the_first_members():
    g = group({"t": 7}, member("c", ["t"]), member("a", ["t"]), member("b", ["t"]))
    expect(RANGE.assign(g), a=("t-0", "t-1", "t-2"), b=("t-3", "t-4"), c=("t-5", "t-6"))


def test_range_orders_static_members_first():
    g = group(
        {"t0": 3, "t1": 3},
        member("C0", ["t0", "t1"], instance="I1"),
        member("C1", ["t0", "t1"], instance="I0"),
    )
    expect(RANGE.assign(g), C1=("t0-0", "t0-1", "t1-0", "t1-1"), C0=("t0-2", "t1-2"))


def test_range_per_topic_over_its_subscribers_and_every_member_gets_an_entry():
    g = group(
        {"t0": 2, "t1": 3},
        member("a", ["t0"]),
        member("b", ["t0", "t1"]),
        member("c", ["t1"]),
        member("d", ["missing"]),
    )
    expect(RANGE.assign(g), a=("t0-0",), b=("t0-1", "t1-0", "t1-1"), c=("t1-2",), d=())


# --- roundrobin -----------------------------------------------------------------------------


def test_roundrobin_javadoc_example_identical_subscriptions():
    g = group({"t0": 3, "t1": 3}, member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"]))
    expect(ROUNDROBIN.assign(g), C0=("t0-0", "t0-2", "t1-1"), C1=("t0-1", "t1-0", "t1-2"))


def test_roundrobin_skips_members_not_subscribed_to_the_topic():
    g = group(
        {"t0": 1, "t1": 2, "t2": 3},
        member("C0", ["t0"]),
        member("C1", ["t0", "t1"]),
        member("C2", ["t0", "t1", "t2"]),
    )
    expect(
        ROUNDROBIN.assign(g),
        C0=("t0-0",),
        C1=("t1-0",),
        C2=("t1-1", "t2-0", "t2-1", "t2-2"),
    )


def test_roundrobin_with_static_members_is_stable_across_member_id_changes():
    def bounced(ids: tuple[str, str, str]) -> dict[str, tuple[TopicPartition, ...]]:
        g = group(
            {"t0": 3, "t1": 3},
            *(member(mid, ["t0", "t1"], instance=f"I{i}") for i, mid in enumerate(ids)),
        )
        result = ROUNDROBIN.assign(g).as_dict()
        return {f"I{i}": result[mid] for i, mid in enumerate(ids)}

    before = bounced(("C0", "C1", "C2"))
    assert before == bounced(("C5", "C3", "C4"))
    assert before["I0"] == tps("t0-0", "t1-0")


# --- sticky: constrained path ---------------------------------------------------------------


def test_sticky_first_assignment_matches_round_robin_for_identical_subscriptions():
    g = group({"t0": 3, "t1": 3}, member("C0", ["t0", "t1"]), member("C1", ["t0", "t1"]))
    expect(STICKY.assign(g), C0=("t0-0", "t0-2", "t1-1"), C1=("t0-1", "t1-0", "t1-2"))


def test_constrained_path_keeps_owned_partitions_up_to_quota():
    # C0 owns 5 of 6 partitions, C1 one; C2 joins. minQuota = maxQuota = 2. C0 keeps its
    # first two by partition number, the rest go round-robin to C1 then C2 (by member id).
    g = group(
        {"t0": 6},
        member("C0", ["t0"], ["t0-0", "t0-1", "t0-2", "t0-3", "t0-4"], 1),
        member("C1", ["t0"], ["t0-5"], 1),
        member("C2", ["t0"]),
    )
    result = sticky_fields(g)
    expect(result, C0=("t0-0", "t0-1"), C1=("t0-2", "t0-5"), C2=("t0-3", "t0-4"))


def test_constrained_path_gives_max_quota_to_the_first_owners_in_member_id_order():
    # 7 partitions, 2 members: quotas 3 and 4. Both own 4: the first (by member id) keeps 4.
    g = group(
        {"t": 8},
        member("b", ["t"], ["t-4", "t-5", "t-6", "t-7"], 1),
        member("a", ["t"], ["t-0", "t-1", "t-2", "t-3"], 1),
        member("c", ["t"]),
    )
    result = sticky_fields(g)
    expect(result, a=("t-0", "t-1", "t-2"), b=("t-4", "t-5", "t-6"), c=("t-3", "t-7"))


def sticky_fields(g: GroupSubscription) -> GroupAssignment:
    """The shared sticky assignment with claims taken from the subscription fields."""
    data = {m.member_id: member_data_from_subscription(m.subscription) for m in g.members}
    return sticky_assign(g, data).assignment


# --- sticky: general path -------------------------------------------------------------------


def test_general_path_javadoc_example_balances_then_stays_sticky_when_a_member_leaves():
    g = group(
        {"t0": 1, "t1": 2, "t2": 3},
        member("C0", ["t0"]),
        member("C1", ["t0", "t1"]),
        member("C2", ["t0", "t1", "t2"]),
    )
    first = STICKY.assign(g)
    expect(first, C0=("t0-0",), C1=("t1-0", "t1-1"), C2=("t2-0", "t2-1", "t2-2"))

    def with_history(mid: str, topics: list[str]) -> Member:
        data = encode_sticky_user_data(first.partitions_of(mid), 1)
        return member(mid, topics, user_data=data)

    g2 = group(
        {"t0": 1, "t1": 2, "t2": 3},
        with_history("C1", ["t0", "t1"]),
        with_history("C2", ["t0", "t1", "t2"]),
    )
    expect(STICKY.assign(g2), C1=("t0-0", "t1-0", "t1-1"), C2=("t2-0", "t2-1", "t2-2"))


def test_general_path_revokes_partitions_of_unsubscribed_topics_and_rebalances():
    # C1 stops subscribing to t1: t1-1 must go to C0 (its only other consumer), and to restore
    # the balance C0's t0-0 then moves to C1. cooperative-sticky withholds both moves.
    g = group(
        {"t0": 2, "t1": 2},
        member("C0", ["t0", "t1"], ["t0-0", "t1-0"], 3),
        member("C1", ["t0"], ["t0-1", "t1-1"], 3),
    )
    expect(sticky_fields(g), C0=("t1-0", "t1-1"), C1=("t0-0", "t0-1"))
    expect(COOP.assign(g), C0=("t1-0",), C1=("t0-1",))


def test_is_balanced_looks_at_what_each_member_could_take():
    potential = {"a": ["t0"], "b": ["t0", "t1"]}
    counts = {"t0": 1, "t1": 3}
    # a has its only possible partition; b holds the rest: 1 vs 3 is still balanced.
    assert is_balanced({"a": tps("t0-0"), "b": tps("t1-0", "t1-1", "t1-2")}, potential, counts)
    # b holding everything while a could take t0-0 is not.
    assert not is_balanced({"a": (), "b": tps("t0-0", "t1-0", "t1-1", "t1-2")}, potential, counts)


# --- generations and conflicting claims (KIP-792) -------------------------------------------


def test_same_generation_claims_are_dropped_from_both_and_conflicted():
    g = group(
        {"t": 2},
        member("a", ["t"], ["t-0", "t-1"], 5),
        member("b", ["t"], ["t-0"], 5),
    )
    ownership = previous_owners(g)
    assert ownership.owner == ((tp("t-1"), "a"),)
    assert ownership.conflicted == (tp("t-0"),)
    assert ownership.owner_of(tp("t-0")) is None
    assert ownership.owned_by("a") == (tp("t-1"),)


def test_higher_generation_claim_wins():
    g = group(
        {"t": 2},
        member("a", ["t"], ["t-0"], 4),
        member("b", ["t"], ["t-0", "t-1"], 5),
    )
    ownership = previous_owners(g)
    assert ownership.as_dict() == {tp("t-0"): "b", tp("t-1"): "b"}
    assert ownership.conflicted == ()


def test_claim_resolution_is_the_order_independent_highest_generation_rule():
    rng = random.Random(7)
    for _ in range(300):
        members = [
            member(
                f"m{i}",
                ["t"],
                rng.sample([f"t-{p}" for p in range(3)], rng.randint(0, 3)),
                rng.choice([-1, 1, 2, 3]),
            )
            for i in range(rng.randint(1, 4))
        ]
        ownership = previous_owners(group({"t": 3}, *members))
        for p in range(3):
            claims = [
                (m.subscription.generation, m.member_id)
                for m in members
                if tp(f"t-{p}") in m.subscription.owned_partitions
            ]
            if not claims:
                continue
            top = max(generation for generation, _ in claims)
            winners = [mid for generation, mid in claims if generation == top]
            expected_owner = winners[0] if len(winners) == 1 else None
            assert ownership.owner_of(tp(f"t-{p}")) == expected_owner
            assert (tp(f"t-{p}") in ownership.conflicted) == (len(winners) > 1)


def test_owned_partitions_of_deleted_or_unsubscribed_topics_are_dropped():
    g = group(
        {"t": 2},
        member("a", ["t"], ["t-0", "gone-0"], 2),
        member("b", ["t"], ["other-1"], 2),
    )
    assert previous_owners(g).as_dict() == {tp("t-0"): "a"}
    # The claim on the deleted topic changes nothing: a keeps t-0, b gets t-1.
    expect(COOP.assign(g), a=("t-0",), b=("t-1",))


def test_cooperative_sticky_gives_a_conflicted_partition_to_nobody_this_round():
    g = group(
        {"t": 2},
        member("a", ["t"], ["t-0"], 3),
        member("b", ["t"], ["t-0", "t-1"], 3),
    )
    expect(COOP.assign(g), a=(), b=("t-1",))


def test_cooperative_sticky_reads_the_generation_from_user_data_without_a_v2_generation():
    g = group(
        {"t": 2},
        member("a", ["t"], ["t-0"], user_data=encode_cooperative_sticky_user_data(4)),
        member("b", ["t"], ["t-0", "t-1"], user_data=encode_cooperative_sticky_user_data(5)),
    )
    # b's generation is higher, so b keeps t-0 ... and gives t-1 up to a (quota 1 each).
    result = COOP.assign(g)
    assert result.partitions_of("b") == tps("t-0")
    # t-1 moves from b to a: withheld this round.
    assert result.partitions_of("a") == ()


# --- cooperative-sticky: withholding and the follow-up round --------------------------------


def test_cooperative_sticky_withholds_a_transferring_partition_until_the_follow_up_round():
    topics = {"t0": 6}
    round1 = group(
        {"t0": 6},
        member("C0", ["t0"], ["t0-0", "t0-1", "t0-2", "t0-3", "t0-4"], 1),
        member("C1", ["t0"], ["t0-5"], 1),
        member("C2", ["t0"]),
    )
    first = COOP.assign(round1)
    expect(first, C0=("t0-0", "t0-1"), C1=("t0-5",), C2=())
    assert "cooperative-sticky" not in COMPLETE_ASSIGNORS

    # C0 revoked t0-2..t0-4 and everybody rejoins with what they now own.
    round2 = group(
        topics,
        *(
            member(mid, ["t0"], [str(p) for p in first.partitions_of(mid)], 2)
            for mid in ("C0", "C1", "C2")
        ),
    )
    second = COOP.assign(round2)
    expect(second, C0=("t0-0", "t0-1"), C1=("t0-2", "t0-5"), C2=("t0-3", "t0-4"))
    validate_cooperative_assignment(round2, second)


def test_cooperative_sticky_general_path_withholds_added_and_revoked_partitions():
    # b no longer subscribes to t1, so its t1-0 must go to a, and a's t0-0 then moves to b for
    # balance. Both are added to one member while another still owns them: withheld.
    g = group(
        {"t0": 1, "t1": 1},
        member("a", ["t0", "t1"], ["t0-0"], 2),
        member("b", ["t0"], ["t1-0"], 2),
    )
    expect(sticky_fields(g), a=("t1-0",), b=("t0-0",))
    expect(COOP.assign(g), a=(), b=())


# --- validate_cooperative_assignment --------------------------------------------------------


def test_validate_cooperative_assignment_rejects_an_add_and_revoke_of_the_same_partition():
    g = group({"t": 2}, member("a", ["t"], ["t-0", "t-1"], 1), member("b", ["t"], [], 1))
    moved = GroupAssignment.of({"a": tps("t-0"), "b": tps("t-1")})
    assert transferring_partitions(g, moved) == tps("t-1")
    with pytest.raises(IllegalCooperativeAssignmentError, match="t-1"):
        validate_cooperative_assignment(g, moved)

    revoke_only = GroupAssignment.of({"a": tps("t-0"), "b": ()})
    validate_cooperative_assignment(g, revoke_only)


def test_validate_cooperative_assignment_uses_raw_owned_partitions():
    # Both claim t-0 in the same generation (a conflict the sticky assignors would drop), but the
    # leader's check takes the owned partitions as reported: giving it to a is still a revoke
    # from b plus no add, giving it to c is an add plus revokes.
    g = group(
        {"t": 1},
        member("a", ["t"], ["t-0"], 1),
        member("b", ["t"], ["t-0"], 1),
        member("c", ["t"], [], 1),
    )
    validate_cooperative_assignment(g, GroupAssignment.of({"a": tps("t-0"), "b": (), "c": ()}))
    with pytest.raises(IllegalCooperativeAssignmentError):
        validate_cooperative_assignment(g, GroupAssignment.of({"a": (), "b": (), "c": tps("t-0")}))


# --- user data codecs -----------------------------------------------------------------------


def test_sticky_user_data_round_trips_and_falls_back_to_v0():
    partitions = tps("b-1", "a-0", "a-2")
    encoded = encode_sticky_user_data(partitions, 7)
    assert decode_sticky_user_data(encoded) == MemberData(tps("a-0", "a-2", "b-1"), 7)
    v0 = encoded[:-4]  # the same previous assignment without the generation field
    assert decode_sticky_user_data(v0) == MemberData(tps("a-0", "a-2", "b-1"), None)
    assert decode_sticky_user_data(b"\x00\x00\x00\x05") == MemberData((), -1)
    assert decode_sticky_user_data(b"") == MemberData((), None)
    assert decode_sticky_user_data(None) == MemberData((), None)


def test_sticky_subscription_user_data_only_after_an_assignment():
    assert STICKY.subscription_user_data((), -1) is None
    data = STICKY.subscription_user_data(tps("t-0"), 3)
    assert data is not None
    assert decode_sticky_user_data(data) == MemberData(tps("t-0"), 3)


def test_cooperative_sticky_user_data_round_trips():
    assert decode_cooperative_sticky_generation(encode_cooperative_sticky_user_data(12)) == 12
    assert decode_cooperative_sticky_generation(COOP.subscription_user_data((), -1)) == -1
    assert decode_cooperative_sticky_generation(b"\x01") == -1
    assert decode_cooperative_sticky_generation(None) is None


# --- registry and common guarantees ---------------------------------------------------------


def test_registry_names_and_unknown_names():
    assert set(ASSIGNORS) == {"range", "roundrobin", "sticky", "cooperative-sticky"}
    for name, assignor in ASSIGNORS.items():
        assert assignor.name == name
        assert assignor_named(name) is assignor
    with pytest.raises(TypeError):
        ASSIGNORS["x"] = RANGE  # type: ignore[index]
    with pytest.raises(UnknownAssignorError, match="unknown assignor 'bogus'") as error:
        assignor_named("bogus")
    assert isinstance(error.value, InputError)


def test_every_assignor_gives_every_member_an_entry_and_complete_ones_cover_everything():
    rng = random.Random(11)
    topics = {"t0": 3, "t1": 5, "t2": 0}
    for _ in range(40):
        members = [
            member(f"m{i}", rng.sample(["t0", "t1", "t2", "nope"], rng.randint(0, 3)))
            for i in range(rng.randint(1, 5))
        ]
        g = group(topics, *members)
        for name, assignor in ASSIGNORS.items():
            result = assignor.assign(g)
            assert [mid for mid, _ in result.assignments] == list(g.member_ids)
            owners = result.owners()
            assert all(len(ids) == 1 for ids in owners.values()), name
            for partition, (owner,) in owners.items():
                assert partition.topic in g.member(owner).subscription.topics
            if name in COMPLETE_ASSIGNORS:
                assert set(owners) == set(g.subscribed_partitions), name
            if name in ("sticky", "cooperative-sticky"):
                assert assignment_is_balanced(g, result), name


def test_sticky_assignors_are_balanced_and_sticky_over_repeated_rounds():
    # Members come and go; each round's owned partitions are the previous round's result.
    topics = {"t0": 4, "t1": 5}
    present = ["a", "b"]
    owned: dict[str, tuple[TopicPartition, ...]] = {}
    for generation, change in enumerate(["+c", "+d", "-a", "+e", "-c"], start=1):
        verb, mid = change[0], change[1:]
        present = [*present, mid] if verb == "+" else [m for m in present if m != mid]
        g = group(
            topics,
            *(
                member(m, ["t0", "t1"], [str(p) for p in owned.get(m, ())], generation)
                for m in present
            ),
        )
        result = COOP.assign(g)
        validate_cooperative_assignment(g, result)
        # The follow-up round hands out what was withheld.
        g2 = group(
            topics,
            *(
                member(m, ["t0", "t1"], [str(p) for p in result.partitions_of(m)], generation)
                for m in present
            ),
        )
        settled = COOP.assign(g2)
        assert set(settled.owners()) == set(g2.subscribed_partitions)
        counts = [len(ps) for _, ps in settled.assignments]
        assert max(counts) - min(counts) <= 1
        for m in present:  # nobody loses a partition it kept in the first round
            assert set(result.partitions_of(m)) <= set(settled.partitions_of(m))
        owned = settled.as_dict()
    assert list(itertools.chain.from_iterable(owned.values()))
