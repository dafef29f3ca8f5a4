"""The properties of mixed groups (spec/kip848/mixed_invariants.py, models/mixed_world.py): the
preset gives what it expects, each property catches a small faulty coordinator seeded into an
otherwise correct run, conversions both ways keep what Kafka keeps or change nothing when
refused, and the finding the mixed world made is pinned."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kip848_helpers import join as cg_join
from kip848_helpers import tps
from mixed_helpers import (
    ALL,
    SPEC,
    C,
    assigned,
    classic_group,
    classic_join,
    classic_members_joined,
    classic_sync,
    converged,
    leave,
    mixed_spec,
    only,
    send,
    upgraded,
)

import groupspec.spec.kip848.classic_members as classic_members_module
import groupspec.spec.kip848.conversion as conversion_module
from groupspec.checker.check import check
from groupspec.models.mixed_params import MixedParameters
from groupspec.models.mixed_world import MixedWorld, members_named
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848 import RequestArrived
from groupspec.spec.kip848.mixed_invariants import check_mixed_state, conversion_violations
from groupspec.spec.kip848.mixed_state import GroupKind, MixedState
from groupspec.spec.kip848.state import NO_PARTITIONS, MemberState
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import RequestRef

# Each mixed preset with the rules it must reach: kip848-mixed-2 both conversions; the rolling
# downgrade the classic restart replacing the consumer-protocol static member, and the new
# subscription making the downgraded group rebalance.
PRESET_RULES = {
    "kip848-mixed-2": {"cg_convert.upgrade", "cg_convert.downgrade"},
    "kip848-downgrade-1": {
        "cg_classic.static_member_replaced",
        "cg_convert.downgrade_on_replacement_rebalance",
    },
    # The second classic client's presets: the three upgrades a second member refuses or
    # interrupts (docs/coverage.md).
    "kip848-mixed-second-1": {"cg_convert.upgrade_too_large"},
    "kip848-mixed-connect-1": {"cg_convert.upgrade_not_consumer_protocol"},
    "kip848-mixed-parked-1": {"cg_convert.upgrade_parked_answered"},
    # KAFKA-20641's proposed fix: the static leave while revoking, its stale rebalance timeout,
    # and the replacement that cannot downgrade two classic members into group.max.size 1.
    "kip848-downgrade-fix-1": {
        "cg_heartbeat.static_member_left_revoking",
        "cg_timer.rebalance_timeout_stale",
        "cg_convert.downgrade_too_large",
    },
}


@pytest.mark.parametrize("name", sorted(PRESET_RULES))
def test_each_mixed_preset_gives_what_it_expects(name):
    loaded = load_model(name)
    expected = loaded.expected
    assert expected is not None
    result = check(loaded.model)
    search = result.search
    assert (result.verdict, search.distinct_states, search.transitions, search.depth) == (
        expected.verdict,
        expected.distinct_states,
        expected.transitions,
        expected.depth,
    )
    assert PRESET_RULES[name] <= set(search.rule_counts)


def test_kafka_19546_is_found_by_classic_assignments_subscribed_in_twelve_steps():
    # The 4.0.0/4.1.0 downgrade on a static replacement, which never rebalanced: the restarted
    # instance subscribes to t0 only and is handed the replaced member's t1-0.
    loaded = load_model("kip848-downgrade-1", {"fault": "KAFKA-19546"})
    result = check(loaded.model)
    (found,) = result.search.problems
    assert found.problem.property_name == "ClassicAssignmentsSubscribed"
    assert len(found.path) - 1 == 12
    assert "is assigned t1-0, but subscribes to ['t0']" in found.problem.detail


# Conversions both ways, and refusals -----------------------------------------------------------


def test_an_upgrade_keeps_members_generation_and_assignment():
    before = classic_group()
    for outcome in send(before, cg_join("cg1"), 4_000):
        group = outcome.state.consumer.group("g")
        assert group is not None and outcome.state.classic.group("g") is None
        member = group.member(C)
        assert member is not None
        assert (member.member_epoch, member.previous_member_epoch) == (1, 1)
        assert (member.state, member.assigned, group.target_of(C)) == (
            MemberState.STABLE,
            tps(*ALL),
            tps(*ALL),
        ) or group.target_of(C) != tps(*ALL)
        assert member.assigned == tps(*ALL)
        assert conversion_violations(before, outcome.state, "g") == []
        assert check_mixed_state(outcome.state) == []


def test_a_downgrade_keeps_the_classic_members_with_their_targets():
    before = converged()
    (outcome,) = send(before, leave("cg1"), 6_000)
    classic = outcome.state.classic.group("g")
    assert classic is not None and outcome.state.consumer.group("g") is None
    assert [m.member_id for m in classic.members] == [C]
    assert classic.generation_id == before.consumer.group("g").group_epoch  # type: ignore[union-attr]
    assert assigned(classic.members[0].assignment) == tps("t1-0")
    assert conversion_violations(before, outcome.state, "g") == []


@pytest.mark.parametrize(
    ("policy", "upgrades", "downgrades"),
    [
        ("disabled", False, False),
        ("upgrade", True, False),
        ("downgrade", False, True),
        ("bidirectional", True, True),
    ],
)
def test_the_migration_policy_decides_each_conversion(policy, upgrades, downgrades):
    spec = mixed_spec(policy=policy)
    before = classic_group(spec)
    outcome = send(before, cg_join("cg1"), 4_000, spec=spec)[0]
    if upgrades:
        assert outcome.state.kind_of("g") is GroupKind.CONSUMER
    else:
        assert outcome.state == before  # a refused conversion changes nothing
    # A consumer group the classic consumer joined as a classic member, then left alone in it.
    state = only(send(spec.initial_state(), cg_join("cg1"), spec=spec)).state
    state = send(state, classic_join("x"), 100, spec=spec)[0].state
    state = only(send(state, leave("cg1"), 200, spec=spec)).state
    assert (state.kind_of("g") is GroupKind.CLASSIC) is downgrades


def test_a_refused_upgrade_changes_nothing_even_with_requests_parked():
    spec = mixed_spec(policy="downgrade")
    state, (_leader, follower) = classic_members_joined(2, spec)
    state = only(send(state, classic_sync(follower, 1), 3_100, spec=spec)).state
    outcome = only(send(state, cg_join("cg1"), 4_000, spec=spec))
    assert outcome.state == state
    (reply,) = outcome.responses
    assert reply.body.error_code is ErrorCode.GROUP_ID_NOT_FOUND  # type: ignore[union-attr]


# Each property catches a seeded fault ---------------------------------------------------------


def _forgetful_upgrade(original):  # type: ignore[no-untyped-def]
    """An upgrade that loses the classic members' assignments."""

    def upgrade(step, classic):  # type: ignore[no-untyped-def]
        group = original(step, classic)
        for member in group.iter_members():
            group = group.with_member(replace(member, assigned=NO_PARTITIONS))
        return group

    return upgrade


