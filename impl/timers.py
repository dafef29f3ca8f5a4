"""What happens when a timer fires: sessions, pending members, join and sync timers."""

from __future__ import annotations

from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE

from .rebalance import (
    complete_join,
    prepare_rebalance,
    remove_member,
    remove_member_and_update_group,
    try_complete_initial_rebalance_else_schedule,
)
from .runtime import Runtime
from .state import Group


def on_heartbeat_expired(rt: Runtime, group: Group, member_id: str) -> None:
    """A session (or pending-member) timer fired: evict unless the heartbeat is satisfied."""
    if member_id in group.pending_members:
        # rule: timer.pending_member_expired
        del group.pending_members[member_id]
        if group.state is PREPARING_REBALANCE and group.has_all_members_joined():
            # rule: rebalance.join_completed_after_removal
            complete_join(rt, group)
        return
    member = group.members[member_id]
    member.heartbeat_deadline_ms = None
    if member.has_satisfied_heartbeat():
        # rule: timer.heartbeat_expired_but_satisfied
        return  # parked in Join or Sync: the coordinator is the one keeping it waiting
    # rule: timer.heartbeat_expired_member_removed
    remove_member_and_update_group(rt, group, member_id)


def on_join_timer_expired(rt: Runtime, group: Group) -> None:
    """The join timer fired: extend the initial delay, or complete the join phase."""
    timer = group.join_timer
    assert timer is not None
    if timer.initial_delay_ms is not None:
        # rule: timer.initial_rebalance_delay_expired
        try_complete_initial_rebalance_else_schedule(rt, group)
    else:
        # rule: timer.rebalance_timeout_expired
        complete_join(rt, group)


def on_sync_timer_expired(rt: Runtime, group: Group) -> None:
    """The pending-sync timer fired: evict members that never sent SyncGroup, then rebalance."""
    timer = group.sync_timer
    assert timer is not None
    group.sync_timer = None
    state = group.state
    # rule: timer.sync_expired_stale
    if timer.generation_id != group.generation_id or not (
        state is COMPLETING_REBALANCE or state is STABLE
    ):
        return
    if not group.pending_sync_members:
        # rule: timer.sync_expired_all_synced
        return
    # rule: timer.sync_expired_members_removed
    for member_id in list(group.pending_sync_members):
        remove_member(rt, group, member_id)
    prepare_rebalance(rt, group)
