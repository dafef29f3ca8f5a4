"""Following a group across coordinators: NOT_COORDINATOR, loading, another broker taking over.

A group's coordinator is the leader of its `__consumer_offsets` partition. When leadership
moves (a broker fails over, a partition is reassigned), the old coordinator unloads the
partition (its groups leave memory, parked requests get NOT_COORDINATOR), and the new one
replays the partition's log (COORDINATOR_LOAD_IN_PROGRESS meanwhile) and serves the groups
rebuilt from it. The specification models one coordinator's side of this (`Unload`,
`StartLoading`, `FinishLoading`, spec/loading.py); the oracle, which cannot see partition
leadership, takes each move from what the coordinators answered, through named steps
(docs/oracle.md, "Coordinator moves"):

- `follow.unload`: the broker coordinating a partition answers a request of one of its groups
  with NOT_COORDINATOR: it lost the partition (`Unload`).
- `follow.load`: a broker answers a request of a group whose partition no broker is known to
  lead with COORDINATOR_LOAD_IN_PROGRESS (`StartLoading`), or as its coordinator
  (`StartLoading` then `FinishLoading`, unless it was loading already): it took the partition
  over and rebuilt the groups from the log, which the specification then holds it to.

With several brokers recorded (traces merged by `validate --merge`), a connection's name says
which broker it went to (`BROKER|client`, `broker_of`). A request sent to a broker that is not
its group's coordinator is not given to the specification: NOT_COORDINATOR is the answer
allowed there, and any other answer is that broker taking the partition over (`follow.load`,
the old coordinator unloaded first if it had not said so yet).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from groupspec.spec.events import FinishLoading, StartLoading, Unload
from groupspec.wire.trace_merge import BROKER_SEPARATOR

FOLLOW_UNLOAD = "follow.unload"
FOLLOW_LOAD = "follow.load"


def broker_of(connection: str) -> str:
    """The broker a connection went to: its name's part before `|`, or "" (one broker)."""
    broker, separator, _ = connection.partition(BROKER_SEPARATOR)
    return broker if separator else ""


@dataclass
class Coordinators:
    """Which broker coordinates each offsets partition, as the answers showed it."""

    owner: dict[int, str] = field(default_factory=dict)
    # Partitions whose coordinator said NOT_COORDINATOR and no broker took over yet.
    unowned: set[int] = field(default_factory=set)
    moves: list[tuple[str, int, str]] = field(default_factory=list)

    def copy(self) -> Coordinators:
        """An independent copy."""
        return Coordinators(dict(self.owner), set(self.unowned), list(self.moves))

    def future_key(self) -> tuple[object, ...]:
        """What decides the moves later answers imply (`moves` is a record, not consulted)."""
        return (frozenset(self.owner.items()), frozenset(self.unowned))

    def elsewhere(self, partition: int, broker: str) -> bool:
        """Whether a request to `broker` for `partition` goes to a broker known not to
        coordinate it."""
        owner = self.owner.get(partition)
        return owner is not None and owner != broker

    def unloaded(self, partition: int, broker: str) -> list[Unload]:
        """The events a NOT_COORDINATOR from `broker` for `partition` implies (`follow.unload`):
        none unless `broker` coordinated it. The one broker of a trace recorded from one broker
        (`broker` "") coordinates every group from the start, as the specification does, so
        it coordinated `partition` even before answering for it: its first answer may be a
        parked JoinGroup answered NOT_COORDINATOR as the partition is unloaded."""
        owner = self.owner.get(partition, "" if broker == "" else None)
        if owner != broker or partition in self.unowned:
            return []
        self.owner.pop(partition, None)
        self.unowned.add(partition)
        self.moves.append((FOLLOW_UNLOAD, partition, broker))
        return [Unload(partition)]

    def loaded(
        self, partition: int, broker: str, loading: bool, was_loading: bool
    ) -> list[Unload | StartLoading | FinishLoading]:
        """The events `broker` answering as coordinator of `partition` implies (`follow.load`);
        `loading` if it answered COORDINATOR_LOAD_IN_PROGRESS, `was_loading` if the partition is
        loading in the specification's state already."""
        owner = self.owner.get(partition)
        if owner == broker:
            return [] if loading or not was_loading else [FinishLoading(partition)]
        if owner is None and partition not in self.unowned:
            self.owner[partition] = broker  # the first coordinator seen: no move
            return []
        events: list[Unload | StartLoading | FinishLoading] = []
        if partition not in self.unowned:
            events.append(Unload(partition))  # the old coordinator had not said so yet
            self.moves.append((FOLLOW_UNLOAD, partition, owner or ""))
        self.unowned.discard(partition)
        self.owner[partition] = broker
        self.moves.append((FOLLOW_LOAD, partition, broker))
        events.append(StartLoading(partition))
        if not loading:
            events.append(FinishLoading(partition))
        return events