def test_owned_once_catches_an_upgrade_that_forgets_the_classic_assignment(monkeypatch):
    monkeypatch.setattr(conversion_module, "upgrade", _forgetful_upgrade(conversion_module.upgrade))
    import groupspec.spec.kip848.mixed as mixed_module

    monkeypatch.setattr(mixed_module, "upgrade", _forgetful_upgrade(conversion_module.upgrade))
    world = MixedWorld(MixedParameters(partitions=(1,), leaves=0))
    world.properties = tuple(p for p in world.properties if p.name == "OwnedOnce")
    result = check(world)
    assert (result.verdict, result.failed) == ("fail", ("OwnedOnce",))


def test_conversion_preserves_catches_the_same_forgetful_upgrade(monkeypatch):
    import groupspec.spec.kip848.mixed as mixed_module

    monkeypatch.setattr(mixed_module, "upgrade", _forgetful_upgrade(conversion_module.upgrade))
    before = classic_group()
    outcome = send(before, cg_join("cg1"), 4_000)[0]
    assert conversion_violations(before, outcome.state, "g") != []


def test_conversion_preserves_catches_a_downgrade_that_drops_a_member_nobody_fenced(monkeypatch):
    original = conversion_module.downgrade

    def lossy(step, group, remaining):  # type: ignore[no-untyped-def]
        return original(step, group, remaining[:1])

    monkeypatch.setattr(conversion_module, "downgrade", lossy)
    state, _ = classic_members_joined(2)
    before = send(state, cg_join("cg1"), 9_000)[0].state
    request = leave("cg1")
    outcome = send(before, request, 10_000)[0]
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    fenced = members_named(RequestArrived(RequestRef("client", 0), request))
    assert fenced == {"cg1"}
    (problem,) = conversion_violations(before, outcome.state, "g", fenced)
    assert problem.startswith("downgrade kept members")


def test_a_downgrade_may_leave_out_only_the_members_its_step_fenced():
    # consumerGroupFenceMembers converts the group without the members it fences (a classic
    # member's expired session with only classic members left, as in kip848-downgrade-fix-1):
    # the members the step's input names may be missing from the classic group, no other.
    state, ids = classic_members_joined(2)
    before = send(state, cg_join("cg1"), 9_000)[0].state
    after = send(before, leave("cg1"), 10_000)[0].state
    assert conversion_violations(before, after, "g", frozenset({"cg1"})) == []
    (group,) = after.classic.groups
    without_first = replace(after.classic, groups=(replace(group, members=group.members[1:]),))
    dropped = replace(after, classic=without_first)
    assert group.members[0].member_id == ids[0]
    assert conversion_violations(before, dropped, "g", frozenset({"cg1", ids[0]})) == []
    assert conversion_violations(before, dropped, "g", frozenset({"cg1"})) != []


