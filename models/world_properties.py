"""The properties a group world is checked against (names from properties-and-bugs.md).

A group world's properties come from three registries, each declaring every property once with
its name, description and check: the coordinator's (`INVARIANTS` and `ACTION_PROPERTIES` of
spec/invariants.py), the consumer's (spec/consumer/invariants.py), and the world's own,
`WORLD_PROPERTIES` at the end of this module, which relate the clients to the coordinator.
models/world_slots.py turns the three into the checker's declarations (checker/model.py): which
slots each part reads, so the engine judges it once per combination of those components.

A world invariant is a `WorldInvariant` of `WorldPart`s, each reading named components (the
coordinator, each client, every client, the acknowledged offsets, the whole state). A world
action property needs what a step produced (the coordinator's responses, the leader's
assignment), which the successor state does not keep: the world judges it while it computes a
coordinator step (`on_coordinator_step`) or a leader's SyncGroup (`on_leader_assignment`), and
the step reports what it found. Convergence is the world's liveness property.

World properties:

- ExclusiveOwnershipAmongCurrentMembers (catalog 2): no partition is owned by two clients that
  both belong to the coordinator's current generation (member id in the group, same generation).
- ExclusiveOwnershipCountingZombies (catalog 3, the naive property): no partition is owned by two
  clients at all. The classic protocol does not have it (a fenced client keeps believing it owns
  its partitions until it learns otherwise); it is off by default and expected to fail.
- ExclusiveConsumption: no partition is owned by two clients that are both members of the group,
  whatever generation each last joined (a member that has not yet learned of a rebalance keeps
  consuming). Stronger than the above, in eager and cooperative mode alike; only a zombie may
  still believe it owns a partition someone else owns: a fenced or evicted client (no longer a
  member), or a static member that stalled past a rebalance (KIP-345 keeps it a member of an
  older generation until it rejoins).
- NoConsumerInternalError: no consumer fails with an error Kafka's consumer raises only when
  its own assumptions break (IllegalStateException: an assignor broke the cooperative rules, a
  generation runs a protocol no assignor of the member has; SchemaException: an undecodable
  subscription or assignment), unless the world lets foreign answers in (`foreign_answers`).
- AssignmentAgreement: a client that is a synced member (Kafka's MemberState.STABLE, no rejoin
  pending) of the current generation of a Stable group owns exactly the partitions the coordinator stored for
  it, and that assignment decodes. Convergence's goal includes it, so a consumer that hoards
  partitions it was not assigned neither passes as safe nor as converged.
- NoZombieCommit (catalog 4): an OffsetCommit the coordinator accepts with generation >= 0 comes
  from a member of the current generation, and no accepted partition is one the coordinator
  assigns to another member. Kafka accepts a member's commit of any partition, and a commit from
  onPartitionsRevoked names partitions no longer in the member's assignment: the cooperative
  leader withholds those from everyone until they are revoked, so such a commit is allowed.
- LegalAssignment (catalog 5): the leader's assignment gives every member only partitions of
  topics it subscribes to that exist in the leader's metadata, no partition twice, and (for
  complete assignors) every subscribed partition; cooperative-sticky may withhold a partition
  some member still claims. In every Stable group the installed assignments are disjoint.
- CooperativeRevokeBeforeAssign (catalog 6, KIP-429): with the COOPERATIVE protocol the leader
  never assigns a partition to one member while another member's subscription claims to own it.
- OwnedPartitionsConsistent (catalog 7): no two members of a group claim the same owned
  partition for the same generation in their JoinGroup subscriptions.
- GenerationMonotonic (catalog 8): the coordinator's own action property (a group's generation
  never decreases while it stays in memory), and the generation stored in the log never
  decreases. Failover may roll the in-memory generation back to the stored one: Kafka writes the
  group record only when the leader's assignment is stored, so a generation that completed its
  join phase but never synced is lost on failover. Clients: ConsumerGenerationMonotonic, with a
  client crash as a further documented reset.
- StaticMembership (catalog 10): a static member's id is one its instance id generated; a member
  id replaced by a newer one of the same instance gets FENCED_INSTANCE_ID on JoinGroup,
  SyncGroup, Heartbeat and OffsetCommit; a static rejoin that keeps the group Stable keeps its
  generation and its assignment. (At most one member per instance id is the coordinator's
  InstanceMapConsistent.)
- Durability (catalog 11): every offset the coordinator acknowledged is in the log, and in memory
  whenever the group's offsets partition is loaded, until it expires: the retention check that
  runs after an Empty group lay idle (`retention_checks`) takes its offsets out of the
  acknowledged set, as a DeleteGroups does.
- GroupMaxSize: a JoinGroup is refused with GROUP_MAX_SIZE_REACHED only when the group already
  holds group.max.size members. Convergence lets a turned-away consumer go, so without this a
  coordinator that turned everyone away would pass.
- JoinCompletion: a join phase that completes keeps no dynamic member that had not rejoined:
  Kafka removes those, while a static member keeps its place until its session expires; and the
  new generation's leader is a member that rejoined (a leader that had not gets no JoinGroup
  response, so nobody would assign). A
  coordinator that kept a laggard would answer its later requests as a member's and pass
  every other property.
- NetworkConsistent: the world's own type invariant: every queued or parked message belongs to a
  request the client still has in flight, queues hold each request once, positions follow owned
  partitions.
- SessionTimersArmed (time discipline, beside the coordinator's TimersArmed and the world's
  TimerOrder): every session timer a coordinator step arms ends the timeout Kafka arms it with
  after the world's time: the new-member join timeout for a member the step adds as new, the
  session timeout for any other. A state cannot say it: a new member's commit or heartbeat at
  the group's generation re-arms its timer with the session timeout, as Kafka's does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from groupspec.spec.abstract_group import abstract_view
from groupspec.spec.assignment import Cluster, RebalanceProtocol, Subscription
from groupspec.spec.assignors.registry import COMPLETE_ASSIGNORS
from groupspec.spec.config import NEW_MEMBER_JOIN_TIMEOUT_MS
from groupspec.spec.consumer import ConsumerPhase, ConsumerState, MemberState, phase
from groupspec.spec.consumer_protocol import (
    SubscriptionDecodeError,
    decode_assignment,
    decode_subscription,
)
from groupspec.spec.events import HeartbeatExpired
from groupspec.spec.log import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey
from groupspec.spec.refinement import refinement_problems
from groupspec.spec.state import CoordinatorState, Group
from groupspec.vocabulary.errors import ErrorCode
from groupspec.vocabulary.group_state import COMPLETING_REBALANCE, EMPTY, STABLE
from groupspec.vocabulary.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    OffsetCommitRequest,
    Request,
    RequestRef,
    SyncGroupRequest,
    TopicPartition,
)
from groupspec.vocabulary.responses import (
    HeartbeatResponse,
    JoinGroupResponse,
    OffsetCommitResponse,
    Response,
    SyncGroupResponse,
)

from .world_params import WorldParameters
from .world_state import (
    CLOSED_REF,
    GROUP_ID,
    Budgets,
    ClientSlot,
    WorldState,
    client_name,
    connection_name,
)

Problems = list[tuple[str, str]]


class Decoder:
    """Decodes subscriptions and assignments, remembering results (they are pure functions of
    bytes); one per world, dropped when the world is sent to another process."""

    def __init__(self) -> None:
        self._subscriptions: dict[bytes, Subscription | None] = {}
        self._assignments: dict[bytes, tuple[TopicPartition, ...] | None] = {}

    def subscription(self, metadata: bytes) -> Subscription | None:
        """The decoded ConsumerProtocolSubscription, or None if it does not decode."""
        if metadata not in self._subscriptions:
            try:
                self._subscriptions[metadata] = decode_subscription(metadata)
            except SubscriptionDecodeError:
                self._subscriptions[metadata] = None
        return self._subscriptions[metadata]

    def assignment(self, data: bytes) -> tuple[TopicPartition, ...] | None:
        """The partitions of a ConsumerProtocolAssignment, or None (e.g. empty bytes)."""
        if data not in self._assignments:
            try:
                self._assignments[data] = decode_assignment(data)[0]
            except SubscriptionDecodeError:
                self._assignments[data] = None
        return self._assignments[data]


def world_group(state: WorldState) -> Group | None:
    """The world's consumer group as the coordinator holds it in memory, if it does."""
    return state.coordinator.group(GROUP_ID)


