"""Timer rules (reference §3) and offset retention (reference §6), driven through `step`."""

from __future__ import annotations

from dataclasses import replace

import pytest
from coordinator_driver import (
    COMPLETING,
    EMPTY,
    GROUP,
    PREPARING,
    RANGE,
    STABLE,
    SUB_T,
    SUB_TU,
    Driver,
    response_to,
)

from groupspec.spec import (
    EventNotEnabledError,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    SyncTimerExpired,
)
from groupspec.spec.state import JoinTimer, SyncTimer
from groupspec.spec.step import Choice
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
)
from groupspec.vocabulary.responses import JoinGroupResponse

# -- initial rebalance delay (§3 step 5) ---------------------------------------------------------


def test_initial_delay_is_armed_with_remaining_rebalance_timeout():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    _, _, out = d.join("a", rebalance=10_000, at=0)
    assert "rebalance.initial_delay_armed" in out.rules
    assert d.group.state is PREPARING
    assert d.group.join_timer == JoinTimer(3000, initial_delay_ms=3000, initial_remaining_ms=7000)
    assert d.armed()[JoinTimerExpired(GROUP)] == 3000


def test_initial_delay_remaining_is_clamped_at_zero():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    d.join("a", rebalance=2000, at=0)
    assert d.group.join_timer == JoinTimer(3000, initial_delay_ms=3000, initial_remaining_ms=0)


def test_initial_rebalance_never_completes_early_on_join():
    d = Driver()
    a, ref_a, out = d.join("a", at=0)
    # The only member has joined, yet the initial rebalance waits for its timer.
    assert d.group.has_all_members_joined()
    assert d.group.state is PREPARING
    assert response_to(out, ref_a) is None
    b, _, _ = d.join("b", at=10)
    assert d.group.state is PREPARING
    assert d.member_ids() == {a, b}


def test_initial_delay_rearms_while_new_members_keep_arriving():
    # delay 3000, rebalance timeout 10000: (delay, remaining) goes
    # (3000, 7000) -> (3000, 4000) -> (3000, 1000) -> (1000, 0) -> complete.
    d = Driver(group_initial_rebalance_delay_ms=3000)
    d.join("a", rebalance=10_000, at=0)
    expected = [
        (1_000, JoinTimer(6_000, 3_000, 4_000)),
        (4_000, JoinTimer(9_000, 3_000, 1_000)),
        (7_000, JoinTimer(10_000, 1_000, 0)),
    ]
    fire_at = 3_000
    for index, (join_at, timer_after_fire) in enumerate(expected):
        d.join(f"late-{index}", rebalance=10_000, at=join_at)
        assert d.group.new_member_added
        out = d.step(JoinTimerExpired(GROUP), at=fire_at)
        assert "rebalance.initial_delay_extended" in out.rules
        assert out.responses == ()
        assert d.group.state is PREPARING
        assert d.group.join_timer == timer_after_fire
        assert d.armed()[JoinTimerExpired(GROUP)] == timer_after_fire.deadline_ms
        fire_at = timer_after_fire.deadline_ms
    # A member arrives in the last window, but nothing remains: the join phase completes.
    d.join("last", rebalance=10_000, at=9_500)
    assert d.group.new_member_added
    out = d.step(JoinTimerExpired(GROUP), at=10_000)
    assert "rebalance.completed_to_completing" in out.rules
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 1
    assert len(d.group.members) == 5
    assert len(out.responses) == 5
    assert {r.body.error_code for r in out.responses} == {ErrorCode.NONE}


def test_initial_delay_with_zero_remaining_completes_despite_new_member():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    a, _, _ = d.join("a", rebalance=2_000, at=0)
    b, _, _ = d.join("b", rebalance=2_000, at=1_000)
    assert d.group.new_member_added
    d.step(JoinTimerExpired(GROUP), at=3_000)
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 1
    assert d.member_ids() == {a, b}


def test_initial_delay_without_new_member_completes():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    a, ref_a, _ = d.join("a", rebalance=10_000, at=0)
    # The first member was added while the group was Empty: that does not set the flag.
    assert not d.group.new_member_added
    out = d.step(JoinTimerExpired(GROUP), at=3_000)
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 1
    body = response_to(out, ref_a)
    assert body.error_code is ErrorCode.NONE
    assert (body.member_id, body.leader, body.generation_id) == (a, a, 1)


