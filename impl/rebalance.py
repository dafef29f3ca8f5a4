"""The rebalance machinery shared by requests and timers (Kafka's GroupMetadataManager).

Names follow Kafka's so each step can be read side by side with it: prepare_rebalance,
maybe_complete_join_phase, complete_join, init_next_generation, ...
"""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.responses import (
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
)

from .consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscription_topics
from .persistence import group_metadata_record
from .runtime import Runtime
from .state import Group

_UNKNOWN_MEMBER_JOIN = JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID)


def remove_member(rt: Runtime, group: Group, member_id: str) -> None:
    """ClassicGroup.remove: drop the member; if it led, the policy picks the next leader."""
    was_leader = group.leader_id == member_id
    group.drop_member(member_id)
    if was_leader:
        group.leader_id = rt.leader_after_removal(group)


def current_members_for_leader(group: Group) -> tuple[JoinGroupResponseMember, ...]:
    """The member list only the leader receives: every member, selected-protocol metadata."""
    protocol = group.protocol_name or ""
    return tuple(
        JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata_for(protocol))
        for m in group.members.values()
    )


def select_protocol(rt: Runtime, group: Group) -> str:
    """ClassicGroup.selectProtocol: each member votes for its first candidate; most votes wins."""
    size = len(group.members)
    candidates = {name for name, n in group.supported_protocol_counts().items() if n == size}
    votes: dict[str, int] = {}
    for member in group.members.values():
        for protocol in member.protocols:
            if protocol.name in candidates:
                votes[protocol.name] = votes.get(protocol.name, 0) + 1
                break
        else:
            # Admission (supports_protocols) keeps a common protocol; reaching here is a bug.
            raise RuntimeError(f"member {member.member_id} supports none of {sorted(candidates)}")
    most = max(votes.values())
    winners = sorted(name for name, n in votes.items() if n == most)
    if len(winners) == 1:
        return winners[0]
    return rt.protocol_vote_tie(group, winners)


def compute_subscribed_topics(group: Group) -> frozenset[str] | None:
    """The topics a consumer group subscribes to, or None if unknown (not "consumer", undecodable)."""
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE or group.protocol_name is None:
        return None
    topics: set[str] = set()
    for member in group.members.values():
        member_topics = subscription_topics(member.metadata_for(group.protocol_name))
        if member_topics is None:
            return None
        topics |= member_topics
    return frozenset(topics)


def propagate_assignment(rt: Runtime, group: Group, error: ErrorCode) -> None:
    """Answer every parked SyncGroup with the member's assignment and re-arm its session."""
    for member in group.members.values():
        ref = member.awaiting_sync
        if ref is None:
            continue
        rt.respond(
            ref,
            SyncGroupResponse(error, group.protocol_type, group.protocol_name, member.assignment),
        )
        member.awaiting_sync = None
        rt.schedule_heartbeat(group, member)


def reset_and_propagate_assignment_error(rt: Runtime, group: Group, error: ErrorCode) -> None:
    """Clear every assignment and answer each parked SyncGroup with `error`."""
    # rule: sync.parked_answered_with_error
    for member in group.members.values():
        member.assignment = b""
    propagate_assignment(rt, group, error)


def prepare_rebalance(rt: Runtime, group: Group) -> None:
    """Enter PreparingRebalance: fail parked syncs, drop the sync timer, arm the join timer."""
    # rule: rebalance.prepare
    if group.state is COMPLETING_REBALANCE:
        reset_and_propagate_assignment_error(rt, group, ErrorCode.REBALANCE_IN_PROGRESS)
    group.pending_sync_members.clear()
    group.sync_timer = None
    is_initial_rebalance = group.state is EMPTY
    if is_initial_rebalance:
        # rule: rebalance.initial_delay_armed
        delay = rt.config.group_initial_rebalance_delay_ms
        remaining = max(group.rebalance_timeout_ms() - delay, 0)
        rt.arm_join_timer(group, delay, delay, remaining)
    group.transition_to(PREPARING_REBALANCE, rt.now)
    if not is_initial_rebalance:
        maybe_complete_join_else_schedule(rt, group)


def maybe_complete_join_else_schedule(rt: Runtime, group: Group) -> None:
    """Complete the join phase if everyone has joined, else arm the join timer."""
    if group.has_all_members_joined():
        complete_join(rt, group)
    else:
        # rule: rebalance.join_timer_armed
        rt.arm_join_timer(group, group.rebalance_timeout_ms())


def maybe_complete_join_phase(rt: Runtime, group: Group) -> None:
    """Complete the join phase early once everyone joined, except in the initial rebalance."""
    if (
        group.state is PREPARING_REBALANCE
        and group.has_all_members_joined()
        and group.previous_state is not EMPTY
    ):
        # rule: rebalance.join_completed_early
        complete_join(rt, group)


