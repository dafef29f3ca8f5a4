"""One scenario per rule of the KIP-848 coordinator (spec/kip848/rules.py): each drives the
relation into the rule's branch, checks what Kafka 4.x does there, and the parametrized test
checks that the rule fired. A rule without a scenario fails `test_every_rule_has_a_scenario`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from kip848_helpers import CONFIG, SPEC, answer, beat, first, join, only, send, tps
from kip848_offset_scenarios import OFFSET_SCENARIOS
from kip848_regex_scenarios import REGEX_SCENARIOS

from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848 import (
    ConsumerGroupConfig,
    ConsumerGroupCoordinatorSpec,
    ConsumerGroupsState,
    MemberState,
    Outcome,
    RebalanceTimeoutExpired,
    SessionTimeoutExpired,
)
from groupspec.spec.kip848.events import (
    CoordinatorLoaded,
    CoordinatorLoadStarted,
    CoordinatorUnloaded,
)
from groupspec.spec.kip848.failover import with_records
from groupspec.spec.kip848.invariants import check_state
from groupspec.spec.kip848.mixed_rules import MIXED_RULES
from groupspec.spec.kip848.proposed_fixes import KAFKA_20641
from groupspec.spec.kip848.records import (
    GroupMetadataKey,
    MemberMetadataKey,
    Record,
    records_between,
)
from groupspec.spec.kip848.replay import durable_view
from groupspec.spec.kip848.rules import KIP848_RULE_IDS
from groupspec.spec.kip848.step import Step, all_outcomes
from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupState,
)
from groupspec.vocabulary.errors import ErrorCode, MalformedRequestError

MIXED_RULE_IDS = frozenset(rule.rule_id for rule in MIXED_RULES)
EMPTY = SPEC.initial_state()
ALL = ("t0-0", "t0-1", "t1-0")
DEFERRING = ConsumerGroupCoordinatorSpec(ConsumerGroupConfig(assignment_interval_ms=1_000))


def one_member() -> ConsumerGroupsState:
    """Member a holds all three partitions, Stable at group epoch 2."""
    return only(send(EMPTY, join("a"))).state


def a_revoking() -> ConsumerGroupsState:
    """b joined (target a: t0-0 t1-0, b: t0-1); a must revoke t0-1, b waits for it."""
    state = first(send(one_member(), join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    return only(send(state, beat("a", 2, *ALL))).state


def two_stable() -> ConsumerGroupsState:
    """a (t0-0 t1-0) and b (t0-1), both Stable at group epoch 3."""
    state = only(send(a_revoking(), beat("a", 2, "t0-0", "t1-0"))).state
    return only(send(state, beat("b", 3))).state


def static_member() -> ConsumerGroupsState:
    """Static member s (instance i1) holds all three partitions at epoch 2."""
    return only(send(EMPTY, join("s", instance_id="i1"))).state


def group_of(outcome: Outcome):  # type: ignore[no-untyped-def]
    (group,) = outcome.state.iter_groups()
    return group


def refused(
    state: ConsumerGroupsState, request: ConsumerGroupHeartbeatRequest, error: ErrorCode
) -> Outcome:
    outcome = only(send(state, request))
    assert answer(outcome).error_code is error
    assert outcome.state == state
    return outcome


def invalid_request() -> Outcome:
    no_timeout = replace(join("a"), rebalance_timeout_ms=-1)
    return refused(EMPTY, no_timeout, ErrorCode.INVALID_REQUEST)


def unsupported_assignor() -> Outcome:
    return refused(EMPTY, join("a", server_assignor="sticky"), ErrorCode.UNSUPPORTED_ASSIGNOR)


def unknown_group() -> Outcome:
    return refused(EMPTY, beat("a", 5), ErrorCode.GROUP_ID_NOT_FOUND)


def group_created() -> Outcome:
    outcome = only(send(EMPTY, join("a")))
    group = group_of(outcome)
    # A new group is at epochs 1/1; a's subscription bumps the group epoch, the target follows.
    assert (group.group_epoch, group.assignment_epoch) == (2, 2)
    assert group.state is ConsumerGroupState.STABLE
    return outcome


def group_max_size_reached() -> Outcome:
    small = ConsumerGroupCoordinatorSpec(ConsumerGroupConfig(max_size=1, assignment_interval_ms=0))
    state = only(send(EMPTY, join("a"), spec=small)).state
    assert answer(only(send(state, join("a"), spec=small))).error_code is ErrorCode.NONE
    outcome = only(send(state, join("b"), spec=small))
    assert answer(outcome).error_code is ErrorCode.GROUP_MAX_SIZE_REACHED
    return outcome


def join_coordinator_member_id() -> Outcome:
    outcome = only(send(EMPTY, join("", api_version=0)))
    assert answer(outcome).member_id == "member-0"
    assert outcome.state.next_member_number == 1
    return outcome


def join_client_member_id() -> Outcome:
    outcome = only(send(EMPTY, join("client-made-id")))
    assert answer(outcome).member_id == "client-made-id"
    return outcome


def rejoin_known_member() -> Outcome:
    state = one_member()
    outcome = only(send(state, join("a")))
    response = answer(outcome)
    assert (response.member_epoch, response.assignment is not None) == (2, True)
    assert group_of(outcome).group_epoch == 2
    return outcome


def unknown_member_id() -> Outcome:
    return refused(one_member(), beat("zz", 2), ErrorCode.UNKNOWN_MEMBER_ID)


def fenced_member_epoch() -> Outcome:
    state = one_member()
    refused(state, beat("a", 1), ErrorCode.FENCED_MEMBER_EPOCH)  # below, not the previous one
    return refused(state, beat("a", 3), ErrorCode.FENCED_MEMBER_EPOCH)  # above


def previous_epoch_accepted() -> Outcome:
    state = two_stable()
    # a moved from epoch 2 to 3; a heartbeat at 2 inside its assignment is accepted...
    outcome = only(send(state, beat("a", 2, "t0-0", "t1-0")))
    assert (answer(outcome).error_code, answer(outcome).member_epoch) == (ErrorCode.NONE, 3)
    # ...but not one reporting a partition it no longer has.
    refused(state, beat("a", 2, "t0-0", "t0-1"), ErrorCode.FENCED_MEMBER_EPOCH)
    return outcome


def new_static_member() -> Outcome:
    outcome = only(send(EMPTY, join("s", instance_id="i1")))
    assert group_of(outcome).static_member("i1").member_id == "s"
    return outcome


def static_member_replaced() -> Outcome:
    state = only(send(static_member(), beat("s", -2, instance_id="i1"))).state
    outcome = only(send(state, join("s2", instance_id="i1")))
    group = group_of(outcome)
    assert set(group.members) == {"s2"}
    successor = group.member("s2")
    assert successor.assigned == tps(*ALL) and successor.member_epoch == 2
    assert group.group_epoch == 2  # the same subscription: no rebalance
    return outcome


def unreleased_instance_id() -> Outcome:
    state = static_member()
    refused(state, join("s", instance_id="i1"), ErrorCode.UNRELEASED_INSTANCE_ID)  # even itself
    return refused(state, join("s2", instance_id="i1"), ErrorCode.UNRELEASED_INSTANCE_ID)


def unknown_static_member() -> Outcome:
    return refused(one_member(), beat("a", 2, instance_id="i9"), ErrorCode.UNKNOWN_MEMBER_ID)


def fenced_instance_id() -> Outcome:
    return refused(static_member(), beat("x", 2, instance_id="i1"), ErrorCode.FENCED_INSTANCE_ID)


def member_left() -> Outcome:
    outcome = only(send(one_member(), beat("a", -1)))
    assert (answer(outcome).member_id, answer(outcome).member_epoch) == ("a", -1)
    assert group_of(outcome).state is ConsumerGroupState.EMPTY
    return outcome


def static_member_temporarily_left() -> Outcome:
    outcome = only(send(static_member(), beat("s", -2, instance_id="i1")))
    member = group_of(outcome).member("s")
    assert member.member_epoch == -2 and member.assigned == tps(*ALL)
    return outcome


# The coordinator with KAFKA-20641's proposed fix (apache/kafka#22473).
FIXED_20641 = ConsumerGroupCoordinatorSpec(
    ConsumerGroupConfig(assignment_interval_ms=0, proposed_fixes=(KAFKA_20641,))
)


def static_member_left_revoking() -> Outcome:
    state = first(send(static_member(), join("b")), s=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    state = only(send(state, beat("s", 2, *ALL, instance_id="i1"))).state
    (revoking,) = state.iter_groups()
    assert revoking.member("s").state is MemberState.UNREVOKED_PARTITIONS
    outcome = only(send(state, beat("s", -2, instance_id="i1"), spec=FIXED_20641))
    member = group_of(outcome).member("s")
    assert (member.member_epoch, member.state) == (-2, MemberState.STABLE)
    assert member.pending_revocation == frozenset()
    # The rebalance timeout armed for the revocation stays: it will fire stale.
    assert dict(group_of(outcome).rebalance_deadlines)["s"][0] == 2
    return outcome


def member_fenced() -> Outcome:
    outcome = only(send(two_stable(), beat("a", -1)))
    group = group_of(outcome)
    assert set(group.members) == {"b"} and group.group_epoch == 4
    return outcome


def last_member_fenced() -> Outcome:
    outcome = member_left()
    group = group_of(outcome)
    assert group.group_epoch == group.assignment_epoch == 3
    return outcome


def subscription_changed() -> Outcome:
    outcome = only(send(one_member(), beat("a", 2, *ALL, topics=("t0",))))
    group = group_of(outcome)
    assert group.group_epoch == 3 and group.target_of("a") == tps("t0-0", "t0-1")
    assert group.member("a").state is MemberState.UNREVOKED_PARTITIONS
    return outcome


def session_timeout_armed() -> Outcome:
    outcome = only(send(EMPTY, join("a"), now_ms=7))
    assert group_of(outcome).session_deadlines == (("a", 7 + 45_000),)
    return outcome


def response_with_assignment() -> Outcome:
    return group_created()


def response_without_assignment() -> Outcome:
    outcome = only(send(one_member(), beat("a", 2, *ALL)))
    assert answer(outcome).assignment is None and answer(outcome).member_epoch == 2
    return outcome


def assignment_computed() -> Outcome:
    outcomes = send(one_member(), join("b"))
    # Uniform with identical subscriptions: every balanced split of three partitions (6).
    assert len(outcomes) == 6
    return outcomes[0]


def assignment_deferred() -> Outcome:
    state = only(send(EMPTY, join("a"), now_ms=5, spec=DEFERRING)).state
    outcome = only(send(state, join("b"), now_ms=10, spec=DEFERRING))
    group = group_of(outcome)
    assert group.state is ConsumerGroupState.ASSIGNING
    assert (group.group_epoch, group.assignment_epoch) == (3, 2)
    later = send(outcome.state, beat("b", 2), now_ms=1_005, spec=DEFERRING)
    assert all(group_of(o).assignment_epoch == 3 for o in later)
    return outcome


def revoke_first() -> Outcome:
    state = first(send(one_member(), join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    outcome = only(send(state, beat("a", 2, *ALL)))
    member = group_of(outcome).member("a")
    assert member.state is MemberState.UNREVOKED_PARTITIONS and member.member_epoch == 2
    assert member.pending_revocation == tps("t0-1")
    return outcome


def still_revoking() -> Outcome:
    outcome = only(send(a_revoking(), beat("a", 2, *ALL)))
    assert group_of(outcome).member("a").state is MemberState.UNREVOKED_PARTITIONS
    return outcome


def to_stable() -> Outcome:
    outcome = only(send(a_revoking(), beat("a", 2, "t0-0", "t1-0")))
    member = group_of(outcome).member("a")
    assert member.state is MemberState.STABLE and member.member_epoch == 3
    return outcome


def to_unreleased() -> Outcome:
    outcome = first(send(one_member(), join("b")), a=tps("t0-0", "t1-0"), b=tps("t0-1"))
    member = group_of(outcome).member("b")
    # t0-1 is still a's: b moves to epoch 3 without it.
    assert member.state is MemberState.UNRELEASED_PARTITIONS and not member.assigned
    return outcome


def subscription_narrowed() -> Outcome:
    state = only(send(EMPTY, join("a"), now_ms=5, spec=DEFERRING)).state
    outcome = only(send(state, beat("a", 2, *ALL, topics=("t0",)), now_ms=10, spec=DEFERRING))
    member = group_of(outcome).member("a")
    assert member.assigned == tps("t0-0", "t0-1") and member.pending_revocation == tps("t1-0")
    return outcome


def unknown_state_fenced() -> Outcome:
    state = one_member()
    (group,) = state.iter_groups()
    lost = replace(group.member("a"), state=MemberState.UNKNOWN)
    state = state.with_group(group.with_member(lost))
    return refused(state, beat("a", 2, "t0-0"), ErrorCode.FENCED_MEMBER_EPOCH)


def rebalance_timeout_armed() -> Outcome:
    outcome = revoke_first()
    assert group_of(outcome).rebalance_deadlines == (("a", (2, 30_000)),)
    return outcome


def rebalance_timeout_cancelled() -> Outcome:
    outcome = to_stable()
    assert group_of(outcome).rebalance_deadlines == ()
    return outcome


def session_expired() -> Outcome:
    outcome = only(send(one_member(), SessionTimeoutExpired("g", "a"), now_ms=45_000))
    assert group_of(outcome).state is ConsumerGroupState.EMPTY
    return outcome


def session_expired_no_member() -> Outcome:
    replaced = static_member_replaced().state
    outcome = only(send(replaced, SessionTimeoutExpired("g", "s"), now_ms=45_000))
    assert set(group_of(outcome).members) == {"s2"}
    return outcome


def rebalance_timeout_expired() -> Outcome:
    outcome = only(send(a_revoking(), RebalanceTimeoutExpired("g", "a"), now_ms=30_000))
    assert set(group_of(outcome).members) == {"b"}
    return outcome


def rebalance_timeout_stale() -> Outcome:
    state = first(send(static_member(), join("b")), s=tps("t0-0", "t1-0"), b=tps("t0-1")).state
    state = only(send(state, beat("s", 2, *ALL, instance_id="i1"))).state
    state = only(send(state, beat("s", -2, instance_id="i1"))).state
    outcome = only(send(state, RebalanceTimeoutExpired("g", "s"), now_ms=30_000))
    assert group_of(outcome).member("s") is not None
    return outcome


def describe(*group_ids: str) -> Outcome:
    outcome = only(send(two_stable(), ConsumerGroupDescribeRequest(group_ids)))
    assert outcome.state == two_stable()
    return outcome


def describe_invalid_group_id() -> Outcome:
    return describe("")


def describe_unknown_group() -> Outcome:
    outcome = describe("nope")
    (reply,) = outcome.responses
    assert isinstance(reply.body, ConsumerGroupDescribeResponse)
    assert reply.body.groups[0].error_code is ErrorCode.GROUP_ID_NOT_FOUND
    return outcome


# A broker that does not serve the consumer protocol (the classic 3.x profile's coordinator).
DISABLED = ConsumerGroupCoordinatorSpec(replace(CONFIG, consumer_protocol_enabled=False))


def protocol_disabled_heartbeat() -> Outcome:
    outcome = only(send(ConsumerGroupsState(), join("a"), spec=DISABLED))
    assert answer(outcome).error_code is ErrorCode.UNSUPPORTED_VERSION
    assert outcome.state == ConsumerGroupsState()
    return outcome


def protocol_disabled_describe() -> Outcome:
    outcome = only(
        send(ConsumerGroupsState(), ConsumerGroupDescribeRequest(("g", "h")), spec=DISABLED)
    )
    (reply,) = outcome.responses
    assert isinstance(reply.body, ConsumerGroupDescribeResponse)
    assert [(g.group_id, g.error_code) for g in reply.body.groups] == [
        ("g", ErrorCode.UNSUPPORTED_VERSION),
        ("h", ErrorCode.UNSUPPORTED_VERSION),
    ]
    return outcome


def describe_group() -> Outcome:
    outcome = describe("g")
    (reply,) = outcome.responses
    assert isinstance(reply.body, ConsumerGroupDescribeResponse)
    (group,) = reply.body.groups
    assert (group.group_state, group.group_epoch, group.assignment_epoch) == ("Stable", 3, 3)
    assert group.assignor_name == "uniform"
    assert {m.member_id: m.assignment == m.target_assignment for m in group.members} == {
        "a": True,
        "b": True,
    }
    return outcome


# -- records, replay and failover (spec/kip848/records.py, replay.py, failover.py) ---------------


def written(outcome: Outcome) -> set[str]:
    """The kinds of record the outcome's log holds."""
    return {type(record.key).__name__ for record in outcome.state.log}