def test_initial_delay_extends_once_then_completes_when_no_one_else_arrives():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    d.join("a", at=0)
    d.join("b", at=500)
    d.step(JoinTimerExpired(GROUP), at=3_000)
    assert d.group.state is PREPARING
    assert not d.group.new_member_added
    d.step(JoinTimerExpired(GROUP), at=6_000)
    assert d.group.state is COMPLETING


def test_pending_member_does_not_extend_initial_delay():
    d = Driver(group_initial_rebalance_delay_ms=3000)
    a, _, _ = d.join("a", at=0)
    ref, out = d.send("b", JoinGroupRequest(GROUP, "", "consumer", RANGE, 10_000, 60_000))
    assert response_to(out, ref).error_code is ErrorCode.MEMBER_ID_REQUIRED
    assert not d.group.new_member_added
    d.step(JoinTimerExpired(GROUP), at=3_000)
    assert d.group.state is COMPLETING
    assert d.member_ids() == {a}


# -- normal join timer and join completion (§3 step 4, "Completing the join phase") -------------


@pytest.mark.parametrize(
    ("leader_rejoin_timeout", "expected_timeout"), [(20_000, 60_000), (90_000, 90_000)]
)
def test_normal_join_timer_is_the_largest_member_rebalance_timeout(
    leader_rejoin_timeout, expected_timeout
):
    d = Driver()
    a, _ = d.form_stable(dict(client="a", rebalance=10_000), dict(client="b", rebalance=60_000))
    out = d.join("a", a, rebalance=leader_rejoin_timeout, at=100_000)[2]
    assert "rebalance.join_timer_armed" in out.rules
    assert d.group.state is PREPARING
    assert d.group.join_timer == JoinTimer(100_000 + expected_timeout)
    assert d.armed()[JoinTimerExpired(GROUP)] == 100_000 + expected_timeout


def test_normal_rebalance_completes_as_soon_as_everyone_rejoined():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.join("a", a, at=100_000)
    assert d.group.state is PREPARING
    _, ref_b, out = d.join("b", b, at=100_001)
    assert "rebalance.join_completed_early" in out.rules
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 2
    assert d.group.join_timer is None
    assert response_to(out, ref_b).generation_id == 2


def test_join_timer_removes_dynamic_members_that_did_not_rejoin_but_keeps_static_ones():
    d = Driver()
    a, b, c = d.form_stable(dict(client="a"), dict(client="b"), dict(client="c", instance="i-c"))
    assert d.group.leader_id == a
    _, ref_a, _ = d.join("a", a, at=100_000)
    deadline = d.group.join_timer.deadline_ms
    out = d.step(JoinTimerExpired(GROUP), at=deadline)
    assert "rebalance.dynamic_member_not_rejoined_removed" in out.rules
    group = d.group
    assert group.state is COMPLETING
    assert group.generation_id == 2
    assert d.member_ids() == {a, c}
    # The static member is kept with its old metadata and is listed to the leader.
    assert group.member(c).protocols == RANGE
    leader_view = response_to(out, ref_a)
    assert leader_view.leader == a
    assert {(m.member_id, m.group_instance_id, m.metadata) for m in leader_view.members} == {
        (a, None, SUB_T),
        (c, "i-c", SUB_T),
    }
    assert HeartbeatExpired(GROUP, b) not in d.armed()


def test_join_timer_with_no_member_rejoined_is_rearmed_and_group_stays_preparing():
    d = Driver()
    a, b = d.form_stable(dict(client="a", instance="i-a"), dict(client="b"))
    d.step(HeartbeatExpired(GROUP, b), at=d.group.member(b).heartbeat_deadline_ms)
    assert d.group.state is PREPARING
    deadline = d.group.join_timer.deadline_ms
    out = d.step(JoinTimerExpired(GROUP), at=deadline)
    assert "rebalance.no_member_rejoined_join_timer_rearmed" in out.rules
    assert out.responses == ()
    group = d.group
    assert group.state is PREPARING
    assert group.generation_id == 1
    assert d.member_ids() == {a}
    assert d.armed()[JoinTimerExpired(GROUP)] == deadline + 60_000


