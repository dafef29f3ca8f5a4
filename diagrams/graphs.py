"""State machines derived from exhaustive exploration: the group's and the consumer's.

Every explored step of a group world is projected onto two small machines:

- the coordinator's **group state** (reference §1), plus three situations that are not group
  states: "no group" (the coordinator holds no group "g"), "unloaded" (the group's offsets
  partition is led elsewhere during a failover: Kafka drops the Dead group from memory) and
  "loading" (the partition is being replayed from `__consumer_offsets`);
- each client's **phase** (`spec.consumer.phase`), separately for eager and cooperative
  clients.

One step of the model can move the group through several states: a member's session expiring
in Stable prepares a rebalance whose join phase completes at once (Stable, PreparingRebalance,
Empty). Such a step is drawn as each hop it made. The hops are recovered from the group's
`previous_state` (Kafka's ClassicGroup keeps it); anything before that is filled in with the
shortest path of §1's legal-transition table. Edges count explored steps by action kind, as the
model checker counts transitions (one per step leaving each distinct state).

The spec's table is merged in: a legal transition no explored step took is kept as an
*unreached* edge, so the picture always shows the whole table and never more than it allows (a
hop outside the table would be marked illegal).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from groupspec.checker.model import Transition
from groupspec.models.group_world import GroupWorld
from groupspec.models.preset_models import load_model
from groupspec.models.world_state import GROUP_ID, WorldState
from groupspec.spec.assignment import RebalanceProtocol
from groupspec.spec.consumer import ConsumerPhase, MemberState, phase
from groupspec.spec.state import Group
from groupspec.vocabulary.group_state import DEAD, LEGAL_PREVIOUS_STATES, GroupState

from .explore import Exploration, explore

NO_GROUP = "no group"
UNLOADED = "unloaded"
LOADING = "loading"
GROUP_STATE_NAMES = tuple(state.value for state in GroupState)
PSEUDO_GROUP_NODES = (NO_GROUP, UNLOADED, LOADING)
PHASE_NAMES = tuple(item.value for item in ConsumerPhase)
# Faults are budgeted, not fair: the diagram marks the action kinds that stand for them.
FAULT_ACTIONS = frozenset(
    {
        "Crash",
        "SessionTimeoutExpired",
        "PollTimeoutExpired",
        "SubscriptionChanged",
        "PartitionsAdded",
        "Unload",
        "LoseSyncGroup",
    }
)


@dataclass(frozen=True)
class DiagramSource:
    """A preset and the `--set` overrides a diagram explores it with."""

    preset: str
    overrides: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """The preset's name with its overrides, as captions show it."""
        if not self.overrides:
            return self.preset
        return f"{self.preset} ({', '.join(f'{k}={v}' for k, v in self.overrides)})"

    def world(self) -> GroupWorld:
        """The group world of this preset with the overrides applied."""
        model = load_model(self.preset, dict(self.overrides)).model
        if not isinstance(model, GroupWorld):
            raise TypeError(f"{self.preset} is not a group-world preset")
        return model


# -- projection of one step -------------------------------------------------------------------


def _group(state: WorldState) -> Group | None:
    return state.coordinator.group(GROUP_ID)


def group_node(world: GroupWorld, state: WorldState) -> str:
    """The node of the group machine a world state is in."""
    coordinator = state.coordinator
    if world.group_partition in coordinator.unowned_partitions:
        return UNLOADED
    if world.group_partition in coordinator.loading_partitions:
        return LOADING
    group = _group(state)
    return NO_GROUP if group is None else group.state.value


def _legal_table() -> nx.DiGraph:
    """§1's legal transitions as a frozen graph, edges added in a fixed order."""
    table = nx.DiGraph()
    for to_state in GroupState:
        for from_state in sorted(LEGAL_PREVIOUS_STATES[to_state], key=lambda s: s.value):
            table.add_edge(from_state, to_state)
    return nx.freeze(table)


_LEGAL_TABLE = _legal_table()


def legal_path(source: GroupState, target: GroupState) -> list[tuple[str, str]]:
    """The hops of a shortest path from `source` to `target` in §1's legal-transition table."""
    if source is target:
        return []
    path = nx.shortest_path(_LEGAL_TABLE, source, target)
    return [(a.value, b.value) for a, b in itertools.pairwise(path)]


