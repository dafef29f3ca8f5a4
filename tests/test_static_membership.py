"""Static membership (reference §9): replacing a known group.instance.id in every group state."""

from __future__ import annotations

import pytest
from coordinator_driver import (
    COMPLETING,
    GROUP,
    PREPARING,
    RANGE,
    STABLE,
    SUB_T,
    Driver,
    assignment,
    error_of,
    join_request,
    response_to,
)

from groupspec.spec import (
    CoordinatorConfig,
    GroupCoordinatorSpec,
    HeartbeatExpired,
    JoinTimerExpired,
)
from groupspec.spec.log import GroupMetadataKey
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupProtocol,
    OffsetCommitPartition,
    OffsetCommitRequest,
    Received,
    SyncGroupRequest,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
)

ROUNDROBIN = (JoinGroupProtocol("roundrobin", SUB_T),)
RANGE_OR_RR = (*RANGE, *ROUNDROBIN)


def static(name, protocols=RANGE):
    return dict(client=name, instance=f"i-{name}", protocols=protocols)


# -- Stable, selected protocol unchanged: no rebalance --------------------------------------------


def test_stable_replacement_keeps_generation_and_inherits_assignment():
    d = Driver()
    a, b = d.form_stable(static("a"), static("b"))
    assert d.group.leader_id == a
    new_b, ref, out = d.join("b-restarted", instance="i-b", at=20_000)
    assert "join.static_replacement.stable_no_rebalance" in out.rules
    assert new_b != b
    assert response_to(out, ref) == JoinGroupResponse(
        ErrorCode.NONE,
        member_id=new_b,
        generation_id=1,
        protocol_type="consumer",
        protocol_name="range",
        leader=a,
        skip_assignment=False,
        members=(),
    )
    group = d.group
    assert group.state is STABLE
    assert group.generation_id == 1
    assert group.static_member_id("i-b") == new_b
    assert not group.has_member(b)
    assert group.leader_id == a
    assert group.member(new_b).assignment == assignment(b)
    assert d.armed()[HeartbeatExpired(GROUP, new_b)] == 20_000 + 10_000
    # The replacement is persisted: the group record names the new member id.
    stored = d.state.log.get(GroupMetadataKey(GROUP))
    assert {m.member_id for m in stored.members} == {a, new_b}
    assert {m.member_id: m.assignment for m in stored.members}[new_b] == assignment(b)
    # The next SyncGroup returns the inherited assignment.
    sync_ref, out = d.sync(new_b, instance="i-b")
    assert response_to(out, sync_ref) == SyncGroupResponse(
        ErrorCode.NONE, "consumer", "range", assignment(b)
    )


def fenced_requests(old_id, generation):
    part = (OffsetCommitPartition("t", 0, 42),)
    return {
        "heartbeat": HeartbeatRequest(GROUP, generation, old_id, group_instance_id="i-b"),
        "sync": SyncGroupRequest(GROUP, generation, old_id, group_instance_id="i-b"),
        "commit": OffsetCommitRequest(GROUP, part, generation, old_id, group_instance_id="i-b"),
        "join": join_request("b", old_id, instance="i-b"),
    }


@pytest.mark.parametrize("api", ["heartbeat", "sync", "commit", "join"])
def test_old_member_id_is_fenced_after_stable_replacement(api):
    d = Driver()
    _, b = d.form_stable(static("a"), static("b"))
    d.join("b-restarted", instance="i-b", at=20_000)
    before = d.state
    ref, out = d.send("zombie", fenced_requests(b, 1)[api], at=20_001)
    assert error_of(response_to(out, ref)) is ErrorCode.FENCED_INSTANCE_ID
    assert d.group == before.group(GROUP)


def test_v9_replaced_leader_gets_skip_assignment_and_member_list():
    d = Driver()
    a, b = d.form_stable(static("a"), static("b"))
    new_a, ref, out = d.join("a-restarted", instance="i-a", version=9, at=20_000)
    body = response_to(out, ref)
    assert body.error_code is ErrorCode.NONE
    assert body.member_id == new_a
    assert body.leader == new_a
    assert body.skip_assignment is True
    assert body.generation_id == 1
    assert set(body.members) == {
        JoinGroupResponseMember(new_a, "i-a", SUB_T),
        JoinGroupResponseMember(b, "i-b", SUB_T),
    }
    assert d.group.leader_id == new_a
    assert a not in d.member_ids()
    assert d.group.state is STABLE