def test_leader_that_did_not_rejoin_is_replaced_by_any_rejoined_member():
    d = Driver()
    a, b, c, s = d.form_stable(
        dict(client="a"), dict(client="b"), dict(client="c"), dict(client="s", instance="i-s")
    )
    assert d.group.leader_id == a
    changed = (JoinGroupProtocol("range", SUB_TU),)
    _, ref_b, _ = d.join("b", b, protocols=changed, at=100_000)  # follower changed: rebalance
    _, ref_c, _ = d.join("c", c, at=100_000)
    assert d.group.state is PREPARING
    outcomes = d.outcomes(JoinTimerExpired(GROUP), at=d.group.join_timer.deadline_ms)
    leaders = set()
    for outcome in outcomes:
        group = outcome.state.group(GROUP)
        assert group.state is COMPLETING
        assert {m.member_id for m in group.members} == {b, c, s}
        leaders.add(group.leader_id)
        for ref, member_id in ((ref_b, b), (ref_c, c)):
            body = response_to(outcome, ref)
            assert body.leader == group.leader_id
            assert bool(body.members) == (member_id == group.leader_id)
    # Every rejoined member may lead; the static member that did not rejoin may not.
    assert leaders == {b, c}


def test_protocol_vote_tie_gives_one_outcome_per_tied_protocol():
    d = Driver()
    ra = JoinGroupProtocol("range", SUB_T)
    rr = JoinGroupProtocol("roundrobin", SUB_T)
    _, ref_a, _ = d.join("a", protocols=(ra, rr), at=0)
    _, ref_b, _ = d.join("b", protocols=(rr, ra), at=0)
    d.step(JoinTimerExpired(GROUP), at=3_000)  # b was added: the delay is extended once
    outcomes = d.outcomes(JoinTimerExpired(GROUP), at=6_000)
    chosen = set()
    for outcome in outcomes:
        group = outcome.state.group(GROUP)
        assert group.state is COMPLETING
        assert Choice("protocol vote", group.protocol_name) in outcome.choices
        for ref in (ref_a, ref_b):
            assert response_to(outcome, ref).protocol_name == group.protocol_name
        chosen.add(group.protocol_name)
    assert chosen == {"range", "roundrobin"}


def test_protocol_vote_majority_is_deterministic():
    d = Driver()
    ra = JoinGroupProtocol("range", SUB_T)
    rr = JoinGroupProtocol("roundrobin", SUB_T)
    d.join("a", protocols=(ra, rr), at=0)
    d.join("b", protocols=(rr, ra), at=0)
    d.join("c", protocols=(ra, rr), at=0)
    d.finish_join_phase()
    assert d.group.protocol_name == "range"


# -- heartbeat / session timer (§3) --------------------------------------------------------------


def test_heartbeat_expiry_in_stable_removes_member_and_prepares_rebalance():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    deadline = d.group.member(b).heartbeat_deadline_ms
    out = d.step(HeartbeatExpired(GROUP, b), at=deadline)
    assert "timer.heartbeat_expired_member_removed" in out.rules
    assert "rebalance.prepare" in out.rules
    assert out.responses == ()
    group = d.group
    assert group.state is PREPARING
    assert group.generation_id == 1
    assert d.member_ids() == {a}
    assert group.join_timer == JoinTimer(deadline + 60_000)
    assert HeartbeatExpired(GROUP, b) not in d.armed()


def test_heartbeat_expiry_of_leader_hands_leadership_to_remaining_member():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    assert d.group.leader_id == a
    d.step(HeartbeatExpired(GROUP, a), at=d.group.member(a).heartbeat_deadline_ms)
    assert d.group.leader_id == b
    assert d.group.state is PREPARING


def test_new_member_parked_in_join_still_expires():
    # The initial delay outlasts the 5-minute new-member join timeout.
    d = Driver(group_initial_rebalance_delay_ms=600_000)
    a, ref_a, _ = d.join("a", at=0)
    b, ref_b, _ = d.join("b", at=1_000)
    member_a = d.group.member(a)
    assert member_a.is_new and member_a.is_awaiting_join
    assert member_a.heartbeat_deadline_ms == 300_000
    out = d.step(HeartbeatExpired(GROUP, a), at=300_000)
    assert "timer.heartbeat_expired_member_removed" in out.rules
    assert response_to(out, ref_a) == JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)
    # Everyone left has joined: the eviction completes the join phase even in the initial rebalance.
    assert "rebalance.join_completed_after_removal" in out.rules
    group = d.group
    assert group.state is COMPLETING
    assert group.generation_id == 1
    assert d.member_ids() == {b}
    assert group.leader_id == b
    body = response_to(out, ref_b)
    assert (body.error_code, body.generation_id, body.leader) == (ErrorCode.NONE, 1, b)


