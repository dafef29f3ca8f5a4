"""A group world as the engine sees it: its slots, its canonical form, its properties as parts.

The world's state (`WorldState`) is held by the engine as a tuple of components, one per slot
(checker/model.py). Slot 0 is the coordinator, slots 1..n the clients, then the cluster, the
budgets, the acknowledged offsets and the step's findings. Derived slots follow: functions of
the others, kept so that a transition group can read a small part of a large slot and be
remembered by it: `held`, the member ids running clients hold (the timers read it instead of
every client); `committed`, the group's committed offsets (a client reads it instead of the
coordinator, for the positions of partitions it newly owns); each client's `head`, its
incarnation and next request (the coordinator's handling of it reads it instead of the whole
client).

This module also turns the three registries of the world's properties (the coordinator's, the
consumer's and the world's own, see models/world_properties.py) into the checker's declarations,
each part over the slots it reads: the author of a property names the components it reads, and
nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.model import ActionProperty, Invariant, LivenessProperty, Part, Property
from groupspec.checker.rewrite import rewrite_strings
from groupspec.spec import invariants as coordinator_properties
from groupspec.spec.consumer import invariants as consumer_properties
from groupspec.spec.log import OffsetCommitKey, OffsetCommitValue
from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary.requests import Request, RequestRef, TopicPartition

from . import world_properties
from .canonical import (
    compaction_of,
    coordinator_member_ids,
    map_coordinator_refs,
    permuted_findings,
    slot_member_ids,
    slot_normal_form,
)
from .world_properties import (
    ACKNOWLEDGED,
    BUDGETS,
    CLIENT,
    CLIENTS,
    CLUSTER,
    COORDINATOR,
    STATE,
    IndexedClient,
    WorldActionProperty,
    WorldInvariant,
    WorldLiveness,
    WorldPart,
)
from .world_state import (
    CLOSED_REF,
    GROUP_ID,
    HELD_CACHE,
    ClientSlot,
    WorldState,
    canonical_repr,
    client_name,
    evolve,
    part_digest,
)

if TYPE_CHECKING:
    from .group_world import GroupWorld

# The world's own tables forget everything past this many entries, to bound memory.
MEMO_LIMIT = 200_000


@dataclass(frozen=True)
class Layout:
    """Which slot of a group world's state holds what."""

    clients: tuple[int, ...]
    cluster: int
    budgets: int
    acknowledged: int
    problems: int
    held: int
    committed: int
    heads: tuple[int, ...]
    size: int

    @staticmethod
    def of(clients: int) -> Layout:
        """The layout of a world of `clients` clients."""
        n = clients
        return Layout(
            tuple(range(1, n + 1)),
            n + 1,
            n + 2,
            n + 3,
            n + 4,
            n + 5,
            n + 6,
            tuple(range(n + 7, 2 * n + 7)),
            2 * n + 7,
        )

    @property
    def slot_names(self) -> tuple[str, ...]:
        """Every slot's name, in order."""
        n = len(self.clients)
        names = ["coordinator", *(client_name(index) for index in range(n))]
        names += ["cluster", "budgets", "acknowledged", "step_problems", "held", "committed"]
        names += [f"head {client_name(index)}" for index in range(n)]
        return tuple(names)

    def slots_of(self, reads: tuple[str, ...], index: int | None = None) -> tuple[int, ...]:
        """The slots a world part's named components are in (CLIENT: client `index`'s)."""
        slots: list[int] = []
        for name in reads:
            if name == COORDINATOR:
                slots.append(0)
            elif name == CLIENT:
                assert index is not None
                slots.append(self.clients[index])
            elif name == CLIENTS:
                slots.extend(self.clients)
            elif name == CLUSTER:
                slots.append(self.cluster)
            elif name == BUDGETS:
                slots.append(self.budgets)
            elif name == ACKNOWLEDGED:
                slots.append(self.acknowledged)
            else:
                assert name == STATE
                slots.extend(range(self.size))
        return tuple(slots)

    def state_of(self, components: tuple[object, ...]) -> WorldState:
        """The world state of a tuple of components (the derived slots are left out)."""
        n = len(self.clients)
        return WorldState(
            components[0],  # type: ignore[arg-type]
            components[1 : n + 1],  # type: ignore[arg-type]
            components[n + 1],  # type: ignore[arg-type]
            components[n + 2],  # type: ignore[arg-type]
            components[n + 3],  # type: ignore[arg-type]
            components[n + 4],  # type: ignore[arg-type]
        )

    def components_of(self, state: WorldState) -> tuple[object, ...]:
        """The components of a world state (derived slots computed)."""
        return (
            state.coordinator,
            *state.clients,
            state.cluster,
            state.budgets,
            state.acknowledged,
            state.step_problems,
            held(state.clients),
            committed(state.coordinator),
            *(head(slot) for slot in state.clients),
        )


