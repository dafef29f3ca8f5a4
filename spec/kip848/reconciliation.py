"""Per-member reconciliation towards the target assignment (docs/protocol.md §12.8), Kafka 4.3.0's
`modern/consumer/CurrentAssignmentBuilder.java` as a function.

The one safety rule: a member is given a partition only when no member (itself excepted, for a
partition it is revoking) still owns it, assigned or pending revocation; and it moves to a new
epoch only after it has stopped reporting the partitions it must give up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from groupspec.vocabulary.requests import TopicPartition

from .rules import (
    CG_RECONCILE_REVOKE_FIRST,
    CG_RECONCILE_STILL_REVOKING,
    CG_RECONCILE_SUBSCRIPTION_NARROWED,
    CG_RECONCILE_TO_STABLE,
    CG_RECONCILE_TO_UNRELEASED,
    CG_RECONCILE_UNKNOWN_STATE_FENCED,
)
from .state import NO_PARTITIONS, ConsumerGroupMember, MemberState, Partitions
from .step import Step


@dataclass(frozen=True)
class OwnedTopic:
    """One entry of a heartbeat's owned partitions: the topic (None when its id is not in the
    cluster's metadata) and the partition numbers."""

    topic: str | None
    partitions: frozenset[int]


# None: the heartbeat left its owned partitions out ("unchanged").
Owned = tuple[OwnedTopic, ...] | None


class MemberFencedError(Exception):
    """The member must be fenced (FENCED_MEMBER_EPOCH): reconciliation cannot place it."""


def reports_any(owned: Owned, partitions: Partitions) -> bool:
    """Whether the heartbeat reports owning one of `partitions` (ownsRevokedPartitions); a
    heartbeat that leaves its owned partitions out is taken to own them all."""
    if owned is None:
        return True
    return any(
        TopicPartition(entry.topic, p) in partitions
        for entry in owned
        if entry.topic is not None
        for p in entry.partitions
    )


def within(owned: Owned, assigned: Partitions) -> bool:
    """Whether every reported partition is assigned to the member (isSubset); a topic entry,
    even an empty one, counts only if the member holds some partition of that topic."""
    if owned is None:
        return False
    topics = {partition.topic for partition in assigned}
    for entry in owned:
        if entry.topic is None or entry.topic not in topics:
            return False
        if any(TopicPartition(entry.topic, p) not in assigned for p in entry.partitions):
            return False
    return True


def reconcile(
    step: Step,
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Partitions,
    subscribed: Partitions,
    subscription_changed: bool,
    owned: Owned,
    owner_of: Callable[[TopicPartition], str | None],
) -> ConsumerGroupMember:
    """The member after one reconciliation step (CurrentAssignmentBuilder.build).

    `subscribed` is every partition of the topics the member subscribes to; `owner_of` tells
    which member the coordinator counts as a partition's owner before this heartbeat.
    """
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(
                step, member, member.member_epoch, target_epoch, target, subscribed, owned, owner_of
            )
        if subscription_changed:
            return _narrow_to_subscription(step, member, subscribed, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if reports_any(owned, member.pending_revocation):
            if subscription_changed:
                return _narrow_to_subscription(step, member, subscribed, owned)
            step.fire(CG_RECONCILE_STILL_REVOKING)
            return member
        return _next_assignment(
            step, member, member.member_epoch, target_epoch, target, subscribed, owned, owner_of
        )
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next_assignment(
            step, member, member.member_epoch, target_epoch, target, subscribed, owned, owner_of
        )
    if owned is None or owned:
        step.fire(CG_RECONCILE_UNKNOWN_STATE_FENCED)
        raise MemberFencedError(member.member_id)
    return _next_assignment(
        step, member, target_epoch, target_epoch, target, subscribed, owned, owner_of
    )


def _narrow_to_subscription(
    step: Step, member: ConsumerGroupMember, subscribed: Partitions, owned: Owned
) -> ConsumerGroupMember:
    """updateCurrentAssignment: partitions of topics no longer subscribed go to revocation."""
    topics = {p.topic for p in subscribed}
    if not topics and not member.pending_revocation:
        assigned, pending = NO_PARTITIONS, member.assigned
    else:
        assigned = frozenset(p for p in member.assigned if p.topic in topics)
        pending = member.pending_revocation | (member.assigned - assigned)
    if assigned == member.assigned:
        return member
    step.fire(CG_RECONCILE_SUBSCRIPTION_NARROWED)
    moved = member.moved_to_epoch(member.member_epoch)
    if pending and reports_any(owned, pending):
        return replace(
            moved,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=assigned,
            pending_revocation=pending,
        )
    return replace(moved, assigned=assigned)


def _next_assignment(
    step: Step,
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: Partitions,
    subscribed: Partitions,
    owned: Owned,
    owner_of: Callable[[TopicPartition], str | None],
) -> ConsumerGroupMember:
    """computeNextAssignment: revoke first, then take the target partitions that are free."""
    topics = {p.topic for p in subscribed}
    wanted = frozenset(p for p in target if p.topic in topics)
    kept = member.assigned & wanted
    revoking = member.assigned - kept
    to_assign = wanted - kept
    unreleased = frozenset(
        p for p in to_assign if owner_of(p) is not None and p not in member.pending_revocation
    )
    to_assign -= unreleased
    if revoking and reports_any(owned, revoking):
        step.fire(CG_RECONCILE_REVOKE_FIRST)
        return replace(
            member.moved_to_epoch(member_epoch),
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned=kept,
            pending_revocation=revoking,
        )
    step.fire(CG_RECONCILE_TO_UNRELEASED if unreleased else CG_RECONCILE_TO_STABLE)
    return replace(
        member.moved_to_epoch(target_epoch),
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned=kept | to_assign,
        pending_revocation=NO_PARTITIONS,
    )