def test_non_new_member_parked_in_join_is_spared():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    deadline_a = d.group.member(a).heartbeat_deadline_ms
    deadline_b = d.group.member(b).heartbeat_deadline_ms
    _, ref_a, _ = d.join("a", a, at=deadline_a - 1)  # the leader rejoins and is parked
    assert not d.group.member(a).is_new
    before = d.group
    out = d.step(HeartbeatExpired(GROUP, a), at=deadline_a)
    assert "timer.heartbeat_expired_but_satisfied" in out.rules
    assert out.responses == ()
    group = d.group
    assert group.state is PREPARING
    assert group.member(a).awaiting_join == ref_a
    assert group.members == tuple(
        replace(m, heartbeat_deadline_ms=None) if m.member_id == a else m for m in before.members
    )
    # b is not parked: it is evicted, and since everyone left has joined, the join completes.
    out = d.step(HeartbeatExpired(GROUP, b), at=max(deadline_a, deadline_b))
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 2
    assert d.member_ids() == {a}
    assert response_to(out, ref_a).generation_id == 2


# -- pending members (§3) ------------------------------------------------------------------------


def test_pending_member_expiry_completes_normal_join_phase():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    ref, out = d.send(
        "c", JoinGroupRequest(GROUP, "", "consumer", RANGE, 10_000, 60_000), at=50_000
    )
    pending_id = response_to(out, ref).member_id
    _, ref_a, _ = d.join("a", a, at=51_000)
    _, ref_b, _ = d.join("b", b, at=51_000)
    # Every member rejoined, but the pending member keeps the join phase open.
    assert d.group.state is PREPARING
    assert d.armed()[HeartbeatExpired(GROUP, pending_id)] == 60_000
    out = d.step(HeartbeatExpired(GROUP, pending_id), at=60_000)
    assert "timer.pending_member_expired" in out.rules
    assert not d.group.is_pending_member(pending_id)
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 2
    assert d.member_ids() == {a, b}
    assert response_to(out, ref_a).error_code is ErrorCode.NONE
    assert response_to(out, ref_b).error_code is ErrorCode.NONE


def test_pending_member_expiry_completes_initial_rebalance():
    d = Driver()
    _a, ref_a, _ = d.join("a", at=0)
    ref, out = d.send("b", JoinGroupRequest(GROUP, "", "consumer", RANGE, 10_000, 60_000), at=100)
    pending_id = response_to(out, ref).member_id
    out = d.step(HeartbeatExpired(GROUP, pending_id), at=10_100)
    assert "rebalance.join_completed_after_removal" in out.rules
    assert d.group.state is COMPLETING
    assert d.group.generation_id == 1
    assert response_to(out, ref_a).error_code is ErrorCode.NONE


def test_pending_member_expiry_in_stable_only_drops_it():
    d = Driver()
    d.form_stable(dict(client="a"), dict(client="b"))
    before = d.group
    ref, out = d.send("c", JoinGroupRequest(GROUP, "", "consumer", RANGE, 10_000, 60_000))
    pending_id = response_to(out, ref).member_id
    out = d.step(
        HeartbeatExpired(GROUP, pending_id), at=d.armed()[HeartbeatExpired(GROUP, pending_id)]
    )
    assert out.responses == ()
    assert d.group == before


# -- sync timer (§3) -----------------------------------------------------------------------------


def test_sync_timer_evicts_follower_that_never_synced_even_after_stable():
    d = Driver()
    a, b = d.form_completing(dict(client="a"), dict(client="b"))
    completed_at = d.now
    assert d.group.sync_timer == SyncTimer(completed_at + 60_000, 1)
    d.sync(a, {a: b"A", b: b"B"}, at=completed_at + 1)
    assert d.group.state is STABLE
    out = d.step(SyncTimerExpired(GROUP), at=completed_at + 60_000)
    assert "timer.sync_expired_members_removed" in out.rules
    group = d.group
    assert group.state is PREPARING
    assert group.generation_id == 1
    assert d.member_ids() == {a}
    assert HeartbeatExpired(GROUP, b) not in d.armed()


