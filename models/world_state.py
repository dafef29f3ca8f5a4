"""The state of a closed group world: the coordinator, one slot per client, budgets and ghosts.

Everything is immutable and kept in a canonical order (DESIGN decision 3):

- `WorldState.coordinator` is the coordinator specification's own state (including its
  `__consumer_offsets` log, so failover replays it);
- `WorldState.clients` has one `ClientSlot` per client, in client order: the consumer
  specification's state, the connection incarnation, the ordered outbound queue of requests
  (correlation id, request) the coordinator has not handled yet, the ordered inbound queue of
  responses (correlation id, body) the client has not read yet, the positions the client has
  processed per partition it owns;
- `WorldState.budgets` holds what is left of every fault budget and of the close and commit
  budgets;
- `WorldState.cluster` is the current topic metadata (partition growth changes it);
- ghosts for the properties: `acknowledged` is the last offset the coordinator accepted for
  each partition (Durability) and `step_problems` the action-property violations of the step
  that produced this state (empty in every state a correct step reaches).

Requests in flight are the consumer's own `in_flight` entries; a request is either still in the
outbound queue, parked at the coordinator (its RequestRef is in a member's `awaiting_join` or
`awaiting_sync`), or answered and waiting in the inbound queue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from hashlib import blake2b
from types import MappingProxyType
from typing import Any, TypeVar

from groupspec.spec.assignment import Cluster
from groupspec.spec.consumer import ConsumerState
from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary.requests import Request, RequestRef, TopicPartition
from groupspec.vocabulary.responses import ResponseBody

GROUP_ID = "g"
CLIENT_ID = "consumer"
# Where a response goes when its connection is closed: nobody reads it.
CLOSED_CONNECTION = "closed"
CLOSED_REF = RequestRef(CLOSED_CONNECTION, 0)
# A budget of -1 never runs out.
UNBOUNDED = -1

T = TypeVar("T")


# Everything the models remember on their immutable values, outside the fields (equality and
# hashing ignore it): the canonical text here, member ids and parked refs in canonical.py, the
# state invariants' findings of a coordinator or consumer state and the member ids a client
# holds in group_world.py.
_REPR_CACHE = "_canonical_repr"
IDS_CACHE = "_member_ids"
PARKED_CACHE = "_parked_refs"
PROBLEMS_CACHE = "_state_problems"
HELD_CACHE = "_held"
_DIGEST_CACHE = "_digest"
REMEMBERED = (_REPR_CACHE, IDS_CACHE, PARKED_CACHE, PROBLEMS_CACHE, HELD_CACHE, _DIGEST_CACHE)
# Bytes of a part's digest in a world state's canonical encoding (see `WorldState.canonical_bytes`).
PART_DIGEST_BYTES = 16


def canonical_repr(value: Any) -> str:
    """A repr that is the same in every process: frozensets print sorted.

    Dataclasses print as `Name(field=value, ...)` over all their fields. The text of a frozen
    dataclass is remembered on the object itself (outside its fields, so equality and hashing
    are untouched): successors share most of their parts with their parent, so a state's text
    is mostly assembled from texts already computed.
    """
    kind = type(value)
    if kind is tuple:
        return _tuple_repr(value)
    fields = getattr(kind, "__dataclass_fields__", None)
    if fields is not None:
        cached = value.__dict__.get(_REPR_CACHE)
        if cached is not None:
            return cached
        return _dataclass_repr(value, kind, fields)
    if isinstance(value, frozenset):
        return "frozenset({" + ", ".join(sorted(canonical_repr(item) for item in value)) + "})"
    return repr(value)


def _tuple_repr(value: tuple[Any, ...]) -> str:
    texts = [_item_repr(item) for item in value]
    if len(texts) == 1:
        return f"({texts[0]},)"
    return "(" + ", ".join(texts) + ")"


def _item_repr(item: Any) -> str:
    # Inlined for the leaves that make up most of a state; the rest recurses.
    kind = type(item)
    if kind is str or kind is int or kind is bool or item is None:
        return repr(item)
    if kind is not tuple and hasattr(kind, "__dataclass_fields__"):
        cached = item.__dict__.get(_REPR_CACHE)
        if cached is not None:
            return cached
    return canonical_repr(item)


def _dataclass_repr(value: Any, kind: type, fields: dict[str, Any]) -> str:
    special = _TEXT_OF.get(kind)
    text = special(value) if special is not None else generic_dataclass_text(value, fields)
    object.__setattr__(value, _REPR_CACHE, text)
    return text


def generic_dataclass_text(value: Any, fields: dict[str, Any]) -> str:
    """`Name(field=value, ...)` over all fields, each printed by `canonical_repr`."""
    return (
        type(value).__qualname__
        + "("
        + ", ".join([name + "=" + _item_repr(getattr(value, name)) for name in fields])
        + ")"
    )


def _pairs_text(pairs: tuple[Any, ...]) -> str:
    # The text of a tuple of pairs (messages, positions, problems), as _tuple_repr prints it.
    if not pairs:
        return "()"
    texts = [
        "(" + _item_repr(item[0]) + ", " + _item_repr(item[1]) + ")"
        if type(item) is tuple and len(item) == 2
        else _item_repr(item)
        for item in pairs
    ]
    if len(texts) == 1:
        return "(" + texts[0] + ",)"
    return "(" + ", ".join(texts) + ")"


def evolve(value: T, **changes: Any) -> T:
    """`dataclasses.replace` for the world's frozen dataclasses, several times faster.

    The copy gets the fields (never what was remembered about the old value, see
    `REMEMBERED`) with `changes` applied, without running `__init__`. Classes with a
    `__post_init__` go through `dataclasses.replace`, so their checks still run.
    """
    kind = type(value)
    for base in kind.__mro__:
        if "__post_init__" in base.__dict__:
            return replace(value, **changes)  # type: ignore[type-var]
    fields = kind.__dataclass_fields__  # type: ignore[attr-defined]
    state = value.__dict__.copy()
    if len(state) != len(fields):
        for name in REMEMBERED:
            state.pop(name, None)
        if len(state) != len(fields):
            state = {name: state[name] for name in fields}
    state.update(changes)
    if len(state) != len(fields):
        unknown = sorted(changes.keys() - fields.keys())
        raise TypeError(f"{kind.__name__} has no fields {unknown}")
    copy = object.__new__(kind)
    object.__setattr__(copy, "__dict__", state)
    return copy


def part_digest(part: Any) -> bytes:
    """A BLAKE2b digest of a frozen dataclass's canonical encoding, remembered on the object:
    of its canonical text, except for a client slot, whose digest is made of its parts'
    digests (a new slot is mostly parts seen before, so its digest costs one short hash)."""
    cached = part.__dict__.get(_DIGEST_CACHE)
    if cached is None:
        if type(part) is ClientSlot:
            cached = _slot_digest(part)
        else:
            cached = text_digest(canonical_repr(part))
        object.__setattr__(part, _DIGEST_CACHE, cached)
    return cached


def _slot_digest(slot: ClientSlot) -> bytes:
    """A client slot's digest: of its consumer's digest, its incarnation, the digests of its
    queued messages (with their correlation ids) and the text of its positions. Every field is
    in it, at a fixed place, so equal slots have equal digests and different ones differ."""
    parts = [
        b"ClientSlot",
        part_digest(slot.consumer),
        str(slot.incarnation).encode(),
        b"out",
        *[str(cid).encode() + b":" + part_digest(message) for cid, message in slot.outbound],
        b"in",
        *[str(cid).encode() + b":" + part_digest(message) for cid, message in slot.inbound],
        b"at",
        _pairs_text(slot.positions).encode("utf-8"),
        b"upgraded" if slot.upgraded else b"",
    ]
    return blake2b(b"|".join(parts), digest_size=PART_DIGEST_BYTES).digest()


def text_digest(text: str) -> bytes:
    """A BLAKE2b digest of `text`, as long as a part's (`part_digest`)."""
    return blake2b(text.encode("utf-8"), digest_size=PART_DIGEST_BYTES).digest()


