"""Invariants of consumer-protocol groups (docs/protocol.md §12.12), in the classic spec's style
(`spec/invariants.py`): each is a predicate returning the violations it finds in a state.

SingleOwner is the protocol's safety property (the TLA+ drafts of KIP-848 call it
NoDoubleClientAssignment; KAFKA-16147 broke it). EmptyEpochsAgree is KAFKA-20442's, which Kafka
4.4.0 keeps. UnrevokedHasRevocations is KAFKA-20641's, which Kafka 4.4.0 still breaks with a
static member's temporary leave (pinned by tests/test_kip848_findings.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from groupspec.vocabulary.consumer_groups import ConsumerGroupState

from ..invariants import Invariant
from .regex import awaits_resolution
from .replay import durability_problems
from .state import ConsumerGroup, ConsumerGroupsState, CoordinatorPhase, MemberState


def _per_group(
    check: Callable[[ConsumerGroup], list[str]],
) -> Callable[[ConsumerGroupsState], list[str]]:
    def run(state: ConsumerGroupsState) -> list[str]:
        return [
            f"group {group.group_id!r}: {problem}"
            for group in state.iter_groups()
            for problem in check(group)
        ]

    return run


def _single_owner(group: ConsumerGroup) -> list[str]:
    owners = Counter(p for member in group.iter_members() for p in member.assigned)
    owners.update(p for member in group.iter_members() for p in member.pending_revocation)
    return [
        f"partition {partition} is owned {count} times (assigned or pending revocation)"
        for partition, count in sorted(owners.items())
        if count > 1
    ]


def _stable_group_reconciled(group: ConsumerGroup) -> list[str]:
    if group.state is not ConsumerGroupState.STABLE:
        return []
    problems = []
    for member in group.iter_members():
        if member.state is not MemberState.STABLE or member.member_epoch != group.group_epoch:
            problems.append(
                f"Stable group, but member {member.member_id} is {member.state.value} "
                f"at epoch {member.member_epoch} (group epoch {group.group_epoch})"
            )
        elif member.pending_revocation:
            problems.append(f"Stable group, but member {member.member_id} is revoking")
        elif member.assigned != group.target_of(member.member_id) and not awaits_resolution(
            group, member
        ):
            # A member whose new expression awaits its resolution was narrowed to its
            # unsettled subscription without a new group epoch (Kafka bumps it only once the
            # expression resolves), so the target it is reconciled to predates it.
            problems.append(
                f"Stable group, but member {member.member_id} holds "
                f"{sorted(map(str, member.assigned))}, not its target "
                f"{sorted(map(str, group.target_of(member.member_id)))}"
            )
    return problems


def _member_epoch_bounded(group: ConsumerGroup) -> list[str]:
    problems = [
        f"member {m.member_id} at epoch {m.member_epoch} > group epoch {group.group_epoch}"
        for m in group.iter_members()
        if m.member_epoch > group.group_epoch
    ]
    if group.assignment_epoch > group.group_epoch:
        problems.append(
            f"assignment epoch {group.assignment_epoch} > group epoch {group.group_epoch}"
        )
    return problems


def _empty_epochs_agree(group: ConsumerGroup) -> list[str]:
    if group.members_by_id or group.group_epoch == group.assignment_epoch:
        return []
    return [
        f"Empty, but group epoch {group.group_epoch} != assignment epoch {group.assignment_epoch}"
    ]


def _unrevoked_has_revocations(group: ConsumerGroup) -> list[str]:
    return [
        f"member {m.member_id} is UnrevokedPartitions with nothing pending revocation"
        for m in group.iter_members()
        if m.state is MemberState.UNREVOKED_PARTITIONS and not m.pending_revocation
    ]


def _targets_for_members(group: ConsumerGroup) -> list[str]:
    members = group.members
    problems = [
        f"target for {m!r}, not a member" for m, _ in group.target_by_id if m not in members
    ]
    instances = Counter(m.instance_id for m in group.iter_members() if m.instance_id is not None)
    problems += [f"instance id {i!r} held by {n} members" for i, n in instances.items() if n > 1]
    return problems


def _log_replays_to_groups(state: ConsumerGroupsState) -> list[str]:
    if state.phase is not CoordinatorPhase.ACTIVE:
        return []
    return durability_problems(state, state.log)


KIP848_INVARIANTS: tuple[Invariant[ConsumerGroupsState], ...] = (
    Invariant(
        "SingleOwner",
        "A partition is owned by at most one member, counting partitions pending revocation.",
        _per_group(_single_owner),
    ),
    Invariant(
        "StableGroupReconciled",
        "A Stable group's members are Stable at the group epoch, hold their target and revoke nothing.",
        _per_group(_stable_group_reconciled),
    ),
    Invariant(
        "MemberEpochBounded",
        "No member epoch, nor the assignment epoch, is above the group epoch.",
        _per_group(_member_epoch_bounded),
    ),
    Invariant(
        "EmptyEpochsAgree",
        "An Empty group's group epoch equals its assignment epoch (KAFKA-20442).",
        _per_group(_empty_epochs_agree),
    ),
    Invariant(
        "UnrevokedHasRevocations",
        "A member in UnrevokedPartitions has partitions pending revocation (KAFKA-20641).",
        _per_group(_unrevoked_has_revocations),
    ),
    Invariant(
        "TargetsForMembers",
        "The target assignment names only members, and an instance id belongs to one member.",
        _per_group(_targets_for_members),
    ),
    Invariant(
        "LogReplaysToGroups",
        "Replaying the log gives every group's durable part: members, instance ids, epochs, "
        "target and current assignments (everything but the timers).",
        _log_replays_to_groups,
    ),
)


def check_state(state: ConsumerGroupsState) -> list[tuple[str, str]]:
    """Every (invariant name, violation) in `state`."""
    return [(inv.name, problem) for inv in KIP848_INVARIANTS for problem in inv.check(state)]