def record_member_tombstones() -> Outcome:
    outcome = member_fenced()
    assert "a" not in {getattr(r.key, "member_id", None) for r in outcome.state.log}
    return outcome


def record_member_metadata() -> Outcome:
    outcome = group_created()
    assert "MemberMetadataKey" in written(outcome)
    return outcome


def record_group_epoch() -> Outcome:
    return group_created()


def record_target_member() -> Outcome:
    return group_created()


def record_target_epoch() -> Outcome:
    return group_created()


def record_current_assignment() -> Outcome:
    outcome = only(send(a_revoking(), beat("a", 2, "t0-0", "t1-0")))
    # Only a's current assignment changed: it is the one record written.
    assert outcome.rules.count("cg_record.current_assignment") == 1
    return outcome


def record_group_tombstones() -> Outcome:
    # No handler of this branch deletes a group (DeleteGroups does): write what deleting it does.
    state = two_stable()

    def delete(step: Step) -> ConsumerGroupsState:
        return with_records(step, state, replace(state, groups_by_id=()))

    (outcome,) = all_outcomes(SPEC.config, 0, delete)
    assert outcome.state.log == ()
    return outcome


def failed_over(state: ConsumerGroupsState) -> ConsumerGroupsState:
    """`state` unloaded and loading again."""
    unloaded = only(send(state, CoordinatorUnloaded())).state
    return only(send(unloaded, CoordinatorLoadStarted())).state