def connection_name(index: int, incarnation: int) -> str:
    """The name of client `index`'s (0-based) connection in its `incarnation`."""
    return f"c{index + 1}#{incarnation}"


def client_name(index: int) -> str:
    """How labels name client `index` (0-based)."""
    return f"c{index + 1}"


@dataclass(frozen=True, init=False)
class ClientSlot:
    """One client: its consumer state, its connection and what it has processed and committed."""

    consumer: ConsumerState
    incarnation: int = 0
    outbound: tuple[tuple[int, Request], ...] = ()
    inbound: tuple[tuple[int, ResponseBody], ...] = ()
    positions: tuple[tuple[TopicPartition, int], ...] = ()
    # The client restarted with the upgraded configuration (`upgrade_assignors`).
    upgraded: bool = False

    def __init__(
        self,
        consumer: ConsumerState,
        incarnation: int = 0,
        outbound: tuple[tuple[int, Request], ...] = (),
        inbound: tuple[tuple[int, ResponseBody], ...] = (),
        positions: tuple[tuple[TopicPartition, int], ...] = (),
        upgraded: bool = False,
    ) -> None:
        # Built for almost every candidate step; filling the dict directly is cheaper than the
        # generated frozen __init__ (one object.__setattr__ per field).
        fields = self.__dict__
        fields["consumer"] = consumer
        fields["incarnation"] = incarnation
        fields["outbound"] = outbound
        fields["inbound"] = inbound
        fields["positions"] = positions
        fields["upgraded"] = upgraded

    def position(self, partition: TopicPartition) -> int | None:
        """The next offset this client would process in `partition`, if it holds a position."""
        for tp, offset in self.positions:
            if tp == partition:
                return offset
        return None