def test_sync_timer_in_completing_with_nobody_synced_empties_group():
    d = Driver()
    d.form_completing(dict(client="a"), dict(client="b"))
    d.step(SyncTimerExpired(GROUP), at=d.group.sync_timer.deadline_ms)
    assert d.group.state is EMPTY
    assert d.group.members == ()
    assert d.group.generation_id == 2


def test_sync_timer_after_everyone_synced_removes_no_one():
    d = Driver()
    d.form_stable(dict(client="a"), dict(client="b"))
    before = d.group
    if SyncTimerExpired(GROUP) in d.armed():  # Kafka cancels it; a no-op firing is equivalent
        out = d.step(SyncTimerExpired(GROUP), at=d.armed()[SyncTimerExpired(GROUP)])
        assert out.responses == ()
        assert d.group == replace(before, sync_timer=None)


def test_sync_timer_of_a_stale_generation_does_nothing():
    d = Driver()
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    # Not reachable through requests (a new rebalance cancels the timer), so set it up directly:
    # b still owes a SyncGroup, but the timer belongs to the previous generation.
    group = d.group
    stale = replace(
        group,
        pending_sync_members=frozenset({b}),
        sync_timer=SyncTimer(d.now + 1, group.generation_id - 1),
    )
    d.state = d.state.with_group(stale)
    out = d.step(SyncTimerExpired(GROUP), at=d.now + 1)
    assert "timer.sync_expired_stale" in out.rules
    assert out.responses == ()
    assert d.group.state is STABLE
    assert d.member_ids() == {a, b}
    assert SyncTimerExpired(GROUP) not in d.armed()


# -- offset retention (§6) -----------------------------------------------------------------------

RETENTION = 1_000_000


def test_retention_check_rearms_itself():
    d = Driver(offsets_retention_ms=RETENTION, offsets_retention_check_interval_ms=600_000)
    assert d.armed()[OffsetRetentionCheck()] == 600_000
    d.step(OffsetRetentionCheck(), at=600_000)
    assert d.armed()[OffsetRetentionCheck()] == 1_200_000


def test_empty_consumer_group_offsets_expire_from_when_group_became_empty():
    d = Driver(offsets_retention_ms=RETENTION)
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.commit({("t", 0): 5}, generation=1, member_id=a, at=1_000)
    empty_at = 500_000
    d.send("x", LeaveGroupRequest(GROUP, (MemberIdentity(a), MemberIdentity(b))), at=empty_at)
    assert d.group.state is EMPTY
    assert d.group.protocol_type == "consumer"
    # Retention counted from the commit has passed, but not from when the group became Empty.
    d.step(OffsetRetentionCheck(), at=1_000 + RETENTION)
    d.step(OffsetRetentionCheck(), at=empty_at + RETENTION - 1)
    assert d.fetch_all() == {("t", 0): 5}
    out = d.step(OffsetRetentionCheck(), at=empty_at + RETENTION)
    assert "retention.offsets_expired" in out.rules
    assert "retention.empty_group_deleted" in out.rules
    assert d.state.group(GROUP) is None
    assert GROUP not in d.state.log.group_ids()


def test_stable_consumer_group_only_expires_offsets_of_unsubscribed_topics():
    d = Driver(offsets_retention_ms=RETENTION)
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    assert d.group.subscribed_topics == frozenset({"t"})
    d.commit({("t", 0): 1, ("u", 0): 2}, generation=1, member_id=a, at=1_000)
    d.step(OffsetRetentionCheck(), at=1_000 + RETENTION - 1)
    assert d.fetch_all() == {("t", 0): 1, ("u", 0): 2}
    d.step(OffsetRetentionCheck(), at=1_000 + RETENTION)
    assert d.fetch_all() == {("t", 0): 1}
    d.step(OffsetRetentionCheck(), at=1_000 + 10 * RETENTION)
    assert d.fetch_all() == {("t", 0): 1}
    assert d.group.state is STABLE


def test_rebalancing_consumer_group_offsets_never_expire():
    d = Driver(offsets_retention_ms=RETENTION)
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    d.commit({("t", 0): 1, ("u", 0): 2}, generation=1, member_id=a, at=1_000)
    d.join("a", a, at=2_000)
    assert d.group.state is PREPARING
    d.step(OffsetRetentionCheck(), at=1_000 + 10 * RETENTION)
    assert d.fetch_all() == {("t", 0): 1, ("u", 0): 2}