def _hops_within(before: Group, after: Group) -> list[tuple[str, str]]:
    """The hops one step took from `before` to `after` (the same group, loaded throughout)."""
    unchanged = (before.state, before.previous_state, before.generation_id) == (
        after.state,
        after.previous_state,
        after.generation_id,
    )
    if unchanged or after.previous_state is None:
        return []
    return [
        *legal_path(before.state, after.previous_state),
        (after.previous_state.value, after.state.value),
    ]


def _hops_from_new(after: Group, origin: str) -> list[tuple[str, str]]:
    """The hops of a group that appeared in this step: created Empty, or replayed from the log."""
    if after.previous_state is None:
        return [(origin, after.state.value)]
    first = GroupState.EMPTY if origin == NO_GROUP else after.previous_state
    hops = [(origin, first.value)]
    return (
        hops
        + legal_path(first, after.previous_state)
        + [(after.previous_state.value, after.state.value)]
    )


def group_hops(world: GroupWorld, before: WorldState, after: WorldState) -> list[tuple[str, str]]:
    """The group-machine hops of one step, in order (none if the group's state did not move)."""
    source, target = group_node(world, before), group_node(world, after)
    old, new = _group(before), _group(after)
    if source in GROUP_STATE_NAMES and old is not None:
        if target in GROUP_STATE_NAMES and new is not None:
            return _hops_within(old, new)
        # The group died (unload, deletion) and was dropped from memory.
        return [*legal_path(old.state, DEAD), (DEAD.value, target)]
    if target in GROUP_STATE_NAMES and new is not None:
        return _hops_from_new(new, source)
    return [] if source == target else [(source, target)]


def _consumer_event(before: WorldState, step: Transition[WorldState], index: int) -> str:
    """What made client `index` move: the action kind, with the error code of a response."""
    if step.action.startswith("Receive"):
        inbound = before.clients[index].inbound
        if inbound:
            body = inbound[0][1]
            error = getattr(body, "error_code", None)
            api = step.action.removeprefix("Receive")
            if error is not None:
                return f"{api} response {error.name}"
            errors = sorted({p.error_code.name for p in getattr(body, "partitions", ())})
            return f"{api} response {'/'.join(errors)}"
    return step.action


def _protocol_name(world: GroupWorld, index: int) -> str:
    return world.consumers[index].protocol.name.lower()


# -- tallies of one preset ------------------------------------------------------------------


@dataclass(frozen=True)
class SourceTally:
    """What exploring one source contributed to the machines (plain data, sorted)."""

    source: DiagramSource
    exploration: Exploration
    # (from, to, action kind) -> explored steps that made that hop
    group_edges: tuple[tuple[tuple[str, str, str], int], ...]
    group_nodes: tuple[str, ...]
    # protocol -> ((from phase, to phase, event) -> count)
    consumer_edges: tuple[tuple[str, tuple[tuple[tuple[str, str, str], int], ...]], ...]
    # protocol -> ((phase, member state) seen)
    consumer_nodes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@dataclass
class _Accumulator:
    """Counts gathered while one exploration runs (local to `tally`)."""

    world: GroupWorld
    group_edges: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    group_nodes: set[str] = field(default_factory=set)
    consumer_edges: dict[str, Counter[tuple[str, str, str]]] = field(default_factory=dict)
    consumer_nodes: dict[str, set[tuple[str, str]]] = field(default_factory=dict)

    def visit(self, before: WorldState, step: Transition[WorldState]) -> None:
        world, after = self.world, step.state
        self.group_nodes.add(group_node(world, before))
        for source, target in group_hops(world, before, after):
            self.group_edges[(source, target, step.action)] += 1
        for index, (old, new) in enumerate(zip(before.clients, after.clients, strict=True)):
            protocol = _protocol_name(world, index)
            nodes = self.consumer_nodes.setdefault(protocol, set())
            nodes.add((phase(old.consumer).value, old.consumer.member_state.value))
            source, target = phase(old.consumer).value, phase(new.consumer).value
            if source != target:
                event = _consumer_event(before, step, index)
                edges = self.consumer_edges.setdefault(protocol, Counter())
                edges[(source, target, event)] += 1


def tally(source: DiagramSource) -> SourceTally:
    """Explore `source` exhaustively and project every step onto both machines."""
    world = source.world()
    accumulator = _Accumulator(world)
    exploration = explore(world, accumulator.visit)
    return SourceTally(
        source,
        exploration,
        tuple(sorted(accumulator.group_edges.items())),
        tuple(sorted(accumulator.group_nodes)),
        tuple(
            (protocol, tuple(sorted(counts.items())))
            for protocol, counts in sorted(accumulator.consumer_edges.items())
        ),
        tuple(
            (protocol, tuple(sorted(nodes)))
            for protocol, nodes in sorted(accumulator.consumer_nodes.items())
        ),
    )