def loaded(state: ConsumerGroupsState) -> Outcome:
    """`state` after a whole failover."""
    return only(send(failed_over(state), CoordinatorLoaded()))


def replay_group_epoch() -> Outcome:
    return loaded(two_stable())


def replay_member_metadata() -> Outcome:
    return loaded(two_stable())


def replay_target_member() -> Outcome:
    return loaded(two_stable())


def replay_target_epoch() -> Outcome:
    return loaded(two_stable())


def replay_current_assignment() -> Outcome:
    return loaded(two_stable())


def uncompacted(state: ConsumerGroupsState, *requests: ConsumerGroupHeartbeatRequest):  # type: ignore[no-untyped-def]
    """The records the requests write from `state`, as Kafka's log holds them before cleaning."""
    log: list[Record] = []
    for request in requests:
        after = send(state, request)[0].state  # any target: replay must rebuild whichever
        group_before, group_after = state.group("g"), after.group("g")
        log += records_between(SPEC.config, group_before, group_after)
        state = after
    return state, tuple(log)


def replay_tombstone() -> Outcome:
    state, log = uncompacted(EMPTY, join("a"), join("b"), beat("b", -1))
    outcome = loaded(replace(state, log=log))
    assert set(group_of(outcome).members) == {"a"}
    return outcome