def apply_update(value: Any, update: Hashable) -> Any:
    """A component after a step's update: a response delivered to a client (if its connection
    is the one the response is addressed to), a client's handled request taken off its queue, a
    closed connection's parked requests answered into the void, or offsets acknowledged,
    forgotten or expired."""
    parts = cast(tuple[Any, ...], update)
    if parts[0] == "deliver":
        _, incarnation, correlation_id, body = parts
        if value.incarnation != incarnation:
            return value  # the connection closed: nobody reads this response
        return evolve(value, inbound=(*value.inbound, (correlation_id, body)))
    if parts[0] == "pop":
        return evolve(value, outbound=value.outbound[1:])
    if parts[0] == "close":
        return close_connection(value, parts[1])
    if parts[0] == "forget":
        return ()  # the group was deleted, and its offsets with it
    if parts[0] == "expired":
        return tuple(entry for entry in value if _key(entry[0]) not in parts[1])
    _, accepted = parts
    latest = dict(value)
    latest.update(accepted)
    return tuple(sorted(latest.items()))


class ComponentDigests:
    """Stable digests of a world's components: a part's remembered digest (the one fingerprints
    use), or the fingerprint of a plain value (tuples of offsets, findings, member ids),
    remembered by value."""

    def __init__(self) -> None:
        self._tuples: dict[tuple[object, ...], int] = {}

    def __call__(self, value: object) -> int:
        if type(value) is tuple:
            digest = self._tuples.get(value)
            if digest is None:
                if len(self._tuples) >= MEMO_LIMIT:
                    self._tuples.clear()
                digest = self._tuples[value] = fingerprint(value)
            return digest
        return int.from_bytes(part_digest(value)[:8], "big")


class WorldForm:
    """The world's `after_step` and `canonical` as pieces of one component each
    (`checker.model.CanonicalForm`), which the engine remembers by component:

    - member ids compacted: the coordinator, the clients and `held` hold member ids; their
      union fixes the renumbering (`canonical.compaction_of`) and each is renamed alone (the
      coordinator's member counter set too);
    - each client's connection normalized (correlation ids 1..k, incarnation 0), the
      coordinator's parked requests following it;
    - interchangeable clients sorted by their text; the coordinator's parked requests and the
      step's findings follow their client.

    `held` is derived from the clients. The pieces are the functions `canonical.py` builds the
    representative with, so the canonical states are the same (the presets' counts say so).
    """

    def __init__(self, world: GroupWorld) -> None:
        at = world.layout
        self._world = world
        self._clients = at.clients
        self.renamed_slots: tuple[int, ...] = (0, *at.clients)
        self.normalized_slots: tuple[int, ...] = at.clients
        self.referring_slots: tuple[int, ...] = (0, at.problems)
        self.classes: tuple[tuple[int, ...], ...] = tuple(
            tuple(1 + index for index in members) for members in world.symmetry_classes
        )
        self.derived: tuple[tuple[int, tuple[int, ...], Callable[..., Any]], ...] = (
            (at.held, at.clients, lambda *slots: held(slots)),
            (at.committed, (0,), committed),
            *(
                (head_slot, (slot,), head)
                for head_slot, slot in zip(at.heads, at.clients, strict=True)
            ),
        )

    def names(self, slot: int, value: Any) -> frozenset[str]:
        """The member ids a component holds."""
        if slot == 0:
            return coordinator_member_ids(value)
        return slot_member_ids(value)

    def renaming(self, names: frozenset[str]) -> Hashable:
        """(the renamed ids, the coordinator's next member number) of a world holding `names`."""
        if not self._world.compact_ids:
            return None
        mapping, next_seq = compaction_of(names - {""})
        return tuple(sorted(mapping.items())), next_seq

    def rename(self, slot: int, value: Any, renaming: Hashable) -> Any:
        """A component with the member ids renamed (the coordinator's counter set too)."""
        if renaming is None:
            return value
        pairs, next_seq = cast(tuple[tuple[tuple[str, str], ...], int], renaming)
        mapping = dict(pairs)
        renamed = rewrite_strings(value, mapping) if mapping else value
        if slot == 0 and renamed.next_member_seq != next_seq:
            renamed = evolve(renamed, next_member_seq=next_seq)
        return renamed

    def normal(self, slot: int, value: Any) -> tuple[Any, Hashable | None]:
        """A client with its connection normalized, and how its refs were renamed."""
        normalized = slot_normal_form(slot - 1, value)
        if normalized is None:
            return value, None
        slot_value, renamed = normalized
        return slot_value, tuple(renamed.items())

    def retarget(self, slot: int, value: Any, tokens: tuple[Hashable | None, ...]) -> Any:
        """The coordinator with its parked requests following their normalized connections."""
        if slot != 0:
            return value
        mapping: dict[RequestRef, RequestRef] = {}
        for token in tokens:
            if token is not None:
                mapping.update(cast(tuple[tuple[RequestRef, RequestRef], ...], token))
        return self._world.canonicalizer.rename_refs(value, mapping)

    def order_key(self, value: Any) -> Any:
        """A client's text (the symmetric minimum sorts by it)."""
        return canonical_repr(value)

    def permute(self, slot: int, value: Any, order: tuple[int, ...]) -> Any:
        """The coordinator's parked requests and the step's findings following their client."""
        clients = tuple(order[slot_index] - 1 for slot_index in self._clients)
        if slot == 0:
            return self._world.canonicalizer.permuted_coordinator(value, clients)
        return permuted_findings(value, clients)