def is_current_member(consumer: ConsumerState, group: Group) -> bool:
    """Whether the consumer belongs to the coordinator's current generation."""
    generation = consumer.generation
    return generation.generation_id == group.generation_id and group.has_member(
        generation.member_id
    )


def _owners(slots: Sequence[ClientSlot], clients: Iterable[int]) -> dict[TopicPartition, list[int]]:
    owners: dict[TopicPartition, list[int]] = {}
    for index in clients:
        for partition in slots[index].consumer.owned:
            owners.setdefault(partition, []).append(index)
    return owners


def _shared(owners: dict[TopicPartition, list[int]], who: str) -> list[str]:
    return [
        f"{partition} is owned by {who} {', '.join(client_name(i) for i in indices)}"
        for partition, indices in sorted(owners.items())
        if len(indices) > 1
    ]


# -- state invariants -------------------------------------------------------------------------


def exclusive_ownership_among_current_members(state: WorldState) -> list[str]:
    """No partition owned by two clients that both belong to the current generation."""
    group = world_group(state)
    if group is None:
        return []
    current = [
        index for index, slot in enumerate(state.clients) if is_current_member(slot.consumer, group)
    ]
    return _shared(
        _owners(state.clients, current), f"current members of generation {group.generation_id}"
    )


# The exceptions Kafka's consumer raises only when its own assumptions about the group break:
# an assignor's broken promise or a coordinator's answer no coordinator of the protocol sends
# (ConsumerCoordinator.onLeaderElected/onJoinComplete throw IllegalStateException, the
# ConsumerProtocol decoders SchemaException). Between a correct coordinator and correct
# consumers none is ever raised.
INTERNAL_ERRORS = frozenset({"IllegalStateException", "SchemaException"})


def consumer_internal_error(consumer: ConsumerState) -> list[str]:
    """The consumer failed with an error Kafka raises only when its own assumptions break."""
    failure = consumer.failure
    if failure is None or failure.kind not in INTERNAL_ERRORS:
        return []
    return [f"failed with {failure.kind} on {failure.api or 'a local step'}"]


def exclusive_consumption(state: WorldState) -> list[str]:
    """No partition owned by two clients whose member ids are both in the group, whatever
    generation each last joined: a member that has not yet learned of a rebalance still
    consumes what it owns, so a partition may move only once its previous owner gave it up
    (eager: revoke all before rejoining; cooperative: the leader withholds it until then)."""
    group = world_group(state)
    if group is None:
        return []
    members = [
        index
        for index, slot in enumerate(state.clients)
        if not slot.consumer.closed
        and group.has_member(slot.consumer.generation.member_id)
        and not _missed_a_rebalance(slot.consumer, group)
    ]
    return _shared(
        _owners(state.clients, members), f"members of the group (generation {group.generation_id})"
    )


def _missed_a_rebalance(consumer: ConsumerState, group: Group) -> bool:
    """A member of an older generation than the group's that is not rejoining: the join phase
    completed without it, which only a stall past the rebalance timeout allows. A dynamic
    member is then removed; a static one stays a member (KIP-345) but is as much a zombie until
    it rejoins: Stable in its old generation, or reset by an ILLEGAL_GENERATION heartbeat and
    still holding its partitions until its next poll calls them lost. Its commits are fenced
    by generation, its consumption is not."""
    return consumer.generation.generation_id < group.generation_id and consumer.member_state in (
        MemberState.STABLE,
        MemberState.UNJOINED,
    )