def replay_tombstone_ignored() -> Outcome:
    state, log = uncompacted(EMPTY, join("a"), beat("a", -1))
    ignored = (Record(MemberMetadataKey("g", "ghost"), None), Record(GroupMetadataKey("h"), None))
    outcome = loaded(replace(state, log=log + ignored))
    assert [g.group_id for g in outcome.state.iter_groups()] == ["g"]
    return outcome


def failover_unloaded() -> Outcome:
    outcome = only(send(two_stable(), CoordinatorUnloaded()))
    assert outcome.state.group("g") is None and outcome.state.log == two_stable().log
    return outcome


def failover_load_started() -> Outcome:
    unloaded = only(send(two_stable(), CoordinatorUnloaded())).state
    return only(send(unloaded, CoordinatorLoadStarted()))


def failover_loaded() -> Outcome:
    before = a_revoking()
    outcome = loaded(before)
    group, old = group_of(outcome), before.group("g")
    assert old is not None
    assert durable_view(group) == durable_view(old)
    # Timers are armed anew: a session timeout each, a rebalance timeout for revoking a.
    assert dict(group.session_deadlines) == {"a": 45_000, "b": 45_000}
    assert [m for m, _ in group.rebalance_deadlines] == ["a"]
    return outcome


def failover_not_coordinator() -> Outcome:
    unloaded = only(send(two_stable(), CoordinatorUnloaded())).state
    return refused(unloaded, beat("a", 3), ErrorCode.NOT_COORDINATOR)


