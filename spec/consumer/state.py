"""What the consumer remembers between steps: Kafka's MemberState, Generation, and the rest.

The state mirrors the fields of Kafka's AbstractCoordinator and ConsumerCoordinator that decide
what the client sends and how it reacts: the member state, the generation (id, member id,
protocol), whether a rejoin is needed, whether `onJoinPrepare` still has to run, the coordinator,
the owned partitions, leadership and the leader's metadata snapshot, and every request in flight
together with the generation it was sent with (the Java handlers' `sentGeneration`).
All of it is immutable with collections in canonical order, so equal states are equal values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from groupspec.vocabulary.requests import TopicPartition

from ..assignment import Cluster
from .outcome import ApplicationError

NO_GENERATION_ID = -1
UNKNOWN_MEMBER_ID = ""


class MemberState(Enum):
    """Kafka's AbstractCoordinator.MemberState."""

    UNJOINED = "Unjoined"  # not part of a group
    PREPARING_REBALANCE = "PreparingRebalance"  # JoinGroup sent, no response yet
    COMPLETING_REBALANCE = "CompletingRebalance"  # joined, waiting for the assignment
    STABLE = "Stable"  # synced and heartbeating

    @property
    def has_not_joined_group(self) -> bool:
        """Kafka's hasNotJoinedGroup: Unjoined or PreparingRebalance (no heartbeats)."""
        return self in (MemberState.UNJOINED, MemberState.PREPARING_REBALANCE)

    @property
    def rebalance_in_progress(self) -> bool:
        """Kafka's rebalanceInProgress: PreparingRebalance or CompletingRebalance."""
        return self in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)


class ConsumerPhase(Enum):
    """The consumer's situation as the issue names it, derived from the state (see `phase`)."""

    UNJOINED = "unjoined"
    JOINING = "joining"
    AWAITING_SYNC = "awaiting sync"
    STABLE = "stable"
    REJOIN_NEEDED = "rejoin needed"
    FATAL = "fatal"
    CLOSED = "closed"


@dataclass(frozen=True)
class Generation:
    """Kafka's AbstractCoordinator.Generation: generation id, member id and protocol name."""

    generation_id: int = NO_GENERATION_ID
    member_id: str = UNKNOWN_MEMBER_ID
    protocol_name: str | None = None

    @property
    def has_member_id(self) -> bool:
        """Whether the member holds an id (it may before it belongs to a generation)."""
        return self.member_id != UNKNOWN_MEMBER_ID

    @property
    def is_reset(self) -> bool:
        """Kafka's hasGenerationReset: no generation id and no protocol (member id may stay)."""
        return self.generation_id == NO_GENERATION_ID and self.protocol_name is None

    @property
    def lacks_generation_or_member_id(self) -> bool:
        """The condition under which onJoinPrepare and onLeavePrepare call owned partitions lost."""
        return self.generation_id == NO_GENERATION_ID or self.member_id == UNKNOWN_MEMBER_ID


NO_GENERATION = Generation()


class RequestKind(Enum):
    """The coordinator requests the consumer sends."""

    FIND_COORDINATOR = "FindCoordinator"
    JOIN_GROUP = "JoinGroup"
    SYNC_GROUP = "SyncGroup"
    HEARTBEAT = "Heartbeat"
    LEAVE_GROUP = "LeaveGroup"
    OFFSET_COMMIT = "OffsetCommit"


# The requests that make up Kafka's "join future": a JoinGroup and the SyncGroup it chains into.
JOIN_FUTURE_KINDS = (RequestKind.JOIN_GROUP, RequestKind.SYNC_GROUP)


@dataclass(frozen=True)
class InFlight:
    """A request awaiting its response, with what its handler needs to judge the answer."""

    correlation_id: int
    kind: RequestKind
    sent_generation: Generation
    # For an OffsetCommit, the partitions it commits (by topic, then partition).
    offsets: tuple[tuple[TopicPartition, int], ...] = ()