def assignment_agreement(
    coordinator: CoordinatorState, who: str, consumer: ConsumerState, decoder: Decoder
) -> list[str]:
    """A client that is a synced member of the current generation of a Stable group, with no
    rejoin pending, owns exactly the partitions the coordinator stored for it, and that
    assignment decodes. (A member that found the assignment stale, say its subscription changed
    meanwhile, rejoins instead of adopting it.)"""
    group = coordinator.group(GROUP_ID)
    if (
        group is None
        or group.state is not STABLE
        or phase(consumer) is not ConsumerPhase.STABLE  # synced, no rejoin pending
        or not is_current_member(consumer, group)
    ):
        return []
    member = group.member(consumer.generation.member_id)
    assigned = None if member is None else decoder.assignment(member.assignment)
    if assigned is None:
        return [
            f"{who} is a member of Stable generation {group.generation_id} "
            "whose stored assignment does not decode"
        ]
    if sorted(consumer.owned) != sorted(assigned):
        return [
            f"{who} owns {_partitions(consumer.owned)} in Stable generation "
            f"{group.generation_id}, where the coordinator assigned it {_partitions(assigned)}"
        ]
    return []


def _partitions(partitions: Iterable[TopicPartition]) -> str:
    return "{" + ", ".join(str(tp) for tp in sorted(partitions)) + "}"


def exclusive_ownership_counting_zombies(clients: Sequence[ClientSlot]) -> list[str]:
    """The naive property: no partition owned by two clients, members or not."""
    return _shared(_owners(clients, range(len(clients))), "clients")


def installed_assignments_disjoint(coordinator: CoordinatorState, decoder: Decoder) -> list[str]:
    """LegalAssignment on the coordinator: a Stable group's stored assignments are disjoint."""
    group = coordinator.group(GROUP_ID)
    if group is None or group.state is not STABLE:
        return []
    holders: dict[TopicPartition, list[str]] = {}
    for member in group.members:
        for partition in decoder.assignment(member.assignment) or ():
            holders.setdefault(partition, []).append(member.member_id)
    return [
        f"Stable generation {group.generation_id} assigns {partition} to {ids}"
        for partition, ids in sorted(holders.items())
        if len(ids) > 1
    ]


def owned_partitions_consistent(coordinator: CoordinatorState, decoder: Decoder) -> list[str]:
    """No two members claim the same owned partition for the same generation."""
    group = coordinator.group(GROUP_ID)
    if group is None:
        return []
    claims: dict[tuple[TopicPartition, int], list[str]] = {}
    for member in group.members:
        protocol = group.protocol_name or (member.protocols[0].name if member.protocols else "")
        subscription = decoder.subscription(member.metadata_for(protocol))
        if subscription is None:
            continue
        for partition in subscription.owned_partitions:
            claims.setdefault((partition, subscription.generation), []).append(member.member_id)
    return [
        f"{partition} claimed for generation {generation} by {ids}"
        for (partition, generation), ids in sorted(claims.items())
        if len(ids) > 1
    ]


def static_membership_state(coordinator: CoordinatorState) -> list[str]:
    """Every static member's id was generated from its own instance id, and no
    group.instance.id has more than one member id."""
    group = coordinator.group(GROUP_ID)
    if group is None:
        return []
    problems = [
        f"member {member.member_id} is mapped to instance {member.group_instance_id}"
        for member in group.members
        if member.group_instance_id is not None
        and member.member_id.rpartition("-")[0] != member.group_instance_id
    ]
    ids: dict[str, list[str]] = {}
    for member in group.members:
        if member.group_instance_id is not None:
            ids.setdefault(member.group_instance_id, []).append(member.member_id)
    problems += [
        f"instance {instance} has member ids {sorted(member_ids)}"
        for instance, member_ids in sorted(ids.items())
        if len(member_ids) > 1
    ]
    return problems


def durability(
    coordinator: CoordinatorState,
    acknowledged: tuple[tuple[TopicPartition, int], ...],
    group_partition: int,
) -> list[str]:
    """Every acknowledged offset is in the log, and in memory while the partition is loaded."""
    problems = []
    for partition, offset in acknowledged:
        record = coordinator.log.get(
            OffsetCommitKey(GROUP_ID, partition.topic, partition.partition)
        )
        stored = getattr(record, "offset", None)
        if stored != offset:
            problems.append(f"acknowledged offset {offset} of {partition}: the log has {stored}")
    loaded = (
        group_partition not in coordinator.unowned_partitions
        and group_partition not in coordinator.loading_partitions
    )
    if not loaded or not acknowledged:
        return problems
    group = coordinator.group(GROUP_ID)
    for partition, offset in acknowledged:
        value = (
            group.offset(TopicPartition(partition.topic, partition.partition))
            if group is not None
            else None
        )
        in_memory = value.offset if value is not None else None
        if in_memory != offset:
            problems.append(
                f"acknowledged offset {offset} of {partition}: the loaded group has {in_memory}"
            )
    return problems


def parked_on(coordinator: CoordinatorState, connection: str) -> list[int]:
    """The correlation ids of the requests the coordinator keeps parked for `connection`."""
    return [
        ref.correlation_id
        for group in coordinator.groups
        for member in group.members
        for ref in (member.awaiting_join, member.awaiting_sync)
        if ref is not None and ref.connection == connection
    ]


