"""Named invariants over coordinator state, and action properties over single steps.

Each is a predicate the checker evaluates on every state (or transition); it returns the list of
violations it found, empty when the property holds. Names are used in code, CLI output and docs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    GroupState,
    is_legal_transition,
)
from groupspec.vocabulary.requests import OffsetCommitRequest, Received, TopicPartition
from groupspec.vocabulary.responses import OffsetCommitResponse

from .consumer_protocol import CONSUMER_PROTOCOL_TYPE
from .events import FinishLoading, HeartbeatExpired, OffsetRetentionCheck
from .log import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from .persistence import group_from_records
from .state import CoordinatorState, Group

StateT = TypeVar("StateT")


@dataclass(frozen=True)
class Invariant(Generic[StateT]):
    """A named property of every reachable state (the coordinator's, or a consumer's)."""

    name: str
    description: str
    check: Callable[[StateT], list[str]]


@dataclass(frozen=True)
class ActionProperty:
    """A named property of every step: (state before, input, state after, responses)."""

    name: str
    description: str
    check: Callable[[CoordinatorState, object, CoordinatorState, tuple[object, ...]], list[str]]


def _per_group(check: Callable[[Group], list[str]]) -> Callable[[CoordinatorState], list[str]]:
    def run(state: CoordinatorState) -> list[str]:
        return [f"group {g.group_id!r}: {problem}" for g in state.groups for problem in check(g)]

    return run


def _type_ok(group: Group) -> list[str]:
    problems = []
    ids = [m.member_id for m in group.members]
    if len(set(ids)) != len(ids):
        problems.append(f"duplicate member ids {ids}")
    if ids != sorted(ids):
        problems.append("members not in canonical order")
    if group.generation_id < 0:
        problems.append(f"negative generation {group.generation_id}")
    pending = {p.member_id for p in group.pending_members}
    if pending & set(ids):
        problems.append(f"ids both pending and members: {sorted(pending & set(ids))}")
    if bool(group.members) != (group.leader_id is not None):
        problems.append(f"leader {group.leader_id!r} with {len(ids)} members")
    if group.leader_id is not None and group.leader_id not in ids:
        problems.append(f"leader {group.leader_id!r} is not a member")
    if group.members and group.protocol_type is None:
        problems.append("members but no protocol type")
    for member in group.members:
        if member.protocol_type != group.protocol_type:
            problems.append(f"member {member.member_id} has protocol type {member.protocol_type!r}")
        if member.session_timeout_ms <= 0 or member.rebalance_timeout_ms < 0:
            problems.append(f"member {member.member_id} has impossible timeouts")
    return problems


def _dead_groups_leave_memory(group: Group) -> list[str]:
    return ["a Dead group is still held in memory"] if group.state is DEAD else []


def _valid_stable_group(group: Group) -> list[str]:
    if group.state is not STABLE:
        return []
    problems = []
    if not group.members:
        problems.append("Stable without members")
    if group.leader_id is None or not group.has_member(group.leader_id):
        problems.append(f"Stable with leader {group.leader_id!r} not a member")
    if group.protocol_name is None:
        problems.append("Stable without a selected protocol")
    if group.generation_id <= 0:
        problems.append("Stable at generation 0")
    waiting = [m.member_id for m in group.members if m.is_awaiting_join or m.is_awaiting_sync]
    if waiting:
        problems.append(f"Stable with parked requests of {waiting}")
    return problems


def _empty_means_no_members(group: Group) -> list[str]:
    problems = []
    if group.state is EMPTY and group.members:
        problems.append(f"Empty with members {[m.member_id for m in group.members]}")
    if group.state in (COMPLETING_REBALANCE, STABLE) and not group.members:
        problems.append(f"{group.state.value} without members")
    if group.state is PREPARING_REBALANCE and not group.members and group.join_timer is None:
        problems.append("PreparingRebalance without members and without a join timer")
    if group.state is EMPTY and group.protocol_name is not None:
        problems.append("Empty with a selected protocol")
    return problems


def _instance_map_consistent(group: Group) -> list[str]:
    counts = Counter(m.group_instance_id for m in group.members if m.group_instance_id is not None)
    return [f"instance id {i!r} mapped to {n} members" for i, n in counts.items() if n > 1]


def _parked_requests_match_state(group: Group) -> list[str]:
    problems = []
    for member in group.members:
        if member.is_awaiting_join and group.state is not PREPARING_REBALANCE:
            problems.append(f"join of {member.member_id} parked in {group.state.value}")
        if member.is_awaiting_sync and group.state is not COMPLETING_REBALANCE:
            problems.append(f"sync of {member.member_id} parked in {group.state.value}")
    return problems


def _timers_armed(group: Group) -> list[str]:
    """The timers Kafka arms in each state are armed, for the generation and with the deadline
    they were armed with; the others are not."""
    problems = []
    if (group.join_timer is not None) != (group.state is PREPARING_REBALANCE):
        problems.append(f"join timer {group.join_timer} in {group.state.value}")
    join = group.join_timer
    if join is not None and join.initial_delay_ms is not None:
        started = group.current_state_timestamp_ms
        armed_at = join.deadline_ms - join.initial_delay_ms
        if started is not None and armed_at < started:
            problems.append(
                f"the initial-rebalance delay ends at {join.deadline_ms}, before a delay of "
                f"{join.initial_delay_ms} ms counted from the rebalance's start at {started}"
            )
    sync = group.sync_timer
    if group.state is COMPLETING_REBALANCE:
        if sync is None:
            problems.append("CompletingRebalance without a sync timer")
        elif sync.generation_id != group.generation_id:
            problems.append(
                f"the sync timer is for generation {sync.generation_id}, the group's is "
                f"{group.generation_id}"
            )
        elif (
            group.current_state_timestamp_ms is not None
            and sync.deadline_ms != group.current_state_timestamp_ms + group.rebalance_timeout_ms()
        ):
            problems.append(
                f"the sync timer ends at {sync.deadline_ms}, not a rebalance timeout "
                f"({group.rebalance_timeout_ms()} ms) after the generation formed at "
                f"{group.current_state_timestamp_ms}"
            )
    elif group.state is STABLE:
        # Followers may still sync once the leader's SyncGroup made the group Stable.
        if sync is not None and sync.generation_id != group.generation_id:
            problems.append(f"a sync timer for generation {sync.generation_id} in Stable")
        if bool(group.pending_sync_members) != (sync is not None):
            problems.append("members pending sync without a sync timer, or the reverse")
    elif sync is not None or group.pending_sync_members:
        problems.append(f"a sync timer or members pending sync in {group.state.value}")
    for member in group.members:
        parked = member.is_awaiting_join or member.is_awaiting_sync
        if member.heartbeat_deadline_ms is None and not parked:
            problems.append(f"member {member.member_id} has no session timer and is not parked")
    return problems


def _stable_group_durable(state: CoordinatorState) -> list[str]:
    """A Stable group is as the log holds it: every way into Stable (the leader's assignment
    stored, a static replacement in Stable, a load) writes the group, or undoes itself when the
    write fails."""
    problems = []
    for group in state.groups:
        if group.state is not STABLE:
            continue
        record = state.log.get(GroupMetadataKey(group.group_id))
        replayed = group_from_records(
            group.group_id, record if isinstance(record, GroupMetadataValue) else None, ()
        )
        if _snapshot(replayed) != _snapshot(group):
            problems.append(
                f"group {group.group_id!r} is Stable as {_snapshot(group)}, the log holds "
                f"{_snapshot(replayed)}"
            )
    return problems


def _log_replay(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    """After a step whose write to the log completed, replaying the log gives the group as it
    is in memory: its generation, protocol, leader, members with their static mappings and
    assignments (a group record is a snapshot of the group), and its committed offsets."""
    problems = []
    for group_id in _groups_written(before, after):
        memory = after.group(group_id)
        if memory is not None and memory.state is DEAD:
            memory = None
        record = after.log.get(GroupMetadataKey(group_id))
        offsets = tuple(
            sorted(
                (TopicPartition(key.topic, key.partition), value)
                for key, value in after.log.entries
                if isinstance(key, OffsetCommitKey)
                and key.group_id == group_id
                and isinstance(value, OffsetCommitValue)
            )
        )
        replayed = group_from_records(
            group_id, record if isinstance(record, GroupMetadataValue) else None, offsets
        )
        if record != before.log.get(GroupMetadataKey(group_id)):
            created = before.log.get(GroupMetadataKey(group_id)) is None and record is not None
            if created and record.generation_id == 0 and not record.members:  # type: ignore[union-attr]
                pass  # the record of a group just created (no member yet)
            elif _snapshot(replayed) != _snapshot(memory):
                problems.append(
                    f"group {group_id!r}: replaying the log gives {_snapshot(replayed)}, "
                    f"memory holds {_snapshot(memory)}"
                )
        in_memory = memory.offsets if memory is not None else ()
        if offsets != _offsets_of(before, group_id) and offsets != in_memory:
            problems.append(
                f"group {group_id!r}: replaying the log gives offsets {offsets}, memory holds "
                f"{in_memory}"
            )
    return problems


def _groups_written(before: CoordinatorState, after: CoordinatorState) -> list[str]:
    """The groups some record of which the step wrote."""
    if before.log == after.log:
        return []
    old, new = set(before.log.entries), set(after.log.entries)
    return sorted({key.group_id for key, _ in old ^ new})


def _offsets_of(state: CoordinatorState, group_id: str) -> tuple[object, ...]:
    return tuple(
        sorted(
            (TopicPartition(key.topic, key.partition), value)
            for key, value in state.log.entries
            if isinstance(key, OffsetCommitKey)
            and key.group_id == group_id
            and isinstance(value, OffsetCommitValue)
        )
    )


def _snapshot(group: Group | None) -> tuple[object, ...] | None:
    """What a group record holds of a group: None for a group without a record's worth (absent,
    or Empty at generation 0 with nothing to say)."""
    if group is None:
        return None
    members = tuple((m.member_id, m.group_instance_id, m.assignment) for m in group.members)
    snapshot = (
        group.generation_id,
        group.protocol_name if members else None,
        group.leader_id if members else None,
        members,
    )
    return None if snapshot == (0, None, None, ()) else snapshot


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "TypeOK",
        "Well-formed groups: unique canonical member ids, leader ⇔ members and leader ∈ members, pending ∩ members = ∅, one protocol type.",
        _per_group(_type_ok),
    ),
    Invariant(
        "DeadGroupsLeaveMemory",
        "A group that goes Dead is removed from the coordinator in the same step.",
        _per_group(_dead_groups_leave_memory),
    ),
    Invariant(
        "ValidStableGroup",
        "Stable ⇒ members, leader ∈ members, a protocol, generation > 0, nothing parked.",
        _per_group(_valid_stable_group),
    ),
    Invariant(
        "EmptyMeansNoMembers",
        "Empty ⇒ no members and no protocol; Completing/Stable ⇒ members; Preparing without members only while the join timer runs.",
        _per_group(_empty_means_no_members),
    ),
    Invariant(
        "InstanceMapConsistent",
        "At most one member per group.instance.id.",
        _per_group(_instance_map_consistent),
    ),
    Invariant(
        "ParkedRequestsMatchState",
        "Parked joins only in PreparingRebalance; parked syncs only in CompletingRebalance.",
        _per_group(_parked_requests_match_state),
    ),
    Invariant(
        "StableGroupDurable",
        "A Stable group is as its group record in __consumer_offsets holds it: generation, protocol, leader, members with their instance ids and assignments.",
        _stable_group_durable,
    ),
    Invariant(
        "TimersArmed",
        "Join timer ⇔ PreparingRebalance (an initial delay counted from the rebalance's start); a sync timer only while a generation awaits its assignment or its followers' syncs (for that generation, ending a rebalance timeout after it formed); every member not parked has a session timer.",
        _per_group(_timers_armed),
    ),
)


def _reachable_by_legal_moves(source: GroupState, target: GroupState) -> bool:
    """Whether a chain of legal transitions leads from `source` to `target` (one step may
    move a group several times, e.g. Completing -> Preparing -> Empty on the last eviction)."""
    frontier, seen = [source], {source}
    while frontier:
        state = frontier.pop()
        if state is target:
            return True
        for nxt in GroupState:
            if nxt not in seen and is_legal_transition(state, nxt):
                seen.add(nxt)
                frontier.append(nxt)
    return False


def _legal_transitions(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    problems = []
    for group in after.groups:
        old = before.group(group.group_id)
        # New groups start Empty (JoinGroup, simple commits); a replayed group starts Stable or Empty.
        origins = (
            (old.state,)
            if old is not None
            else (EMPTY, STABLE)
            if isinstance(event, FinishLoading)
            else (EMPTY,)
        )
        if not any(
            origin is group.state or _reachable_by_legal_moves(origin, group.state)
            for origin in origins
        ):
            problems.append(
                f"group {group.group_id!r}: {old.state.value if old else 'new'} -> {group.state.value}"
            )
    return problems


def _generation_monotonic(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    problems = []
    for group in after.groups:
        old = before.group(group.group_id)
        if old is not None and group.generation_id < old.generation_id:
            problems.append(
                f"group {group.group_id!r}: generation {old.generation_id} -> {group.generation_id}"
            )
        if old is not None and group.generation_id > old.generation_id + 1:
            problems.append(f"group {group.group_id!r}: generation jumped by more than one")
    return problems


def _commit_fencing(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    """An accepted group-managed commit comes from a current member at the current generation."""
    if not isinstance(event, Received) or not isinstance(event.request, OffsetCommitRequest):
        return []
    request = event.request
    accepted = any(
        isinstance(r.body, OffsetCommitResponse)  # type: ignore[attr-defined]
        and r.ref == event.ref  # type: ignore[attr-defined]
        and any(p.error_code is ErrorCode.NONE for p in r.body.partitions)  # type: ignore[attr-defined]
        for r in responses
    )
    if not accepted or request.generation_id < 0:
        return []
    group = before.group(request.group_id)
    if group is None:
        return [
            f"commit accepted for unknown group {request.group_id!r} at generation {request.generation_id}"
        ]
    problems = []
    member = group.member(request.member_id)
    if member is None:
        problems.append(f"commit accepted from non-member {request.member_id!r}")
    elif (
        request.group_instance_id is not None
        and member.group_instance_id != request.group_instance_id
    ):
        problems.append(f"commit accepted from fenced instance {request.group_instance_id!r}")
    if request.generation_id != group.generation_id:
        problems.append(
            f"commit accepted at generation {request.generation_id}, group is at {group.generation_id}"
        )
    if group.state not in (STABLE, PREPARING_REBALANCE):
        problems.append(f"commit accepted in {group.state.value}")
    return problems


def _session_expiry(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    """A session timer removes a member only if it went silent: a member whose JoinGroup or
    SyncGroup waits in the coordinator is alive and stays, unless it is new (a new member's
    timer is its join timeout)."""
    if not isinstance(event, HeartbeatExpired):
        return []
    group = before.group(event.group_id)
    # Read from the fields, not through Member.has_satisfied_heartbeat: a property that shared
    # the helper with the code it judges would share its mistakes.
    member = group.member(event.member_id) if group is not None else None
    if member is None or member.is_new:
        return []
    waiting = member.awaiting_join is not None or member.awaiting_sync is not None
    kept = after.group(event.group_id)
    if waiting and (kept is None or not kept.has_member(event.member_id)):
        return [
            f"group {event.group_id!r}: {event.member_id}'s session timer removed it while its "
            f"{'JoinGroup' if member.awaiting_join is not None else 'SyncGroup'} waited in the "
            "coordinator"
        ]
    return []


def _active_group_offsets_kept(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[str]:
    """The retention check expires no offset of a group that has members (KIP-211), save, in a
    Stable consumer group whose subscriptions the coordinator knows, those of topics none of
    its members subscribes to."""
    if not isinstance(event, OffsetRetentionCheck):
        return []
    problems = []
    for group in before.groups:
        if not group.members:
            continue
        kept = after.group(group.group_id)
        remaining = {partition for partition, _ in kept.offsets} if kept is not None else set()
        expired = [partition for partition, _ in group.offsets if partition not in remaining]
        may_expire = (
            group.state is STABLE
            and group.protocol_type == CONSUMER_PROTOCOL_TYPE
            and group.subscribed_topics is not None
        )
        for partition in expired:
            if may_expire and partition.topic not in (group.subscribed_topics or frozenset()):
                continue
            problems.append(
                f"group {group.group_id!r} ({group.state.value}, members "
                f"{', '.join(m.member_id for m in group.members)}): the offset of "
                f"{partition.topic}-{partition.partition} expired"
            )
    return problems


ACTION_PROPERTIES: tuple[ActionProperty, ...] = (
    ActionProperty(
        "LegalTransitions",
        "Every group-state change follows the table of reference §1 (each hop is also enforced by Group.transition_to); new groups start Empty, replayed ones Stable or Empty.",
        _legal_transitions,
    ),
    ActionProperty(
        "GenerationMonotonic",
        "A group's generation never decreases and grows by one at a time while it stays in memory.",
        _generation_monotonic,
    ),
    ActionProperty(
        "CommitFencing",
        "An accepted OffsetCommit with generation ≥ 0 comes from a current member at the current generation, in Stable or PreparingRebalance.",
        _commit_fencing,
    ),
    ActionProperty(
        "SessionExpiry",
        "A session timer removes a member only if it went silent: one whose JoinGroup or SyncGroup waits in the coordinator stays, unless it is new (its timer is then the new-member join timeout).",
        _session_expiry,
    ),
    ActionProperty(
        "ActiveGroupOffsetsKept",
        "The retention check expires no committed offset of a group with members, save, in a Stable consumer group, those of topics none of its members subscribes to (KIP-211, Kafka 2.1; the exception since Kafka 2.4).",
        _active_group_offsets_kept,
    ),
    ActionProperty(
        "LogReplay",
        "After a step whose write to __consumer_offsets completed, replaying the log gives the group as memory holds it: generation, protocol, leader, members with their instance ids and assignments, and the committed offsets.",
        _log_replay,
    ),
)


def check_state(state: CoordinatorState) -> list[tuple[str, str]]:
    """Every (invariant name, violation) in `state`."""
    return [(inv.name, problem) for inv in INVARIANTS for problem in inv.check(state)]


def check_step(
    before: CoordinatorState, event: object, after: CoordinatorState, responses: tuple[object, ...]
) -> list[tuple[str, str]]:
    """Every (action property name, violation) of one step."""
    return [
        (prop.name, problem)
        for prop in ACTION_PROPERTIES
        for problem in prop.check(before, event, after, responses)
    ]
