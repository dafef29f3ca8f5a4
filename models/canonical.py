"""Canonical forms of world states: names that carry no meaning are renamed to fixed ones.

Three kinds of names in a world state are arbitrary, and two states that differ only in them
behave alike (they are bisimilar, the renaming mapping one run onto the other):

- correlation ids and connection incarnations: only equality and order matter (responses are
  matched to requests by id; a consumer keeps its requests in the order it sent them);
- which of several identically configured clients sits in which slot (symmetry);
- member ids, up to their order: the coordinator generates "<client id>-<n>" and only compares
  ids for equality and order (members are sorted by id, and so are the assignors' inputs).

`representative` (used by `GroupWorld.representative`) renumbers correlation ids 1..k in
order, sets incarnations to 0 and, with symmetry, sorts interchangeable client slots.
Member ids are compacted inside every transition instead (`compact_member_ids`): the world
keeps ids numbered 0..k-1 per prefix in creation order, so a new id always sorts after the
existing ones of its prefix. Kafka's ids end in a random UUID and may sort anywhere; the world
explores one of those orders, and reusing a number is safe because nothing in the world still
mentions a forgotten id.

Fingerprints digest the digests of a world state's parts, each over its `canonical_repr`
(world_state.py), which prints the coordinator's frozensets sorted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, Final, Literal, TypeVar

from groupspec.checker.rewrite import rewrite_strings
from groupspec.spec.consumer.state import ConsumerState
from groupspec.spec.log import GroupMetadataValue
from groupspec.spec.member_ids import request_member_ids, response_member_ids
from groupspec.spec.state import CoordinatorState, Group
from groupspec.vocabulary.requests import RequestRef

from .memo import Memo
from .world_state import (
    IDS_CACHE,
    PARKED_CACHE,
    ClientSlot,
    WorldState,
    canonical_repr,
    client_name,
    connection_name,
    evolve,
)

T = TypeVar("T")


class _Tie(Enum):
    """`Canonicalizer._order`'s answer when interchangeable slots tie (a one-member enum, so the
    type checker narrows `order is _TIED`)."""

    TIED = "tied"


_TIED: Final = _Tie.TIED

# Compaction keeps member numbers single-digit so that string order equals creation order.
MAX_IDS_PER_PREFIX = 10


def map_coordinator_refs(
    state: CoordinatorState, rename: Callable[[RequestRef], RequestRef]
) -> CoordinatorState:
    """The coordinator state with every parked request's RequestRef renamed.

    Parked JoinGroup and SyncGroup requests (`awaiting_join`, `awaiting_sync`) are the only
    places where the coordinator keeps a RequestRef.
    """
    groups = []
    changed = False
    for group in state.groups:
        members = []
        group_changed = False
        for member in group.members:
            join = rename(member.awaiting_join) if member.awaiting_join is not None else None
            sync = rename(member.awaiting_sync) if member.awaiting_sync is not None else None
            if join != member.awaiting_join or sync != member.awaiting_sync:
                member = evolve(member, awaiting_join=join, awaiting_sync=sync)
                group_changed = True
            members.append(member)
        if group_changed:
            group = evolve(group, members=tuple(members))
            changed = True
        groups.append(group)
    return evolve(state, groups=tuple(groups)) if changed else state


# -- member ids -------------------------------------------------------------------------------


def _group_member_ids(group: Group) -> Iterable[str]:
    yield from (member.member_id for member in group.members)
    yield from (pending.member_id for pending in group.pending_members)
    yield from group.pending_sync_members
    if group.leader_id is not None:
        yield group.leader_id


def _consumer_member_ids(consumer: ConsumerState) -> Iterable[str]:
    yield consumer.generation.member_id
    yield from (entry.sent_generation.member_id for entry in consumer.in_flight)


# Member-id sets are remembered on the (immutable) objects, like their canonical reprs.
_IDS_CACHE = IDS_CACHE


def coordinator_member_ids(coordinator: CoordinatorState) -> frozenset[str]:
    cached = coordinator.__dict__.get(_IDS_CACHE)
    if cached is not None:
        return cached
    ids: set[str] = set()
    for group in coordinator.groups:
        ids.update(_group_member_ids(group))
    for _key, value in coordinator.log.entries:
        if isinstance(value, GroupMetadataValue):
            if value.leader is not None:
                ids.add(value.leader)
            ids.update(member.member_id for member in value.members)
    result = frozenset(ids)
    object.__setattr__(coordinator, _IDS_CACHE, result)
    return result


def _cached_ids(part: Any, ids_of: Callable[[Any], Iterable[str]]) -> frozenset[str]:
    cached = part.__dict__.get(_IDS_CACHE)
    if cached is None:
        cached = frozenset(ids_of(part))
        object.__setattr__(part, _IDS_CACHE, cached)
    return cached


def slot_member_ids(slot: ClientSlot) -> frozenset[str]:
    cached = slot.__dict__.get(_IDS_CACHE)
    if cached is not None:
        return cached
    # A new slot is mostly old parts (its consumer, its messages): their ids are remembered.
    ids = _cached_ids(slot.consumer, _consumer_member_ids)
    if slot.outbound or slot.inbound:
        ids = ids.union(
            *[_cached_ids(request, request_member_ids) for _, request in slot.outbound],
            *[_cached_ids(body, response_member_ids) for _, body in slot.inbound],
        )
    object.__setattr__(slot, _IDS_CACHE, ids)
    return ids


def member_ids(state: WorldState) -> set[str]:
    """Every member id mentioned anywhere in the world (coordinator, log, clients, messages)."""
    ids = set(coordinator_member_ids(state.coordinator))
    for slot in state.clients:
        ids.update(slot_member_ids(slot))
    ids.discard("")
    return ids


def _split(member_id: str) -> tuple[str, int]:
    prefix, _, number = member_id.rpartition("-")
    return prefix, int(number)


def compact_member_ids(state: WorldState) -> WorldState:
    """The world with member ids renumbered 0..k-1 per prefix in creation order.

    The coordinator's counter becomes the largest k, so the next id it generates is fresh and
    sorts after every existing id of its prefix.
    """
    mapping, next_seq = compaction(state)
    return _compact(state, mapping, next_seq)


def compaction(state: WorldState) -> tuple[dict[str, str], int]:
    """How `compact_member_ids` renames the world's member ids (only those that change), and the
    coordinator's member counter afterwards."""
    return compaction_of(frozenset(member_ids(state)))


