"""What happens when a timer fires (reference §3), and which timers are armed."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, STABLE

from .events import (
    EventNotEnabledError,
    HeartbeatExpired,
    JoinTimerExpired,
    OffsetRetentionCheck,
    SyncTimerExpired,
    TimerEvent,
)
from .offsets import run_offset_retention
from .rebalance import (
    complete_join,
    complete_join_after_removal,
    prepare_rebalance,
    remove_member,
    remove_member_and_update_group,
    try_complete_initial_rebalance_else_schedule,
)
from .rules import (
    TIMER_HEARTBEAT_EXPIRED_BUT_SATISFIED,
    TIMER_HEARTBEAT_EXPIRED_MEMBER_REMOVED,
    TIMER_INITIAL_REBALANCE_DELAY_EXPIRED,
    TIMER_PENDING_MEMBER_EXPIRED,
    TIMER_REBALANCE_TIMEOUT_EXPIRED,
    TIMER_SYNC_EXPIRED_ALL_SYNCED,
    TIMER_SYNC_EXPIRED_MEMBERS_REMOVED,
    TIMER_SYNC_EXPIRED_STALE,
)
from .state import CoordinatorState, Group
from .step import Step


def armed_timers(state: CoordinatorState) -> tuple[tuple[int, TimerEvent], ...]:
    """Every armed timer as (deadline, event), in a stable order."""
    timers: list[tuple[int, TimerEvent]] = []
    for group in state.groups:
        for member in group.members:
            if member.heartbeat_deadline_ms is not None:
                timers.append(
                    (
                        member.heartbeat_deadline_ms,
                        HeartbeatExpired(group.group_id, member.member_id),
                    )
                )
        for pending in group.pending_members:
            timers.append(
                (pending.expiry_deadline_ms, HeartbeatExpired(group.group_id, pending.member_id))
            )
        if group.join_timer is not None:
            timers.append((group.join_timer.deadline_ms, JoinTimerExpired(group.group_id)))
        if group.sync_timer is not None:
            timers.append((group.sync_timer.deadline_ms, SyncTimerExpired(group.group_id)))
    timers.append((state.retention_check_deadline_ms, OffsetRetentionCheck()))
    return tuple(timers)


def _armed_group(state: CoordinatorState, event: TimerEvent) -> Group:
    for _, armed in armed_timers(state):
        if armed == event:
            group = state.group(getattr(event, "group_id", ""))
            assert group is not None
            return group
    raise EventNotEnabledError(f"{event} is not an armed timer")


def on_heartbeat_expired(
    step: Step, state: CoordinatorState, event: HeartbeatExpired
) -> CoordinatorState:
    """A member's session timer fired: evict it unless its heartbeat is satisfied."""
    group = _armed_group(state, event)
    if group.is_pending_member(event.member_id):
        step.fire(TIMER_PENDING_MEMBER_EXPIRED)
        group = group.without_member(event.member_id)
        return state.with_group(complete_join_after_removal(step, group))
    group = group.update_member(event.member_id, heartbeat_deadline_ms=None)
    member = group.member(event.member_id)
    assert member is not None
    if member.has_satisfied_heartbeat():
        step.fire(TIMER_HEARTBEAT_EXPIRED_BUT_SATISFIED)
        return state.with_group(group)
    step.fire(TIMER_HEARTBEAT_EXPIRED_MEMBER_REMOVED)
    return state.with_group(remove_member_and_update_group(step, group, event.member_id))


def on_join_timer_expired(
    step: Step, state: CoordinatorState, event: JoinTimerExpired
) -> CoordinatorState:
    """The join timer fired: extend the initial delay, or complete the join phase."""
    group = _armed_group(state, event)
    assert group.join_timer is not None
    if group.join_timer.is_initial_rebalance:
        step.fire(TIMER_INITIAL_REBALANCE_DELAY_EXPIRED)
        return state.with_group(try_complete_initial_rebalance_else_schedule(step, group))
    step.fire(TIMER_REBALANCE_TIMEOUT_EXPIRED)
    return state.with_group(complete_join(step, group))


def on_sync_timer_expired(
    step: Step, state: CoordinatorState, event: SyncTimerExpired
) -> CoordinatorState:
    """The pending-sync timer fired: evict members that never sent SyncGroup, then rebalance."""
    group = _armed_group(state, event)
    timer = group.sync_timer
    assert timer is not None
    group = replace(group, sync_timer=None)
    if timer.generation_id != group.generation_id or group.state not in (
        COMPLETING_REBALANCE,
        STABLE,
    ):
        step.fire(TIMER_SYNC_EXPIRED_STALE)
        return state.with_group(group)
    if not group.pending_sync_members:
        step.fire(TIMER_SYNC_EXPIRED_ALL_SYNCED)
        return state.with_group(group)
    step.fire(TIMER_SYNC_EXPIRED_MEMBERS_REMOVED)
    for member_id in sorted(group.pending_sync_members):
        group = remove_member(step, group, member_id)
    return state.with_group(prepare_rebalance(step, group))


def on_offset_retention_check(
    step: Step, state: CoordinatorState, event: OffsetRetentionCheck
) -> CoordinatorState:
    """The periodic retention task ran."""
    return run_offset_retention(step, state)
