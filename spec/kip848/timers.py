"""The two timers of a consumer-protocol member (docs/protocol.md §12.10): the session timeout,
re-armed by every heartbeat, and the rebalance timeout, armed only while the member revokes.

Kafka 4.3.0, `GroupMetadataManager.java`: `scheduleConsumerGroupSessionTimeout` and
`consumerGroupFenceMemberOperation` (a member gone by then is left alone), and
`scheduleConsumerGroupRebalanceTimeout` (fences the member only if it is still at the epoch the
timer was armed for).
"""

from __future__ import annotations

from ..events import EventNotEnabledError
from .events import RebalanceTimeoutExpired, SessionTimeoutExpired
from .fencing import fence_member
from .rules import (
    CG_TIMER_REBALANCE_TIMEOUT_EXPIRED,
    CG_TIMER_REBALANCE_TIMEOUT_STALE,
    CG_TIMER_SESSION_EXPIRED,
    CG_TIMER_SESSION_EXPIRED_NO_MEMBER,
)
from .state import ConsumerGroup, ConsumerGroupsState
from .step import Step


def armed_timers(
    state: ConsumerGroupsState,
) -> tuple[tuple[SessionTimeoutExpired | RebalanceTimeoutExpired, int], ...]:
    """Every armed timer as the event its firing is, with its deadline, in a stable order."""
    timers: list[tuple[SessionTimeoutExpired | RebalanceTimeoutExpired, int]] = []
    for group in state.iter_groups():
        for member_id, deadline in group.session_deadlines:
            timers.append((SessionTimeoutExpired(group.group_id, member_id), deadline))
        for member_id, (_, deadline) in group.rebalance_deadlines:
            timers.append((RebalanceTimeoutExpired(group.group_id, member_id), deadline))
    return tuple(timers)


def _armed_group(state: ConsumerGroupsState, event: object, group_id: str) -> ConsumerGroup:
    group = state.group(group_id)
    if group is None:
        raise EventNotEnabledError(f"{event}: no such group")
    return group


def on_session_timeout(
    step: Step, state: ConsumerGroupsState, event: SessionTimeoutExpired
) -> ConsumerGroupsState:
    """The member's session timed out: fence it, if it is still a member."""
    group = _armed_group(state, event, event.group_id)
    if event.member_id not in dict(group.session_deadlines):
        raise EventNotEnabledError(f"{event}: the session timeout is not armed")
    group = group.without_session_deadline(event.member_id)
    if group.member(event.member_id) is None:
        step.fire(CG_TIMER_SESSION_EXPIRED_NO_MEMBER)
        return state.with_group(group)
    step.fire(CG_TIMER_SESSION_EXPIRED)
    return state.with_group(fence_member(step, group, event.member_id))


def on_rebalance_timeout(
    step: Step, state: ConsumerGroupsState, event: RebalanceTimeoutExpired
) -> ConsumerGroupsState:
    """The member did not finish revoking in time: fence it, if still at the armed epoch."""
    group = _armed_group(state, event, event.group_id)
    armed = dict(group.rebalance_deadlines).get(event.member_id)
    if armed is None:
        raise EventNotEnabledError(f"{event}: the rebalance timeout is not armed")
    group = group.without_rebalance_deadline(event.member_id)
    member = group.member(event.member_id)
    if member is None or member.member_epoch != armed[0]:
        step.fire(CG_TIMER_REBALANCE_TIMEOUT_STALE)
        return state.with_group(group)
    step.fire(CG_TIMER_REBALANCE_TIMEOUT_EXPIRED)
    return state.with_group(fence_member(step, group, event.member_id))
