"""Every coordinator transition a preset's exploration takes, as concrete coordinator runs.

The model checker explores a group world whose states are canonical: member ids are
renumbered after every step and interchangeable clients are permuted. A coordinator seen
through those states is not a run any real coordinator takes (its member counter goes down).
To replay what the checker explored on another implementation, this module explores the
same quotient graph, with the checker's engine, over a second copy of the world that never
renumbers (`compact_ids=False`): every node keeps one concrete, uncompacted world state, and is
deduplicated by the fingerprint the checker gives it (the representative of its compacted
form), so the walk visits exactly the checker's states. Each step of that walk that involves the coordinator is one coordinator
transition: its input (a request, a timer, a change of partition ownership, or a client
connection closing) and every outcome the specification allows.

The result is a tree of coordinator steps from the initial state (`CoordinatorRuns`): each node
is the coordinator's run so far, and a path from the root is a sequence of inputs an
implementation can be fed from its own initial state. Only the paths leading to a coordinator
transition not seen before are kept, so every transition is covered once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from groupspec.checker.bfs import Progress, search
from groupspec.checker.derived import transitions
from groupspec.checker.fingerprint import fingerprint
from groupspec.checker.model import Cut, Transition
from groupspec.checker.plain import PlainModel
from groupspec.checker.rewrite import rewrite_strings
from groupspec.models.canonical import compaction, map_coordinator_refs
from groupspec.models.group_world import ADMIN_CONNECTION, GroupWorld
from groupspec.models.misbehaving_client import MISBEHAVING_CONNECTION
from groupspec.models.preset_models import LoadedModel
from groupspec.models.world_params import WorldParameters
from groupspec.models.world_state import CLOSED_REF, WorldState, canonical_repr, connection_name
from groupspec.spec import (
    FinishLoading,
    GroupCoordinatorSpec,
    Input,
    OffsetRetentionCheck,
    Outcome,
    StartLoading,
    Unload,
)
from groupspec.spec.config import CoordinatorConfig
from groupspec.spec.state import CoordinatorState
from groupspec.vocabulary.requests import Received, RequestRef

# World actions in which the coordinator takes an input (the others are client steps).
_TIMER_ACTIONS = frozenset({"HeartbeatExpired", "JoinTimerExpired", "SyncTimerExpired"})
_PARTITION_ACTIONS = frozenset({"StartLoading", "FinishLoading", "Unload"})


class CoordinatorRunsError(Exception):
    """A preset that cannot be turned into coordinator runs, or a walk that lost its way."""


@dataclass(frozen=True)
class ConnectionClosed:
    """A client connection closed (the client crashed or dropped the coordinator).

    Not a request: the coordinator is not told. Responses it later sends for requests parked
    on that connection go nowhere, so conformance ignores them.
    """

    connection: str


CoordinatorInput = Input | ConnectionClosed


@dataclass(frozen=True)
class CoordinatorStep:
    """One coordinator transition: the input, every outcome allowed, and the one the run took."""

    input: CoordinatorInput
    outcomes: tuple[Outcome, ...]
    taken: int
    # The coordinator's clock at this step (the world's clock moves only when an idle group's
    # offset-retention check runs; see GroupWorld.now_ms).
    now_ms: int = 0
    # The configuration of the coordinator that took the step (None: the run's own; another
    # after a failover to a coordinator configured otherwise).
    config: CoordinatorConfig | None = None

    @property
    def outcome(self) -> Outcome:
        """The outcome the run continues from."""
        return self.outcomes[self.taken]


@dataclass(frozen=True)
class RunNode:
    """A node of the run tree: the step that led here from `parent` (the root has none).

    `first` marks the node where the walk first met its coordinator transition; counting
    those counts the distinct transitions a replay covers.
    """

    parent: int
    step: CoordinatorStep | None
    first: bool = False


@dataclass(frozen=True)
class CoordinatorRuns:
    """The run tree of a preset and what the walk saw.

    `nodes[0]` is the initial coordinator; `leaves` are the nodes no kept path continues from,
    so the root-to-leaf paths cover every node. `world_states` equals the checker's distinct
    state count for the preset (the walk visits the same quotient graph).
    """

    preset: str
    parameters: WorldParameters
    nodes: tuple[RunNode, ...]
    leaves: tuple[int, ...]
    world_states: int
    coordinator_transitions: int
    elapsed_s: float

    def path(self, node: int) -> list[CoordinatorStep]:
        """The steps from the root to `node`."""
        steps: list[CoordinatorStep] = []
        while node:
            run_node = self.nodes[node]
            assert run_node.step is not None
            steps.append(run_node.step)
            node = run_node.parent
        steps.reverse()
        return steps


def apply_connection_closed(state: CoordinatorState, event: ConnectionClosed) -> CoordinatorState:
    """The coordinator as the model keeps it after a connection closes: parked requests of that
    connection are answered into the void."""
    return map_coordinator_refs(
        state, lambda ref: CLOSED_REF if ref.connection == event.connection else ref
    )


def explore_coordinator_runs(
    loaded: LoadedModel, progress: Callable[[int, int], None] | None = None
) -> CoordinatorRuns:
    """Walk the preset's state graph and collect its coordinator transitions as a run tree."""
    checked = loaded.model
    if not isinstance(checked, GroupWorld):
        raise CoordinatorRunsError(f"{loaded.preset}: only group-world presets have a coordinator")
    parameters = checked.parameters
    if parameters.fault:
        raise CoordinatorRunsError(
            f"{loaded.preset}: fault {parameters.fault!r} rewrites what the coordinator reads;"
            " conformance runs come from fault-free presets"
        )
    walker = GroupWorld(parameters, checked.name, compact_ids=False)
    return _Walk(loaded.preset, checked, walker, progress).run()


