"""A group world's state as people read it (the model's `describe_state`, checker/describe.py).

One section per described slot, named as the slot is (`Layout.slot_names`), so that the sections
a violated property reads are the slots its parts read:

- `coordinator`: whether the group's offsets partition is loaded, the group's state, generation,
  protocol and leader, its members (each with the request the coordinator parked for it, its
  assignment, and the partitions its JoinGroup claims to own, at the generation it claims),
  pending members, members the coordinator awaits a SyncGroup from, the committed offsets, every
  armed timer with its deadline, the `__consumer_offsets` log, and the world's clock;
- each client (`c1`, `c2`, ...): its phase, member id, generation, whether it leads, what it
  owns and its positions, each request it has in flight and where that request is (queued, at
  the coordinator, answered), its connection, and a fatal failure;
- `cluster` (partitions per topic), `budgets` (what is left of each budget the preset gives),
  `acknowledged` (offsets the coordinator acknowledged), `step_problems` (findings of the last
  step, only when there are some).

The derived slots (`held`, `committed`, each client's `head`) repeat what these say and are
left out.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

from groupspec.spec.consumer import phase
from groupspec.spec.log import GroupMetadataKey, GroupMetadataValue, OffsetCommitKey, OffsetsLog
from groupspec.spec.state import CoordinatorState, Group, Member
from groupspec.spec.timers import armed_timers
from groupspec.vocabulary.requests import RequestRef, TopicPartition

from .world_state import (
    CLOSED_REF,
    GROUP_ID,
    Budgets,
    ClientSlot,
    WorldState,
    client_name,
    connection_name,
)

if TYPE_CHECKING:
    from .group_world import GroupWorld

# A subscription's generation when it names none (ConsumerProtocolSubscription before v2).
_NO_CLAIMED_GENERATION = -1


def describe_world_state(world: GroupWorld, state: WorldState) -> dict[str, Any]:
    """The world state as plain data, one section per slot (see the module's docstring)."""
    described: dict[str, Any] = {"coordinator": _coordinator(world, state.coordinator)}
    for index, slot in enumerate(state.clients):
        described[client_name(index)] = _client(index, slot)
    described["cluster"] = dict(state.cluster.partitions_per_topic)
    described["budgets"] = _budgets(world, state.budgets)
    described["acknowledged"] = _offsets(state.acknowledged)
    if state.step_problems:
        described["step_problems"] = [f"{name}: {detail}" for name, detail in state.step_problems]
    return described


def _partitions(partitions: tuple[TopicPartition, ...] | None) -> list[str] | str:
    if partitions is None:
        return "undecodable"
    return [str(partition) for partition in partitions]


def _offsets(offsets: tuple[tuple[TopicPartition, int], ...]) -> dict[str, int]:
    return {str(partition): offset for partition, offset in offsets}


def _parked(api: str, ref: RequestRef | None) -> str | None:
    if ref is None:
        return None
    if ref == CLOSED_REF:
        return f"{api} of a connection since closed"
    return f"{api} #{ref.correlation_id} from {ref.connection}"


def _member(world: GroupWorld, group: Group, member: Member) -> dict[str, Any]:
    """A member as the coordinator holds it."""
    parked = _parked("JoinGroup", member.awaiting_join) or _parked(
        "SyncGroup", member.awaiting_sync
    )
    protocol = group.protocol_name or (member.protocol_names() or ("",))[0]
    subscription = world.decoder.subscription(member.metadata_for(protocol))
    claims: list[str] | str = "undecodable"
    claimed_generation = None
    if subscription is not None:
        claims = _partitions(subscription.owned_partitions)
        if subscription.generation != _NO_CLAIMED_GENERATION:
            claimed_generation = subscription.generation
    return {
        "instance": member.group_instance_id,
        "parked": parked,
        "assignment": _partitions(world.decoder.assignment(member.assignment))
        if member.assignment
        else [],
        "claims": claims,
        "claimed generation": claimed_generation,
    }


def _loaded(world: GroupWorld, coordinator: CoordinatorState) -> str:
    partition = world.group_partition
    if partition in coordinator.unowned_partitions:
        return "no (another broker leads it)"
    if partition in coordinator.loading_partitions:
        return "loading"
    return "yes"


def _coordinator(world: GroupWorld, coordinator: CoordinatorState) -> dict[str, Any]:
    """The coordinator: its group, the group's timers, its log, its clock."""
    group = coordinator.group(GROUP_ID)
    return {
        "loaded": _loaded(world, coordinator),
        "group": "none" if group is None else group.state.value,
        "generation": None if group is None else group.generation_id,
        "protocol": None if group is None else group.protocol_name,
        "leader": None if group is None else group.leader_id,
        "members": {}
        if group is None
        else {member.member_id: _member(world, group, member) for member in group.members},
        "pending members": [] if group is None else [p.member_id for p in group.pending_members],
        "awaiting sync": [] if group is None else sorted(group.pending_sync_members),
        "offsets": {}
        if group is None
        else {str(partition): value.offset for partition, value in group.offsets},
        "timers": {_timer_name(timer): deadline for deadline, timer in armed_timers(coordinator)},
        "log": _log(coordinator.log),
        "clock": world.now_ms(coordinator),
    }


def _timer_name(timer: object) -> str:
    member = getattr(timer, "member_id", None)
    name = type(timer).__name__
    return f"{name} {member}" if member else name


def _log(log: OffsetsLog) -> dict[str, Any]:
    """The group's records in `__consumer_offsets`: its metadata record and its offsets."""
    record: str | None = None
    offsets: dict[str, int] = {}
    for key, value in log.entries:
        if key.group_id != GROUP_ID:
            continue
        if isinstance(key, GroupMetadataKey) and isinstance(value, GroupMetadataValue):
            members = ", ".join(member.member_id for member in value.members) or "none"
            record = (
                f"generation {value.generation_id}, leader {value.leader or '-'}, members {members}"
            )
        elif isinstance(key, OffsetCommitKey):
            offsets[f"{key.topic}-{key.partition}"] = getattr(value, "offset", -1)
    return {"group record": record, "offsets": offsets}


def _requests(slot: ClientSlot) -> dict[str, str]:
    """Each request the client has in flight or queued, and where it is."""
    queued = {cid: request for cid, request in slot.outbound}
    answered = {cid: body for cid, body in slot.inbound}
    names = {entry.correlation_id: entry.kind.value for entry in slot.consumer.in_flight}
    for cid, request in queued.items():
        names.setdefault(cid, type(request).__name__.removesuffix("Request"))
    for cid, body in answered.items():
        names.setdefault(cid, type(body).__name__.removesuffix("Response"))
    where: dict[str, str] = {}
    for cid in sorted(names):
        if cid in queued:
            status = "queued"
        elif cid in answered:
            status = "answered " + _response(answered[cid])
        else:
            status = "at the coordinator"
        where[f"#{cid} {names[cid]}"] = status
    return where


def _response(body: object) -> str:
    """A response's API and error code (the partitions' codes for an OffsetCommit)."""
    api = type(body).__name__.removesuffix("Response")
    error = getattr(body, "error_code", None)
    if error is not None:
        return f"{api}({error.name})"
    partitions = getattr(body, "partitions", ())
    codes = sorted({partition.error_code.name for partition in partitions})
    return f"{api}({', '.join(codes)})"


def _client(index: int, slot: ClientSlot) -> dict[str, Any]:
    """A client: its consumer's view of the group, its requests, its connection."""
    consumer = slot.consumer
    failure = consumer.failure
    return {
        "phase": phase(consumer).value,
        "member id": consumer.generation.member_id or None,
        "generation": consumer.generation.generation_id,
        "leader": consumer.is_leader,
        "owned": [str(partition) for partition in consumer.owned],
        "positions": _offsets(slot.positions),
        "requests": _requests(slot),
        "coordinator known": consumer.coordinator_known,
        "rejoin needed": consumer.rejoin_needed,
        "connection": connection_name(index, slot.incarnation),
        "failure": None if failure is None else failure.kind,
    }


def _budgets(world: GroupWorld, budgets: Budgets) -> dict[str, int]:
    """What is left of each budget the preset gives (those it leaves at zero are not shown)."""
    given = world.initial_states()[0].budgets
    return {
        field.name: getattr(budgets, field.name)
        for field in fields(Budgets)
        if getattr(given, field.name) or getattr(budgets, field.name)
    }
