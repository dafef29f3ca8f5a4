"""Coordinator failover: unloading an offsets partition and rebuilding it from the log (§1, §6)."""

from __future__ import annotations

from dataclasses import replace

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, DEAD, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.requests import TopicPartition
from groupspec.vocabulary.responses import JoinGroupResponse, SyncGroupResponse

from .events import EventNotEnabledError, FinishLoading, StartLoading, Unload
from .hashing import partition_for
from .log import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from .persistence import group_from_records
from .rebalance import prepare_rebalance
from .rules import (
    PARTITION_LOADED,
    PARTITION_LOADED_GROUP_OVER_MAX_SIZE_REBALANCES,
    PARTITION_LOADING_STARTED,
    PARTITION_UNLOADED,
    PARTITION_UNLOADED_PARKED_JOIN_ANSWERED,
    PARTITION_UNLOADED_PARKED_SYNC_ANSWERED,
)
from .state import CoordinatorState, Group
from .step import Step


def on_unload(step: Step, state: CoordinatorState, event: Unload) -> CoordinatorState:
    """The coordinator moves away: its groups die and parked requests get NOT_COORDINATOR."""
    if event.partition in state.unowned_partitions:
        raise EventNotEnabledError(f"partition {event.partition} is not led by this broker")
    step.fire(PARTITION_UNLOADED)
    num = step.config.offsets_topic_num_partitions
    for group in state.groups:
        if partition_for(group.group_id, num) != event.partition:
            continue
        dead = group.transition_to(DEAD, step.now_ms)
        _answer_parked_with_not_coordinator(step, dead)
        state = state.without_group(group.group_id)
    return replace(
        state,
        unowned_partitions=state.unowned_partitions | {event.partition},
        loading_partitions=state.loading_partitions - {event.partition},
    )


def _answer_parked_with_not_coordinator(step: Step, group: Group) -> None:
    """Parked joins if the group was rebalancing; parked syncs if it was Completing or Stable."""
    for member in group.members:
        if group.previous_state is PREPARING_REBALANCE and member.awaiting_join is not None:
            step.fire(PARTITION_UNLOADED_PARKED_JOIN_ANSWERED)
            step.respond(
                member.awaiting_join,
                JoinGroupResponse(ErrorCode.NOT_COORDINATOR, member_id=member.member_id),
            )
        if (
            group.previous_state in (COMPLETING_REBALANCE, STABLE)
            and member.awaiting_sync is not None
        ):
            step.fire(PARTITION_UNLOADED_PARKED_SYNC_ANSWERED)
            step.respond(member.awaiting_sync, SyncGroupResponse(ErrorCode.NOT_COORDINATOR))


def on_start_loading(step: Step, state: CoordinatorState, event: StartLoading) -> CoordinatorState:
    """This broker leads the partition again and starts replaying it."""
    if event.partition not in state.unowned_partitions:
        raise EventNotEnabledError(f"partition {event.partition} is already led by this broker")
    step.fire(PARTITION_LOADING_STARTED)
    return replace(
        state,
        unowned_partitions=state.unowned_partitions - {event.partition},
        loading_partitions=state.loading_partitions | {event.partition},
    )


def on_finish_loading(
    step: Step, state: CoordinatorState, event: FinishLoading
) -> CoordinatorState:
    """Replay finished: every group of the partition comes back Stable (with members) or Empty."""
    if event.partition not in state.loading_partitions:
        raise EventNotEnabledError(f"partition {event.partition} is not loading")
    step.fire(PARTITION_LOADED)
    metadata: dict[str, GroupMetadataValue] = {}
    offsets: dict[str, list[tuple[TopicPartition, OffsetCommitValue]]] = {}
    num = step.config.offsets_topic_num_partitions
    for key, value in state.log.records_of_partition(event.partition, num):
        if isinstance(key, GroupMetadataKey) and isinstance(value, GroupMetadataValue):
            metadata[key.group_id] = value
        elif isinstance(key, OffsetCommitKey) and isinstance(value, OffsetCommitValue):
            offsets.setdefault(key.group_id, []).append(
                (TopicPartition(key.topic, key.partition), value)
            )
    for group_id in sorted(set(metadata) | set(offsets)):
        group = group_from_records(
            group_id, metadata.get(group_id), tuple(sorted(offsets.get(group_id, [])))
        )
        for member in group.members:
            group = group.update_member(
                member.member_id, heartbeat_deadline_ms=step.now_ms + member.session_timeout_ms
            )
        if group.state is STABLE and len(group.members) > step.config.group_max_size:
            step.fire(PARTITION_LOADED_GROUP_OVER_MAX_SIZE_REBALANCES)
            group = prepare_rebalance(step, group)
        state = state.with_group(group)
    return replace(state, loading_partitions=state.loading_partitions - {event.partition})
