"""The refinement to the abstract group, and the time and durability properties beside it.

Each property is shown on a correct step of the specification (it holds) and on the same step
with a small fault of the kind Kafka's history holds (it fails): a coordinator that forgets to
drop a member, answers a heartbeat it should refuse, writes a stale record, keeps a sync timer
of the wrong generation. Every reference preset passes them all (tests/test_group_world.py).
"""

from __future__ import annotations

from dataclasses import replace

from coordinator_driver import GROUP, STABLE, Driver, assignment, join_request

from groupspec.spec.abstract_group import Phase, abstract_group, abstract_view
from groupspec.spec.events import HeartbeatExpired
from groupspec.spec.invariants import ACTION_PROPERTIES, INVARIANTS
from groupspec.spec.log import GroupMetadataKey
from groupspec.spec.refinement import refinement_problems
from groupspec.spec.state import SyncTimer
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import HeartbeatRequest, LeaveGroupRequest, MemberIdentity
from groupspec.vocabulary.responses import HeartbeatResponse, Response


def _refines(driver, before, event, outcome, parked=None):
    partition = driver.partition
    return refinement_problems(
        GROUP,
        abstract_view(before, GROUP, partition),
        abstract_view(outcome.state, GROUP, partition),
        event,
        outcome.responses,
        parked or {},
    )


def _stable_pair():
    driver = Driver(group_initial_rebalance_delay_ms=0)
    ids = driver.form_stable({"client": "a"}, {"client": "b"})
    return driver, ids


def _property(name, registry):
    return next(p for p in registry if p.name == name)


def test_the_mapping_reads_kafkas_state():
    driver, ids = _stable_pair()
    group = abstract_group(driver.group)
    assert group.phase is Phase.STABLE
    assert group.member_ids() == set(ids)
    assert dict(group.assignment) == {m: assignment(m) for m in ids}
    assert group.leader == driver.group.leader_id and group.protocol == "range"


def test_a_leave_refines_and_a_leave_that_keeps_the_member_does_not():
    driver, ids = _stable_pair()
    before = driver.state
    ref = driver.next_ref("a")
    from groupspec.vocabulary.requests import Received

    event = Received(ref, LeaveGroupRequest(GROUP, (MemberIdentity(ids[0]),)))
    (outcome,) = driver.spec.step(before, event, driver.now)
    assert _refines(driver, before, event, outcome) == []
    # The fault: the coordinator answers NONE but keeps the member.
    kept = replace(outcome, state=before)
    problems = _refines(driver, before, event, kept)
    assert any("still a member" in p for p in problems)


def test_a_heartbeat_answered_none_during_a_rebalance_does_not_refine():
    driver, ids = _stable_pair()
    driver.join("c", at=0)  # a third member: the group rebalances
    before = driver.state
    assert before.group(GROUP).state.value == "PreparingRebalance"
    from groupspec.vocabulary.requests import Received

    event = Received(driver.next_ref("a"), HeartbeatRequest(GROUP, 1, ids[0]))
    (outcome,) = driver.spec.step(before, event, driver.now)
    assert _refines(driver, before, event, outcome) == []
    faulty = replace(outcome, responses=(Response(event.ref, HeartbeatResponse(ErrorCode.NONE)),))
    problems = _refines(driver, before, event, faulty)
    assert any("answered NONE" in p for p in problems)


def test_a_new_generation_that_drops_a_static_member_does_not_refine():
    driver = Driver(group_initial_rebalance_delay_ms=0)
    static = driver.join("s", instance="i1")[0]
    driver.finish_join_phase()
    before = driver.state
    (member,) = before.group(GROUP).members
    assert member.member_id == static
    # The fault: a completed rebalance where the static member vanished.
    after_group = replace(
        before.group(GROUP), generation_id=before.group(GROUP).generation_id + 1, members=()
    )
    faulty_after = before.with_group(
        replace(after_group, state=after_group.state.EMPTY, leader_id=None, protocol_name=None)
    )
    event = HeartbeatExpired(GROUP, "someone-else")
    problems = refinement_problems(
        GROUP,
        abstract_view(before, GROUP, driver.partition),
        abstract_view(faulty_after, GROUP, driver.partition),
        event,
        (),
        {},
    )
    assert any("removed members it did not name" in p or "static member" in p for p in problems)


def test_log_replay_catches_a_record_that_is_not_the_group():
    check = _property("LogReplay", ACTION_PROPERTIES).check
    driver = Driver(group_initial_rebalance_delay_ms=0)
    ids = driver.form_completing({"client": "a"})
    before = driver.state
    _, outcome = driver.sync(ids[0], {ids[0]: b"mine"})
    assert check(before, None, outcome.state, outcome.responses) == []
    # The fault: the record stores another assignment than the one the group installed.
    key = GroupMetadataKey(GROUP)
    record = outcome.state.log.get(key)
    stale_member = replace(record.members[0], assignment=b"stale")
    stale_log = outcome.state.log.append(key, replace(record, members=(stale_member,)))
    faulty = replace(outcome.state, log=stale_log)
    assert check(before, None, faulty, outcome.responses)