def client_network_consistent(
    coordinator: CoordinatorState, index: int, slot: ClientSlot
) -> list[str]:
    """NetworkConsistent for one client: its queues and the requests parked for its connection
    belong to requests it has in flight, once each, and its positions follow what it owns; a
    request parked for an older connection of it is on an unknown connection."""
    problems = []
    name = client_name(index)
    current = connection_name(index, slot.incarnation)
    for group in coordinator.groups:
        for member in group.members:
            for ref in (member.awaiting_join, member.awaiting_sync):
                if (
                    ref is not None
                    and ref.connection != current
                    and ref.connection.partition("#")[0] == name
                ):
                    problems.append(f"member {member.member_id} waits on unknown connection {ref}")
    in_flight = [entry.correlation_id for entry in slot.consumer.in_flight]
    queued = [cid for cid, _ in slot.outbound] + [cid for cid, _ in slot.inbound]
    queued += parked_on(coordinator, current)
    if len(set(queued)) != len(queued):
        problems.append(f"{name}: a request is queued or parked twice: {sorted(queued)}")
    stray = sorted(set(queued) - set(in_flight))
    if stray:
        problems.append(f"{name}: messages {stray} belong to no request in flight")
    owned = slot.consumer.owned
    if tuple(partition for partition, _ in slot.positions) != owned:
        problems.append(f"{name}: positions {slot.positions} do not follow owned {owned}")
    return problems


def coordinator_network_consistent(coordinator: CoordinatorState, clients: int) -> list[str]:
    """NetworkConsistent for the coordinator alone: every parked request waits on a client's
    connection (of `clients`) or on the closed one."""
    names = {client_name(index) for index in range(clients)}
    return [
        f"member {member.member_id} waits on unknown connection {ref}"
        for group in coordinator.groups
        for member in group.members
        for ref in (member.awaiting_join, member.awaiting_sync)
        if ref is not None and ref != CLOSED_REF and ref.connection.partition("#")[0] not in names
    ]


# -- action properties, checked while a transition is computed --------------------------------


def persisted_generation(state: CoordinatorState) -> int | None:
    """The generation of the group record in the log, if there is one."""
    value = state.log.get(GroupMetadataKey(GROUP_ID))
    return value.generation_id if isinstance(value, GroupMetadataValue) else None


def _answers(responses: Sequence[Response], ref: RequestRef) -> list[object]:
    return [response.body for response in responses if response.ref == ref]


def _error_of(body: object) -> ErrorCode | None:
    if isinstance(body, (JoinGroupResponse, SyncGroupResponse, HeartbeatResponse)):
        return body.error_code
    if isinstance(body, OffsetCommitResponse):
        errors = {p.error_code for p in body.partitions}
        return errors.pop() if len(errors) == 1 else None
    return None


@dataclass(frozen=True)
class CoordinatorStep:
    """A coordinator step as the world's action properties judge it: the state before and
    after, its responses, the client request it handled (None for a timer or a failover step),
    whether the group's offsets partition was loaded before it, and the group.max.size of the
    coordinator in charge; the world's time when it ran (None where a test builds a step
    without one) and the coordinator's new-member join timeout."""

    before: CoordinatorState
    after: CoordinatorState
    responses: Sequence[Response]
    handled: tuple[RequestRef, Request] | None
    decoder: Decoder
    loaded: bool
    group_max_size: int
    event: object  # the input as the coordinator read it
    partition: int  # the group's offsets partition
    now_ms: int | None = None
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS

    def answers(self) -> list[object]:
        """The bodies of the responses to the handled request."""
        if self.handled is None:
            return []
        return _answers(self.responses, self.handled[0])


@dataclass(frozen=True)
class LeaderAssignment:
    """A leader's SyncGroup as the world's action properties judge it: the JoinGroup response
    that made it leader, the SyncGroup it sends, the leader's state, its rebalance protocol."""

    body: JoinGroupResponse
    sync: SyncGroupRequest
    leader: ConsumerState
    protocol: RebalanceProtocol
    decoder: Decoder


def coordinator_step_problems(step: CoordinatorStep) -> Problems:
    """What the world's action properties find wrong with one coordinator step (the spec's own
    are checked elsewhere), in registry order."""
    return [
        (prop.name, detail)
        for prop in WORLD_PROPERTIES
        if isinstance(prop, WorldActionProperty) and prop.on_coordinator_step is not None
        for detail in prop.on_coordinator_step(step)
    ]


def leader_assignment_problems(assignment: LeaderAssignment) -> Problems:
    """What the world's action properties find wrong with a leader's assignment."""
    return [
        (prop.name, detail)
        for prop in WORLD_PROPERTIES
        if isinstance(prop, WorldActionProperty) and prop.on_leader_assignment is not None
        for detail in prop.on_leader_assignment(assignment)
    ]


def _refines(step: CoordinatorStep) -> list[str]:
    """The step is a step of the abstract group, or a stutter (spec/refinement.py)."""
    before = abstract_view(step.before, GROUP_ID, step.partition)
    after = abstract_view(step.after, GROUP_ID, step.partition)
    group = step.before.group(GROUP_ID)
    parked = {
        member.awaiting_sync: member.member_id
        for member in (group.members if group is not None else ())
        if member.awaiting_sync is not None
    }
    return refinement_problems(GROUP_ID, before, after, step.event, step.responses, parked)


def _timer_order(step: CoordinatorStep) -> list[str]:
    """A timer fires only in an order real time allows: in CompletingRebalance the sync timer
    (armed with the rebalance timeout in the step that formed the generation) before any session
    timer armed in that same step with the longer session timeout; a new member parked in
    JoinGroup (its 5-minute join timeout) not before the join timer that ends its join phase."""
    event = step.event
    if not isinstance(event, HeartbeatExpired):
        return []
    group = step.before.group(event.group_id)
    if group is None:
        return []
    if group.sync_timer is not None and group.sync_timer.deadline_ms <= (
        min(
            (m.heartbeat_deadline_ms for m in group.members if m.heartbeat_deadline_ms is not None),
            default=group.sync_timer.deadline_ms,
        )
    ):
        return [
            f"{event.member_id}'s session timer fired while the sync timer, due first, was armed"
        ]
    member = group.member(event.member_id)
    if (
        group.join_timer is not None
        and member is not None
        and member.is_new
        and member.is_awaiting_join
    ):
        return [f"new member {event.member_id}'s join timeout fired before the join timer"]
    return []


