"""The rebalance machinery shared by every request and timer (reference §3, §4).

Names follow GroupMetadataManager / ClassicGroup so each rule can be found by its Kafka name:
prepare_rebalance, maybe_complete_join_phase, complete_join, init_next_generation, ...
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
)
from groupspec.vocabulary.responses import (
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
)

from .consumer_protocol import CONSUMER_PROTOCOL_TYPE, SubscriptionDecodeError, subscription_topics
from .persistence import group_metadata_record
from .rules import (
    REBALANCE_COMPLETED_TO_COMPLETING,
    REBALANCE_COMPLETED_TO_EMPTY,
    REBALANCE_DYNAMIC_MEMBER_NOT_REJOINED_REMOVED,
    REBALANCE_INITIAL_DELAY_ARMED,
    REBALANCE_INITIAL_DELAY_EXTENDED,
    REBALANCE_INITIAL_DELAY_KEPT_AFTER_REMOVAL_KAFKA_3X,
    REBALANCE_JOIN_COMPLETED_AFTER_REMOVAL,
    REBALANCE_JOIN_COMPLETED_EARLY,
    REBALANCE_JOIN_TIMER_ARMED,
    REBALANCE_LEADER_REELECTED,
    REBALANCE_NO_MEMBER_REJOINED_JOIN_TIMER_REARMED,
    REBALANCE_PREPARE,
    SYNC_PARKED_ANSWERED_WITH_ERROR,
)
from .state import Group, JoinTimer, SyncTimer
from .step import Step


def schedule_heartbeat(
    step: Step, group: Group, member_id: str, timeout_ms: int | None = None
) -> Group:
    """(Re)arm a member's heartbeat timer; by default for its session timeout."""
    member = group.member(member_id)
    assert member is not None, member_id
    timeout = member.session_timeout_ms if timeout_ms is None else timeout_ms
    return group.update_member(member_id, heartbeat_deadline_ms=step.now_ms + timeout)


def remove_member(step: Step, group: Group, member_id: str) -> Group:
    """ClassicGroup.remove: drop the member; if it led, any remaining member leads next."""
    was_leader = group.is_leader(member_id)
    group = group.without_member(member_id)
    if was_leader:
        remaining = [m.member_id for m in group.members]
        new_leader = step.choose("leader after removal", remaining) if remaining else None
        group = replace(group, leader_id=new_leader)
    return group


def current_members_for_leader(group: Group) -> tuple[JoinGroupResponseMember, ...]:
    """The member list only the leader receives: every member, with selected-protocol metadata.

    Kafka lists them in hash-map order; the spec uses member-id order and the order carries
    no meaning.
    """
    protocol = group.protocol_name or ""
    return tuple(
        JoinGroupResponseMember(m.member_id, m.group_instance_id, m.metadata_for(protocol))
        for m in group.members
    )


def select_protocol(step: Step, group: Group) -> str:
    """ClassicGroup.selectProtocol: each member votes for its first candidate; most votes wins.

    Ties are broken by hash-map order in Kafka, so every tied protocol is allowed.
    """
    candidates = group.candidate_protocols()
    votes = Counter(member.vote(candidates) for member in group.members)
    most = max(votes.values())
    winners = sorted(name for name, count in votes.items() if count == most)
    return step.choose("protocol vote", winners)


def compute_subscribed_topics(group: Group) -> frozenset[str] | None:
    """The topics a consumer group subscribes to, or None if unknown (not "consumer", undecodable)."""
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE or group.protocol_name is None:
        return None
    topics: set[str] = set()
    for member in group.members:
        try:
            topics |= subscription_topics(member.metadata_for(group.protocol_name))
        except SubscriptionDecodeError:
            return None
    return frozenset(topics)


def reset_and_propagate_assignment_error(step: Step, group: Group, error: ErrorCode) -> Group:
    """Clear every assignment and answer each parked SyncGroup with `error`."""
    step.fire(SYNC_PARKED_ANSWERED_WITH_ERROR)
    for member in group.members:
        group = group.update_member(member.member_id, assignment=b"")
    return propagate_assignment(step, group, error)