def test_a_stable_group_must_be_as_its_record_holds_it():
    check = _property("StableGroupDurable", INVARIANTS).check
    driver, _ = _stable_pair()
    assert check(driver.state) == []
    # The fault (KAFKA-10284): a static-style replacement kept in memory only.
    group = driver.group
    renamed = replace(group.members[0], member_id="replaced-0")
    faulty = driver.state.with_group(
        replace(
            group, members=tuple(sorted((renamed, group.members[1]), key=lambda m: m.member_id))
        )
    )
    assert check(faulty)


def test_timers_armed_catches_a_sync_timer_of_another_generation():
    check = _property("TimersArmed", INVARIANTS).check
    driver = Driver(group_initial_rebalance_delay_ms=0)
    driver.form_completing({"client": "a"}, {"client": "b"})
    assert check(driver.state) == []
    group = driver.group
    stale = replace(group, sync_timer=SyncTimer(group.sync_timer.deadline_ms, 0))
    assert check(driver.state.with_group(stale))
    late = replace(
        group, sync_timer=SyncTimer(group.sync_timer.deadline_ms + 1, group.generation_id)
    )
    assert check(driver.state.with_group(late))


def test_timer_order_refuses_a_session_timer_before_the_sync_timer():
    from groupspec.models.world_properties import CoordinatorStep, Decoder, _timer_order

    # The world's timeouts: the rebalance timeout (the sync timer's) is the shorter one.
    driver = Driver(group_initial_rebalance_delay_ms=0)
    ids = driver.form_completing(
        {"client": "a", "rebalance": 6_000}, {"client": "b", "rebalance": 6_000}
    )
    before = driver.state
    event = HeartbeatExpired(GROUP, ids[0])
    (outcome,) = driver.spec.step(before, event, driver.now)
    step = CoordinatorStep(
        before, outcome.state, outcome.responses, None, Decoder(), True, 10, event, 0
    )
    assert _timer_order(step)
    # After the leader's sync the group is Stable and its session timers may fire.
    driver.sync(driver.group.leader_id, {m: assignment(m) for m in ids})
    driver.sync(next(m for m in ids if m != driver.group.leader_id))
    assert driver.group.state is STABLE
    (outcome,) = driver.spec.step(driver.state, event, driver.now)
    stable_step = CoordinatorStep(
        driver.state, outcome.state, outcome.responses, None, Decoder(), True, 10, event, 0
    )
    assert _timer_order(stable_step) == []


def test_the_correct_spec_refines_a_whole_run():
    driver = Driver(group_initial_rebalance_delay_ms=0)
    checked = 0
    from groupspec.vocabulary.requests import Received

    for request, conn in (
        (join_request("a"), "a"),
        (join_request("b"), "b"),
    ):
        before = driver.state
        ref = driver.next_ref(conn)
        event = Received(ref, request)
        (outcome,) = driver.spec.step(before, event, driver.now)
        assert _refines(driver, before, event, outcome) == []
        driver.state = outcome.state
        checked += 1
    assert checked == 2


def test_a_replaced_static_incarnation_leaving_is_told_it_is_fenced():
    # KIP-345: a LeaveGroup naming a static member's instance with a member id that is no longer
    # the instance's is answered FENCED_INSTANCE_ID. The hand-written fault
    # `leave-by-instance-ignores-member-id` answered UNKNOWN_MEMBER_ID, which nothing judged.
    from groupspec.spec import refinement
    from groupspec.spec.abstract_group import AbstractGroup, AbstractMember
    from groupspec.vocabulary.responses import LeaveGroupMemberResponse, LeaveGroupResponse

    group = AbstractGroup(
        phase=Phase.STABLE,
        generation=1,
        protocol="range",
        leader="i1-0",
        members=(AbstractMember("i1-0", "i1"),),
        assignment=(),
        offsets=(),
    )
    fenced, unknown = (
        LeaveGroupResponse(ErrorCode.NONE, (LeaveGroupMemberResponse("old", "i1", error),))
        for error in (ErrorCode.FENCED_INSTANCE_ID, ErrorCode.UNKNOWN_MEMBER_ID)
    )
    assert refinement._leave_answer(group, group, fenced) == []
    (problem,) = refinement._leave_answer(group, group, unknown)
    assert "whose instance i1 is now i1-0's" in problem
