"""Durability and failover of consumer-protocol groups (docs/protocol.md §12.16): every step's
records appended to the log, the coordinator losing its memory when its `__consumer_offsets`
partition moves away, and the groups rebuilt from the log when it comes back.

Kafka: `GroupMetadataManager.onLoaded` and `onUnloaded`, and the coordinator runtime
(`CoordinatorRuntime`), which answers NOT_COORDINATOR for a partition it does not lead and
COORDINATOR_LOAD_IN_PROGRESS while it replays one.
"""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.consumer_groups import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
    DescribedConsumerGroup,
)
from groupspec.vocabulary.errors import ErrorCode

from ..events import EventNotEnabledError
from .events import CoordinatorLoaded, CoordinatorLoadStarted, CoordinatorUnloaded, RequestArrived
from .records import Record, RegexKey, appended, records_between
from .replay import replay
from .rules import (
    CG_FAILOVER_LOAD_IN_PROGRESS,
    CG_FAILOVER_LOAD_STARTED,
    CG_FAILOVER_LOADED,
    CG_FAILOVER_NOT_COORDINATOR,
    CG_FAILOVER_UNLOADED,
    CG_HEARTBEAT_SESSION_TIMEOUT_ARMED,
    CG_RECONCILE_REBALANCE_TIMEOUT_ARMED,
    CG_RECORD_CURRENT_ASSIGNMENT,
    CG_RECORD_GROUP_EPOCH,
    CG_RECORD_GROUP_TOMBSTONES,
    CG_RECORD_MEMBER_METADATA,
    CG_RECORD_MEMBER_TOMBSTONES,
    CG_RECORD_REGEX,
    CG_RECORD_TARGET_EPOCH,
    CG_RECORD_TARGET_MEMBER,
)
from .state import ConsumerGroupsState, CoordinatorPhase, MemberState
from .step import Step

_KIND_RULES = {
    "MemberMetadataKey": CG_RECORD_MEMBER_METADATA,
    "GroupMetadataKey": CG_RECORD_GROUP_EPOCH,
    "TargetAssignmentMemberKey": CG_RECORD_TARGET_MEMBER,
    "TargetAssignmentMetadataKey": CG_RECORD_TARGET_EPOCH,
    "CurrentAssignmentKey": CG_RECORD_CURRENT_ASSIGNMENT,
    "RegexKey": CG_RECORD_REGEX,
}


def written_records(
    step: Step, before: ConsumerGroupsState, after: ConsumerGroupsState
) -> tuple[Record, ...]:
    """The records a step from `before` to `after` writes, every group's in group-id order,
    firing a rule per kind written."""
    ids = sorted(
        {g.group_id for g in before.iter_groups()} | {g.group_id for g in after.iter_groups()}
    )
    written: list[Record] = []
    for gid in ids:
        old, new = before.group(gid), after.group(gid)
        records = records_between(step.config, old, new)
        if new is None and records:
            step.fire(CG_RECORD_GROUP_TOMBSTONES)
        else:
            fired = set()
            for record in records:
                # A resolution's tombstone is a regular-expression record like its value.
                rule = (
                    CG_RECORD_MEMBER_TOMBSTONES
                    if record.value is None and not isinstance(record.key, RegexKey)
                    else _KIND_RULES[type(record.key).__name__]
                )
                if rule not in fired:
                    fired.add(rule)
                    step.fire(rule)
        written += records
    return tuple(written)


def with_records(
    step: Step, before: ConsumerGroupsState, after: ConsumerGroupsState
) -> ConsumerGroupsState:
    """`after` with the step's records appended to its log, cleaned as the configuration's
    `log_cleaning` says."""
    if after.groups_by_id == before.groups_by_id:
        return after
    written = written_records(step, before, after)
    if not written:
        return after
    return replace(after, log=appended(step.config, after.log, written))


def refuse_while_not_active(
    step: Step, state: ConsumerGroupsState, event: RequestArrived
) -> ConsumerGroupsState:
    """A request to a coordinator that does not serve the partition now: NOT_COORDINATOR, or
    COORDINATOR_LOAD_IN_PROGRESS while it loads; nothing changes."""
    if state.phase is CoordinatorPhase.LOADING:
        step.fire(CG_FAILOVER_LOAD_IN_PROGRESS)
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    else:
        step.fire(CG_FAILOVER_NOT_COORDINATOR)
        error = ErrorCode.NOT_COORDINATOR
    request = event.request
    if isinstance(request, ConsumerGroupDescribeRequest):
        entries = tuple(DescribedConsumerGroup(error, gid) for gid in request.group_ids)
        step.respond(event.ref, ConsumerGroupDescribeResponse(entries))
    else:
        step.respond(event.ref, ConsumerGroupHeartbeatResponse(error))
    return state


def on_unloaded(
    step: Step, state: ConsumerGroupsState, event: CoordinatorUnloaded
) -> ConsumerGroupsState:
    """The partition moved away: the groups and their timers leave memory, the log stays."""
    if state.phase is not CoordinatorPhase.ACTIVE:
        raise EventNotEnabledError(f"{event}: the coordinator does not serve the partition")
    step.fire(CG_FAILOVER_UNLOADED)
    return replace(state, groups_by_id=(), phase=CoordinatorPhase.UNLOADED)


def on_load_started(
    step: Step, state: ConsumerGroupsState, event: CoordinatorLoadStarted
) -> ConsumerGroupsState:
    """The partition is led here again; replay begins."""
    if state.phase is not CoordinatorPhase.UNLOADED:
        raise EventNotEnabledError(f"{event}: the partition is not unloaded")
    step.fire(CG_FAILOVER_LOAD_STARTED)
    return replace(state, phase=CoordinatorPhase.LOADING)


def on_loaded(
    step: Step, state: ConsumerGroupsState, event: CoordinatorLoaded
) -> ConsumerGroupsState:
    """Replay finished: the groups the log rebuilds, with every member's session timeout armed
    and the rebalance timeout of each member in UnrevokedPartitions (onLoaded)."""
    if state.phase is not CoordinatorPhase.LOADING:
        raise EventNotEnabledError(f"{event}: no load in progress")
    step.fire(CG_FAILOVER_LOADED)
    rebuilt = replay(state.log)
    for rule in rebuilt.rules:
        step.fire(rule)
    loaded = replace(state, groups_by_id=(), phase=CoordinatorPhase.ACTIVE)
    for group in rebuilt.groups:
        for member in group.iter_members():
            step.fire(CG_HEARTBEAT_SESSION_TIMEOUT_ARMED)
            deadline = step.now_ms + step.config.session_timeout_ms
            group = group.with_session_deadline(member.member_id, deadline)
            if member.state is MemberState.UNREVOKED_PARTITIONS:
                step.fire(CG_RECONCILE_REBALANCE_TIMEOUT_ARMED)
                deadline = step.now_ms + member.rebalance_timeout_ms
                group = group.with_rebalance_deadline(
                    member.member_id, member.member_epoch, deadline
                )
        loaded = loaded.with_group(group)
    return loaded


def as_served(state: ConsumerGroupsState) -> ConsumerGroupsState:
    """The groups as the coordinator serves them: those in memory when it is active, else those
    its log rebuilds (a failover moves them out of memory, not out of the group's history; the
    abstract group of docs/refinement.md sees it as no step)."""
    if state.phase is CoordinatorPhase.ACTIVE:
        return state
    groups = replay(state.log).groups
    return replace(state, groups_by_id=tuple((g.group_id, g) for g in groups))