@dataclass(frozen=True)
class Budgets:
    """What is left of each fault budget, of graceful closes and of commits (shared by every
    client)."""

    crashes: int = 0
    poll_timeouts: int = 0
    session_timeouts: int = 0
    evictions: int = 0
    failovers: int = 0
    subscription_changes: int = 0
    partition_growths: int = 0
    append_failures: int = 0
    closes: int = 0
    commits: int = 0
    foreign_answers: int = 0
    disconnects: int = 0
    # Retention checks after a clock jump that are left (not a fault: time passes).
    retention_checks: int = 0
    # Calls of the consumer API an application should not make (not a fault: the consumer
    # must refuse them locally).
    api_misuses: int = 0
    # DeleteGroups the admin client may still have succeed (not a fault, like closes).
    deletes: int = 0
    # Static members the admin client may still remove by instance id (not a fault either).
    removals: int = 0

    def spend(self, name: str) -> Budgets:
        """The budgets with one `name` fault spent."""
        left = getattr(self, name)
        if left == UNBOUNDED:
            return self
        assert left > 0, name
        return evolve(self, **{name: left - 1})

    def exhausted(self) -> bool:
        """Whether no fault of any kind is left (commits and closes are not faults)."""
        return not any(
            (
                self.crashes,
                self.poll_timeouts,
                self.session_timeouts,
                self.evictions,
                self.failovers,
                self.subscription_changes,
                self.partition_growths,
                self.append_failures,
                self.foreign_answers,
                self.disconnects,
            )
        )


@dataclass(frozen=True, repr=False)
class WorldState:
    """The whole closed world at one instant; its repr is canonical (fingerprints digest it)."""

    coordinator: CoordinatorState
    clients: tuple[ClientSlot, ...]
    cluster: Cluster
    budgets: Budgets
    acknowledged: tuple[tuple[TopicPartition, int], ...] = ()
    step_problems: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:
        return canonical_repr(self)

    def canonical_bytes(self) -> bytes:
        """The canonical encoding fingerprints digest: each part's digest, in field order.

        Equal to comparing reprs: every part's digest is a digest of its canonical text, and
        the parts are at fixed places. Digesting the parts' digests instead of the world's whole
        text costs one short digest per new state: the parts are shared by many states and
        remember their digests.
        """
        return b"".join(
            [
                part_digest(self.coordinator),
                *[part_digest(slot) for slot in self.clients],
                part_digest(self.cluster),
                part_digest(self.budgets),
                text_digest(_pairs_text(self.acknowledged) + _pairs_text(self.step_problems)),
            ]
        )

    def with_client(self, index: int, slot: ClientSlot) -> WorldState:
        """The world with client `index`'s slot replaced."""
        clients = (*self.clients[:index], slot, *self.clients[index + 1 :])
        return evolve(self, clients=clients)

    def live_connections(self) -> dict[str, int]:
        """Connection name -> client index, for every open connection."""
        return {
            connection_name(index, slot.incarnation): index
            for index, slot in enumerate(self.clients)
        }


# A client slot and a world state are new objects in almost every transition, so their texts
# (needed for the symmetric minimum and the fingerprint) are printed without the generic
# recursion. They are exactly `generic_dataclass_text` (tests compare them); the field lists
# are checked here so that a new field cannot be silently left out.
_SLOT_FIELDS = ("consumer", "incarnation", "outbound", "inbound", "positions", "upgraded")
_WORLD_FIELDS = ("coordinator", "clients", "cluster", "budgets", "acknowledged", "step_problems")
assert tuple(ClientSlot.__dataclass_fields__) == _SLOT_FIELDS
assert tuple(WorldState.__dataclass_fields__) == _WORLD_FIELDS


def _slot_text(slot: ClientSlot) -> str:
    return (
        "ClientSlot(consumer="
        + _item_repr(slot.consumer)
        + ", incarnation="
        + _item_repr(slot.incarnation)
        + ", outbound="
        + _pairs_text(slot.outbound)
        + ", inbound="
        + _pairs_text(slot.inbound)
        + ", positions="
        + _pairs_text(slot.positions)
        + ", upgraded="
        + repr(slot.upgraded)
        + ")"
    )


def _world_text(state: WorldState) -> str:
    return (
        "WorldState(coordinator="
        + _item_repr(state.coordinator)
        + ", clients="
        + _tuple_repr(state.clients)
        + ", cluster="
        + _item_repr(state.cluster)
        + ", budgets="
        + _item_repr(state.budgets)
        + ", acknowledged="
        + _pairs_text(state.acknowledged)
        + ", step_problems="
        + _pairs_text(state.step_problems)
        + ")"
    )


_TEXT_OF: Mapping[type, Callable[[Any], str]] = MappingProxyType(
    {ClientSlot: _slot_text, WorldState: _world_text}
)
