"""KIP-848's state machines derived from exhaustive exploration of the kip848 presets.

Every explored step of a KIP-848 world (`models/kip848_world.py`) is projected onto three small
machines, as `graphs.py` projects the classic world's steps:

- the coordinator's **consumer-group state** (`ConsumerGroup.state`: Empty, Assigning,
  Reconciling, Stable), plus "no group" before the first join creates it. The state is derived
  from the group's epochs and members, so one step moves it at most once;
- each coordinator member's **reconciliation state** (`MemberState`: Stable,
  UnrevokedPartitions, UnreleasedPartitions), plus "not a member" before it joins and after it
  leaves or is fenced. A step that keeps the state but moves the member to a new epoch is drawn
  as a loop. Edges are labelled with the reconciliation and membership rules of
  `spec/kip848/rules.py` the step fired, or its action kind when it fired none;
- each Java consumer's **MemberState** (`spec/kip848/consumer/machine.py`), plus "no process"
  between a crash and the restart, merged with the machine's legal-transition table
  (`LEGAL_PREDECESSORS`) the way the classic group machine is merged with reference §1's table:
  a legal move no step made is kept as an unreached edge, and an explored move the table
  forbids is marked illegal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import networkx as nx

from groupspec.checker.model import Transition
from groupspec.models.kip848_world import (
    GROUP_ID,
    Answer,
    Heartbeat,
    Kip848World,
    Kip848WorldState,
)
from groupspec.models.preset_models import load_model
from groupspec.spec.kip848 import MemberState
from groupspec.spec.kip848 import rules as kip848_rules
from groupspec.spec.kip848.consumer import rules as client_rules
from groupspec.spec.kip848.consumer.machine import LEGAL_PREDECESSORS, ConsumerState
from groupspec.vocabulary.consumer_groups import ConsumerGroupState

from .explore import Exploration, explore
from .graphs import NO_GROUP, DiagramSource

NOT_A_MEMBER = "not a member"
NO_PROCESS = "no process"
# The group states a kip848 world can reach (Dead needs a DeleteGroups, which it never sends).
CONSUMER_GROUP_STATE_NAMES = tuple(
    state.value for state in ConsumerGroupState if state is not ConsumerGroupState.DEAD
)
# The reconciliation states a consumer-protocol member can be in (Unknown is only a converted
# classic member's, which these worlds do not have).
MEMBER_STATE_NAMES = tuple(state.value for state in MemberState if state is not MemberState.UNKNOWN)
CLIENT_STATE_NAMES = tuple(state.value for state in ConsumerState)
# Faults are budgeted, not fair: the diagrams mark the action kinds that stand for them.
KIP848_FAULT_ACTIONS = frozenset(
    {
        "crash",
        "leave",
        "change_subscription",
        "expire_poll",
        "lose_request",
        "lose_response",
        "session_timeout",
        "rebalance_timeout",
    }
)
# The coordinator rules that move a member between reconciliation states, join it or remove it:
# a member edge is labelled with those its step fired (last_member_fenced is left out: it says
# what became of the group, which the group machine shows).
MEMBER_RULES = frozenset(
    rule.rule_id
    for rule in (
        kip848_rules.CG_HEARTBEAT_JOIN_COORDINATOR_MEMBER_ID,
        kip848_rules.CG_HEARTBEAT_JOIN_CLIENT_MEMBER_ID,
        kip848_rules.CG_HEARTBEAT_REJOIN_KNOWN_MEMBER,
        kip848_rules.CG_HEARTBEAT_NEW_STATIC_MEMBER,
        kip848_rules.CG_HEARTBEAT_STATIC_MEMBER_REPLACED,
        kip848_rules.CG_HEARTBEAT_MEMBER_LEFT,
        kip848_rules.CG_HEARTBEAT_STATIC_MEMBER_TEMPORARILY_LEFT,
        kip848_rules.CG_HEARTBEAT_MEMBER_FENCED,
        kip848_rules.CG_RECONCILE_REVOKE_FIRST,
        kip848_rules.CG_RECONCILE_STILL_REVOKING,
        kip848_rules.CG_RECONCILE_TO_STABLE,
        kip848_rules.CG_RECONCILE_TO_UNRELEASED,
        kip848_rules.CG_RECONCILE_SUBSCRIPTION_NARROWED,
        kip848_rules.CG_RECONCILE_UNKNOWN_STATE_FENCED,
        kip848_rules.CG_TIMER_SESSION_EXPIRED,
        kip848_rules.CG_TIMER_REBALANCE_TIMEOUT_EXPIRED,
    )
)

# Consumer steps that pass through a state on their way, known by the rule they fire (their
# functions in spec/kip848/consumer/machine.py make two moves, each checked against the table):
# a poll expiry goes through PrepareLeaving to Leaving; a fencing error while PrepareLeaving
# goes through Leaving to Unsubscribed. Such a step is drawn as both hops.
PASSED_THROUGH = {
    client_rules.CG_CLIENT_POLL_EXPIRED.rule_id: ConsumerState.PREPARE_LEAVING.value,
    client_rules.CG_CLIENT_ERROR_FENCED_LEAVING.rule_id: ConsumerState.LEAVING.value,
}

Edge = tuple[str, str, str]


def kip848_world(source: DiagramSource) -> Kip848World:
    """The KIP-848 world of a preset with the source's overrides applied."""
    model = load_model(source.preset, dict(source.overrides)).model
    if not isinstance(model, Kip848World):
        raise TypeError(f"{source.preset} is not a kip848 preset")
    return model