# -- the properties, as the checker's declarations ----------------------------------------------


def declared_properties(world: GroupWorld) -> tuple[Property, ...]:
    """Every property a group world checks, declared for the checker: the world's type
    invariants first, then the coordinator's and each consumer's invariants, the world's
    others; every action property (each reported by the steps that judge it); Convergence.

    The registries are read when the world is built (module attributes, so a property added to
    one is checked by every world built after)."""
    layout = world.layout
    clients = range(len(layout.clients))
    registry = [p for p in world_properties.WORLD_PROPERTIES if _enabled(p, world)]
    world_invariants = [p for p in registry if isinstance(p, WorldInvariant)]
    declared: list[Property] = [_invariant(world, p) for p in world_invariants if p.checked_first]
    declared += [
        Invariant(
            p.name,
            p.description,
            parts=(Part((0,), partial(_coordinator_problems, world, p.name)),),
        )
        for p in coordinator_properties.INVARIANTS
    ]
    declared += [
        Invariant(
            p.name,
            p.description,
            parts=tuple(
                Part((layout.clients[index],), partial(_consumer_problems, world, p.name, index))
                for index in clients
            ),
        )
        for p in consumer_properties.CONSUMER_INVARIANTS
    ]
    declared += [_invariant(world, p) for p in world_invariants if not p.checked_first]
    # What each action property's judgement is about, for counterexamples (`reads`): the
    # coordinator's own, a client's own, or (the world's) the coordinator and its clients.
    declared += [
        ActionProperty(p.name, p.description, reads=(0,))
        for p in coordinator_properties.ACTION_PROPERTIES
    ]
    declared += [
        ActionProperty(p.name, p.description, reads=layout.clients)
        for p in consumer_properties.CONSUMER_ACTION_PROPERTIES
    ]
    declared += [
        ActionProperty(p.name, p.description, reads=(0, *layout.clients))
        for p in registry
        if isinstance(p, WorldActionProperty)
    ]
    declared += [
        LivenessProperty(
            p.name,
            p.description,
            goal=_part(world, p.goal),
            applies=_part(world, p.applies),
            fair_actions=p.fair_actions,
            fair_per_label=True,
            cut_short_by=p.cut_short_by,
        )
        for p in registry
        if isinstance(p, WorldLiveness)
    ]
    return tuple(declared)


def _enabled(prop: Any, world: GroupWorld) -> bool:
    enabled = getattr(prop, "enabled", None)
    return enabled is None or bool(enabled(world.parameters))


