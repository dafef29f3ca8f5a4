"""Coordinator failover: losing an offsets partition, and rebuilding its groups from the log."""

from __future__ import annotations

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, DEAD, PREPARING_REBALANCE, STABLE
from groupspec.vocabulary.responses import JoinGroupResponse, SyncGroupResponse

from .errors import PartitionStateError
from .persistence import group_from_records
from .rebalance import prepare_rebalance
from .runtime import Runtime
from .state import Group

_NOT_COORDINATOR_SYNC = SyncGroupResponse(ErrorCode.NOT_COORDINATOR)


def _check_partition(rt: Runtime, partition: int) -> None:
    if not isinstance(partition, int) or isinstance(partition, bool):
        raise PartitionStateError(f"a partition is an integer, got {partition!r}")
    if not 0 <= partition < rt.num_partitions:
        raise PartitionStateError(f"partition {partition} is outside [0, {rt.num_partitions})")


def on_unload(rt: Runtime, partition: int) -> None:
    """The coordinator moves away: the partition's groups die, parked requests are told so."""
    _check_partition(rt, partition)
    if partition in rt.unowned:
        raise PartitionStateError(f"partition {partition} is not led by this broker")
    # rule: partition.unloaded
    for group in [g for g in rt.groups.values() if g.partition == partition]:
        group.transition_to(DEAD, rt.now)
        _answer_parked_with_not_coordinator(rt, group)
        del rt.groups[group.group_id]
    rt.unowned.add(partition)
    rt.loading.discard(partition)
    rt.partitions_changed()


def _answer_parked_with_not_coordinator(rt: Runtime, group: Group) -> None:
    """Parked joins if the group was rebalancing; parked syncs if Completing or Stable."""
    was = group.previous_state
    for member in group.members.values():
        if was is PREPARING_REBALANCE and member.awaiting_join is not None:
            # rule: partition.unloaded_parked_join_answered
            rt.respond(
                member.awaiting_join,
                JoinGroupResponse(ErrorCode.NOT_COORDINATOR, member_id=member.member_id),
            )
        if (was is COMPLETING_REBALANCE or was is STABLE) and member.awaiting_sync is not None:
            # rule: partition.unloaded_parked_sync_answered
            rt.respond(member.awaiting_sync, _NOT_COORDINATOR_SYNC)


def on_start_loading(rt: Runtime, partition: int) -> None:
    """This broker leads the partition again and starts replaying it."""
    _check_partition(rt, partition)
    if partition not in rt.unowned:
        raise PartitionStateError(f"partition {partition} is already led by this broker")
    # rule: partition.loading_started
    rt.unowned.discard(partition)
    rt.loading.add(partition)
    rt.partitions_changed()


def on_finish_loading(rt: Runtime, partition: int) -> None:
    """Replay finished: each group of the partition comes back Stable (members) or Empty."""
    _check_partition(rt, partition)
    if partition not in rt.loading:
        raise PartitionStateError(f"partition {partition} is not loading")
    # rule: partition.loaded
    limit = rt.config.group_max_size
    for group_id, entry in list(rt.log.groups_in(partition)):
        group = group_from_records(group_id, partition, entry)
        for member in group.members.values():
            rt.schedule_heartbeat(group, member)
        rt.groups[group_id] = group
        if group.state is STABLE and len(group.members) > limit:
            # rule: partition.loaded_group_over_max_size_rebalances
            prepare_rebalance(rt, group)
    rt.loading.discard(partition)
    rt.partitions_changed()
