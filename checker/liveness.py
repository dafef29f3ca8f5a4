"""Liveness under weak fairness, checked on the graph a search recorded.

A `LivenessProperty` (see `checker.model`) says that from every state where it `applies` (for
example once every fault has been used), the `goal` (for example "the group converged") is
reached. On a completely explored graph this holds when

(a) the goal is reachable from every applicable state (AG EF goal): a backward breadth-first
    search from the goal states over the whole graph must reach every applicable state; and
(b) no weakly fair run avoids the goal forever: among the applicable non-goal states, no
    strongly connected component (with at least one edge inside it) admits a fair cycle.

Under weak fairness a component admits a fair cycle exactly when every fairness class that is
enabled in all of its states is taken by some edge inside it: a run that goes round every state
and every edge of the component forever is then fair, and when some class is enabled throughout
but never taken inside, no cycle within the component can be fair. So no component needs to be
split further (strong fairness would need that). A violation of (b) is reported as a lasso: the
shortest path to the component, then a cycle inside it built to take or disable every fairness
class that the cycle would otherwise leave continuously enabled.

A search stopped early (by a limit or a safety violation) leaves states unexpanded. A fair cycle
among expanded states is still a real violation (their edges, hence their enabled steps, are all
known), but a pass and an AG EF failure could change with more states, so the verdict is then
"inconclusive". A check with a time limit polls it (`budget.Halt`) in every loop over the
graph; when the limit runs out, the properties not yet judged are "inconclusive" too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import TypeVar

from .bfs import SearchResult
from .budget import Halt
from .derived import liveness_properties
from .graph import StateGraph
from .model import LivenessProperty, Model

S = TypeVar("S")

GOAL_UNREACHABLE = "goal-unreachable"
FAIR_CYCLE = "fair-cycle"
# Why a check its time limit stopped says "inconclusive".
OUT_OF_TIME = "the time limit (max_seconds) ran out before the liveness check ended"


class _OutOfTime(Exception):
    """Unwinds an analysis its halt stopped."""


Poll = Callable[[], None]


def _poller(halt: Halt | None) -> Poll:
    """A function that raises _OutOfTime once `halt` says to stop (one that never does
    without a halt)."""
    if halt is None:
        return _never

    def poll() -> None:
        if halt.poll():
            raise _OutOfTime

    return poll


def _never() -> None:
    return None


@dataclass(frozen=True)
class Lasso:
    """A run that never reaches the goal: a stem from an initial state, then a cycle forever.

    `stem` holds fingerprints from an initial state to the cycle's first state, both included;
    `cycle` holds the cycle's states, `cycle[0] == stem[-1]`, and step i goes from `cycle[i]` to
    `cycle[(i + 1) % len(cycle)]` by an action of kind `cycle_actions[i]` labelled
    `cycle_labels[i]`, so the step after the last state returns to the first.
    """

    stem: tuple[int, ...]
    cycle: tuple[int, ...]
    cycle_actions: tuple[str, ...]
    cycle_labels: tuple[str, ...]


@dataclass(frozen=True)
class LivenessViolation:
    """A liveness property that fails, how, and where.

    `kind` is "goal-unreachable" (`path` leads to an applicable state from which no path reaches
    the goal; `lasso` is None) or "fair-cycle" (`lasso` is the fair run avoiding the goal and
    `path` is its stem).
    """

    property_name: str
    kind: str
    detail: str
    path: tuple[int, ...]
    lasso: Lasso | None = None


@dataclass(frozen=True)
class LivenessResult:
    """The verdict on one liveness property, its violations and what the analysis saw.

    `verdict` is "pass", "fail" or "inconclusive" (`reason` says why). Counts: applicable
    states, goal states, applicable states where a bound cuts the run short, applicable states
    that can reach neither, components of applicable unsettled states that contain a cycle, and
    those among them that admit a fair cycle.
    """

    property_name: str
    verdict: str
    reason: str
    violations: tuple[LivenessViolation, ...]
    applicable_states: int
    goal_states: int
    cut_states: int
    stuck_states: int
    cyclic_components: int
    fair_components: int
    elapsed_s: float


class _Indexed:
    """The recorded graph with fingerprints replaced by dense indices, for fast analysis.

    Indices below `expanded` are expanded states in expansion order; successors the search
    never expanded (it stopped early) get the indices after them and have no edges.
    """

    def __init__(self, graph: StateGraph, poll: Poll = _never) -> None:
        self.graph = graph
        self.poll = poll
        self.expanded = graph.expanded_states
        self.fingerprints: list[int] = list(graph.states)
        index = dict(zip(self.fingerprints, range(self.expanded), strict=True))
        try:
            # One C-level pass; the ints are the dict's own objects, so the list costs a
            # pointer per edge.
            self.succ: list[int] = list(map(index.__getitem__, graph.targets))
        except KeyError:
            self.succ = []
            for target in graph.targets:
                position = index.get(target)
                if position is None:
                    position = index[target] = len(self.fingerprints)
                    self.fingerprints.append(target)
                self.succ.append(position)
        self.nodes = len(self.fingerprints)
        offsets = list(graph.offsets)
        # Unexpanded states have no edges: their rows are empty.
        offsets.extend([offsets[-1]] * (self.nodes - self.expanded))
        self.offsets = offsets
        self.kinds = graph.kinds
        self._reverse: tuple[list[int], list[int]] | None = None

    def reverse(self) -> tuple[list[int], list[int]]:
        """Predecessor rows: (start offsets, predecessor indices), built once on demand."""
        if self._reverse is None:
            counts = [0] * (self.nodes + 1)
            for target in self.succ:
                counts[target] += 1
            starts = [0, *accumulate(counts[: self.nodes])]
            fill = starts[:-1]
            sources = [0] * len(self.succ)
            succ, offsets = self.succ, self.offsets
            poll = self.poll
            for source in range(self.expanded):
                poll()
                for edge in range(offsets[source], offsets[source + 1]):
                    target = succ[edge]
                    sources[fill[target]] = source
                    fill[target] += 1
            self._reverse = (starts, sources)
        return self._reverse


def _fairness_classes(graph: StateGraph, prop: LivenessProperty[S]) -> list[int]:
    """For each edge kind, its fairness class under `prop` (-1 for steps that are not fair)."""
    classes: list[int] = []
    action_classes: dict[str, int] = {}
    for kind_id, (action, _label) in enumerate(graph.edge_kinds):
        if action not in prop.fair_actions:
            classes.append(-1)
        elif prop.fair_per_label:
            classes.append(kind_id)
        else:
            classes.append(
                action_classes.setdefault(action, len(graph.edge_kinds) + len(action_classes))
            )
    return classes


def _cyclic_components(g: _Indexed, candidate: bytearray) -> tuple[list[int], list[list[int]]]:
    """Tarjan's strongly connected components of the `candidate` subgraph, without recursion.

    Returns a component id per node (-1 outside the components returned) and the members of
    every component that contains an edge: several states, or one with a self-loop.
    """
    nodes, succ, offsets, poll = g.nodes, g.succ, g.offsets, g.poll
    order = [-1] * nodes
    low = [0] * nodes
    on_stack = bytearray(nodes)
    component = [-1] * nodes
    components: list[list[int]] = []
    stack: list[int] = []
    counter = 0
    for root in range(nodes):
        if not candidate[root] or order[root] >= 0:
            continue
        order[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        calls = [root]
        positions = [offsets[root]]
        while calls:
            poll()
            node = calls[-1]
            edge = positions[-1]
            end = offsets[node + 1]
            descended = False
            while edge < end:
                target = succ[edge]
                edge += 1
                if not candidate[target]:
                    continue
                if order[target] < 0:
                    positions[-1] = edge
                    order[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = 1
                    calls.append(target)
                    positions.append(offsets[target])
                    descended = True
                    break
                if on_stack[target] and order[target] < low[node]:
                    low[node] = order[target]
            if descended:
                continue
            calls.pop()
            positions.pop()
            if calls and low[node] < low[calls[-1]]:
                low[calls[-1]] = low[node]
            if low[node] != order[node]:
                continue
            members = []
            while True:
                member = stack.pop()
                on_stack[member] = 0
                members.append(member)
                if member == node:
                    break
            if len(members) == 1 and not any(
                succ[e] == node for e in range(offsets[node], offsets[node + 1])
            ):
                continue
            for member in members:
                component[member] = len(components)
            components.append(members)
    return component, components


class _Analysis:
    """One property's analysis on an indexed graph."""

    def __init__(
        self, g: _Indexed, prop: LivenessProperty[S], position: int, result: SearchResult[S]
    ) -> None:
        self.g = g
        self.prop = prop
        self.result = result
        self.classes = _fairness_classes(g.graph, prop)
        # Component id per state, set by `fair_components` (-1: in no cyclic component).
        self.component: list[int] = []
        marks = g.graph.marks
        goal_bit, applies_bit = 1 << (3 * position), 1 << (3 * position + 1)
        cut_bit = 1 << (3 * position + 2)
        self.goal = bytearray(g.nodes)
        self.applies = bytearray(g.nodes)
        self.cut = bytearray(g.nodes)
        for node in range(g.expanded):
            g.poll()
            mark = marks[node]
            if mark & goal_bit:
                self.goal[node] = 1
            if mark & applies_bit:
                self.applies[node] = 1
            if mark & cut_bit:
                self.cut[node] = 1
        # Where the goal is reached or a bound ends the run, the question is settled.
        self.settled = bytearray(a or b for a, b in zip(self.goal, self.cut, strict=True))

    def enabled(self, node: int) -> set[int]:
        """The fairness classes of the steps enabled in `node`."""
        classes, kinds = self.classes, self.g.kinds
        found = {classes[kinds[e]] for e in range(self.g.offsets[node], self.g.offsets[node + 1])}
        found.discard(-1)
        return found

    def stuck(self) -> list[int]:
        """Applicable states from which no path reaches a goal state (or a state where a bound
        cuts the run short), in discovery order."""
        starts, sources = self.g.reverse()
        reached = bytearray(self.settled)
        queue = [node for node in range(self.g.nodes) if reached[node]]
        poll = self.g.poll
        for node in queue:  # the list grows while it is walked: a breadth-first queue
            poll()
            for edge in range(starts[node], starts[node + 1]):
                source = sources[edge]
                if not reached[source]:
                    reached[source] = 1
                    queue.append(source)
        applies = self.applies
        return [node for node in range(self.g.expanded) if applies[node] and not reached[node]]

    def fair_components(self) -> tuple[int, list[int], list[list[int]]]:
        """Cyclic components of applicable unsettled states, and the ids of the fair ones."""
        candidate = bytearray(a and not b for a, b in zip(self.applies, self.settled, strict=True))
        component, components = _cyclic_components(self.g, candidate)
        self.component = component
        fair = []
        for cid, members in enumerate(components):
            self.g.poll()
            if self._is_fair(cid, members):
                fair.append(cid)
        return len(components), fair, components

    def _is_fair(self, cid: int, members: list[int]) -> bool:
        always: set[int] | None = None
        taken: set[int] = set()
        succ, offsets, kinds, classes = self.g.succ, self.g.offsets, self.g.kinds, self.classes
        component = self.component
        for node in members:
            enabled = self.enabled(node)
            always = enabled if always is None else always & enabled
            for edge in range(offsets[node], offsets[node + 1]):
                if component[succ[edge]] == cid:
                    taken.add(classes[kinds[edge]])
        return always is None or always <= taken

    def lasso(self, cid: int, members: list[int]) -> Lasso:
        """The shortest stem into component `cid`, then a fair cycle inside it."""
        start = min(members)  # the first discovered: breadth-first order gives the shortest stem
        edges = self._fair_cycle(cid, start)
        g = self.g
        states = [start]
        for edge in edges[:-1]:
            states.append(g.succ[edge])
        kinds = [g.graph.edge_kinds[g.kinds[edge]] for edge in edges]
        return Lasso(
            stem=self.result.path_to(g.fingerprints[start]),
            cycle=tuple(g.fingerprints[node] for node in states),
            cycle_actions=tuple(action for action, _ in kinds),
            cycle_labels=tuple(label for _, label in kinds),
        )

    def _fair_cycle(self, cid: int, start: int) -> list[int]:
        """Edges of a cycle from `start` inside component `cid` that is weakly fair.

        Only a class enabled in every state of the cycle must be taken, and such a class is
        enabled in `start`; each one is met in turn by walking to the nearest edge taking it or,
        when no edge inside takes it, to the nearest state disabling it (one exists, since the
        component is fair). Walking further only adds states and edges, so requirements already
        met stay met; a final walk returns to `start`.
        """
        g, classes, kinds, component = self.g, self.classes, self.g.kinds, self.component
        path: list[int] = []
        node = start
        continuously = self.enabled(start)
        taken: set[int] = set()

        def inside(edge: int) -> bool:
            return component[g.succ[edge]] == cid

        for wanted in sorted(self.enabled(start)):
            if wanted in taken or wanted not in continuously:
                continue

            def takes_wanted(edge: int, c: int = wanted) -> bool:
                return classes[kinds[edge]] == c and inside(edge)

            def lacks_wanted(n: int, c: int = wanted) -> bool:
                return c not in self.enabled(n)

            walk = self._walk(cid, node, takes_wanted)
            if walk is None:
                walk = self._walk(cid, node, None, lacks_wanted)
            assert walk is not None, "a fair component meets every requirement"
            for edge in walk:
                taken.add(classes[kinds[edge]])
                node = g.succ[edge]
                continuously &= self.enabled(node)
            path.extend(walk)
        if node != start or not path:
            walk = self._walk(cid, node, lambda e: g.succ[e] == start)
            assert walk is not None, "a component is strongly connected"
            path.extend(walk)
        return path

    def _walk(
        self,
        cid: int,
        source: int,
        last_edge: Callable[[int], bool] | None,
        at_state: Callable[[int], bool] | None = None,
    ) -> list[int] | None:
        """The shortest edge list inside component `cid` from `source` that either ends with an
        edge satisfying `last_edge`, or ends in a state satisfying `at_state` (possibly empty)."""
        g, component = self.g, self.component
        if at_state is not None and at_state(source):
            return []
        # For each state reached, the edge it was reached by and that edge's source.
        came_by: dict[int, tuple[int, int]] = {source: (-1, -1)}
        queue = [source]
        for node in queue:
            for edge in range(g.offsets[node], g.offsets[node + 1]):
                target = g.succ[edge]
                if component[target] != cid:
                    continue
                if last_edge is not None and last_edge(edge):
                    return [*_back(came_by, node), edge]
                if target not in came_by:
                    came_by[target] = (edge, node)
                    if at_state is not None and at_state(target):
                        return _back(came_by, target)
                    queue.append(target)
        return None