def failover_load_in_progress() -> Outcome:
    return refused(failed_over(two_stable()), beat("a", 3), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)


SCENARIOS: dict[str, Callable[[], Outcome]] = {
    "cg_heartbeat.invalid_request": invalid_request,
    "cg_heartbeat.unsupported_assignor": unsupported_assignor,
    "cg_heartbeat.unknown_group": unknown_group,
    "cg_heartbeat.group_created": group_created,
    "cg_heartbeat.group_max_size_reached": group_max_size_reached,
    "cg_heartbeat.join_coordinator_member_id": join_coordinator_member_id,
    "cg_heartbeat.join_client_member_id": join_client_member_id,
    "cg_heartbeat.rejoin_known_member": rejoin_known_member,
    "cg_heartbeat.unknown_member_id": unknown_member_id,
    "cg_heartbeat.fenced_member_epoch": fenced_member_epoch,
    "cg_heartbeat.previous_epoch_accepted": previous_epoch_accepted,
    "cg_heartbeat.new_static_member": new_static_member,
    "cg_heartbeat.static_member_replaced": static_member_replaced,
    "cg_heartbeat.unreleased_instance_id": unreleased_instance_id,
    "cg_heartbeat.unknown_static_member": unknown_static_member,
    "cg_heartbeat.fenced_instance_id": fenced_instance_id,
    "cg_heartbeat.member_left": member_left,
    "cg_heartbeat.static_member_temporarily_left": static_member_temporarily_left,
    "cg_heartbeat.static_member_left_revoking": static_member_left_revoking,
    "cg_heartbeat.member_fenced": member_fenced,
    "cg_heartbeat.last_member_fenced": last_member_fenced,
    "cg_heartbeat.subscription_changed": subscription_changed,
    "cg_heartbeat.session_timeout_armed": session_timeout_armed,
    "cg_heartbeat.response_with_assignment": response_with_assignment,
    "cg_heartbeat.response_without_assignment": response_without_assignment,
    "cg_assignment.computed": assignment_computed,
    "cg_assignment.deferred": assignment_deferred,
    "cg_reconcile.revoke_first": revoke_first,
    "cg_reconcile.still_revoking": still_revoking,
    "cg_reconcile.to_stable": to_stable,
    "cg_reconcile.to_unreleased": to_unreleased,
    "cg_reconcile.subscription_narrowed": subscription_narrowed,
    "cg_reconcile.unknown_state_fenced": unknown_state_fenced,
    "cg_reconcile.rebalance_timeout_armed": rebalance_timeout_armed,
    "cg_reconcile.rebalance_timeout_cancelled": rebalance_timeout_cancelled,
    "cg_timer.session_expired": session_expired,
    "cg_timer.session_expired_no_member": session_expired_no_member,
    "cg_timer.rebalance_timeout_expired": rebalance_timeout_expired,
    "cg_timer.rebalance_timeout_stale": rebalance_timeout_stale,
    "cg_describe.invalid_group_id": describe_invalid_group_id,
    "cg_describe.unknown_group": describe_unknown_group,
    "cg_describe.group": describe_group,
    "cg_protocol_disabled.heartbeat": protocol_disabled_heartbeat,
    "cg_protocol_disabled.describe": protocol_disabled_describe,
    "cg_record.member_tombstones": record_member_tombstones,
    "cg_record.member_metadata": record_member_metadata,
    "cg_record.group_epoch": record_group_epoch,
    "cg_record.target_member": record_target_member,
    "cg_record.target_epoch": record_target_epoch,
    "cg_record.current_assignment": record_current_assignment,
    "cg_record.group_tombstones": record_group_tombstones,
    "cg_replay.group_epoch": replay_group_epoch,
    "cg_replay.member_metadata": replay_member_metadata,
    "cg_replay.target_member": replay_target_member,
    "cg_replay.target_epoch": replay_target_epoch,
    "cg_replay.current_assignment": replay_current_assignment,
    "cg_replay.tombstone": replay_tombstone,
    "cg_replay.tombstone_ignored": replay_tombstone_ignored,
    "cg_failover.unloaded": failover_unloaded,
    "cg_failover.load_started": failover_load_started,
    "cg_failover.loaded": failover_loaded,
    "cg_failover.not_coordinator": failover_not_coordinator,
    "cg_failover.load_in_progress": failover_load_in_progress,
}
SCENARIOS.update(OFFSET_SCENARIOS)
SCENARIOS.update(REGEX_SCENARIOS)


