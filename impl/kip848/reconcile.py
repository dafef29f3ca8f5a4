"""Per-member reconciliation towards the target assignment (CurrentAssignmentBuilder): revoke
first, then take only the target partitions no other member still owns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from groupspec.vocabulary.requests import TopicPartition

from .state import NO_PARTITIONS, Member, MemberState, Partitions

# A heartbeat's owned partitions: (topic name or None when the id is unknown, partition
# numbers) per entry; None when the heartbeat left them out ("unchanged").
Owned = tuple[tuple[str | None, frozenset[int]], ...] | None


class MemberFenced(Exception):
    """Reconciliation cannot place the member: it must be fenced (FENCED_MEMBER_EPOCH)."""


class Reconciled(NamedTuple):
    """The member's epochs, state and partitions after one reconciliation step."""

    epoch: int
    previous_epoch: int
    state: MemberState
    assigned: Partitions
    pending: Partitions


def reports_any(owned: Owned, partitions: Partitions) -> bool:
    """Whether the heartbeat reports owning one of `partitions` (left out: it owns them all)."""
    if owned is None:
        return True
    for topic, numbers in owned:
        if topic is None:
            continue
        for number in numbers:
            if TopicPartition(topic, number) in partitions:
                return True
    return False


def within(owned: Owned, assigned: Partitions) -> bool:
    """Whether every reported partition is assigned to the member; a topic entry, even an
    empty one, counts only if the member holds some partition of that topic."""
    if owned is None:
        return False
    topics = {partition.topic for partition in assigned}
    for topic, numbers in owned:
        if topic is None or topic not in topics:
            return False
        for number in numbers:
            if TopicPartition(topic, number) not in assigned:
                return False
    return True


def reconcile(
    member: Member,
    target_epoch: int,
    target: Partitions,
    topics: frozenset[str],
    subscription_changed: bool,
    owned: Owned,
    owners: Mapping[TopicPartition, str],
) -> Reconciled | None:
    """One reconciliation step: the member's new values (None: unchanged).

    `topics` are the subscribed topics the cluster holds; `owners` maps each owned partition to
    its owner before this heartbeat.
    """
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, topics, owned, owners)
        if subscription_changed:
            return _narrow(member, topics, owned)
        return None
    if state is MemberState.UNREVOKED_PARTITIONS:
        if reports_any(owned, member.pending_revocation):
            if subscription_changed:
                return _narrow(member, topics, owned)
            return None
        return _next(member, member.member_epoch, target_epoch, target, topics, owned, owners)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, topics, owned, owners)
    if owned is None or owned:
        raise MemberFenced(member.member_id)
    return _next(member, target_epoch, target_epoch, target, topics, owned, owners)


def _narrow(member: Member, topics: frozenset[str], owned: Owned) -> Reconciled | None:
    """Partitions of topics no longer subscribed go to revocation."""
    assigned = frozenset(p for p in member.assigned if p.topic in topics)
    if assigned == member.assigned:
        return None
    pending = member.pending_revocation | (member.assigned - assigned)
    epoch = member.member_epoch
    if pending and reports_any(owned, pending):
        return Reconciled(epoch, epoch, MemberState.UNREVOKED_PARTITIONS, assigned, pending)
    return Reconciled(epoch, epoch, member.state, assigned, member.pending_revocation)


def _next(
    member: Member,
    member_epoch: int,
    target_epoch: int,
    target: Partitions,
    topics: frozenset[str],
    owned: Owned,
    owners: Mapping[TopicPartition, str],
) -> Reconciled | None:
    """Revoke first, then take the target partitions that are free."""
    wanted = frozenset(p for p in target if p.topic in topics)
    current = member.assigned
    kept = current & wanted
    revoking = current - kept
    to_assign = wanted - kept
    pending_before = member.pending_revocation
    unreleased = frozenset(p for p in to_assign if p in owners and p not in pending_before)
    to_assign -= unreleased
    if revoking and reports_any(owned, revoking):
        return Reconciled(
            member_epoch,
            member.member_epoch,
            MemberState.UNREVOKED_PARTITIONS,
            kept,
            revoking,
        )
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return Reconciled(target_epoch, member.member_epoch, state, kept | to_assign, NO_PARTITIONS)