def test_v8_replaced_leader_is_given_the_old_leader_id():
    d = Driver()
    a, _ = d.form_stable(static("a"), static("b"))
    new_a, ref, out = d.join("a-restarted", instance="i-a", version=8, at=20_000)
    body = response_to(out, ref)
    assert body.error_code is ErrorCode.NONE
    assert body.member_id == new_a
    assert body.leader == a  # so the new member never believes it leads
    assert body.leader != body.member_id
    assert body.skip_assignment is False
    assert body.generation_id == 1
    assert d.group.leader_id == new_a  # leadership is still inherited
    assert d.group.state is STABLE


# -- Stable, selected protocol changes: rebalance -------------------------------------------------


def test_stable_replacement_that_changes_selected_protocol_rebalances():
    d = Driver()
    a, b = d.form_stable(static("a", RANGE_OR_RR), static("b", RANGE_OR_RR))
    assert d.group.protocol_name == "range"
    log_before = d.state.log
    new_b, ref, out = d.join("b-restarted", instance="i-b", protocols=ROUNDROBIN, at=20_000)
    assert "join.static_replacement.protocol_changed_rebalance" in out.rules
    assert response_to(out, ref) is None
    group = d.group
    assert group.state is PREPARING
    assert group.generation_id == 1
    assert group.member(new_b).awaiting_join == ref
    assert not group.has_member(b)
    assert d.state.log == log_before
    _, ref_a, out = d.join("a", a, protocols=RANGE_OR_RR, at=20_001)
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 2
    assert d.group.protocol_name == "roundrobin"
    assert response_to(out, ref).protocol_name == "roundrobin"
    assert response_to(out, ref_a).protocol_name == "roundrobin"


# -- CompletingRebalance: always rebalance --------------------------------------------------------


def test_completing_replacement_fences_parked_sync_and_rebalances():
    d = Driver()
    a, b = d.form_completing(static("a"), static("b"))
    sync_ref, out = d.sync(b, instance="i-b")
    assert response_to(out, sync_ref) is None  # parked until the leader syncs
    new_b, ref, out = d.join("b-restarted", instance="i-b", at=d.now + 1)
    assert "join.static_replacement.completing_rebalances" in out.rules
    # The old incarnation's parked SyncGroup is fenced; nothing else is answered.
    assert [(r.ref, r.body) for r in out.responses] == [
        (sync_ref, SyncGroupResponse(ErrorCode.FENCED_INSTANCE_ID))
    ]
    group = d.group
    assert group.state is PREPARING
    assert group.generation_id == 1
    assert group.member(new_b).awaiting_join == ref
    assert not group.has_member(b)
    _, _, out = d.join("a", a)
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 2
    body = response_to(out, ref)
    assert (body.error_code, body.member_id, body.generation_id) == (ErrorCode.NONE, new_b, 2)


def test_completing_replacement_with_unchanged_protocol_still_rebalances():
    d = Driver()
    a, _ = d.form_completing(static("a"), static("b"))
    d.join("b-restarted", instance="i-b")
    assert d.group.state is PREPARING
    assert d.group.leader_id == a


# -- PreparingRebalance: old parked join fenced, new one parked ----------------------------------


def test_preparing_replacement_fences_old_parked_join_and_parks_new_one():
    d = Driver()
    a, b, c = d.form_stable(static("a"), static("b"), static("c"))
    d.join("a", a, instance="i-a", at=20_000)  # the leader rejoins: rebalance
    _, old_ref, out = d.join("b", b, instance="i-b", at=20_001)
    assert response_to(out, old_ref) is None
    assert d.group.state is PREPARING
    new_b, new_ref, out = d.join("b-restarted", instance="i-b", at=20_002)
    assert "join.static_replacement.preparing" in out.rules
    assert [(r.ref, r.body) for r in out.responses] == [
        (old_ref, JoinGroupResponse(ErrorCode.FENCED_INSTANCE_ID, member_id=b))
    ]
    group = d.group
    assert group.state is PREPARING
    assert group.member(new_b).awaiting_join == new_ref
    assert not group.has_member(b)
    # c rejoins: everyone has joined, the join phase completes and answers the new incarnation.
    _, _, out = d.join("c", c, instance="i-c", at=20_003)
    assert d.group.state is COMPLETING
    assert d.member_ids() == {a, new_b, c}
    body = response_to(out, new_ref)
    assert (body.error_code, body.member_id, body.generation_id) == (ErrorCode.NONE, new_b, 2)