def test_every_rule_has_a_scenario():
    # The rules of mixed groups have theirs in tests/test_kip848_mixed_rules.py.
    assert set(SCENARIOS) == KIP848_RULE_IDS - MIXED_RULE_IDS


@pytest.mark.parametrize("rule_id", sorted(SCENARIOS))
def test_the_scenario_fires_its_rule(rule_id):
    outcome = SCENARIOS[rule_id]()
    assert rule_id in outcome.rules, outcome.rules


def test_the_scenario_states_keep_every_invariant():
    for build in (one_member, a_revoking, two_stable, static_member):
        assert check_state(build()) == []


def test_a_timer_that_is_not_armed_is_refused():
    with pytest.raises(EventNotEnabledError):
        send(EMPTY, SessionTimeoutExpired("g", "a"))
    with pytest.raises(EventNotEnabledError):
        send(one_member(), RebalanceTimeoutExpired("g", "a"))


def test_what_no_frame_can_carry_is_refused_when_built():
    with pytest.raises(MalformedRequestError, match="subscribed_topic_regex"):
        replace(join("a"), subscribed_topic_regex="t.*", api_version=0)
    with pytest.raises(MalformedRequestError, match="member_epoch"):
        replace(join("a"), member_epoch=2**31)
    with pytest.raises(MalformedRequestError, match="api_version"):
        ConsumerGroupDescribeRequest(("g",), api_version=2)


def test_range_cuts_contiguous_ranges_in_every_order_of_dynamic_members():
    state = only(send(EMPTY, join("a", server_assignor="range"))).state
    outcomes = send(state, join("b", server_assignor="range"))
    targets = {(group_of(o).target_of("a"), group_of(o).target_of("b")) for o in outcomes}
    # t0 (two partitions) splits one each; t1 (one) goes to whichever member comes first.
    assert targets == {
        (tps("t0-0", "t1-0"), tps("t0-1")),
        (tps("t0-1"), tps("t0-0", "t1-0")),
    }


def test_range_puts_static_members_first_by_instance_id():
    state = only(send(EMPTY, join("z", instance_id="i0", server_assignor="range"))).state
    outcome = only(send(state, join("a", server_assignor="range")))
    assert group_of(outcome).target_of("z") == tps("t0-0", "t1-0")
