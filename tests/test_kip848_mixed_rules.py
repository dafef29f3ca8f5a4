"""One scenario per rule of mixed groups (spec/kip848/mixed_rules.py): classic members inside a
consumer group and the online conversions. Each drives the mixed coordinator into the rule's
branch and checks what Kafka 4.x does there; the parametrized test checks that the rule fired
and that every mixed invariant holds after it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from kip848_helpers import join as cg_join
from kip848_helpers import tps
from mixed_helpers import (
    ALL,
    SPEC,
    C,
    assigned,
    body,
    classic_beat,
    classic_group,
    classic_join,
    classic_leave,
    classic_members_joined,
    classic_rejoined,
    classic_sync,
    converged,
    leave,
    metadata,
    mixed_spec,
    only,
    send,
    upgraded,
)

from groupspec.spec.events import EventNotEnabledError
from groupspec.spec.kip848.classic_members import (
    ClassicJoinTimeoutExpired,
    ClassicSyncTimeoutExpired,
)
from groupspec.spec.kip848.mixed import MixedOutcome
from groupspec.spec.kip848.mixed_invariants import check_mixed_state, conversion_violations
from groupspec.spec.kip848.mixed_rules import MIXED_RULES
from groupspec.spec.kip848.mixed_state import GroupKind, MixedState
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import EMPTY as CLASSIC_EMPTY
from groupspec.vocabulary.group_state import PREPARING_REBALANCE
from groupspec.vocabulary.group_state import STABLE as CLASSIC_STABLE
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

MIXED_RULE_IDS = frozenset(rule.rule_id for rule in MIXED_RULES)


def error_of(outcome: MixedOutcome) -> ErrorCode:
    return body(outcome).error_code  # type: ignore[attr-defined,no-any-return]


def refused_unchanged(
    state: MixedState, item: object, error: ErrorCode, **kw: object
) -> MixedOutcome:
    outcome = only(send(state, item, 5_000, **kw))  # type: ignore[arg-type]
    assert error_of(outcome) is error
    assert outcome.state == state
    return outcome


# Classic members: JoinGroup ------------------------------------------------------------------


def join_group_max_size_reached() -> MixedOutcome:
    spec = mixed_spec(max_size=2)
    return refused_unchanged(
        upgraded(spec), classic_join("x"), ErrorCode.GROUP_MAX_SIZE_REACHED, spec=spec
    )


def join_inconsistent_protocol() -> MixedOutcome:
    return refused_unchanged(
        upgraded(),
        classic_join("x", protocol_type="connect"),
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
    )


def join_member_id_required() -> MixedOutcome:
    before = upgraded()
    outcome = only(send(before, classic_join("")))
    answer = body(outcome)
    assert isinstance(answer, JoinGroupResponse)
    assert answer.error_code is ErrorCode.MEMBER_ID_REQUIRED and answer.member_id != ""
    assert outcome.state.consumer.group("g") == before.consumer.group("g")
    return outcome


def join_new_member() -> MixedOutcome:
    outcome = send(upgraded(), classic_join("x"), 5_000)[0]
    member = outcome.state.consumer.group("g").member("x")  # type: ignore[union-attr]
    assert member is not None and member.uses_classic_protocol
    return outcome


def join_known_member() -> MixedOutcome:
    outcome = only(send(upgraded(), classic_join(C, ALL), 4_100))
    answer = body(outcome)
    assert isinstance(answer, JoinGroupResponse)
    # c must first give up t0-0 and t0-1: it stays at epoch 1, revoking.
    assert (answer.error_code, answer.generation_id, answer.leader) == (ErrorCode.NONE, 1, "")
    assert answer.protocol_name == "range" and answer.members == ()
    group = outcome.state.consumer.group("g")
    assert group is not None
    assert dict(group.classic_sync_deadlines) == {C: 4_100 + 20_000}
    assert dict(group.session_deadlines)[C] == 4_100 + 10_000
    return outcome


# SyncGroup and Heartbeat ---------------------------------------------------------------------


def unknown_member() -> MixedOutcome:
    return refused_unchanged(upgraded(), classic_beat("nobody", 1), ErrorCode.UNKNOWN_MEMBER_ID)


def fenced_instance_id() -> MixedOutcome:
    state = send(upgraded(), cg_join("s", instance_id="i1"), 4_500)[0].state
    return refused_unchanged(state, classic_beat("other", 2, "i1"), ErrorCode.FENCED_INSTANCE_ID)


def not_classic_member() -> MixedOutcome:
    return refused_unchanged(upgraded(), classic_beat("cg1", 2), ErrorCode.UNKNOWN_MEMBER_ID)


def illegal_generation() -> MixedOutcome:
    return refused_unchanged(upgraded(), classic_beat(C, 7), ErrorCode.ILLEGAL_GENERATION)


def sync_inconsistent_protocol() -> MixedOutcome:
    return refused_unchanged(
        upgraded(), classic_sync(C, 1, name="roundrobin"), ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    )


def sync_rebalance_in_progress() -> MixedOutcome:
    outcome = only(send(upgraded(), classic_sync(C, 1), 4_100))
    assert error_of(outcome) is ErrorCode.REBALANCE_IN_PROGRESS
    return outcome


def sync_assignment() -> MixedOutcome:
    outcome = only(send(classic_rejoined(), classic_sync(C, 1), 4_200))
    answer = body(outcome)
    assert isinstance(answer, SyncGroupResponse) and answer.error_code is ErrorCode.NONE
    # Only what it keeps: t0-0 and t0-1 are pending revocation.
    assert assigned(answer.assignment) == tps("t1-0")
    group = outcome.state.consumer.group("g")
    assert group is not None and group.classic_sync_deadlines == ()
    return outcome


def heartbeat_rejoin() -> MixedOutcome:
    outcome = only(send(upgraded(), classic_beat(C, 1), 4_100))
    assert error_of(outcome) is ErrorCode.REBALANCE_IN_PROGRESS
    group = outcome.state.consumer.group("g")
    assert group is not None and dict(group.classic_join_deadlines) == {C: 4_100 + 20_000}
    return outcome


def heartbeat_ok() -> MixedOutcome:
    outcome = only(send(converged(), classic_beat(C, 2), 5_000))
    assert error_of(outcome) is ErrorCode.NONE
    return outcome


def members_leave() -> MixedOutcome:
    outcome = only(send(upgraded(), classic_leave(C, "nobody"), 5_000))
    answer = body(outcome)
    assert isinstance(answer, LeaveGroupResponse)
    assert [m.error_code for m in answer.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    group = outcome.state.consumer.group("g")
    assert group is not None and group.member(C) is None and group.group_epoch == 3
    return outcome


def timer_join_expired() -> MixedOutcome:
    state = heartbeat_rejoin().state
    outcome = only(send(state, ClassicJoinTimeoutExpired("g", C), 24_100))
    assert outcome.state.consumer.group("g").member(C) is None  # type: ignore[union-attr]
    return outcome


def timer_sync_expired() -> MixedOutcome:
    outcome = only(send(classic_rejoined(), ClassicSyncTimeoutExpired("g", C), 24_100))
    assert outcome.state.consumer.group("g").member(C) is None  # type: ignore[union-attr]
    return outcome


def empty_consumer_group_replaced() -> MixedOutcome:
    state = only(send(SPEC.initial_state(), cg_join("a"))).state
    state = only(send(state, leave("a"))).state
    assert state.kind_of("g") is GroupKind.CONSUMER
    outcome = only(send(state, classic_join("")))
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    assert error_of(outcome) is ErrorCode.MEMBER_ID_REQUIRED
    return outcome


# Conversions ---------------------------------------------------------------------------------


def not_a_consumer_group() -> MixedOutcome:
    beat = ConsumerGroupHeartbeatRequest("g", "cg1", 1)
    return refused_unchanged(classic_group(), beat, ErrorCode.GROUP_ID_NOT_FOUND)


def empty_classic_replaced() -> MixedOutcome:
    state = only(send(classic_group(), classic_leave(C), 3_500)).state
    assert state.classic.group("g").state is CLASSIC_EMPTY  # type: ignore[union-attr]
    outcome = only(send(state, cg_join("cg1"), 4_000))
    assert outcome.state.kind_of("g") is GroupKind.CONSUMER
    return outcome


def upgrade_disabled() -> MixedOutcome:
    spec = mixed_spec(policy="downgrade")
    return refused_unchanged(
        classic_group(spec), cg_join("cg1"), ErrorCode.GROUP_ID_NOT_FOUND, spec=spec
    )


def upgrade_not_consumer_protocol() -> MixedOutcome:
    state = SPEC.initial_state()
    connect = JoinGroupRequest("g", "", "connect", (JoinGroupProtocol("v1", b"x"),), 10_000, 20_000)
    state = only(send(state, connect)).state
    member_id = state.classic.group("g").pending_members[0].member_id  # type: ignore[union-attr]
    state = only(send(state, replace(connect, member_id=member_id))).state
    return refused_unchanged(state, cg_join("cg1"), ErrorCode.GROUP_ID_NOT_FOUND)


def upgrade_too_large() -> MixedOutcome:
    spec = mixed_spec(max_size=1)
    state, _ = classic_members_joined(2, spec)
    return refused_unchanged(state, cg_join("cg1"), ErrorCode.GROUP_ID_NOT_FOUND, spec=spec)


def upgrade_unreadable() -> MixedOutcome:
    # The classic group is in its first rebalance: no protocol chosen yet.
    state = only(send(SPEC.initial_state(), classic_join(""))).state
    state = only(send(state, classic_join(C))).state
    return refused_unchanged(state, cg_join("cg1"), ErrorCode.GROUP_ID_NOT_FOUND)


def upgrade() -> MixedOutcome:
    before = classic_group()
    outcomes = send(before, cg_join("cg1"), 4_000)
    for outcome in outcomes:
        assert conversion_violations(before, outcome.state, "g") == []
    group = outcomes[0].state.consumer.group("g")
    assert group is not None
    member = group.member(C)
    assert member is not None and member.uses_classic_protocol
    assert (member.member_epoch, member.assigned) == (1, tps(*ALL))
    assert dict(group.session_deadlines)[C] == 4_000 + 10_000
    return outcomes[0]


def upgrade_parked_answered() -> MixedOutcome:
    state, (_leader, follower) = classic_members_joined(2)
    state = only(
        send(state, classic_sync(follower, 1), 3_100)
    ).state  # parked: the leader has not synced
    outcome = send(state, cg_join("cg1"), 4_000)[0]
    parked = [r.body for r in outcome.responses if isinstance(r.body, SyncGroupResponse)]
    assert [p.error_code for p in parked] == [ErrorCode.REBALANCE_IN_PROGRESS]
    return outcome


def upgrade_join_refused() -> MixedOutcome:
    spec = mixed_spec(max_size=1)
    return refused_unchanged(
        classic_group(spec), cg_join("cg1"), ErrorCode.GROUP_MAX_SIZE_REACHED, spec=spec
    )


def downgrade() -> MixedOutcome:
    before = converged()
    outcomes = send(before, leave("cg1"), 6_000)
    for outcome in outcomes:
        assert conversion_violations(before, outcome.state, "g") == []
    outcome = outcomes[0]
    classic = outcome.state.classic.group("g")
    assert classic is not None and outcome.state.kind_of("g") is GroupKind.CLASSIC
    assert (classic.state, classic.generation_id, classic.protocol_name) == (
        PREPARING_REBALANCE,
        2,
        "range",
    )
    (member,) = classic.members
    # Its target, computed while cg1 was a member: the rebalance that follows gives it the rest.
    assert member.member_id == C and assigned(member.assignment) == tps("t1-0")
    assert classic.join_timer is not None and classic.join_timer.deadline_ms == 6_000 + 20_000
    # The classic member learns of the rebalance from its next heartbeat.
    beat = only(send(outcome.state, classic_beat(C, 2), 6_100))
    assert error_of(beat) is ErrorCode.REBALANCE_IN_PROGRESS
    return outcome


def downgrade_disabled() -> MixedOutcome:
    spec = mixed_spec(policy="upgrade")
    outcome = only(send(converged(spec), leave("cg1"), 6_000, spec=spec))
    group = outcome.state.consumer.group("g")
    assert group is not None and [m.member_id for m in group.iter_members()] == [C]
    return outcome


def downgrade_too_large() -> MixedOutcome:
    spec = mixed_spec(classic_max=1)
    state, _ = classic_members_joined(2)
    state = send(state, cg_join("cg1"), 9_000)[0].state
    outcome = only(send(state, leave("cg1"), 5_000, spec=spec))
    assert outcome.state.kind_of("g") is GroupKind.CONSUMER
    return outcome


def _classic_epoch(state: MixedState) -> int:
    group = state.consumer.group("g")
    member = None if group is None else group.member(C)
    assert member is not None and member.uses_classic_protocol
    return member.member_epoch


def classic_offset_commit() -> MixedOutcome:
    # A classic member commits at its generation with a version a consumer-protocol member may
    # not use; a generation newer than its epoch is ILLEGAL_GENERATION, not STALE_MEMBER_EPOCH.
    state = upgraded()
    epoch = _classic_epoch(state)
    offsets = (OffsetCommitPartition("t0", 0, 42),)
    accepted = only(send(state, OffsetCommitRequest("g", offsets, epoch, C, api_version=7), 4_100))
    answer = body(accepted)
    assert isinstance(answer, OffsetCommitResponse)
    assert {p.error_code for p in answer.partitions} == {ErrorCode.NONE}
    refused = only(
        send(accepted.state, OffsetCommitRequest("g", offsets, epoch + 1, C, api_version=7), 4_200)
    )
    answer = body(refused)
    assert isinstance(answer, OffsetCommitResponse)
    assert {p.error_code for p in answer.partitions} == {ErrorCode.ILLEGAL_GENERATION}
    return accepted


def classic_offset_fetch() -> MixedOutcome:
    state = upgraded()
    epoch = _classic_epoch(state)
    fetch = OffsetFetchRequest("g", None, member_id=C, member_epoch=epoch + 1)
    return refused_unchanged(state, fetch, ErrorCode.ILLEGAL_GENERATION)


def with_static_consumer_member() -> MixedState:
    """classic_group upgraded by static consumer member cg1 (instance i1): target c t1-0, cg1
    t0-0 t0-1, at epoch 2."""
    for outcome in send(classic_group(), cg_join("cg1", instance_id="i1"), 4_000):
        group = outcome.state.consumer.group("g")
        if group is not None and group.target_of(C) == tps("t1-0"):
            return outcome.state
    raise AssertionError("no outcome with that target")


def static_new_member() -> MixedOutcome:
    # The target the newcomer makes has several allowed forms: the first.
    outcome = send(upgraded(), replace(classic_join(""), group_instance_id="i2"), 4_500)[0]
    assert error_of(outcome) is ErrorCode.NONE
    return outcome


def downgrade_on_replacement() -> MixedOutcome:
    # A classic consumer takes over instance i1 with cg1's subscription: cg1 was the last member
    # that did not speak the classic protocol.
    before = with_static_consumer_member()
    # Any member may lead the classic group (Kafka's first added, in hash-map order): the first.
    outcome = send(before, replace(classic_join(""), group_instance_id="i1"), 4_500)[0]
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    return outcome


def downgrade_on_replacement_rebalance() -> MixedOutcome:
    before = with_static_consumer_member()
    join = replace(classic_join(""), group_instance_id="i1")
    changed = replace(join, protocols=(JoinGroupProtocol("range", metadata(topics=("t1",))),))
    outcome = send(before, changed, 4_500)[0]
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    return outcome


SCENARIOS: dict[str, Callable[[], MixedOutcome]] = {
    "cg_classic.static_new_member": static_new_member,
    "cg_classic.static_member_replaced": downgrade_on_replacement,
    "cg_convert.downgrade_on_replacement": downgrade_on_replacement,
    "cg_convert.downgrade_on_replacement_rebalance": downgrade_on_replacement_rebalance,
    "cg_classic.offset_commit": classic_offset_commit,
    "cg_classic.offset_fetch": classic_offset_fetch,
    "cg_classic.join_group_max_size_reached": join_group_max_size_reached,
    "cg_classic.join_inconsistent_protocol": join_inconsistent_protocol,
    "cg_classic.join_member_id_required": join_member_id_required,
    "cg_classic.join_new_member": join_new_member,
    "cg_classic.join_known_member": join_known_member,
    "cg_classic.join_answered": join_known_member,
    "cg_classic.unknown_member": unknown_member,
    "cg_classic.fenced_instance_id": fenced_instance_id,
    "cg_classic.not_classic_member": not_classic_member,
    "cg_classic.illegal_generation": illegal_generation,
    "cg_classic.sync_inconsistent_protocol": sync_inconsistent_protocol,
    "cg_classic.sync_rebalance_in_progress": sync_rebalance_in_progress,
    "cg_classic.sync_assignment": sync_assignment,
    "cg_classic.heartbeat_rejoin": heartbeat_rejoin,
    "cg_classic.heartbeat_ok": heartbeat_ok,
    "cg_classic.join_timeout_armed": heartbeat_rejoin,
    "cg_classic.leave": members_leave,
    "cg_classic.timer_join_expired": timer_join_expired,
    "cg_classic.timer_sync_expired": timer_sync_expired,
    "cg_classic.empty_consumer_group_replaced": empty_consumer_group_replaced,
    "cg_convert.not_a_consumer_group": not_a_consumer_group,
    "cg_convert.empty_classic_replaced": empty_classic_replaced,
    "cg_convert.upgrade_disabled": upgrade_disabled,
    "cg_convert.upgrade_not_consumer_protocol": upgrade_not_consumer_protocol,
    "cg_convert.upgrade_too_large": upgrade_too_large,
    "cg_convert.upgrade_unreadable": upgrade_unreadable,
    "cg_convert.upgrade": upgrade,
    "cg_convert.upgrade_parked_answered": upgrade_parked_answered,
    "cg_convert.upgrade_join_refused": upgrade_join_refused,
    "cg_convert.downgrade": downgrade,
    "cg_convert.downgrade_disabled": downgrade_disabled,
    "cg_convert.downgrade_too_large": downgrade_too_large,
}


def test_every_mixed_rule_has_a_scenario():
    assert set(SCENARIOS) == MIXED_RULE_IDS


@pytest.mark.parametrize("rule_id", sorted(SCENARIOS))
def test_the_scenario_fires_its_rule_and_keeps_every_invariant(rule_id):
    outcome = SCENARIOS[rule_id]()
    assert rule_id in outcome.rules
    assert check_mixed_state(outcome.state) == []


def test_a_classic_timeout_that_is_not_armed_is_refused():
    with pytest.raises(EventNotEnabledError):
        send(upgraded(), ClassicJoinTimeoutExpired("g", C))


def test_a_static_classic_rejoin_must_be_the_instance_holders():
    state = static_new_member().state
    group = state.consumer.group("g")
    assert group is not None
    holder = group.static_member("i2")
    assert holder is not None
    rejoin = replace(classic_join(holder.member_id), group_instance_id="i2")
    assert error_of(send(state, rejoin, 5_000)[0]) is ErrorCode.NONE
    stranger = replace(classic_join("someone"), group_instance_id="i2")
    assert error_of(only(send(state, stranger, 5_000))) is ErrorCode.FENCED_INSTANCE_ID
    unknown = replace(classic_join("someone"), group_instance_id="i9")
    assert error_of(only(send(state, unknown, 5_000))) is ErrorCode.UNKNOWN_MEMBER_ID


def test_a_downgrade_on_replacement_keeps_an_up_to_date_assignment_without_a_rebalance():
    outcome = downgrade_on_replacement()
    classic = outcome.state.classic.group("g")
    assert classic is not None and classic.state is CLASSIC_STABLE
    newcomer = next(m for m in classic.members if m.group_instance_id == "i1")
    # The replaced member's target: t0-0 and t0-1.
    assert assigned(newcomer.assignment) == tps("t0-0", "t0-1")


def test_a_downgrade_on_replacement_with_a_new_subscription_rebalances():
    # KAFKA-19546: the newcomer subscribes to t1 only; keeping the replaced member's t0
    # partitions in a Stable classic group would run an assignment against its subscription.
    outcome = downgrade_on_replacement_rebalance()
    classic = outcome.state.classic.group("g")
    assert classic is not None and classic.state is PREPARING_REBALANCE
    answer = body(outcome)
    assert isinstance(answer, JoinGroupResponse) and answer.generation_id == 0


def test_requests_of_the_other_kinds_reach_their_own_coordinator():
    state = classic_group()
    outcome = only(send(state, HeartbeatRequest("g", 1, C), 3_500))
    assert isinstance(body(outcome), HeartbeatResponse) and error_of(outcome) is ErrorCode.NONE
    assert outcome.state.kind_of("g") is GroupKind.CLASSIC
    sync = only(send(upgraded(), SyncGroupRequest("h", 1, "x"), 5_000))
    assert error_of(sync) is ErrorCode.UNKNOWN_MEMBER_ID
    # The service checks a JoinGroup's session timeout before reading any group.
    before = upgraded()
    brief = replace(classic_join("x"), session_timeout_ms=1)
    refused = only(send(before, brief, 5_000))
    assert error_of(refused) is ErrorCode.INVALID_SESSION_TIMEOUT and refused.state == before