class _Walk:
    def __init__(
        self,
        preset: str,
        checked: GroupWorld,
        walker: GroupWorld,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        self.preset = preset
        self.checked = checked
        self.walker = walker
        self.spec: GroupCoordinatorSpec = walker.coordinator
        self.progress = progress
        self.nodes: list[RunNode] = [RunNode(-1, None)]
        self.needed = bytearray(1)
        self.seen_transitions: set[tuple[str, ...]] = set()

    def run(self) -> CoordinatorRuns:
        started = time.monotonic()
        # The node of the run tree each distinct state was first reached at, by fingerprint.
        node_of: dict[int, int] = {}
        quotient = _CheckersQuotient(self.walker, self._checker_bytes)
        for initial in quotient.initial_states():
            node_of[fingerprint(initial)] = 0

        def observe(
            parent: int, keyed: _Keyed, transition: Transition[_Keyed], successor: int, new: bool
        ) -> None:
            node = node_of[parent]
            child = node
            step = self._coordinator_step(keyed.state, transition.action, transition.state.state)
            if step is not None:
                first = self._is_new(keyed.state, step)
                child = self._add(node, step, first)
                if first:
                    self._keep(child)
            if new:
                node_of[successor] = child

        def report(progress: Progress) -> None:
            if self.progress is not None:
                self.progress(progress.distinct_states, len(self.seen_transitions))

        result = search(quotient, observer=observe, progress=report)
        nodes, leaves = self._pruned()
        return CoordinatorRuns(
            preset=self.preset,
            parameters=self.walker.parameters,
            nodes=nodes,
            leaves=leaves,
            world_states=result.distinct_states,
            coordinator_transitions=len(self.seen_transitions),
            elapsed_s=time.monotonic() - started,
        )

    def _checker_bytes(self, state: WorldState) -> bytes:
        """What the model checker fingerprints for the state: the canonical encoding of its
        representative, after compaction."""
        mapping, next_seq = compaction(state)
        compacted = rewrite_strings(state, mapping) if mapping else state
        if compacted.coordinator.next_member_seq != next_seq:
            compacted = replace(
                compacted, coordinator=replace(compacted.coordinator, next_member_seq=next_seq)
            )
        return self.checked.representative(compacted).canonical_bytes()

    def _coordinator_step(
        self, before: WorldState, action: str, after: WorldState
    ) -> CoordinatorStep | None:
        """The coordinator transition inside a world step, or None for a client-only step."""
        old, new = before.coordinator, after.coordinator
        now = self.walker.now_ms(old)
        spec = self.walker.coordinator_spec(before.budgets)
        config = None if spec is self.walker.coordinator else spec.config
        candidates: list[Input] = []
        if action.startswith("Handle"):
            candidates = [
                Received(
                    RequestRef(_connection(before, index), slot.outbound[0][0]), slot.outbound[0][1]
                )
                for index, slot in enumerate(before.clients)
                if slot.outbound and after.clients[index].outbound == slot.outbound[1:]
            ]
            if self.walker.parameters.admin:
                ref = RequestRef(ADMIN_CONNECTION, 1)
                candidates += [Received(ref, r) for r in self.walker.admin_requests()]
            if self.walker.parameters.misbehaving_client:
                ref = RequestRef(MISBEHAVING_CONNECTION, 1)
                candidates += [Received(ref, r) for r in self.walker.misbehaving_requests(old)]
        elif action in _TIMER_ACTIONS:
            candidates = [timer for _, timer in self.spec.armed_timers(old)]
        elif action == "OffsetRetentionCheck":
            candidates = [OffsetRetentionCheck()]
            now = self.walker.now_ms(new)  # the clock jumped to the check's time
        elif action in _PARTITION_ACTIONS:
            partition = self.walker.group_partition
            candidates = [StartLoading(partition), FinishLoading(partition), Unload(partition)]
        elif old != new:
            # A client step that closed its connection (a crash, or the coordinator marked unknown).
            for index, slot in enumerate(before.clients):
                closing = ConnectionClosed(_connection(before, index))
                closed = apply_connection_closed(old, closing)
                if slot.incarnation != after.clients[index].incarnation and closed == new:
                    return CoordinatorStep(closing, (Outcome(closed, (), (), ()),), 0)
            raise CoordinatorRunsError(f"a {action} step changed the coordinator without an input")
        else:
            return None
        for event in candidates:
            if not self._enabled(old, event):
                continue
            outcomes = tuple(spec.step(old, event, now))
            for index, outcome in enumerate(outcomes):
                if outcome.state == new:
                    return CoordinatorStep(event, outcomes, index, now, config)
        raise CoordinatorRunsError(
            f"no coordinator input explains a {action} step of the walk (the world and the"
            " specification disagree)"
        )

    @staticmethod
    def _enabled(state: CoordinatorState, event: CoordinatorInput) -> bool:
        """Whether a change of partition ownership applies to `state` (others always do)."""
        if isinstance(event, StartLoading | FinishLoading | Unload):
            partition = event.partition
            if isinstance(event, StartLoading):
                return partition in state.unowned_partitions
            if isinstance(event, FinishLoading):
                return partition in state.loading_partitions
            return (
                partition not in state.unowned_partitions
                and partition not in state.loading_partitions
            )
        return True

    def _add(self, parent: int, step: CoordinatorStep, first: bool) -> int:
        self.nodes.append(RunNode(parent, step, first))
        self.needed.append(0)
        return len(self.nodes) - 1

    def _is_new(self, before: WorldState, step: CoordinatorStep) -> bool:
        """Whether this coordinator transition (up to member-id renumbering) is new."""
        mapping, next_seq = compaction(before)
        coordinator = rewrite_strings(before.coordinator, mapping)
        coordinator = replace(coordinator, next_member_seq=next_seq)
        key = (
            canonical_repr(coordinator),
            canonical_repr(rewrite_strings(step.input, mapping)),
            repr(step.outcome.choices),
            str(step.now_ms),
            repr(step.config),
        )
        if key in self.seen_transitions:
            return False
        self.seen_transitions.add(key)
        return True

    def _keep(self, node: int) -> None:
        while node > 0 and not self.needed[node]:
            self.needed[node] = 1
            node = self.nodes[node].parent

    def _pruned(self) -> tuple[tuple[RunNode, ...], tuple[int, ...]]:
        """Only the kept nodes, renumbered in creation order (parents before children)."""
        self.needed[0] = 1
        renumber: dict[int, int] = {}
        kept: list[RunNode] = []
        for old, node in enumerate(self.nodes):
            if self.needed[old]:
                renumber[old] = len(kept)
                kept.append(
                    node if old == 0 else RunNode(renumber[node.parent], node.step, node.first)
                )
        has_child = bytearray(len(kept))
        for node in kept[1:]:
            has_child[node.parent] = 1
        leaves = tuple(index for index in range(1, len(kept)) if not has_child[index])
        return tuple(kept), leaves


def _connection(state: WorldState, index: int) -> str:
    return connection_name(index, state.clients[index].incarnation)


class _Keyed:
    """A concrete (uncompacted) world state that fingerprints as the checker's state does."""

    __slots__ = ("_bytes", "_encode", "state")

    def __init__(self, state: WorldState, encode: Callable[[WorldState], bytes]) -> None:
        self.state = state
        self._encode = encode
        self._bytes: bytes | None = None

    def canonical_bytes(self) -> bytes:
        """The checker's canonical encoding of the state's representative."""
        if self._bytes is None:
            self._bytes = self._encode(self.state)
        return self._bytes


class _CheckersQuotient(PlainModel[_Keyed]):
    """The uncompacted world, deduplicated as the checker deduplicates its compacted form:
    exploring it visits exactly the checker's states, each as one concrete world state.
    Nothing is judged here."""

    def __init__(self, walker: GroupWorld, encode: Callable[[WorldState], bytes]) -> None:
        self.walker = walker
        self._encode = encode
        self.name = walker.name

    def initial_states(self) -> tuple[_Keyed, ...]:
        """The world's initial state."""
        return tuple(_Keyed(state, self._encode) for state in self.walker.initial_states())

    def transitions(self, keyed: _Keyed) -> list[Transition[_Keyed] | Cut]:
        """The world's steps, unrenumbered."""
        return [
            Transition(step.label, step.action, _Keyed(step.state, self._encode), step.rules)
            for step in transitions(self.walker, keyed.state)
        ]

    def is_end(self, keyed: _Keyed) -> bool:
        """Nothing is judged here."""
        return True