def compaction_of(ids: frozenset[str]) -> tuple[dict[str, str], int]:
    """How to compact a world whose member ids are `ids`: the renaming and the next number."""
    by_prefix: dict[str, list[int]] = {}
    for member_id in ids:
        prefix, number = _split(member_id)
        by_prefix.setdefault(prefix, []).append(number)
    mapping: dict[str, str] = {}
    for prefix, numbers in by_prefix.items():
        if len(numbers) > MAX_IDS_PER_PREFIX:
            raise RuntimeError(
                f"more than {MAX_IDS_PER_PREFIX} member ids with prefix {prefix!r} are alive; "
                "the world's member-id order assumes single-digit numbers"
            )
        for new, old in enumerate(sorted(numbers)):
            if new != old:
                mapping[f"{prefix}-{old}"] = f"{prefix}-{new}"
    next_seq = max((len(numbers) for numbers in by_prefix.values()), default=0)
    return mapping, next_seq


def _compact(state: WorldState, mapping: dict[str, str], next_seq: int) -> WorldState:
    if mapping:
        state = rewrite_strings(state, mapping)
    if state.coordinator.next_member_seq != next_seq:
        state = evolve(state, coordinator=evolve(state.coordinator, next_member_seq=next_seq))
    return state


# -- connections, correlation ids, sets, symmetry ---------------------------------------------