@dataclass(frozen=True)
class ConsumerState:
    """Everything the consumer's coordinator logic remembers."""

    subscription: tuple[str, ...]
    cluster: Cluster = field(default_factory=lambda: Cluster(()))
    member_state: MemberState = MemberState.UNJOINED
    generation: Generation = NO_GENERATION
    coordinator: int | None = None
    rejoin_needed: bool = True
    needs_join_prepare: bool = True
    # The topics the last JoinGroup subscribed to (Kafka's joinedSubscription).
    joined_subscription: tuple[str, ...] | None = None
    owned: tuple[TopicPartition, ...] = ()
    is_leader: bool = False
    # Partition counts of the group's topics when this member last assigned (leader only).
    assignment_snapshot: tuple[tuple[str, int | None], ...] | None = None
    in_flight: tuple[InFlight, ...] = ()
    next_correlation_id: int = 1
    failure: ApplicationError | None = None
    closed: bool = False

    def request(self, correlation_id: int) -> InFlight | None:
        """The in-flight request with this correlation id, or None."""
        for entry in self.in_flight:
            if entry.correlation_id == correlation_id:
                return entry
        return None

    def in_flight_of(self, *kinds: RequestKind) -> tuple[InFlight, ...]:
        """The in-flight requests of the given kinds."""
        return tuple(entry for entry in self.in_flight if entry.kind in kinds)

    @property
    def join_future_pending(self) -> bool:
        """Kafka's joinFuture != null: a JoinGroup or its SyncGroup is still in flight."""
        return bool(self.in_flight_of(*JOIN_FUTURE_KINDS))

    @property
    def coordinator_known(self) -> bool:
        """Whether the client knows (and is connected to) the group coordinator."""
        return self.coordinator is not None

    @property
    def heartbeat_thread_active(self) -> bool:
        """The heartbeat thread runs only once the member joined (CompletingRebalance/Stable)."""
        return (
            not self.closed and self.failure is None and not self.member_state.has_not_joined_group
        )

    def without_request(self, correlation_id: int) -> ConsumerState:
        """The state with that request no longer in flight."""
        remaining = tuple(e for e in self.in_flight if e.correlation_id != correlation_id)
        return replace(self, in_flight=remaining)


def metadata_snapshot(
    cluster: Cluster, topics: tuple[str, ...]
) -> tuple[tuple[str, int | None], ...]:
    """Kafka's MetadataSnapshot: the partition count of each topic (None when unknown)."""
    return tuple((topic, cluster.partition_count(topic)) for topic in sorted(set(topics)))


def needs_rejoin(state: ConsumerState) -> bool:
    """Kafka's rejoinNeededOrPending, including ConsumerCoordinator's two extra reasons.

    The leader rejoins when the partition counts it assigned from changed; every member rejoins
    when its subscription changed since its last JoinGroup.
    """
    snapshot = state.assignment_snapshot
    if (
        snapshot is not None
        and metadata_snapshot(state.cluster, tuple(t for t, _ in snapshot)) != snapshot
    ):
        return True
    if state.joined_subscription is not None and state.joined_subscription != state.subscription:
        return True
    return state.rejoin_needed or state.join_future_pending


def phase(state: ConsumerState) -> ConsumerPhase:
    """The consumer's phase: which of the issue's named states it is in."""
    if state.closed:
        return ConsumerPhase.CLOSED
    if state.failure is not None:
        return ConsumerPhase.FATAL
    if state.member_state is MemberState.PREPARING_REBALANCE:
        return ConsumerPhase.JOINING
    if state.member_state is MemberState.COMPLETING_REBALANCE:
        # A SyncGroup that failed leaves Kafka's member in CompletingRebalance until it rejoins.
        if state.join_future_pending:
            return ConsumerPhase.AWAITING_SYNC
        return ConsumerPhase.REJOIN_NEEDED
    if state.member_state is MemberState.STABLE:
        return ConsumerPhase.REJOIN_NEEDED if needs_rejoin(state) else ConsumerPhase.STABLE
    return ConsumerPhase.UNJOINED