def _session_timers_armed(step: CoordinatorStep) -> list[str]:
    """Every session timer a step arms ends the timeout Kafka arms it with after the step's
    time: the new-member join timeout for a member the step adds as a new member (it has no
    member id to heartbeat with yet), the member's session timeout for any other (a heartbeat,
    a commit, a completed join or sync, a static replacement, a load)."""
    if step.now_ms is None:
        return []
    problems = []
    for group in step.after.groups:
        earlier = step.before.group(group.group_id)
        for member in group.members:
            deadline = member.heartbeat_deadline_ms
            old = earlier.member(member.member_id) if earlier is not None else None
            if deadline is None or (old is not None and old.heartbeat_deadline_ms == deadline):
                continue
            if old is None and member.is_new:
                timeouts = {step.new_member_join_timeout_ms}
            else:
                # A static replacement's timer is re-armed before it takes the request's timeouts.
                timeouts = {member.session_timeout_ms} | {
                    other.session_timeout_ms
                    for other in (earlier.members if earlier is not None else ())
                    if member.group_instance_id is not None
                    and other.group_instance_id == member.group_instance_id
                }
            if deadline - step.now_ms not in timeouts:
                problems.append(
                    f"{member.member_id}'s session timer was armed at {step.now_ms} to end at "
                    f"{deadline}, not {' or '.join(str(t) for t in sorted(timeouts))} ms later"
                    + (
                        " (a new member waits the new-member join timeout)"
                        if old is None and member.is_new
                        else ""
                    )
                )
    return problems


def _stored_generation_monotonic(step: CoordinatorStep) -> list[str]:
    """The generation in the log's group record never decreases."""
    old, new = persisted_generation(step.before), persisted_generation(step.after)
    if old is not None and new is not None and new < old:
        return [f"stored generation went from {old} to {new}"]
    return []


def _join_completion(step: CoordinatorStep) -> list[str]:
    """A step that completes a join phase (a new generation, CompletingRebalance or Empty)
    removes each dynamic member that had not rejoined; the member whose JoinGroup this step
    handled has rejoined by it."""
    if not step.loaded:
        return []
    before, after = step.before.group(GROUP_ID), step.after.group(GROUP_ID)
    request = step.handled[1] if step.handled is not None else None
    if (
        before is None
        or after is None
        or after.generation_id <= before.generation_id
        or after.state not in (COMPLETING_REBALANCE, EMPTY)
    ):
        return []
    rejoining = request.member_id if isinstance(request, JoinGroupRequest) else None
    leader = before.member(after.leader_id) if after.leader_id is not None else None
    problems = []
    if (
        after.state is COMPLETING_REBALANCE
        and leader is not None
        and leader.awaiting_join is None
        and leader.member_id != rejoining
    ):
        # ClassicGroup.maybeElectNewJoinedLeader: the leader is told the members in its
        # JoinGroup response; one that had not rejoined gets no response, and nobody assigns.
        problems.append(
            f"generation {after.generation_id} completed its join with leader "
            f"{leader.member_id}, which had not rejoined"
        )
    kept = [
        member.member_id
        for member in before.members
        # Read from the fields, not through the specification's helpers: a property that
        # shared `Member.is_static` with the code it judges would share its mistakes.
        if member.group_instance_id is None
        and member.awaiting_join is None
        and member.member_id != rejoining
        and after.has_member(member.member_id)
    ]
    return problems + [
        f"generation {after.generation_id} completed its join keeping dynamic member "
        f"{member_id}, which had not rejoined"
        for member_id in kept
    ]


def _refused_only_when_full(step: CoordinatorStep) -> list[str]:
    """A consumer turned away with GROUP_MAX_SIZE_REACHED leaves for good, so the world lets
    the group converge without it: that is sound only if the group really was full. And a
    JoinGroup never admits a member into a group that already holds group.max.size."""
    if not step.loaded or step.handled is None or not isinstance(step.handled[1], JoinGroupRequest):
        return []
    group, answers, group_max_size = (
        step.before.group(GROUP_ID),
        step.answers(),
        step.group_max_size,
    )
    after = step.after.group(GROUP_ID)
    before_size = len(group.members) if group is not None else 0
    after_size = len(after.members) if after is not None else 0
    if after_size > before_size and after_size > group_max_size:
        return [
            f"a JoinGroup admitted a member into a group of {before_size} members, beyond "
            f"group.max.size {group_max_size}"
        ]
    refused = any(
        isinstance(body, JoinGroupResponse) and body.error_code is ErrorCode.GROUP_MAX_SIZE_REACHED
        for body in answers
    )
    members = len(group.members) if group is not None else 0
    if not refused or members >= group_max_size:
        return []
    return [
        f"a JoinGroup was refused with GROUP_MAX_SIZE_REACHED while the group held {members}"
        f" of at most {group_max_size} members"
    ]


def _no_zombie_commit(step: CoordinatorStep) -> list[str]:
    """An accepted commit at a generation comes from a current member and names no partition
    another member is assigned."""
    if not step.loaded or step.handled is None:
        return []
    request = step.handled[1]
    if not isinstance(request, OffsetCommitRequest) or request.generation_id < 0:
        return []
    group, answers, decoder = step.before.group(GROUP_ID), step.answers(), step.decoder
    accepted = [
        TopicPartition(p.topic, p.partition)
        for body in answers
        if isinstance(body, OffsetCommitResponse)
        for p in body.partitions
        if p.error_code is ErrorCode.NONE
    ]
    if not accepted:
        return []
    who = f"{request.member_id} at generation {request.generation_id}"
    member = group.member(request.member_id) if group is not None else None
    if group is None or member is None:
        return [f"commit of {accepted} accepted from non-member {who}"]
    if request.generation_id != group.generation_id:
        return [f"commit of {accepted} from {who} accepted at generation {group.generation_id}"]
    # Kafka accepts a member's commit of any partition. A partition the member is giving up
    # (a commit from onPartitionsRevoked) is assigned to nobody until it is revoked, because
    # the cooperative leader withholds it; only a partition another member holds is a zombie
    # commit that could overwrite its new owner's progress.
    holders = {
        partition: other.member_id
        for other in group.members
        if other.member_id != member.member_id
        for partition in decoder.assignment(other.assignment) or ()
    }
    foreign = [
        f"{partition} (assigned to {holders[partition]})"
        for partition in accepted
        if partition in holders
    ]
    if foreign:
        return [f"{who} committed {', '.join(foreign)}"]
    return []