def slot_normal_form(
    index: int, slot: ClientSlot
) -> tuple[ClientSlot, dict[RequestRef, RequestRef]] | None:
    """The slot with correlation ids 1..k and incarnation 0, and how its refs were renamed."""
    consumer = slot.consumer
    ids = [entry.correlation_id for entry in consumer.in_flight]
    renumber = {old: new for new, old in enumerate(ids, start=1)}
    if (
        slot.incarnation == 0
        and consumer.next_correlation_id == len(ids) + 1
        and all(old == new for old, new in renumber.items())
    ):
        return None
    consumer = evolve(
        consumer,
        in_flight=tuple(
            evolve(entry, correlation_id=renumber[entry.correlation_id])
            for entry in consumer.in_flight
        ),
        next_correlation_id=len(ids) + 1,
    )
    normalized = evolve(
        slot,
        consumer=consumer,
        incarnation=0,
        outbound=tuple((renumber[cid], request) for cid, request in slot.outbound),
        inbound=tuple((renumber[cid], body) for cid, body in slot.inbound),
    )
    old_name, new_name = connection_name(index, slot.incarnation), connection_name(index, 0)
    refs = {RequestRef(old_name, old): RequestRef(new_name, new) for old, new in renumber.items()}
    return normalized, refs


def _parked_refs(coordinator: CoordinatorState) -> tuple[RequestRef, ...]:
    """Every RequestRef the coordinator keeps (parked JoinGroup and SyncGroup requests)."""
    cached = coordinator.__dict__.get(PARKED_CACHE)
    if cached is not None:
        return cached
    refs = tuple(
        ref
        for group in coordinator.groups
        for member in group.members
        for ref in (member.awaiting_join, member.awaiting_sync)
        if ref is not None
    )
    object.__setattr__(coordinator, PARKED_CACHE, refs)
    return refs


def permuted_findings(
    findings: tuple[tuple[str, str], ...], order: tuple[int, ...]
) -> tuple[tuple[str, str], ...]:
    """A step's action-property findings after `permute_clients(order)`.

    A finding about a client names its slot ("c1: ..."); the name follows the client, as
    connection names do, and findings stay in slot order (the order a step reports them in).
    """
    if not findings:
        return findings
    new_index = {client_name(old): new for new, old in enumerate(order)}
    renamed: list[tuple[int, str, str]] = []
    for which, detail in findings:
        prefix, colon, rest = detail.partition(": ")
        new = new_index.get(prefix) if colon else None
        if new is None:
            renamed.append((-1, which, detail))
        else:
            renamed.append((new, which, f"{client_name(new)}: {rest}"))
    renamed.sort(key=lambda finding: finding[0])  # stable: a client's findings keep their order
    return tuple((which, detail) for _, which, detail in renamed)