# -- the machines -----------------------------------------------------------------------------


def _add_counts(
    graph: nx.DiGraph,
    counts: Iterable[tuple[tuple[str, str, str], int]],
    preset: str,
) -> None:
    for (source, target, action), count in counts:
        if not graph.has_edge(source, target):
            graph.add_edge(source, target, actions=Counter(), presets=set())
        data = graph.edges[source, target]
        data["actions"][action] += count
        data["presets"].add(preset)


def group_machine(tallies: Sequence[SourceTally]) -> nx.DiGraph:
    """The group state machine the tallies reached, merged with §1's legal-transition table.

    Nodes carry `kind` ("state" for §1's states, "pseudo" for no group/unloaded/loading) and
    `reached`. Edges carry `actions` (action kind -> explored steps), `presets`, `reached`,
    and `spec`: "legal" for a transition of §1's table, "illegal" for a hop between group
    states the table forbids, "outside" for hops to or from a pseudo node. Consumer machines
    say "none": the consumer's phases have no such table.
    """
    graph = nx.DiGraph(sources=[t.source.describe() for t in tallies])
    reached_nodes: set[str] = set()
    for item in tallies:
        _add_counts(graph, item.group_edges, item.source.describe())
        reached_nodes.update(item.group_nodes)
    for name in (*GROUP_STATE_NAMES, *PSEUDO_GROUP_NODES):
        graph.add_node(name)
    for to_state in GroupState:
        for from_state in LEGAL_PREVIOUS_STATES[to_state]:
            if not graph.has_edge(from_state.value, to_state.value):
                graph.add_edge(from_state.value, to_state.value, actions=Counter(), presets=set())
    for source, target, data in graph.edges(data=True):
        reached_nodes.update((source, target) if data["actions"] else ())
        data["reached"] = bool(data["actions"])
        if source in GROUP_STATE_NAMES and target in GROUP_STATE_NAMES:
            legal = GroupState(source) in LEGAL_PREVIOUS_STATES[GroupState(target)]
            data["spec"] = "legal" if legal else "illegal"
        else:
            data["spec"] = "outside"
    for name, data in graph.nodes(data=True):
        data["kind"] = "state" if name in GROUP_STATE_NAMES else "pseudo"
        data["reached"] = name in reached_nodes
    return graph


def consumer_machine(tallies: Sequence[SourceTally], protocol: RebalanceProtocol) -> nx.DiGraph:
    """The consumer phases the tallies' clients of one rebalance protocol went through.

    Nodes are every `ConsumerPhase`, with `reached` and `member_states` (Kafka's MemberState
    values seen in that phase); edges carry `actions` (event -> count) and `presets`.
    """
    wanted = protocol.name.lower()
    graph = nx.DiGraph(sources=[])
    member_states: dict[str, set[str]] = {}
    for item in tallies:
        for name, counts in item.consumer_edges:
            if name == wanted:
                _add_counts(graph, counts, item.source.describe())
        for name, nodes in item.consumer_nodes:
            if name == wanted:
                graph.graph["sources"].append(item.source.describe())
                for phase_name, member_state in nodes:
                    member_states.setdefault(phase_name, set()).add(member_state)
    for name in PHASE_NAMES:
        graph.add_node(name)
    for source, target, data in graph.edges(data=True):
        data["reached"] = True
        data["spec"] = "none"  # the consumer's phases have no table of legal moves
        member_states.setdefault(source, set())
        member_states.setdefault(target, set())
    order = [item.value for item in MemberState]
    for name, data in graph.nodes(data=True):
        data["kind"] = "state"
        data["reached"] = name in member_states
        data["member_states"] = sorted(member_states.get(name, ()), key=order.index)
    return graph


def edge_summary(graph: nx.DiGraph) -> list[dict[str, Any]]:
    """The edges of a machine as plain rows (for tests and docs), sorted by their ends."""
    rows = []
    for source, target, data in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        rows.append(
            {
                "from": source,
                "to": target,
                "reached": data["reached"],
                "spec": data["spec"],
                "actions": dict(sorted(data["actions"].items())),
            }
        )
    return rows