def _static_membership_step(step: CoordinatorStep) -> list[str]:
    """A replaced static member id is fenced on every API; a static rejoin that keeps the group
    Stable keeps its generation and its assignment."""
    if not step.loaded or step.handled is None:
        return []
    request, answers = step.handled[1], step.answers()
    group, after = step.before.group(GROUP_ID), step.after.group(GROUP_ID)
    instance = getattr(request, "group_instance_id", None)
    if group is None or instance is None:
        return []
    current = group.static_member_id(instance)
    member_id = getattr(request, "member_id", "")
    fenced_apis = (JoinGroupRequest, SyncGroupRequest, HeartbeatRequest, OffsetCommitRequest)
    if isinstance(request, fenced_apis) and member_id and current not in (None, member_id):
        errors = [_error_of(body) for body in answers]
        if errors != [ErrorCode.FENCED_INSTANCE_ID]:
            return [
                f"{type(request).__name__} from replaced {member_id} of {instance} "
                f"(now {current}) answered {errors}"
            ]
    if (
        isinstance(request, JoinGroupRequest)
        and not member_id
        and current is not None
        and group.state is STABLE
        and after is not None
        and after.state is STABLE
    ):
        successor = after.member(after.static_member_id(instance) or "")
        old = group.member(current)
        assert old is not None
        if after.generation_id != group.generation_id or (
            successor is not None and successor.assignment != old.assignment
        ):
            return [
                f"static rejoin of {instance} in Stable changed generation "
                f"{group.generation_id} -> {after.generation_id} or the assignment"
            ]
    return []


def _decoded(
    assignment: LeaderAssignment,
) -> tuple[dict[str, Subscription], dict[str, tuple[TopicPartition, ...]]]:
    """The members' subscriptions (those that decode) and what the leader gives each."""
    decoder = assignment.decoder
    subscriptions: dict[str, Subscription] = {}
    for member in assignment.body.members:
        subscription = decoder.subscription(member.metadata)
        if subscription is not None:
            subscriptions[member.member_id] = subscription
    assigned: dict[str, tuple[TopicPartition, ...]] = {}
    for entry in assignment.sync.assignments:
        assigned[entry.member_id] = decoder.assignment(entry.assignment) or ()
    return subscriptions, assigned


def _holders(assigned: dict[str, tuple[TopicPartition, ...]]) -> dict[TopicPartition, list[str]]:
    holders: dict[TopicPartition, list[str]] = {}
    for member_id, partitions in assigned.items():
        for partition in partitions:
            holders.setdefault(partition, []).append(member_id)
    return holders


def _claims(subscriptions: dict[str, Subscription]) -> dict[TopicPartition, list[str]]:
    claims: dict[TopicPartition, list[str]] = {}
    for member_id, subscription in subscriptions.items():
        for partition in subscription.owned_partitions:
            claims.setdefault(partition, []).append(member_id)
    return claims


def _legal_leader_assignment(assignment: LeaderAssignment) -> list[str]:
    """The leader assigns every member only subscribed, existing partitions, each once, and
    (for complete assignors) every subscribed partition."""
    subscriptions, assigned = _decoded(assignment)
    leader, body = assignment.leader, assignment.body
    problems: list[str] = []
    if set(assigned) != set(subscriptions):
        problems.append(f"assignments for {sorted(assigned)}, members {sorted(subscriptions)}")
    for member_id, partitions in assigned.items():
        topics = subscriptions[member_id].topics if member_id in subscriptions else ()
        for partition in partitions:
            if partition.topic not in topics or not leader.cluster.contains(partition):
                problems.append(f"{partition} given to {member_id}, subscribed to {list(topics)}")
    holders = _holders(assigned)
    problems += [
        f"{partition} given to {ids}" for partition, ids in sorted(holders.items()) if len(ids) > 1
    ]
    claims = _claims(subscriptions)
    subscribed = {topic for s in subscriptions.values() for topic in s.topics}
    wanted = leader.cluster.partitions(subscribed)
    complete = body.protocol_name in COMPLETE_ASSIGNORS
    missing = [
        partition
        for partition in wanted
        if partition not in holders and (complete or partition not in claims)
    ]
    if missing:
        problems.append(f"{body.protocol_name} leaves {missing} unassigned")
    return problems


def _cooperative_revoke_before_assign(assignment: LeaderAssignment) -> list[str]:
    """With the COOPERATIVE protocol the leader never assigns a partition to one member while
    another member's subscription claims to own it."""
    if assignment.protocol is not RebalanceProtocol.COOPERATIVE:
        return []
    subscriptions, assigned = _decoded(assignment)
    claims = _claims(subscriptions)
    problems = []
    for partition, ids in sorted(_holders(assigned).items()):
        others = [claimant for claimant in claims.get(partition, []) if claimant not in ids]
        if others:
            problems.append(f"{partition} given to {ids} while {others} still own it")
    return problems


# -- the registry: every world property, declared once -----------------------------------------

# The components a world part reads, by name. A part that reads CLIENT is judged once per client
# (its check gets an `IndexedClient`); CLIENTS gives every client slot; STATE the whole world
# state (never remembered: it changes with every step).
COORDINATOR, CLIENT, CLIENTS = "coordinator", "client", "clients"
CLUSTER, BUDGETS, ACKNOWLEDGED, STATE = "cluster", "budgets", "acknowledged", "state"
COMPONENTS = (COORDINATOR, CLIENT, CLIENTS, CLUSTER, BUDGETS, ACKNOWLEDGED, STATE)