def test_replaced_leader_keeps_leadership_through_a_rebalance():
    d = Driver()
    a, b = d.form_stable(static("a"), static("b"))
    d.join("b", b, instance="i-b", protocols=RANGE_OR_RR, at=20_000)  # follower changed
    assert d.group.state is PREPARING
    # The replacement is the last member to join: the join phase completes at once.
    new_a, ref, out = d.join("a-restarted", instance="i-a", at=20_001)
    assert d.group.state is COMPLETING
    assert d.group.leader_id == new_a
    body = response_to(out, ref)
    assert body.leader == new_a
    assert {m.member_id for m in body.members} == {new_a, b}
    assert a not in d.member_ids()


# -- static members survive join completion --------------------------------------------------------


def test_static_members_survive_join_completion_without_rejoining():
    d = Driver()
    a, b = d.form_stable(static("a"), static("b"))
    _, ref_a, _ = d.join("a", a, instance="i-a", at=20_000)
    out = d.step(JoinTimerExpired(GROUP), at=d.group.join_timer.deadline_ms)
    group = d.group
    assert group.state is COMPLETING
    assert group.generation_id == 2
    assert d.member_ids() == {a, b}
    assert group.member(b).protocols == RANGE
    assert set(response_to(out, ref_a).members) == {
        JoinGroupResponseMember(a, "i-a", SUB_T),
        JoinGroupResponseMember(b, "i-b", SUB_T),
    }
    # b learns of the new generation later and syncs with its old member id.
    sync_ref, _ = d.sync(b, generation=2, instance="i-b")
    d.sync(a, {a: b"A", b: b"B"}, instance="i-a")
    assert d.group.state is STABLE
    assert d.group.member(b).assignment == b"B"
    assert sync_ref not in {m.awaiting_sync for m in d.group.members}


# -- append failure reverts the replacement ---------------------------------------------------------


@pytest.mark.parametrize("replaced", ["leader", "follower"])
def test_stable_replacement_append_failure_reverts(replaced):
    d = Driver()
    a, b = d.form_stable(static("a"), static("b"))
    old_id, instance = (a, "i-a") if replaced == "leader" else (b, "i-b")
    failing = GroupCoordinatorSpec(
        CoordinatorConfig(write_failures=(ErrorCode.NOT_ENOUGH_REPLICAS,))
    )
    ref = d.next_ref("restarted")
    before = d.state
    outcomes = failing.step(before, Received(ref, join_request("x", instance=instance)), 20_000)
    assert len(outcomes) == 2
    by_error = {response_to(o, ref).error_code: o for o in outcomes}
    assert set(by_error) == {ErrorCode.NONE, ErrorCode.COORDINATOR_NOT_AVAILABLE}

    failed = by_error[ErrorCode.COORDINATOR_NOT_AVAILABLE]
    assert "join.static_replacement.write_failed_reverted" in failed.rules
    body = response_to(failed, ref)
    assert body.member_id == ""
    assert body.generation_id == 1
    assert body.leader == a
    group = failed.state.group(GROUP)
    assert group.state is STABLE
    assert group.generation_id == 1
    assert group.static_member_id(instance) == old_id
    assert {m.member_id for m in group.members} == {a, b}
    assert group.leader_id == a
    assert group.member(old_id).assignment == assignment(old_id)
    assert failed.state.log == before.log
    # The old incarnation carries on undisturbed.
    d.state = failed.state
    hb_ref, out = d.send("old", HeartbeatRequest(GROUP, 1, old_id, group_instance_id=instance))
    assert response_to(out, hb_ref) == HeartbeatResponse(ErrorCode.NONE)

    succeeded = by_error[ErrorCode.NONE]
    new_id = response_to(succeeded, ref).member_id
    assert succeeded.state.group(GROUP).static_member_id(instance) == new_id != old_id