def maybe_prepare_rebalance_or_complete_join(rt: Runtime, group: Group) -> None:
    """Start a rebalance where one may start; otherwise try to finish the one under way."""
    if group.can_rebalance():
        prepare_rebalance(rt, group)
    else:
        maybe_complete_join_phase(rt, group)


def try_complete_initial_rebalance_else_schedule(rt: Runtime, group: Group) -> None:
    """The initial-rebalance delay fired: extend it while members keep arriving, else complete."""
    timer = group.join_timer
    assert timer is not None and timer.initial_delay_ms is not None
    assert timer.initial_remaining_ms is not None
    if group.new_member_added and timer.initial_remaining_ms != 0:
        # rule: rebalance.initial_delay_extended
        new_delay = min(rt.config.group_initial_rebalance_delay_ms, timer.initial_remaining_ms)
        new_remaining = max(timer.initial_remaining_ms - timer.initial_delay_ms, 0)
        group.new_member_added = False
        rt.arm_join_timer(group, new_delay, new_delay, new_remaining)
        return
    complete_join(rt, group)


def elect_joined_leader(rt: Runtime, group: Group) -> bool:
    """ClassicGroup.maybeElectNewJoinedLeader: make sure the leader is a member that rejoined."""
    if group.leader_id is None:
        return False
    leader = group.members.get(group.leader_id)
    if leader is not None and leader.awaiting_join is not None:
        return True
    rejoined = [m.member_id for m in group.members.values() if m.awaiting_join is not None]
    if not rejoined:
        return False
    # rule: rebalance.leader_reelected
    group.leader_id = rt.leader_at_join_completion(group, rejoined)
    return True


def init_next_generation(rt: Runtime, group: Group) -> None:
    """Bump the generation; with members select a protocol and go Completing, else Empty."""
    group.generation_id += 1
    group.pending_sync_members.clear()
    if group.members:
        group.protocol_name = select_protocol(rt, group)
        group.subscribed_topics = compute_subscribed_topics(group)
        group.transition_to(COMPLETING_REBALANCE, rt.now)
    else:
        group.protocol_name = None
        group.subscribed_topics = None
        group.transition_to(EMPTY, rt.now)


def complete_join(rt: Runtime, group: Group) -> None:
    """GroupMetadataManager.completeClassicGroupJoin."""
    group.join_timer = None
    for member in list(group.members.values()):
        if member.awaiting_join is None and member.group_instance_id is None:
            # rule: rebalance.dynamic_member_not_rejoined_removed
            remove_member(rt, group, member.member_id)
    has_leader = elect_joined_leader(rt, group)
    if not has_leader and group.members:
        # Nobody rejoined but static members remain: wait another rebalance timeout.
        # rule: rebalance.no_member_rejoined_join_timer_rearmed
        rt.arm_join_timer(group, group.rebalance_timeout_ms())
        return
    init_next_generation(rt, group)
    if group.state is EMPTY:
        # rule: rebalance.completed_to_empty
        # Kafka only logs a failed append of the empty-group record.
        rt.append(group.partition, group.group_id, [group_metadata_record(group, {})])
        return
    # rule: rebalance.completed_to_completing
    leader_members = current_members_for_leader(group)
    for member in group.members.values():
        ref = member.awaiting_join
        if ref is not None:
            is_leader = group.leader_id == member.member_id
            rt.respond(
                ref,
                JoinGroupResponse(
                    ErrorCode.NONE,
                    member.member_id,
                    group.generation_id,
                    group.protocol_type,
                    group.protocol_name,
                    group.leader_id or "",
                    False,
                    leader_members if is_leader else (),
                ),
            )
            member.awaiting_join = None
        member.is_new = False
        rt.schedule_heartbeat(group, member)
    group.awaiting_join_count = 0
    group.pending_sync_members = set(group.members)
    rt.arm_sync_timer(group, group.rebalance_timeout_ms())


def fail_parked_join_and_remove(rt: Runtime, group: Group, member_id: str) -> None:
    """Answer the member's parked JoinGroup with UNKNOWN_MEMBER_ID, then remove the member."""
    member = group.members[member_id]
    if member.awaiting_join is not None:
        rt.respond(member.awaiting_join, _UNKNOWN_MEMBER_JOIN)
    remove_member(rt, group, member_id)


def remove_member_and_update_group(rt: Runtime, group: Group, member_id: str) -> None:
    """Evict a member, then rebalance or finish the join phase.

    Unlike LeaveGroup, this path completes a join phase whose members have all joined even
    during the initial rebalance (Kafka's removeMemberAndUpdateClassicGroup).
    """
    fail_parked_join_and_remove(rt, group, member_id)
    state = group.state
    if state is STABLE or state is COMPLETING_REBALANCE:
        maybe_prepare_rebalance_or_complete_join(rt, group)
    elif state is PREPARING_REBALANCE and group.has_all_members_joined():
        # rule: rebalance.join_completed_after_removal
        complete_join(rt, group)