def _back(came_by: dict[int, tuple[int, int]], node: int) -> list[int]:
    edges: list[int] = []
    edge, source = came_by[node]
    while edge >= 0:
        edges.append(edge)
        edge, source = came_by[source]
    edges.reverse()
    return edges


def check_liveness(
    model: Model[S], result: SearchResult[S], halt: Halt | None = None
) -> tuple[LivenessResult, ...]:
    """Judge each of the model's liveness properties on the graph `result` recorded; when
    `halt` says to stop (a time limit), the properties not judged yet are inconclusive.

    `result` must come from `search(model, record_graph=True)`.
    """
    graph = result.graph
    if graph is None:
        raise ValueError("the search did not record its graph: use search(..., record_graph=True)")
    properties = liveness_properties(model)
    names = tuple(prop.name for prop in properties)
    if names != graph.property_names:
        raise ValueError(
            f"the graph was recorded for properties {graph.property_names}, not {names}"
        )
    if not properties:
        return ()
    started = time.monotonic()
    judged: list[LivenessResult] = []
    try:
        poll = _poller(halt)
        poll()
        indexed = _Indexed(graph, poll)
        complete = graph.expanded_states == result.distinct_states
        reason = "" if complete else _incomplete_reason(graph, result)
        for position, prop in enumerate(properties):
            judged.append(_check(indexed, prop, position, result, complete, reason))
    except _OutOfTime:
        elapsed = time.monotonic() - started
        judged += [unjudged(prop.name, OUT_OF_TIME, elapsed) for prop in properties[len(judged) :]]
    return tuple(judged)


