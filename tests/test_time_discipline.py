"""The time-discipline properties (issue 29 item 2) each catch a small faulty coordinator and
pass the unmutated one: SessionTimersArmed (KAFKA-9232: a new member timed by its session
instead of the new-member join timeout) and SessionExpiry (a member waiting in a rebalance
removed by its session timer)."""

from __future__ import annotations

from coordinator_driver import GROUP, PREPARING, Driver, join_request

import groupspec.spec.join as join_module
from groupspec.models.world_properties import CoordinatorStep, Decoder, _session_timers_armed
from groupspec.spec.events import HeartbeatExpired
from groupspec.spec.invariants import ACTION_PROPERTIES
from groupspec.spec.rebalance import schedule_heartbeat
from groupspec.spec.state import Member
from groupspec.vocabulary.requests import Received


def _steps_of_a_third_member_joining(at: int) -> list[CoordinatorStep]:
    """A Stable group of two; at `at` a third client joins (MEMBER_ID_REQUIRED, then its join
    parks): each of its steps as the world's action properties see them."""
    driver = Driver(group_initial_rebalance_delay_ms=0)
    driver.form_stable({"client": "a"}, {"client": "b"})
    driver.now = at
    steps = []
    member_id = ""
    for _ in range(2):
        before = driver.state
        ref = driver.next_ref("c")
        event = Received(ref, join_request("c", member_id))
        outcome = driver.step(event)
        steps.append(
            CoordinatorStep(
                before,
                outcome.state,
                outcome.responses,
                (ref, event.request),
                Decoder(),
                True,
                10,
                event,
                0,
                at,
            )
        )
        if not member_id:
            member_id = outcome.responses[0].body.member_id
    assert driver.group.state is PREPARING
    assert driver.group.member(member_id).is_new
    return steps


def test_session_timers_armed_passes_kafkas_join_timeout_and_catches_the_session(monkeypatch):
    assert [_session_timers_armed(step) for step in _steps_of_a_third_member_joining(50_000)] == [
        [],
        [],
    ]
    # The fault (KAFKA-9232): the new member's timer is armed with its session timeout.
    monkeypatch.setattr(
        join_module,
        "schedule_heartbeat",
        lambda step, group, member_id, timeout_ms=None: schedule_heartbeat(step, group, member_id),
    )
    _, parked = _steps_of_a_third_member_joining(50_000)
    (problem,) = _session_timers_armed(parked)
    assert "new-member join timeout" in problem


def _expiry_of_a_rejoined_member():
    """A Stable group of two; a rejoins (its JoinGroup parks) and its session timer fires."""
    driver = Driver(group_initial_rebalance_delay_ms=0)
    a, _ = driver.form_stable({"client": "a"}, {"client": "b"})
    driver.join("a", a)
    assert driver.group.member(a).is_awaiting_join
    before = driver.state
    event = HeartbeatExpired(GROUP, a)
    outcome = driver.step(event, at=driver.group.member(a).heartbeat_deadline_ms)
    return before, event, outcome


def test_session_expiry_spares_a_waiting_member_and_catches_its_removal(monkeypatch):
    check = next(p for p in ACTION_PROPERTIES if p.name == "SessionExpiry").check
    before, event, outcome = _expiry_of_a_rejoined_member()
    assert outcome.state.group(GROUP).has_member(event.member_id)
    assert check(before, event, outcome.state, outcome.responses) == []
    # The fault: a member waiting in JoinGroup no longer counts as heartbeating.
    monkeypatch.setattr(Member, "has_satisfied_heartbeat", lambda self: False)
    before, event, outcome = _expiry_of_a_rejoined_member()
    assert not outcome.state.group(GROUP).has_member(event.member_id)
    (problem,) = check(before, event, outcome.state, outcome.responses)
    assert "while its JoinGroup waited" in problem
