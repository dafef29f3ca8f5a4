"""Named invariants over consumer state, and action properties over single consumer steps.

Each returns the list of violations it found (empty when it holds). Names are used in code,
output and docs, like the coordinator's in spec/invariants.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.requests import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import OffsetCommitResponse

from ..assignment import sorted_partitions
from ..invariants import Invariant
from .config import ConsumerConfig
from .events import Close, ResponseReceived
from .outcome import ConsumerOutcome, PartitionsAssigned, PartitionsLost, PartitionsRevoked
from .state import NO_GENERATION_ID, ConsumerState, MemberState, RequestKind


@dataclass(frozen=True)
class ConsumerActionProperty:
    """A named property of every consumer step: (config, state before, event, outcome)."""

    name: str
    description: str
    check: Callable[[ConsumerConfig, ConsumerState, object, ConsumerOutcome], list[str]]


def _type_ok(state: ConsumerState) -> list[str]:
    problems = []
    ids = [entry.correlation_id for entry in state.in_flight]
    if ids != sorted(set(ids)):
        problems.append(f"in-flight correlation ids not unique and ordered: {ids}")
    if ids and max(ids) >= state.next_correlation_id:
        problems.append(
            f"correlation id {max(ids)} not below the counter {state.next_correlation_id}"
        )
    if state.owned != sorted_partitions(state.owned):
        problems.append("owned partitions not unique and sorted")
    if not state.subscription or list(state.subscription) != sorted(set(state.subscription)):
        problems.append(f"subscription {state.subscription} not non-empty, unique and sorted")
    return problems


def _one_request_per_kind(state: ConsumerState) -> list[str]:
    problems = []
    if len(state.in_flight_of(RequestKind.JOIN_GROUP, RequestKind.SYNC_GROUP)) > 1:
        problems.append("more than one JoinGroup/SyncGroup in flight")
    for kind in (RequestKind.HEARTBEAT, RequestKind.FIND_COORDINATOR):
        if len(state.in_flight_of(kind)) > 1:
            problems.append(f"more than one {kind.value} in flight")
    return problems


def _joined_has_generation(state: ConsumerState) -> list[str]:
    if state.member_state not in (MemberState.COMPLETING_REBALANCE, MemberState.STABLE):
        return []
    generation = state.generation
    if generation.generation_id < 0 or not generation.has_member_id:
        return [f"{state.member_state.value} without a generation: {generation}"]
    return []


def _join_without_generation_owns_nothing(state: ConsumerState) -> list[str]:
    for entry in state.in_flight_of(RequestKind.JOIN_GROUP):
        if entry.sent_generation.generation_id == NO_GENERATION_ID and state.owned:
            return [f"JoinGroup without a generation in flight while owning {list(state.owned)}"]
    return []


CONSUMER_INVARIANTS: tuple[Invariant[ConsumerState], ...] = (
    Invariant(
        "ConsumerTypeOK",
        "Correlation ids are unique, ordered and below the counter; owned partitions and the subscription are canonical.",
        _type_ok,
    ),
    Invariant(
        "ConsumerOneRequestPerKind",
        "At most one join future (JoinGroup or SyncGroup), one Heartbeat and one FindCoordinator in flight.",
        _one_request_per_kind,
    ),
    Invariant(
        "ConsumerJoinedHasGeneration",
        "In CompletingRebalance and Stable the member holds a generation id and a member id.",
        _joined_has_generation,
    ),
    Invariant(
        "ConsumerResetOwnsNothing",
        "A member joining without a generation (new, or after a reset) owns no partitions: they were lost first.",
        _join_without_generation_owns_nothing,
    ),
)


def _generation_monotonic(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config, event
    old, new = before.generation.generation_id, outcome.state.generation.generation_id
    if new < old and new != NO_GENERATION_ID:
        return [f"generation went from {old} to {new} without a reset"]
    return []


def _requests_well_placed(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del event
    problems = []
    for send in outcome.sends:
        request = send.request
        if not isinstance(request, FindCoordinatorRequest) and not before.coordinator_known:
            problems.append(f"{type(request).__name__} sent with no coordinator known")
        if isinstance(request, OffsetCommitRequest) and (
            before.member_state is not MemberState.STABLE
            or request.generation_id != before.generation.generation_id
        ):
            problems.append(
                f"OffsetCommit at generation {request.generation_id} sent in "
                f"{before.member_state.value} at generation {before.generation.generation_id}"
            )
        if isinstance(request, HeartbeatRequest) and before.member_state.has_not_joined_group:
            problems.append(f"Heartbeat sent in {before.member_state.value}")
        if isinstance(request, LeaveGroupRequest) and config.is_static:
            problems.append("a static member sent LeaveGroup")
    return problems


def _fatal_is_absorbing(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config
    if before.failure is None:
        return []
    problems = []
    if outcome.state.failure != before.failure:
        problems.append(f"failure {before.failure} replaced by {outcome.state.failure}")
    for send in outcome.sends:
        if not (isinstance(event, Close) and isinstance(send.request, LeaveGroupRequest)):
            problems.append(f"failed consumer sent {type(send.request).__name__}")
    return problems


def _closed_is_final(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config, event
    if not before.closed:
        return []
    after = outcome.state
    problems = []
    if not after.closed:
        problems.append("a closed consumer opened again")
    problems += [f"closed consumer sent {type(send.request).__name__}" for send in outcome.sends]
    problems += [f"closed consumer called {type(c).__name__}" for c in outcome.callbacks]
    if after.generation != before.generation or after.member_state != before.member_state:
        problems.append(
            f"closed consumer went from {before.member_state.value} at {before.generation} to "
            f"{after.member_state.value} at {after.generation}"
        )
    if after.owned != before.owned:
        problems.append(f"closed consumer's partitions changed to {list(after.owned)}")
    return problems


def _ownership_changes_announced(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config, event
    owned = set(before.owned)
    for callback in outcome.callbacks:
        if isinstance(callback, (PartitionsRevoked, PartitionsLost)):
            if not set(callback.partitions) <= owned:
                return [f"{type(callback).__name__} names partitions not owned: {callback}"]
            owned -= set(callback.partitions)
        elif isinstance(callback, PartitionsAssigned):
            if set(callback.partitions) & owned:
                return [f"onPartitionsAssigned repeats owned partitions: {callback}"]
            owned |= set(callback.partitions)
    if owned != set(outcome.state.owned):
        return [
            f"owned changed from {list(before.owned)} to {list(outcome.state.owned)} "
            f"with callbacks {list(outcome.callbacks)}"
        ]
    return []


def _lost_only_when_membership_is_gone(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config
    if not any(isinstance(c, PartitionsLost) for c in outcome.callbacks):
        return []
    if before.generation.lacks_generation_or_member_id:
        return []
    if isinstance(event, Close) and before.member_state.rebalance_in_progress:
        return []
    return [f"partitions lost with generation {before.generation} in {before.member_state.value}"]


def _commit_answer_reported(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[str]:
    del config
    if not isinstance(event, ResponseReceived) or not isinstance(event.body, OffsetCommitResponse):
        return []
    sent = before.request(event.correlation_id)
    if sent is None or sent.kind is not RequestKind.OFFSET_COMMIT:
        return []
    if before.closed or before.failure is not None:
        return []  # a consumer that has ended drops late answers (ConsumerClosedIsFinal)
    answered = sorted_partitions(
        tuple(TopicPartition(p.topic, p.partition) for p in event.body.partitions)
    )
    refused = [p for p in event.body.partitions if p.error_code != ErrorCode.NONE]
    if not refused:
        problems = []
        if outcome.committed != answered:
            problems.append(
                f"an accepted commit of {list(answered)} confirmed {list(outcome.committed)}"
            )
        if outcome.errors:
            problems.append(f"an accepted commit raised {list(outcome.errors)}")
        return problems
    problems = []
    if outcome.committed:
        problems.append(f"a refused commit confirmed {list(outcome.committed)}")
    if not outcome.errors:
        problems.append(
            f"a commit refused with {refused[0].error_code.name} raised nothing to the application"
        )
    return problems


CONSUMER_ACTION_PROPERTIES: tuple[ConsumerActionProperty, ...] = (
    ConsumerActionProperty(
        "ConsumerGenerationMonotonic",
        "The member's generation never decreases, except when reset to -1 (a documented reset).",
        _generation_monotonic,
    ),
    ConsumerActionProperty(
        "ConsumerRequestsWellPlaced",
        "Group requests go only to a known coordinator; commits only from Stable with the current generation; heartbeats only once joined; static members never leave.",
        _requests_well_placed,
    ),
    ConsumerActionProperty(
        "ConsumerFatalIsAbsorbing",
        "Once failed fatally, the consumer stays failed and sends nothing but close()'s LeaveGroup.",
        _fatal_is_absorbing,
    ),
    ConsumerActionProperty(
        "ConsumerClosedIsFinal",
        "Once closed, the consumer stays closed: it sends nothing, calls no callback, and keeps its generation, member state and partitions (late answers are dropped).",
        _closed_is_final,
    ),
    ConsumerActionProperty(
        "ConsumerOwnershipAnnounced",
        "Owned partitions change only as the callbacks announce: revoked/lost ones were owned, assigned ones were not.",
        _ownership_changes_announced,
    ),
    ConsumerActionProperty(
        "ConsumerCommitAnswerReported",
        "An OffsetCommit answer reaches the application as it is: accepted for every partition, the step confirms exactly those partitions and raises nothing; refused for any, it confirms none and raises an error.",
        _commit_answer_reported,
    ),
    ConsumerActionProperty(
        "ConsumerLostOnlyWithoutMembership",
        "onPartitionsLost is called only when the generation or member id is gone, or on close mid-rebalance.",
        _lost_only_when_membership_is_gone,
    ),
)


def check_consumer_state(state: ConsumerState) -> list[tuple[str, str]]:
    """Every (invariant name, violation) in a consumer state."""
    return [(inv.name, problem) for inv in CONSUMER_INVARIANTS for problem in inv.check(state)]


def check_consumer_step(
    config: ConsumerConfig, before: ConsumerState, event: object, outcome: ConsumerOutcome
) -> list[tuple[str, str]]:
    """Every (action property name, violation) of one consumer step."""
    return [
        (prop.name, problem)
        for prop in CONSUMER_ACTION_PROPERTIES
        for problem in prop.check(config, before, event, outcome)
    ]