# -- projections of one step ------------------------------------------------------------------


def group_node(state: Kip848WorldState) -> str:
    """The node of the consumer-group machine a world state is in."""
    group = state.coordinator.group(GROUP_ID)
    return NO_GROUP if group is None else group.state.value


def _members(state: Kip848WorldState) -> dict[str, tuple[str, int]]:
    """Each coordinator member's reconciliation state and epoch, by member id."""
    group = state.coordinator.group(GROUP_ID)
    if group is None:
        return {}
    return {m.member_id: (m.state.value, m.member_epoch) for m in group.iter_members()}


def member_label(step: Transition[Kip848WorldState]) -> str:
    """What moved a member: the membership and reconciliation rules the step fired, in order,
    or the step's action kind when it fired none of them."""
    fired = [rule for rule in dict.fromkeys(step.rules) if rule in MEMBER_RULES]
    return " + ".join(fired) if fired else step.action


def member_hops(before: Kip848WorldState, step: Transition[Kip848WorldState]) -> list[Edge]:
    """Every member's move in one step (from, to, label), in member-id order: a change of
    reconciliation state, joining or leaving the group, or a new epoch in the same state."""
    old, new = _members(before), _members(step.state)
    hops = []
    for member_id in sorted(old.keys() | new.keys()):
        source, source_epoch = old.get(member_id, (NOT_A_MEMBER, -1))
        target, target_epoch = new.get(member_id, (NOT_A_MEMBER, -1))
        if source != target or source_epoch != target_epoch:
            hops.append((source, target, member_label(step)))
    return hops


Message = TypeVar("Message", Answer, Heartbeat)


def _removed(before: tuple[Message, ...], after: tuple[Message, ...]) -> Message | None:
    """The message a delivery took off a queue (the first one whose count dropped)."""
    left = Counter(after)
    for message in before:
        if left[message]:
            left[message] -= 1
        else:
            return message
    return None


def group_label(before: Kip848WorldState, step: Transition[Kip848WorldState]) -> str:
    """What moved the group: the action kind, and for a heartbeat the coordinator handled
    whether it was a join (epoch 0), a leave (epoch -1 or -2) or a heartbeat."""
    if step.action != "coordinator_receives":
        return step.action
    for index, queue in enumerate(before.requests):
        heartbeat = _removed(queue, step.state.requests[index])
        if heartbeat is not None:
            epoch = heartbeat.request.member_epoch
            kind = "join" if epoch == 0 else "leave" if epoch < 0 else "heartbeat"
            return f"coordinator_receives {kind}"
    return step.action


def client_label(before: Kip848WorldState, step: Transition[Kip848WorldState], index: int) -> str:
    """What moved consumer `index`: the action kind, with the error code of a response read."""
    if step.action == "consumer_receives":
        answer = _removed(before.responses[index], step.state.responses[index])
        if answer is not None:
            return f"response {answer.response.error_code.name}"
    return step.action


def client_hops(before: Kip848WorldState, step: Transition[Kip848WorldState]) -> list[Edge]:
    """Every consumer's change of MemberState in one step (from, to, label), by slot."""
    hops = []
    for index, (old, new) in enumerate(zip(before.consumers, step.state.consumers, strict=True)):
        source = NO_PROCESS if old is None else old.state.value
        target = NO_PROCESS if new is None else new.state.value
        if source == target:
            continue
        label = client_label(before, step, index)
        passed = [PASSED_THROUGH[rule] for rule in step.rules if rule in PASSED_THROUGH]
        via = next((state for state in passed if state not in (source, target)), None)
        if via is None:
            hops.append((source, target, label))
        else:
            hops += [(source, via, label), (via, target, label)]
    return hops


# -- tallies of one preset ------------------------------------------------------------------


@dataclass(frozen=True)
class Kip848Tally:
    """What exploring one kip848 source contributed to the three machines (plain data, sorted):
    for each machine, (from, to, label) -> explored steps, and the nodes seen."""

    source: DiagramSource
    exploration: Exploration
    group_edges: tuple[tuple[Edge, int], ...]
    group_nodes: tuple[str, ...]
    member_edges: tuple[tuple[Edge, int], ...]
    member_nodes: tuple[str, ...]
    client_edges: tuple[tuple[Edge, int], ...]
    client_nodes: tuple[str, ...]