@dataclass(frozen=True)
class IndexedClient:
    """A client slot with its index (a part over CLIENT names clients in what it reports)."""

    index: int
    slot: ClientSlot


class WorldContext(Protocol):
    """What a world property may ask of the world it judges."""

    decoder: Decoder
    group_partition: int

    @property
    def parameters(self) -> WorldParameters:
        """The world's parameters."""
        ...

    def converged_parts(
        self, coordinator: CoordinatorState, clients: tuple[ClientSlot, ...], cluster: Cluster
    ) -> bool:
        """Convergence's goal on the components it reads."""
        ...

    def faults_exhausted_parts(self, coordinator: CoordinatorState, budgets: Budgets) -> bool:
        """No fault budget left and no failover under way."""
        ...


@dataclass(frozen=True)
class WorldPart:
    """A piece of a world property: `check(world, *components)` over the components `reads`
    names (in that order), remembered by them unless `cached` is false."""

    reads: tuple[str, ...]
    check: Callable[..., Any]
    cached: bool = True

    def __post_init__(self) -> None:
        unknown = [name for name in self.reads if name not in COMPONENTS]
        if unknown:
            raise ValueError(f"a world part reads unknown components {unknown}")


def _always_on(parameters: WorldParameters) -> bool:
    return True


@dataclass(frozen=True)
class WorldInvariant:
    """A property of every world state, made of parts. `enabled` says in which worlds it is
    checked; `checked_first` puts a type invariant of the world before the coordinator's and
    the consumers' own (a malformed world is then reported as such)."""

    name: str
    description: str
    parts: tuple[WorldPart, ...]
    enabled: Callable[[WorldParameters], bool] = _always_on
    checked_first: bool = False
    kind: ClassVar[str] = "invariant"


@dataclass(frozen=True)
class WorldActionProperty:
    """A property of every step the world judges while computing it: each coordinator step
    (`on_coordinator_step`) or each leader's SyncGroup (`on_leader_assignment`); each returns
    what is wrong."""

    name: str
    description: str
    on_coordinator_step: Callable[[CoordinatorStep], list[str]] | None = None
    on_leader_assignment: Callable[[LeaderAssignment], list[str]] | None = None
    kind: ClassVar[str] = "action property"


@dataclass(frozen=True)
class WorldLiveness:
    """A leads-to property of the world (`checker.model.LivenessProperty`), its goal and where
    it applies as world parts."""

    name: str
    description: str
    goal: WorldPart
    applies: WorldPart
    fair_actions: frozenset[str]
    cut_short_by: frozenset[str]
    enabled: Callable[[WorldParameters], bool] = _always_on
    kind: ClassVar[str] = "liveness"


WorldProperty = WorldInvariant | WorldActionProperty | WorldLiveness

CLIENT_APIS = (
    "FindCoordinator",
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "OffsetCommit",
)
# The steps Convergence assumes are weakly fair: each one (per label: this client, this
# member's timer) that stays enabled is eventually taken. Messages are delivered (the
# coordinator handles a queued request, a client reads a queued response); a running client
# keeps polling and heartbeating; the coordinator's join and pending-sync timers fire, and so
# does the session timer of a member no running client holds (its client crashed or moved on).
# The session timer of a member a live client holds is labelled "fault ..." and only enabled
# while the eviction budget lasts, so it is not a fairness class once faults are spent.
# Coordinator failover completes (StartLoading, FinishLoading). Not fair: everything budgeted
# as a fault, and what applications may choose never to do (CommitRequested, Process).
FAIR_ACTIONS = frozenset(
    {
        "Poll",
        "HeartbeatDue",
        *(f"Receive{api}" for api in CLIENT_APIS),
        *(f"Handle{api}" for api in CLIENT_APIS),
        "HeartbeatExpired",
        "JoinTimerExpired",
        "SyncTimerExpired",
        "StartLoading",
        "FinishLoading",
    }
)

