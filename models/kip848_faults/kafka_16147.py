"""KAFKA-16147: a partition assigned to two members at the same time.

Kafka keeps, per partition, the epoch of the member that owns it (`currentPartitionEpoch`); a
partition without one is free for the next member that reconciles. Before apache/kafka#15212
(January 2024, Kafka 3.7's preview), updating a member removed the partition epochs of its old
pending revocations after adding those of its new assignment: when a member that was revoking a
partition got it back in its next target, the epoch just added was removed again. The partition
looked free while the member still held it, and the next member whose target named it was given
it too.

The spec derives ownership from the members (it has no partition-epoch map to corrupt), so this
fault remembers the partitions whose epoch the buggy coordinator lost and hides them from the
other members' steps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from groupspec.spec.kip848 import ConsumerGroupCoordinatorSpec, ConsumerGroupsState
from groupspec.spec.kip848.events import ConsumerGroupInput, RequestArrived
from groupspec.spec.kip848.state import ConsumerGroup
from groupspec.spec.kip848.step import Outcome
from groupspec.vocabulary.consumer_groups import ConsumerGroupHeartbeatRequest
from groupspec.vocabulary.requests import TopicPartition

from .switch import Bug, Kip848Fault

NAME = "KAFKA-16147"
# (group id, member id, partition): a partition the member holds whose epoch was lost.
Lost = tuple[str, str, TopicPartition]


@dataclass(frozen=True)
class EpochsLostState(ConsumerGroupsState):
    """The coordinator's groups and the partitions whose partition epoch it lost."""

    epochless: frozenset[Lost] = frozenset()


class PartitionEpochLost(Kip848Fault):
    """A partition a revoking member takes back loses its partition epoch."""

    name = NAME
    summary = "a partition a member takes back from its pending revocation loses its epoch"
    bug = Bug(
        NAME,
        "KAFKA-16147 (apache/kafka#15212)",
        "a member given back a partition it was revoking keeps it, but the coordinator lost its "
        "partition epoch and assigns it to another member as well",
        NAME,
        "Refinement",
        "kip848-2",
        {"leaves": "1", "check_convergence": "false"},
        22,
    )

    def initial_state(self, correct: ConsumerGroupCoordinatorSpec) -> ConsumerGroupsState:
        """No group, no lost epoch."""
        return EpochsLostState()

    def step(
        self,
        correct: ConsumerGroupCoordinatorSpec,
        state: ConsumerGroupsState,
        event: ConsumerGroupInput,
        now_ms: int,
    ) -> tuple[Outcome, ...]:
        """The correct step, in which the other members see the lost partitions as free; then
        the partitions this step takes back from a pending revocation lose their epochs."""
        assert isinstance(state, EpochsLostState)
        stepping = _member_of(event)
        hidden = {lost for lost in state.epochless if lost[1] != stepping}
        view = _without(state, hidden)
        outcomes = []
        for outcome in correct.step(view, event, now_ms):
            after = _with(outcome.state, hidden, view)
            still = {lost for lost in state.epochless if _holds(after, lost)}
            after = replace(after, epochless=frozenset(still | _taken_back(state, after)))
            outcomes.append(replace(outcome, state=after))
        return tuple(dict.fromkeys(outcomes))


def _member_of(event: ConsumerGroupInput) -> str | None:
    if isinstance(event, RequestArrived) and isinstance(
        event.request, ConsumerGroupHeartbeatRequest
    ):
        return event.request.member_id
    return None


def _holds(state: ConsumerGroupsState, lost: Lost) -> bool:
    group = state.group(lost[0])
    member = None if group is None else group.member(lost[1])
    return member is not None and lost[2] in member.assigned


def _taken_back(before: ConsumerGroupsState, after: ConsumerGroupsState) -> set[Lost]:
    found = set()
    for group in after.iter_groups():
        was = before.group(group.group_id)
        for member in group.iter_members():
            old = None if was is None else was.member(member.member_id)
            if old is None:
                continue
            for partition in (member.assigned - old.assigned) & old.pending_revocation:
                found.add((group.group_id, member.member_id, partition))
    return found


def _without(state: ConsumerGroupsState, hidden: set[Lost]) -> EpochsLostState:
    """The state with each hidden partition taken out of its holder's assignment."""
    for group_id, member_id, partition in hidden:
        group = state.group(group_id)
        member = None if group is None else group.member(member_id)
        if group is None or member is None:
            continue
        shown = replace(member, assigned=member.assigned - {partition})
        state = state.with_group(group.with_member(shown))
    return _epochs_lost(state)


def _with(
    state: ConsumerGroupsState, hidden: set[Lost], view: ConsumerGroupsState
) -> EpochsLostState:
    """The outcome's state with the hidden partitions back with their holders, for each holder
    the step left as the view had it."""
    by_holder: dict[tuple[str, str], set[TopicPartition]] = {}
    for group_id, member_id, partition in hidden:
        by_holder.setdefault((group_id, member_id), set()).add(partition)
    for (group_id, member_id), partitions in sorted(by_holder.items()):
        group = state.group(group_id)
        shown_group = view.group(group_id)
        member = None if group is None else group.member(member_id)
        if group is None or member is None or shown_group is None:
            continue
        if member != shown_group.member(member_id):
            continue
        restored: ConsumerGroup = group.with_member(
            replace(member, assigned=member.assigned | partitions)
        )
        state = state.with_group(restored)
    return _epochs_lost(state)


def _epochs_lost(state: ConsumerGroupsState) -> EpochsLostState:
    # The spec's steps store groups with dataclasses.replace, which keeps the subclass.
    assert isinstance(state, EpochsLostState)
    return state


FAULT = PartitionEpochLost()