def propagate_assignment(step: Step, group: Group, error: ErrorCode) -> Group:
    """Answer every parked SyncGroup with the member's assignment and reset its heartbeat."""
    for member in group.members:
        if member.awaiting_sync is None:
            continue
        step.respond(
            member.awaiting_sync,
            SyncGroupResponse(error, group.protocol_type, group.protocol_name, member.assignment),
        )
        group = group.update_member(member.member_id, awaiting_sync=None)
        group = schedule_heartbeat(step, group, member.member_id)
    return group


def prepare_rebalance(step: Step, group: Group) -> Group:
    """Enter PreparingRebalance: fail parked syncs, drop the sync timer, arm the join timer."""
    step.fire(REBALANCE_PREPARE)
    if group.state is COMPLETING_REBALANCE:
        group = reset_and_propagate_assignment_error(step, group, ErrorCode.REBALANCE_IN_PROGRESS)
    group = replace(group, pending_sync_members=frozenset(), sync_timer=None)
    is_initial_rebalance = group.state is EMPTY
    if is_initial_rebalance:
        step.fire(REBALANCE_INITIAL_DELAY_ARMED)
        delay = step.config.group_initial_rebalance_delay_ms
        remaining = max(group.rebalance_timeout_ms() - delay, 0)
        group = replace(group, join_timer=JoinTimer(step.now_ms + delay, delay, remaining))
    group = group.transition_to(PREPARING_REBALANCE, step.now_ms)
    if not is_initial_rebalance:
        group = maybe_complete_join_else_schedule(step, group)
    return group


def maybe_complete_join_else_schedule(step: Step, group: Group) -> Group:
    """Complete the join phase if everyone has joined, else arm the join timer."""
    if group.has_all_members_joined():
        return complete_join(step, group)
    step.fire(REBALANCE_JOIN_TIMER_ARMED)
    return replace(group, join_timer=JoinTimer(step.now_ms + group.rebalance_timeout_ms()))


def maybe_complete_join_phase(step: Step, group: Group) -> Group:
    """Complete the join phase early once everyone joined, except in the initial rebalance."""
    if (
        group.state is PREPARING_REBALANCE
        and group.has_all_members_joined()
        and group.previous_state is not EMPTY
    ):
        step.fire(REBALANCE_JOIN_COMPLETED_EARLY)
        return complete_join(step, group)
    return group


def maybe_prepare_rebalance_or_complete_join(step: Step, group: Group) -> Group:
    """Start a rebalance where one may start; otherwise try to finish the one under way."""
    if group.can_rebalance():
        return prepare_rebalance(step, group)
    return maybe_complete_join_phase(step, group)


def try_complete_initial_rebalance_else_schedule(step: Step, group: Group) -> Group:
    """The initial-rebalance timer fired: extend the delay if members keep arriving, else complete."""
    timer = group.join_timer
    assert timer is not None and timer.initial_delay_ms is not None
    assert timer.initial_remaining_ms is not None
    if group.new_member_added and timer.initial_remaining_ms != 0:
        step.fire(REBALANCE_INITIAL_DELAY_EXTENDED)
        new_delay = min(step.config.group_initial_rebalance_delay_ms, timer.initial_remaining_ms)
        new_remaining = max(timer.initial_remaining_ms - timer.initial_delay_ms, 0)
        return replace(
            group,
            new_member_added=False,
            join_timer=JoinTimer(step.now_ms + new_delay, new_delay, new_remaining),
        )
    return complete_join(step, group)


def elect_joined_leader(step: Step, group: Group) -> tuple[Group, bool]:
    """ClassicGroup.maybeElectNewJoinedLeader: make sure the leader is a member that rejoined."""
    if group.leader_id is None:
        return group, False
    leader = group.member(group.leader_id)
    if leader is not None and leader.is_awaiting_join:
        return group, True
    rejoined = [m.member_id for m in group.members if m.is_awaiting_join]
    if not rejoined:
        return group, False
    step.fire(REBALANCE_LEADER_REELECTED)
    return replace(group, leader_id=step.choose("leader", rejoined)), True