@dataclass
class _Accumulator:
    """Counts gathered while one exploration runs (local to `kip848_tally`)."""

    group_edges: Counter[Edge] = field(default_factory=Counter)
    group_nodes: set[str] = field(default_factory=set)
    member_edges: Counter[Edge] = field(default_factory=Counter)
    member_nodes: set[str] = field(default_factory=set)
    client_edges: Counter[Edge] = field(default_factory=Counter)
    client_nodes: set[str] = field(default_factory=set)

    def visit(self, before: Kip848WorldState, step: Transition[Kip848WorldState]) -> None:
        source, target = group_node(before), group_node(step.state)
        self.group_nodes.add(source)
        if source != target:
            self.group_edges[(source, target, group_label(before, step))] += 1
        self.member_nodes.update(state for state, _ in _members(before).values())
        self.member_edges.update(member_hops(before, step))
        self.client_nodes.update(
            NO_PROCESS if c is None else c.state.value for c in before.consumers
        )
        self.client_edges.update(client_hops(before, step))


def kip848_tally(source: DiagramSource) -> Kip848Tally:
    """Explore `source` exhaustively and project every step onto the three machines."""
    accumulator = _Accumulator()
    exploration = explore(kip848_world(source), accumulator.visit)
    return Kip848Tally(
        source,
        exploration,
        tuple(sorted(accumulator.group_edges.items())),
        tuple(sorted(accumulator.group_nodes)),
        tuple(sorted(accumulator.member_edges.items())),
        tuple(sorted(accumulator.member_nodes | {NOT_A_MEMBER})),
        tuple(sorted(accumulator.client_edges.items())),
        tuple(sorted(accumulator.client_nodes)),
    )


# -- the machines -----------------------------------------------------------------------------


def _machine(
    tallies: Sequence[Kip848Tally],
    edges_of: str,
    nodes_of: str,
    names: Iterable[str],
    pseudo: Iterable[str],
) -> nx.DiGraph:
    """A machine of the tallies' edges: every node of `names` and `pseudo`, edges with
    `actions` (label -> count), `presets`, `reached`, and `spec` "none"."""
    graph = nx.DiGraph(sources=[t.source.describe() for t in tallies])
    pseudo_nodes = set(pseudo)
    reached: set[str] = set()
    for name in (*names, *sorted(pseudo_nodes)):
        graph.add_node(name)
    for item in tallies:
        reached.update(getattr(item, nodes_of))
        for (source, target, label), count in getattr(item, edges_of):
            if not graph.has_edge(source, target):
                graph.add_edge(source, target, actions=Counter(), presets=set())
            graph.edges[source, target]["actions"][label] += count
            graph.edges[source, target]["presets"].add(item.source.describe())
            reached.update((source, target))
    for source, target, data in graph.edges(data=True):
        data["reached"] = bool(data["actions"])
        data["spec"] = "outside" if {source, target} & pseudo_nodes else "none"
    for name, data in graph.nodes(data=True):
        data["kind"] = "pseudo" if name in pseudo_nodes else "state"
        data["reached"] = name in reached
    return graph


def consumer_group_machine(tallies: Sequence[Kip848Tally]) -> nx.DiGraph:
    """The consumer-group states the tallies reached and the action kinds between them."""
    return _machine(tallies, "group_edges", "group_nodes", CONSUMER_GROUP_STATE_NAMES, [NO_GROUP])


def member_machine(tallies: Sequence[Kip848Tally]) -> nx.DiGraph:
    """The members' reconciliation states and the rules (or action kinds) between them."""
    return _machine(tallies, "member_edges", "member_nodes", MEMBER_STATE_NAMES, [NOT_A_MEMBER])


def client_machine(tallies: Sequence[Kip848Tally]) -> nx.DiGraph:
    """The Java consumer's MemberState machine the tallies reached, merged with its table.

    As `graphs.group_machine` does with §1: every legal move of `LEGAL_PREDECESSORS` is an edge
    (`reached` False when no step made it), `spec` is "legal" or "illegal" between two
    MemberStates, "outside" to or from "no process".
    """
    graph = _machine(tallies, "client_edges", "client_nodes", CLIENT_STATE_NAMES, [NO_PROCESS])
    for to_state in ConsumerState:
        for from_state in sorted(LEGAL_PREDECESSORS[to_state], key=lambda s: s.value):
            if not graph.has_edge(from_state.value, to_state.value):
                graph.add_edge(
                    from_state.value,
                    to_state.value,
                    actions=Counter(),
                    presets=set(),
                    reached=False,
                )
    for source, target, data in graph.edges(data=True):
        if source in CLIENT_STATE_NAMES and target in CLIENT_STATE_NAMES:
            legal = ConsumerState(source) in LEGAL_PREDECESSORS[ConsumerState(target)]
            data["spec"] = "legal" if legal else "illegal"
    return graph