def test_simple_group_offsets_expire_by_commit_time_then_group_is_deleted():
    d = Driver(offsets_retention_ms=RETENTION)
    d.commit({("t", 0): 7}, at=2_000)
    d.commit({("t", 1): 8}, at=50_000)
    assert d.group.protocol_type is None
    assert d.group.state is EMPTY
    d.step(OffsetRetentionCheck(), at=2_000 + RETENTION - 1)
    assert d.fetch_all() == {("t", 0): 7, ("t", 1): 8}
    d.step(OffsetRetentionCheck(), at=2_000 + RETENTION)
    assert d.fetch_all() == {("t", 1): 8}
    out = d.step(OffsetRetentionCheck(), at=50_000 + RETENTION)
    assert "retention.empty_group_deleted" in out.rules
    assert d.state.group(GROUP) is None
    assert GROUP not in d.state.log.group_ids()


def test_explicit_expire_timestamp_overrides_retention():
    d = Driver(offsets_retention_ms=RETENTION)
    d.commit({("short", 0): 1}, version=2, retention=5_000, at=1_000)
    d.commit({("long", 0): 2}, version=2, retention=3 * RETENTION, at=1_000)
    d.commit({("default", 0): 3}, version=2, at=1_000)
    d.step(OffsetRetentionCheck(), at=5_999)
    assert set(d.fetch_all()) == {("short", 0), ("long", 0), ("default", 0)}
    d.step(OffsetRetentionCheck(), at=6_000)
    assert set(d.fetch_all()) == {("long", 0), ("default", 0)}
    d.step(OffsetRetentionCheck(), at=1_000 + RETENTION)
    assert set(d.fetch_all()) == {("long", 0)}
    d.step(OffsetRetentionCheck(), at=1_000 + 3 * RETENTION)
    assert d.state.group(GROUP) is None


def test_empty_group_without_offsets_is_deleted():
    d = Driver(offsets_retention_ms=RETENTION)
    a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.send("x", LeaveGroupRequest(GROUP, (MemberIdentity(a), MemberIdentity(b))), at=10_000)
    assert d.group.state is EMPTY
    out = d.step(OffsetRetentionCheck(), at=10_001)
    assert "retention.empty_group_deleted" in out.rules
    assert d.state.group(GROUP) is None
    assert GROUP not in d.state.log.group_ids()


# -- unarmed timers ------------------------------------------------------------------------------


def test_firing_unarmed_timers_raises():
    d = Driver()
    a, _b = d.form_stable(dict(client="a"), dict(client="b"))
    for event in (
        JoinTimerExpired(GROUP),  # Stable: no join timer
        JoinTimerExpired("other"),
        SyncTimerExpired("other"),
        HeartbeatExpired(GROUP, "nobody"),
        HeartbeatExpired("other", a),
    ):
        with pytest.raises(EventNotEnabledError):
            d.outcomes(event)


def test_timer_of_removed_member_is_no_longer_armed():
    d = Driver()
    _a, b = d.form_stable(dict(client="a"), dict(client="b"))
    d.step(HeartbeatExpired(GROUP, b), at=d.group.member(b).heartbeat_deadline_ms)
    with pytest.raises(EventNotEnabledError):
        d.outcomes(HeartbeatExpired(GROUP, b))


def test_satisfied_heartbeat_expiry_disarms_the_timer():
    d = Driver()
    a, _ = d.form_stable(dict(client="a"), dict(client="b"))
    d.join("a", a)
    d.step(HeartbeatExpired(GROUP, a), at=d.group.member(a).heartbeat_deadline_ms)
    with pytest.raises(EventNotEnabledError):
        d.outcomes(HeartbeatExpired(GROUP, a))


def test_the_worlds_timeouts_order_the_timers_the_world_relies_on():
    # models/group_world.py `_due_after_another` leaves out timer orders real time never
    # produces; that holds only while these inequalities do.
    from groupspec.models.group_world import REBALANCE_TIMEOUT_MS, SESSION_TIMEOUT_MS
    from groupspec.spec.config import CoordinatorConfig

    config = CoordinatorConfig()
    assert SESSION_TIMEOUT_MS > REBALANCE_TIMEOUT_MS
    longest_join_phase = config.group_initial_rebalance_delay_ms + 2 * REBALANCE_TIMEOUT_MS
    assert config.new_member_join_timeout_ms > longest_join_phase