# Every world property, in the order the checker judges them and `groupspec invariants` lists
# them. Add a property here (and nowhere else): models/world_slots.py derives what the engine
# needs from it.
WORLD_PROPERTIES: tuple[WorldProperty, ...] = (
    WorldInvariant(
        "NetworkConsistent",
        "Queued and parked messages belong to requests their client still has in flight, each "
        "once; positions follow owned partitions.",
        (
            WorldPart(
                (COORDINATOR,),
                lambda world, coordinator: coordinator_network_consistent(
                    coordinator, world.parameters.clients
                ),
            ),
            WorldPart(
                (COORDINATOR, CLIENT),
                lambda world, coordinator, client: client_network_consistent(
                    coordinator, client.index, client.slot
                ),
            ),
        ),
        checked_first=True,
    ),
    WorldInvariant(
        "ExclusiveOwnershipAmongCurrentMembers",
        "No partition is owned by two clients that are both members of the current generation.",
        (
            WorldPart(
                (STATE,),
                lambda world, state: exclusive_ownership_among_current_members(state),
                cached=False,
            ),
        ),
    ),
    WorldInvariant(
        "ExclusiveConsumption",
        "No partition is owned by two clients that are both members of the group, whatever "
        "generation each last joined (eager and cooperative alike); a static member that "
        "stalled past a rebalance is a zombie until it rejoins.",
        (WorldPart((STATE,), lambda world, state: exclusive_consumption(state), cached=False),),
    ),
    WorldInvariant(
        "NoConsumerInternalError",
        "No consumer fails with an error Kafka raises only when its own assumptions break "
        "(IllegalStateException, SchemaException), unless the world lets a foreign coordinator "
        "answer: a correct coordinator and correctly configured consumers never provoke one.",
        (
            WorldPart(
                (CLIENT,),
                lambda world, client: [
                    f"{client_name(client.index)} {problem}"
                    for problem in consumer_internal_error(client.slot.consumer)
                ],
            ),
        ),
        enabled=lambda parameters: parameters.foreign_answers == 0,
    ),
    WorldInvariant(
        "AssignmentAgreement",
        "A synced member of a Stable group's current generation, with no rejoin pending, owns "
        "exactly what the coordinator stored for it, and that assignment decodes.",
        (
            WorldPart(
                (COORDINATOR, CLIENT),
                lambda world, coordinator, client: assignment_agreement(
                    coordinator, client_name(client.index), client.slot.consumer, world.decoder
                ),
            ),
        ),
    ),
    WorldInvariant(
        "LegalAssignment",
        "A Stable group's stored assignments are disjoint; each leader assignment gives members "
        "only subscribed, existing partitions, each once, all of them for complete assignors.",
        (
            WorldPart(
                (COORDINATOR,),
                lambda world, coordinator: installed_assignments_disjoint(
                    coordinator, world.decoder
                ),
            ),
        ),
    ),
    WorldInvariant(
        "OwnedPartitionsConsistent",
        "No two members claim the same owned partition for the same generation in JoinGroup.",
        (
            WorldPart(
                (COORDINATOR,),
                lambda world, coordinator: owned_partitions_consistent(coordinator, world.decoder),
            ),
        ),
    ),
    WorldInvariant(
        "StaticMembership",
        "A static member's id was generated for its instance id; a replaced id is fenced on "
        "every API; a static rejoin that keeps the group Stable keeps generation and assignment.",
        (
            WorldPart(
                (COORDINATOR,), lambda world, coordinator: static_membership_state(coordinator)
            ),
        ),
    ),
    WorldInvariant(
        "Durability",
        "Every offset the coordinator acknowledged is in the log, and in memory while loaded.",
        (
            WorldPart(
                (COORDINATOR, ACKNOWLEDGED),
                lambda world, coordinator, acknowledged: durability(
                    coordinator, acknowledged, world.group_partition
                ),
            ),
        ),
    ),
    WorldInvariant(
        "ExclusiveOwnershipCountingZombies",
        "The naive property, off unless naive_zombie_property is set: no partition owned by two "
        "clients at all. The classic protocol does not have it.",
        (
            WorldPart(
                (CLIENTS,),
                lambda world, clients: exclusive_ownership_counting_zombies(clients),
                cached=False,
            ),
        ),
        enabled=lambda parameters: parameters.naive_zombie_property,
    ),
    WorldActionProperty(
        "Refinement",
        "Every coordinator step is a step of the abstract group (spec/abstract_group.py: joins, "
        "leaves, new generations, the leader's sync, commits, writes and loads of the log, and "
        "what each answer may say) or changes nothing it describes.",
        on_coordinator_step=_refines,
    ),
    WorldActionProperty(
        "TimerOrder",
        "A timer fires only in an order real time allows: the sync timer before the session "
        "timers armed with it when a generation forms; the join timer before the join timeout "
        "of a new member parked in JoinGroup.",
        on_coordinator_step=_timer_order,
    ),
    WorldActionProperty(
        "SessionTimersArmed",
        "Every session timer a step arms ends the timeout Kafka arms it with after the step's "
        "time: the new-member join timeout (5 minutes) for a member the step adds as new, "
        "the member's session timeout for any other.",
        on_coordinator_step=_session_timers_armed,
    ),
    WorldActionProperty(
        "GenerationMonotonic",
        "The generation of the group record in the log never decreases (the coordinator's own "
        "GenerationMonotonic judges the group in memory).",
        on_coordinator_step=_stored_generation_monotonic,
    ),
    WorldActionProperty(
        "JoinCompletion",
        "A completed join phase keeps no dynamic member that had not rejoined (static members "
        "keep their place), and its leader is a member that rejoined.",
        on_coordinator_step=_join_completion,
    ),
    WorldActionProperty(
        "NoZombieCommit",
        "An accepted commit with generation >= 0 comes from a member of the current generation "
        "and names no partition the coordinator assigns to another member (a commit from "
        "onPartitionsRevoked is allowed).",
        on_coordinator_step=_no_zombie_commit,
    ),
    WorldActionProperty(
        "StaticMembership",
        "A replaced static member id is answered FENCED_INSTANCE_ID on JoinGroup, SyncGroup, "
        "Heartbeat and OffsetCommit; a static rejoin in Stable keeps generation and assignment.",
        on_coordinator_step=_static_membership_step,
    ),
    WorldActionProperty(
        "GroupMaxSize",
        "A JoinGroup is refused with GROUP_MAX_SIZE_REACHED only when the group already holds "
        "group.max.size members, and never admits a member beyond it.",
        on_coordinator_step=_refused_only_when_full,
    ),
    WorldActionProperty(
        "LegalAssignment",
        "A leader's assignment gives members only subscribed, existing partitions, each once, "
        "and all of them for complete assignors.",
        on_leader_assignment=_legal_leader_assignment,
    ),
    WorldActionProperty(
        "CooperativeRevokeBeforeAssign",
        "A cooperative leader never assigns a partition another member's subscription still "
        "claims to own (KIP-429).",
        on_leader_assignment=_cooperative_revoke_before_assign,
    ),
    WorldLiveness(
        "Convergence",
        "Once every fault is spent, under weak fairness the group becomes Stable with every "
        "subscribed partition owned by exactly one member, as the coordinator assigned it, and "
        "nothing in flight (check_convergence).",
        goal=WorldPart(
            (COORDINATOR, CLIENTS, CLUSTER),
            lambda world, coordinator, clients, cluster: world.converged_parts(
                coordinator, clients, cluster
            ),
            cached=False,
        ),
        applies=WorldPart(
            (COORDINATOR, BUDGETS),
            lambda world, coordinator, budgets: world.faults_exhausted_parts(coordinator, budgets),
        ),
        fair_actions=FAIR_ACTIONS,
        cut_short_by=frozenset({"max_generation"}),
        enabled=lambda parameters: parameters.check_convergence,
    ),
)