def unjudged(name: str, reason: str, elapsed_s: float = 0.0) -> LivenessResult:
    """The inconclusive result of a property the check did not get to judge, and why."""
    return LivenessResult(name, "inconclusive", reason, (), 0, 0, 0, 0, 0, 0, elapsed_s)


def _incomplete_reason(graph: StateGraph, result: SearchResult[S]) -> str:
    cause = f"a limit ({result.stopped_by})" if result.stopped_by else "a safety violation"
    unexpanded = result.distinct_states - graph.expanded_states
    return f"the search stopped early at {cause}; {unexpanded} states were never expanded"


def _check(
    g: _Indexed,
    prop: LivenessProperty[S],
    position: int,
    result: SearchResult[S],
    complete: bool,
    reason: str,
) -> LivenessResult:
    started = time.monotonic()
    analysis = _Analysis(g, prop, position, result)
    violations: list[LivenessViolation] = []
    stuck: list[int] = []
    if complete:
        stuck = analysis.stuck()
        if stuck:
            violations.append(
                LivenessViolation(
                    prop.name,
                    GOAL_UNREACHABLE,
                    f"{len(stuck)} applicable states cannot reach the goal",
                    result.path_to(g.fingerprints[stuck[0]]),
                )
            )
    cyclic, fair, components = analysis.fair_components()
    if fair:
        first = min(fair, key=lambda cid: min(components[cid]))
        lasso = analysis.lasso(first, components[first])
        violations.append(
            LivenessViolation(
                prop.name,
                FAIR_CYCLE,
                f"{len(fair)} components of applicable non-goal states admit a fair cycle",
                lasso.stem,
                lasso,
            )
        )
    if violations:
        verdict, why = "fail", ""
    else:
        verdict, why = ("pass", "") if complete else ("inconclusive", reason)
    return LivenessResult(
        prop.name,
        verdict,
        why,
        tuple(violations),
        applicable_states=sum(analysis.applies),
        goal_states=sum(analysis.goal),
        cut_states=sum(a and c for a, c in zip(analysis.applies, analysis.cut, strict=True)),
        stuck_states=len(stuck),
        cyclic_components=cyclic,
        fair_components=len(fair),
        elapsed_s=time.monotonic() - started,
    )