def init_next_generation(step: Step, group: Group) -> Group:
    """Bump the generation; with members select a protocol and go CompletingRebalance, else Empty."""
    group = replace(group, generation_id=group.generation_id + 1, pending_sync_members=frozenset())
    if group.members:
        group = replace(group, protocol_name=select_protocol(step, group))
        group = replace(group, subscribed_topics=compute_subscribed_topics(group))
        return group.transition_to(COMPLETING_REBALANCE, step.now_ms)
    group = replace(group, protocol_name=None, subscribed_topics=None)
    return group.transition_to(EMPTY, step.now_ms)


def complete_join(step: Step, group: Group) -> Group:
    """GroupMetadataManager.completeClassicGroupJoin (reference §3, "Completing the join phase")."""
    group = replace(group, join_timer=None)
    for member in group.members:
        if not member.is_awaiting_join and not member.is_static:
            step.fire(REBALANCE_DYNAMIC_MEMBER_NOT_REJOINED_REMOVED)
            group = remove_member(step, group, member.member_id)
    if group.state is DEAD:
        return group
    group, has_leader = elect_joined_leader(step, group)
    if not has_leader and group.members:
        step.fire(REBALANCE_NO_MEMBER_REJOINED_JOIN_TIMER_REARMED)
        return replace(group, join_timer=JoinTimer(step.now_ms + group.rebalance_timeout_ms()))
    group = init_next_generation(step, group)
    if group.state is EMPTY:
        step.fire(REBALANCE_COMPLETED_TO_EMPTY)
        # A failed append of the empty-group record is only logged by Kafka.
        step.write([group_metadata_record(group, {})])
        return group
    step.fire(REBALANCE_COMPLETED_TO_COMPLETING)
    for member in group.members:
        if member.awaiting_join is not None:
            is_leader = group.is_leader(member.member_id)
            step.respond(
                member.awaiting_join,
                JoinGroupResponse(
                    ErrorCode.NONE,
                    member_id=member.member_id,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=group.leader_id or "",
                    skip_assignment=False,
                    members=current_members_for_leader(group) if is_leader else (),
                ),
            )
        group = group.update_member(member.member_id, awaiting_join=None, is_new=False)
        group = schedule_heartbeat(step, group, member.member_id)
    all_ids = frozenset(m.member_id for m in group.members)
    sync_deadline = step.now_ms + group.rebalance_timeout_ms()
    return replace(
        group,
        pending_sync_members=all_ids,
        sync_timer=SyncTimer(sync_deadline, group.generation_id),
    )


def fail_parked_join_and_remove(step: Step, group: Group, member_id: str) -> Group:
    """Answer the member's parked JoinGroup with UNKNOWN_MEMBER_ID, then remove the member."""
    member = group.member(member_id)
    assert member is not None
    if member.awaiting_join is not None:
        step.respond(member.awaiting_join, JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID))
    return remove_member(step, group, member_id)


def remove_member_and_update_group(step: Step, group: Group, member_id: str) -> Group:
    """removeMemberAndUpdateClassicGroup: evict a member, then rebalance or finish the join phase.

    Unlike LeaveGroup, this path completes a join phase whose members have all joined even
    during the initial rebalance (it bypasses maybe_complete_join_phase's guard).
    """
    group = fail_parked_join_and_remove(step, group, member_id)
    if group.state in (STABLE, COMPLETING_REBALANCE):
        return maybe_prepare_rebalance_or_complete_join(step, group)
    return complete_join_after_removal(step, group)


def complete_join_after_removal(step: Step, group: Group) -> Group:
    """A removal by expiry left everyone joined: complete the join phase under way."""
    if group.state is not PREPARING_REBALANCE or not group.has_all_members_joined():
        return group
    assert group.join_timer is not None
    if step.config.is_scala_coordinator and group.join_timer.is_initial_rebalance:
        # Scala's InitialDelayedJoin never completes early: only its timer ends the delay.
        step.fire(REBALANCE_INITIAL_DELAY_KEPT_AFTER_REMOVAL_KAFKA_3X)
        return group
    step.fire(REBALANCE_JOIN_COMPLETED_AFTER_REMOVAL)
    return complete_join(step, group)