def _invariant(world: GroupWorld, prop: WorldInvariant) -> Invariant[WorldState]:
    """A world invariant with its parts over slots (a part over CLIENT once per client)."""
    parts: list[Part] = []
    for part in prop.parts:
        if CLIENT in part.reads:
            parts += [_part(world, part, index) for index in range(len(world.layout.clients))]
        else:
            parts.append(_part(world, part))
    return Invariant(prop.name, prop.description, parts=tuple(parts))


def _part(world: GroupWorld, part: WorldPart, index: int | None = None) -> Part:
    """A world part as a checker part over the slots it reads."""
    layout = world.layout
    reads = layout.slots_of(part.reads, index)
    return Part(reads, partial(_evaluate, world, part, index), part.cached)


def _evaluate(world: GroupWorld, part: WorldPart, index: int | None, *components: Any) -> Any:
    """Call a world part's check with the named components it reads."""
    arguments: list[Any] = []
    position = 0
    n = len(world.layout.clients)
    for name in part.reads:
        if name == CLIENT:
            assert index is not None
            arguments.append(IndexedClient(index, components[position]))
            position += 1
        elif name == CLIENTS:
            arguments.append(tuple(components[position : position + n]))
            position += n
        elif name == STATE:
            arguments.append(world.layout.state_of(components[position:]))
            position = len(components)
        else:
            arguments.append(components[position])
            position += 1
    return part.check(world, *arguments)


def _coordinator_problems(world: GroupWorld, name: str, coordinator: CoordinatorState) -> list[str]:
    return world.coordinator_invariants(coordinator).get(name, [])


def _consumer_problems(world: GroupWorld, name: str, index: int, slot: ClientSlot) -> list[str]:
    return [
        f"{client_name(index)}: {problem}"
        for problem in world.consumer_invariants(slot.consumer).get(name, [])
    ]


# -- derived slots and helpers ------------------------------------------------------------------


def committed(coordinator: CoordinatorState) -> tuple[tuple[TopicPartition, int], ...]:
    """The group's committed offsets, as the log has them (a client's new positions)."""
    return tuple(
        (TopicPartition(key.topic, key.partition), value.offset)
        for key, value in coordinator.log.entries
        if isinstance(key, OffsetCommitKey)
        and key.group_id == GROUP_ID
        and isinstance(value, OffsetCommitValue)
    )


def head(slot: ClientSlot) -> tuple[int, tuple[int, Request] | None]:
    """A client's incarnation and the next request in its outbound queue."""
    return slot.incarnation, slot.outbound[0] if slot.outbound else None


def held(clients: Sequence[ClientSlot]) -> tuple[str, ...]:
    """The member ids running clients (not failed, not closed) use or are about to: their
    generation's, one on its way to them (a MEMBER_ID_REQUIRED answer in the inbound queue),
    one they already sent a request with."""
    if len(clients) == 1:
        return _held_by(clients[0])
    found: set[str] = set()
    for slot in clients:
        found.update(_held_by(slot))
    return tuple(sorted(found))


def _held_by(slot: ClientSlot) -> tuple[str, ...]:
    """The member ids one client holds (see `held`), remembered on the slot."""
    cached: tuple[str, ...] | None = slot.__dict__.get(HELD_CACHE)
    if cached is not None:
        return cached
    consumer = slot.consumer
    found: set[str] = set()
    if consumer.failure is None and not consumer.closed:
        found.add(consumer.generation.member_id)
        found.update(
            member_id
            for _, body in slot.inbound
            if isinstance(member_id := getattr(body, "member_id", None), str)
        )
        found.update(
            member_id
            for _, request in slot.outbound
            if isinstance(member_id := getattr(request, "member_id", None), str)
        )
    result = tuple(sorted(found))
    object.__setattr__(slot, HELD_CACHE, result)
    return result


def close_connection(coordinator: CoordinatorState, connection: str) -> CoordinatorState:
    """The coordinator state with requests parked for `connection` answering into the void."""
    return map_coordinator_refs(
        coordinator, lambda ref: CLOSED_REF if ref.connection == connection else ref
    )


def _key(partition: Any) -> tuple[str, int]:
    """A topic partition as a plain pair."""
    return (partition.topic, partition.partition)


def offset_partitions(offsets: Sequence[tuple[Any, Any]]) -> set[tuple[str, int]]:
    """The partitions of a group's committed offsets, as (topic, partition)."""
    return {_key(partition) for partition, _ in offsets}
