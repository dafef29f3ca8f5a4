"""What a version-2 vector records of the coordinator after each step: its armed timers and a
projection of each group, and how the specification and groupspec's impl expose them.

Responses alone let an implementation that never arms a timer pass: the vectors fire timers as
inputs. So each step also records the timers the specification has armed (without deadlines:
time is abstract in the vectors) and a projection of every group held in memory, limited to what
any classic-group coordinator must keep because the protocol shows it (docs/vectors.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from groupspec.spec.events import HeartbeatExpired, OffsetRetentionCheck, TimerEvent
from groupspec.spec.state import CoordinatorState
from groupspec.spec.timers import armed_timers


@dataclass(frozen=True)
class GroupProjection:
    """The part of a group's state every implementation must hold (docs/vectors.md says why
    each field is here). Member-id lists are sorted, so equal projections compare equal."""

    group_id: str
    state: str
    generation_id: int
    leader: str | None
    protocol_type: str | None
    protocol_name: str | None
    members: tuple[str, ...]
    pending_members: tuple[str, ...]
    pending_sync_members: tuple[str, ...]


def project_group(
    group: Any, member_ids: Iterable[str], pending_member_ids: Iterable[str]
) -> GroupProjection:
    """The projection of a group object with the spec's attribute names (spec and impl share
    them; members and pending members are passed in since the two store them differently)."""
    return GroupProjection(
        group.group_id,
        group.state.value,
        group.generation_id,
        group.leader_id,
        group.protocol_type,
        group.protocol_name,
        tuple(sorted(member_ids)),
        tuple(sorted(pending_member_ids)),
        tuple(sorted(group.pending_sync_members)),
    )


def spec_group_projection(state: CoordinatorState, group_id: str) -> GroupProjection | None:
    """The projection of group `group_id` in a specification state (None: not in memory)."""
    group = state.group(group_id)
    if group is None:
        return None
    return project_group(
        group, (m.member_id for m in group.members), (p.member_id for p in group.pending_members)
    )


def spec_group_projections(state: CoordinatorState) -> tuple[GroupProjection, ...]:
    """Every group the specification holds in memory, by group id."""
    return tuple(
        projection
        for group in state.groups
        if (projection := spec_group_projection(state, group.group_id)) is not None
    )


def spec_armed_timers(state: CoordinatorState) -> tuple[TimerEvent, ...]:
    """The compared timers the specification has armed, in a stable order (see
    `compared_timers`)."""
    return sorted_timers(compared_timers(event for _, event in armed_timers(state)))


def compared_timers(events: Iterable[TimerEvent]) -> frozenset[TimerEvent]:
    """The timers the vectors compare: every one but the offset-retention check, which the
    specification keeps armed in every state (it says nothing about a step)."""
    return frozenset(event for event in events if not isinstance(event, OffsetRetentionCheck))


def sorted_timers(events: Iterable[TimerEvent]) -> tuple[TimerEvent, ...]:
    """Timer events in the order the vector files list them: by kind, group, member."""
    return tuple(sorted(events, key=_timer_key))


def _timer_key(event: TimerEvent) -> tuple[str, str, str]:
    return (
        type(event).__name__,
        getattr(event, "group_id", ""),
        getattr(event, "member_id", ""),
    )


def rename_timer(event: TimerEvent, mapping: Mapping[str, str]) -> TimerEvent:
    """`event` with its member id (if any) replaced through `mapping` (unmapped ids kept)."""
    if isinstance(event, HeartbeatExpired):
        return HeartbeatExpired(event.group_id, mapping.get(event.member_id, event.member_id))
    return event


def rename_projection(projection: GroupProjection, mapping: Mapping[str, str]) -> GroupProjection:
    """`projection` with every member id replaced through `mapping` (unmapped ids kept)."""

    def ids(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(mapping.get(value, value) for value in values))

    leader = projection.leader
    return replace(
        projection,
        leader=mapping.get(leader, leader) if leader is not None else None,
        members=ids(projection.members),
        pending_members=ids(projection.pending_members),
        pending_sync_members=ids(projection.pending_sync_members),
    )


def projection_difference(expected: GroupProjection | None, actual: GroupProjection | None) -> str:
    """The fields in which two projections of one group differ, as `field: expected != actual`
    (empty when equal)."""
    if expected == actual:
        return ""
    if expected is None or actual is None:
        return f"group held in memory: {expected is not None} != {actual is not None}"
    return "; ".join(
        f"{name}: {getattr(expected, name)!r} != {getattr(actual, name)!r}"
        for name in GroupProjection.__dataclass_fields__
        if getattr(expected, name) != getattr(actual, name)
    )