class Canonicalizer:
    """Representatives of world states (connections normalized, then the symmetric minimum).

    A model owns one. With `memoize` it remembers renamed coordinators and normalized slots by
    their canonical text: the same few slots and coordinators recur in thousands of world
    states, and a remembered result is one shared object whose own text is already known, so
    fingerprinting the representative costs little. Without `memoize` every call computes (the
    module's functions use that form); the results are equal either way.
    """

    def __init__(self, classes: tuple[tuple[int, ...], ...] = (), memoize: bool = True) -> None:
        self.classes = classes
        self._class_lists = [sorted(members) for members in classes]
        self.memoize = memoize
        self._slots: Memo[
            tuple[int, str], tuple[ClientSlot, dict[RequestRef, RequestRef]] | None
        ] = Memo(memoize)
        # (slot index, slot text) -> normalized slot (shared), its text, the renamed refs.
        self._normal: Memo[
            tuple[int, str], tuple[ClientSlot, str, dict[RequestRef, RequestRef]]
        ] = Memo(memoize)
        self._parts: Memo[str, object] = Memo(memoize)
        self._rewritten: Memo[tuple[str, tuple[tuple[str, str], ...]], Any] = Memo(memoize)
        self._compactions: Memo[frozenset[str], tuple[dict[str, str], int]] = Memo(memoize)
        self._renamed: Memo[
            tuple[str, tuple[tuple[RequestRef, RequestRef], ...]], CoordinatorState
        ] = Memo(memoize)

    def compact_member_ids(self, state: WorldState) -> WorldState:
        """`compact_member_ids`, with the renaming remembered by the set of ids in the world."""
        ids = coordinator_member_ids(state.coordinator).union(
            *[slot_member_ids(slot) for slot in state.clients]
        )
        mapping, next_seq = self._compactions.get(ids, lambda: compaction_of(ids - {""}))
        if mapping and self.memoize:
            state = self._rename_member_ids(state, mapping)
            mapping = {}
        return _compact(state, mapping, next_seq)

    def _rename_member_ids(self, state: WorldState, mapping: dict[str, str]) -> WorldState:
        """`rewrite_strings(state, mapping)`, with the coordinator and the slots remembered by
        their text: a rewrite walks every field of every part, and the same parts are renamed
        the same way in many states."""
        key = tuple(sorted(mapping.items()))
        changes: dict[str, Any] = {}
        for name in state.__dataclass_fields__:
            value = getattr(state, name)
            if name == "coordinator":
                new = self._rewrite(value, key, mapping)
            elif name == "clients":
                slots = tuple([self._rewrite(slot, key, mapping) for slot in value])
                new = value if all(a is b for a, b in zip(slots, value, strict=True)) else slots
            else:
                new = rewrite_strings(value, mapping)
            if new is not value:
                changes[name] = new
        return evolve(state, **changes) if changes else state

    def _rewrite(self, part: T, key: tuple[tuple[str, str], ...], mapping: dict[str, str]) -> T:
        return self._rewritten.get(
            (canonical_repr(part), key), lambda: rewrite_strings(part, mapping)
        )

    def representative(self, state: WorldState) -> WorldState:
        """Connections normalized, then (with symmetry classes) the symmetric minimum, with
        equal parts shared (see `share_parts`)."""
        if not self.memoize:
            state = self.normalize_connections(state)
            return self.symmetric_minimum(state) if self.classes else state
        # One pass over the slots does the work of normalize_connections and share_parts, and
        # keeps each slot's text for the symmetric minimum: remembered normalized slots are
        # shared objects whose texts are known.
        slots: list[ClientSlot] = []
        texts: list[str] = []
        refs: dict[RequestRef, RequestRef] = {}
        for index, slot in enumerate(state.clients):
            text = canonical_repr(slot)
            consumer = slot.consumer
            in_flight = consumer.in_flight
            if (
                slot.incarnation == 0
                and consumer.next_correlation_id == len(in_flight) + 1
                and all(entry.correlation_id == n for n, entry in enumerate(in_flight, start=1))
            ):
                shared = self._parts.lookup(text)
                if shared is None:
                    shared = self._parts.store(text, slot)
                slots.append(shared)  # type: ignore[arg-type]
                texts.append(text)
                continue
            entry = self._normal.lookup((index, text))
            if entry is None:
                normalized, renamed = slot_normal_form(index, slot)  # type: ignore[misc]
                normalized = self._share(normalized)
                entry = (normalized, canonical_repr(normalized), renamed)
                self._normal.store((index, text), entry)
            slots.append(entry[0])
            texts.append(entry[1])
            refs.update(entry[2])
        coordinator = self.rename_refs(state.coordinator, refs) if refs else state.coordinator
        order = self._order(texts) if self.classes else None
        if order is not None:
            if order is _TIED:
                # Rare (interchangeable slots with equal texts): compare whole worlds.
                partial = evolve(state, coordinator=coordinator, clients=tuple(slots))
                return self.share_parts(self.symmetric_minimum(partial))
            coordinator = self.permuted_coordinator(coordinator, order)
            slots = [slots[old] for old in order]
            findings = permuted_findings(state.step_problems, order)
        else:
            findings = state.step_problems
        coordinator = self._share(coordinator)
        budgets = self._share(state.budgets)
        clients = state.clients
        if (
            coordinator is state.coordinator
            and budgets is state.budgets
            and findings is state.step_problems
            and all(a is b for a, b in zip(slots, clients, strict=True))
        ):
            return state
        return evolve(
            state,
            coordinator=coordinator,
            clients=tuple(slots),
            budgets=budgets,
            step_problems=findings,
        )

    def _order(self, texts: list[str]) -> tuple[int, ...] | Literal[_Tie.TIED] | None:
        """Which old slot each position of the symmetric minimum holds, None when that is the
        identity, `_TIED` when interchangeable slots have equal texts (as symmetric_minimum)."""
        order: list[int] | None = None
        for members in self._class_lists:
            ranked = sorted(members, key=texts.__getitem__)
            previous = None
            for index in ranked:
                text = texts[index]
                if text == previous:
                    return _TIED
                previous = text
            if ranked != members:
                if order is None:
                    order = list(range(len(texts)))
                for position, index in zip(members, ranked, strict=True):
                    order[position] = index
        return None if order is None else tuple(order)

    def permuted_coordinator(
        self, coordinator: CoordinatorState, order: tuple[int, ...]
    ) -> CoordinatorState:
        """The coordinator of `permute_clients`: parked refs follow their client."""
        names = {
            connection_name(old, 0): connection_name(new, 0)
            for new, old in enumerate(order)
            if new != old
        }
        refs = {
            ref: RequestRef(names[ref.connection], ref.correlation_id)
            for ref in _parked_refs(coordinator)
            if ref.connection in names
        }
        return self.rename_refs(coordinator, refs) if refs else coordinator

    def share_parts(self, state: WorldState) -> WorldState:
        """The state with its coordinator, slots and budgets replaced by the first equal ones
        seen (by canonical text), so equal parts of different states are one object.

        Their texts are needed for the fingerprint anyway. Sharing keeps the frontier small,
        lets caches on a part serve every state that has it, and lets the multi-process engine
        send a part once (checker/channel.py). Without `memoize` the state is returned as is.
        """
        if not self.memoize:
            return state
        coordinator = self._share(state.coordinator)
        clients = tuple([self._share(slot) for slot in state.clients])
        budgets = self._share(state.budgets)
        if (
            coordinator is state.coordinator
            and budgets is state.budgets
            and all(a is b for a, b in zip(clients, state.clients, strict=True))
        ):
            return state
        return evolve(state, coordinator=coordinator, clients=clients, budgets=budgets)

    def _share(self, part: T) -> T:
        text = canonical_repr(part)
        shared = self._parts.lookup(text)
        if shared is None:
            return self._parts.store(text, part)  # type: ignore[return-value]
        return shared  # type: ignore[return-value]

    def rename_refs(
        self, coordinator: CoordinatorState, mapping: dict[RequestRef, RequestRef]
    ) -> CoordinatorState:
        """`map_coordinator_refs` with a table of renamed refs (others stay)."""
        pairs = tuple((ref, mapping[ref]) for ref in _parked_refs(coordinator) if ref in mapping)
        if all(old == new for old, new in pairs):
            return coordinator
        renames = dict(pairs)
        return self._renamed.get(
            (canonical_repr(coordinator), pairs),
            lambda: map_coordinator_refs(coordinator, lambda ref: renames.get(ref, ref)),
        )

    def normalize_slot(
        self, index: int, slot: ClientSlot
    ) -> tuple[ClientSlot, dict[RequestRef, RequestRef]] | None:
        """`normalize_slot`, remembered by the slot's text when there is something to do."""
        consumer = slot.consumer
        in_flight = consumer.in_flight
        if (
            slot.incarnation == 0
            and consumer.next_correlation_id == len(in_flight) + 1
            and all(entry.correlation_id == n for n, entry in enumerate(in_flight, start=1))
        ):
            return None
        return self._slots.get((index, canonical_repr(slot)), lambda: slot_normal_form(index, slot))

    def normalize_connections(self, state: WorldState) -> WorldState:
        """Correlation ids renumbered 1..k per client in sending order, incarnations set to 0."""
        refs: dict[RequestRef, RequestRef] = {}
        clients = list(state.clients)
        changed = False
        for index, slot in enumerate(state.clients):
            normalized = self.normalize_slot(index, slot)
            if normalized is not None:
                clients[index], renamed = normalized
                refs.update(renamed)
                changed = True
        if not changed:
            return state
        coordinator = self.rename_refs(state.coordinator, refs) if refs else state.coordinator
        return evolve(state, coordinator=coordinator, clients=tuple(clients))

    def permute_clients(self, state: WorldState, order: tuple[int, ...]) -> WorldState:
        """The world whose slot j holds old slot `order[j]`; connection names follow their
        client. Incarnations must already be normalized to 0, so a connection name depends only
        on the slot."""
        names = {
            connection_name(old, 0): connection_name(new, 0)
            for new, old in enumerate(order)
            if new != old
        }
        if not names:
            return state
        refs = {
            ref: RequestRef(names[ref.connection], ref.correlation_id)
            for ref in _parked_refs(state.coordinator)
            if ref.connection in names
        }
        coordinator = self.rename_refs(state.coordinator, refs) if refs else state.coordinator
        clients = tuple(state.clients[old] for old in order)
        findings = permuted_findings(state.step_problems, order)
        return evolve(state, coordinator=coordinator, clients=clients, step_problems=findings)

    def symmetric_minimum(self, state: WorldState) -> WorldState:
        """The canonical member of `state`'s orbit under permutations within each class.

        Slots are sorted within their class by their own repr (which names no connection); only
        slots that tie are tried in every order, and the world with the smallest repr wins.
        """
        slot_keys = [canonical_repr(slot) for slot in state.clients]
        order = list(range(len(state.clients)))
        tie_groups: list[list[int]] = []
        for members in self.classes:
            ranked = sorted(members, key=lambda index: slot_keys[index])
            for position, index in zip(sorted(members), ranked, strict=True):
                order[position] = index
            for _, tied in itertools.groupby(ranked, key=lambda index: slot_keys[index]):
                tied_list = list(tied)
                if len(tied_list) > 1:
                    tie_groups.append(tied_list)
        base = self.permute_clients(state, tuple(order))
        if not tie_groups:
            return base
        best = base
        best_key = canonical_repr(base)
        # Positions of tied slots in `order` are fixed; try every arrangement of the tied slots.
        positions = [[order.index(index) for index in tied] for tied in tie_groups]
        for arrangement in itertools.product(*(itertools.permutations(t) for t in tie_groups)):
            candidate_order = list(order)
            for slots, places in zip(arrangement, positions, strict=True):
                for place, index in zip(places, slots, strict=True):
                    candidate_order[place] = index
            candidate = self.permute_clients(state, tuple(candidate_order))
            key = canonical_repr(candidate)
            if key < best_key:
                best, best_key = candidate, key
        return best


def normalize_connections(state: WorldState) -> WorldState:
    """Correlation ids renumbered 1..k per client in sending order, incarnations set to 0."""
    return Canonicalizer(memoize=False).normalize_connections(state)


def permute_clients(state: WorldState, order: tuple[int, ...]) -> WorldState:
    """The world whose slot j holds old slot `order[j]`; connection names follow their client.

    Incarnations must already be normalized to 0, so a connection name depends only on the slot.
    """
    return Canonicalizer(memoize=False).permute_clients(state, order)


def symmetric_minimum(state: WorldState, classes: tuple[tuple[int, ...], ...]) -> WorldState:
    """The canonical member of `state`'s orbit under permutations within each class (see
    `Canonicalizer.symmetric_minimum`)."""
    return Canonicalizer(classes, memoize=False).symmetric_minimum(state)
