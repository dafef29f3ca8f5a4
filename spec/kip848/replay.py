"""Consumer-protocol groups rebuilt from their records, as `GroupMetadataManager.replay` rebuilds
them when a coordinator loads a `__consumer_offsets` partition (docs/protocol.md §12.16).

Each record kind has its replay branch; a value creates the group (and the member) when absent,
a tombstone of a group or member replay does not hold is ignored, and a tombstone that comes
before the ones Kafka writes ahead of it is refused (`ReplayError`, Kafka's
IllegalStateException). What replay does NOT restore: the timers (`onLoaded` arms every member's
session timeout anew, and the rebalance timeout of a member in UnrevokedPartitions) and the
counter behind coordinator-generated member ids (Kafka draws random UUIDs).

`durable_view` is the part of a group the log keeps; `durability_problems` is the KIP-848 twin of
the classic durability check: after every step, replaying the log gives that view.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from groupspec.vocabulary.consumer_groups import LEAVE_GROUP_MEMBER_EPOCH

from ..rules import Rule
from .records import (
    CurrentAssignmentKey,
    CurrentAssignmentValue,
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadataKey,
    MemberMetadataValue,
    Record,
    RegexKey,
    RegexValue,
    TargetAssignmentMemberKey,
    TargetAssignmentMemberValue,
    TargetAssignmentMetadataKey,
    TargetAssignmentMetadataValue,
)
from .rules import (
    CG_REPLAY_CURRENT_ASSIGNMENT,
    CG_REPLAY_GROUP_EPOCH,
    CG_REPLAY_MEMBER_METADATA,
    CG_REPLAY_REGEX,
    CG_REPLAY_TARGET_EPOCH,
    CG_REPLAY_TARGET_MEMBER,
    CG_REPLAY_TOMBSTONE,
    CG_REPLAY_TOMBSTONE_IGNORED,
)
from .state import (
    NO_PARTITIONS,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupsState,
    ResolvedRegex,
)

# The assignment epoch a target-assignment metadata tombstone leaves (ConsumerGroup's -1).
NO_ASSIGNMENT_EPOCH = -1


class ReplayError(Exception):
    """Records in an order Kafka never writes them (its replay throws IllegalStateException)."""


@dataclass(frozen=True)
class Replayed:
    """The groups the records rebuild, and the replay rules fired, one per record."""

    groups: tuple[ConsumerGroup, ...]
    rules: tuple[Rule, ...]


def replay(records: Iterable[Record]) -> Replayed:
    """The groups rebuilt from `records`, replayed in order, without timers."""
    groups: dict[str, ConsumerGroup] = {}
    fired: list[Rule] = []
    for record in records:
        fired.append(_replay_one(groups, record))
    return Replayed(tuple(groups[g] for g in sorted(groups)), tuple(fired))


def _replay_one(groups: dict[str, ConsumerGroup], record: Record) -> Rule:
    key, value = record.key, record.value
    gid = key.group_id
    group = groups.get(gid)
    if value is None:
        if group is None:
            return CG_REPLAY_TOMBSTONE_IGNORED
        return _tombstone(groups, group, key)
    group = group or ConsumerGroup(gid)
    if isinstance(key, GroupMetadataKey) and isinstance(value, GroupMetadataValue):
        groups[gid] = replace(group, group_epoch=value.epoch, metadata_hash=value.metadata_hash)
        return CG_REPLAY_GROUP_EPOCH
    if isinstance(key, MemberMetadataKey) and isinstance(value, MemberMetadataValue):
        member = group.member(key.member_id) or ConsumerGroupMember(key.member_id)
        member = replace(
            member,
            instance_id=value.instance_id,
            rack_id=value.rack_id,
            subscribed_topic_names=frozenset(value.subscribed_topic_names),
            rebalance_timeout_ms=value.rebalance_timeout_ms,
            server_assignor=value.server_assignor,
            subscribed_topic_regex=value.subscribed_topic_regex,
            classic=value.classic,
        )
        groups[gid] = group.with_member(member)
        return CG_REPLAY_MEMBER_METADATA
    if isinstance(key, RegexKey) and isinstance(value, RegexValue):
        resolved = ResolvedRegex(key.regex, value.topics, value.timestamp_ms)
        groups[gid] = group.with_resolved_regex(resolved)
        return CG_REPLAY_REGEX
    if isinstance(key, TargetAssignmentMemberKey) and isinstance(
        value, TargetAssignmentMemberValue
    ):
        target = group.target
        target[key.member_id] = frozenset(value.partitions)
        groups[gid] = group.with_target(target)
        return CG_REPLAY_TARGET_MEMBER
    if isinstance(key, TargetAssignmentMetadataKey) and isinstance(
        value, TargetAssignmentMetadataValue
    ):
        groups[gid] = replace(
            group,
            assignment_epoch=value.assignment_epoch,
            assignment_timestamp_ms=value.assignment_timestamp_ms,
        )
        return CG_REPLAY_TARGET_EPOCH
    if isinstance(key, CurrentAssignmentKey) and isinstance(value, CurrentAssignmentValue):
        member = group.member(key.member_id) or ConsumerGroupMember(key.member_id)
        member = replace(
            member,
            member_epoch=value.member_epoch,
            previous_member_epoch=value.previous_member_epoch,
            state=value.state,
            assigned=frozenset(value.assigned),
            pending_revocation=frozenset(value.pending_revocation),
            assignment_epochs=value.assignment_epochs,
        )
        groups[gid] = group.with_member(member)
        return CG_REPLAY_CURRENT_ASSIGNMENT
    raise ReplayError(f"record {record}: the value does not belong to the key")


def _tombstone(groups: dict[str, ConsumerGroup], group: ConsumerGroup, key: object) -> Rule:
    gid = group.group_id
    if isinstance(key, CurrentAssignmentKey):
        member = group.member(key.member_id)
        if member is None:
            return CG_REPLAY_TOMBSTONE_IGNORED
        left = replace(
            member,
            member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
            previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
            assigned=NO_PARTITIONS,
            pending_revocation=NO_PARTITIONS,
        )
        groups[gid] = group.with_member(left)
    elif isinstance(key, TargetAssignmentMemberKey):
        target = group.target
        target.pop(key.member_id, None)
        groups[gid] = group.with_target(target)
    elif isinstance(key, MemberMetadataKey):
        member = group.member(key.member_id)
        if member is None:
            return CG_REPLAY_TOMBSTONE_IGNORED
        if member.member_epoch != LEAVE_GROUP_MEMBER_EPOCH:
            raise ReplayError(
                f"subscription tombstone of {key.member_id} before its current-assignment tombstone"
            )
        if key.member_id in group.target:
            raise ReplayError(
                f"subscription tombstone of {key.member_id} before its target-assignment tombstone"
            )
        groups[gid] = group.without_member(key.member_id)
    elif isinstance(key, TargetAssignmentMetadataKey):
        if group.target_by_id:
            raise ReplayError(f"target-assignment epoch tombstone of {gid} with entries left")
        groups[gid] = replace(group, assignment_epoch=NO_ASSIGNMENT_EPOCH)
    elif isinstance(key, RegexKey):
        groups[gid] = group.without_resolved_regex(key.regex)
    elif isinstance(key, GroupMetadataKey):
        if group.members_by_id or group.target_by_id:
            raise ReplayError(f"group tombstone of {gid} with members or target entries left")
        if group.assignment_epoch != NO_ASSIGNMENT_EPOCH:
            raise ReplayError(f"group tombstone of {gid} before its target-assignment epoch's")
        del groups[gid]
    else:
        raise ReplayError(f"tombstone of an unknown record key {key!r}")
    return CG_REPLAY_TOMBSTONE


# -- the durability check -----------------------------------------------------------------------


def durable_view(group: ConsumerGroup) -> ConsumerGroup:
    """What the log keeps of `group`: everything but its timers (members with their
    subscriptions, instance ids and epochs, both group epochs, the target, current assignments),
    timers aside: the session and rebalance timeouts, and a classic member's join and sync ones;
    and a regular-expression resolution under way (the executor's task)."""
    return replace(
        group,
        session_deadlines=(),
        rebalance_deadlines=(),
        classic_join_deadlines=(),
        classic_sync_deadlines=(),
        regex_resolution=None,
    )


def durability_problems(state: ConsumerGroupsState, log: Iterable[Record]) -> list[str]:
    """Where replaying `log` does not give the durable view of `state`'s groups ([] if it does)."""
    try:
        rebuilt = {g.group_id: g for g in replay(log).groups}
    except ReplayError as error:
        return [f"the log does not replay: {error}"]
    held = {g.group_id: durable_view(g) for g in state.iter_groups()}
    problems = []
    for gid in sorted(set(rebuilt) | set(held)):
        mine, theirs = held.get(gid), rebuilt.get(gid)
        if mine == theirs:
            continue
        if mine is None:
            problems.append(
                f"group {gid!r}: the log rebuilds a group the coordinator does not hold"
            )
        elif theirs is None:
            problems.append(f"group {gid!r}: the log does not rebuild it")
        else:
            problems.append(f"group {gid!r}: {_first_difference(mine, theirs)}")
    return problems


def _first_difference(held: ConsumerGroup, rebuilt: ConsumerGroup) -> str:
    for name in ("group_epoch", "assignment_epoch", "assignment_timestamp_ms", "target_by_id"):
        if getattr(held, name) != getattr(rebuilt, name):
            return f"{name} is {getattr(held, name)} in memory, {getattr(rebuilt, name)} replayed"
    mine, theirs = held.members, rebuilt.members
    for member_id in sorted(set(mine) | set(theirs)):
        if mine.get(member_id) != theirs.get(member_id):
            return f"member {member_id}: {mine.get(member_id)} in memory, {theirs.get(member_id)} replayed"
    return "the groups differ"