def test_classic_single_owner_catches_a_downgrade_that_hands_out_every_target(monkeypatch):
    original = conversion_module.downgrade

    def greedy(step, group, remaining):  # type: ignore[no-untyped-def]
        everything = frozenset().union(*(group.target_of(m) for m in group.members))
        widened = group.with_target({m: everything for m in group.members})
        return original(step, widened, remaining)

    monkeypatch.setattr(conversion_module, "downgrade", greedy)
    state, _ = classic_members_joined(2)
    state = send(state, cg_join("cg1"), 9_000)[0].state
    outcome = send(state, leave("cg1"), 10_000)[0]
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    assert {name for name, _ in check_mixed_state(outcome.state)} == {"ClassicSingleOwner"}


def test_group_kinds_disjoint_catches_an_upgrade_that_keeps_the_classic_group(monkeypatch):
    def keeping(self: MixedState, group):  # type: ignore[no-untyped-def]
        return MixedState(self.classic, self.consumer.with_group(group))

    monkeypatch.setattr(MixedState, "with_consumer_group", keeping)
    outcome = send(classic_group(), cg_join("cg1"), 4_000)[0]
    assert "GroupKindsDisjoint" in {name for name, _ in check_mixed_state(outcome.state)}


def test_single_owner_over_classic_members_catches_a_join_that_skips_reconciliation(
    monkeypatch,
):
    def eager(step, group, member, changed, owned, owners):  # type: ignore[no-untyped-def]
        target = group.target_of(member.member_id)
        return replace(member, member_epoch=group.assignment_epoch, assigned=target)

    monkeypatch.setattr(classic_members_module, "_maybe_reconcile", eager)
    state = only(send(SPEC.initial_state(), cg_join("cg1"))).state  # cg1 holds everything
    outcomes = send(state, classic_join("x"), 100)
    found = {name for o in outcomes for name, _ in check_mixed_state(o.state)}
    assert "ConsumerGroupInvariants" in found


# The finding ----------------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="Kafka 4.3.0/4.4.0: a downgrade stores each classic member's target as its assignment "
    "(ClassicGroup.fromConsumerGroup), and an upgrade before the member rejoined takes that as "
    "what it owns (ConsumerGroup.fromClassicGroup): the new consumer gets a partition the classic "
    "consumer still holds (docs/protocol.md §12.15)",
)
def test_an_upgrade_right_after_a_downgrade_gives_no_partition_the_classic_consumer_holds():
    # c holds t0-0 t0-1 t1-0 (generation 1); cg1 joins (upgrade) and leaves before c rejoined.
    state = only(send(upgraded(), leave("cg1"), 5_000)).state
    assert state.kind_of("g") is GroupKind.CLASSIC
    # cg1 joins again before c heard of either conversion: c still holds all three.
    outcomes = send(state, cg_join("cg1"), 5_100)
    for outcome in outcomes:
        group = outcome.state.consumer.group("g")
        assert group is not None
        member = group.member("cg1")
        assert member is not None
        assert not (member.assigned & tps(*ALL)), (
            f"cg1 runs {sorted(map(str, member.assigned))} while the classic consumer holds all"
        )


def test_the_mixed_world_finds_the_double_ownership_after_a_second_upgrade():
    """The figures docs/protocol.md §12.15 quotes: with one rejoin allowed, the shortest run to
    the finding has 24 steps and the check has seen 10,015 states by then."""
    loaded = load_model("kip848-mixed-2", {"rejoins": "1"})
    result = check(loaded.model)
    assert (result.verdict, result.failed) == ("fail", ("NoRunAgainstOwner",))
    (problem,) = result.search.problems
    assert (len(problem.path) - 1, result.search.distinct_states) == (24, 10_015)


def test_a_second_classic_member_in_a_rolling_downgrade_meets_kafka_20641_first():
    """The figures docs/coverage.md quotes for the replacement path of a downgrade refused by
    group.max.size: the second classic consumer's join makes the closing KIP-848 consumer revoke,
    and its -2 leave arrives in UNREVOKED_PARTITIONS (KAFKA-20641) after 13 steps."""
    loaded = load_model(
        "kip848-mixed-second-1",
        {
            "second_joins_classic": "false",
            "consumer_max_size": "2",
            "rolling_downgrade": "true",
            "leaves": "1",
            "classic_max_size": "1",
        },
    )
    result = check(loaded.model)
    assert (result.verdict, result.failed) == ("fail", ("ConsumerGroupInvariants",))
    (problem,) = result.search.problems
    assert len(problem.path) - 1 == 13


def test_the_proposed_fix_preset_without_the_fix_meets_kafka_20641_in_thirteen_steps():
    """docs/kip-848.md, "Proposed fixes": the world kip848-downgrade-fix-1 explores, against
    Kafka as released, breaks UnrevokedHasRevocations in 13 steps; with the fix it passes (the
    preset's own test above)."""
    loaded = load_model("kip848-downgrade-fix-1", {"proposed_fix": ""})
    result = check(loaded.model)
    assert (result.verdict, result.failed) == ("fail", ("ConsumerGroupInvariants",))
    (problem,) = result.search.problems
    assert "UnrevokedHasRevocations" in problem.problem.detail
    assert len(problem.path) - 1 == 13
