"""What Spark's executors do for one breadth-first level: expand states, keep the new ones.

The Spark engine (spark_bfs.py) keeps each level as key-value records spread over N partitions
by the states' stable fingerprints (`route`): a state's record lives in partition
`fingerprint % N`. Tagged records share the layout: `("V", i)` holds partition i's visited set
and `("R", i)` a report for the driver.

A level runs in two steps, one function each:

1. `Expand` (per frontier partition) expands every state with `expand.expand_for_merge`, the
   function every engine judges states with, in *discovery order*: the order the in-process
   engine's frontier has. A state's discovery path is the successor index taken at each step
   from its initial state (two bytes each); the in-process frontier of a level is ordered by
   these paths, because it lists successors parent by parent. So the first discovery of a state
   is the one with the smallest path, wherever it happened, and every engine picks the same
   BFS parent. Each new successor is emitted once per partition (at its first occurrence
   there, with the invariants it violates), and the partition's counts, action-property
   violations, deadlocks and liveness edges go into one report.
2. `Deduplicate` (per fingerprint partition, after the shuffle that keeps each successor's
   smallest path) gets the partition's candidates and its visited set side by side (the two
   RDDs share their partitioner, so Spark puts partition i of both in one task) and keeps the
   candidates the visited set lacks: a merge anti-join over sorted fingerprint arrays. It
   emits them as the next frontier, the grown visited set, and a report.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from groupspec.checker.budget import Halt
from groupspec.checker.expand import ROOM, Expander, Problem
from groupspec.checker.model import Model

from .checkpoint import write_part
from .state_pickle import ComponentCodec

# A discovery path spends this many bytes per step, so a state may have 65,536 successors.
STEP_BYTES = 2
MAX_SUCCESSORS = 1 << (8 * STEP_BYTES)
# States expanded per call of `expand_for_merge`: bounds the memory one task holds at once.
CHUNK = 256
VISITED, REPORT = "V", "R"

# A problem's place in the in-process engine's merge order: the discovery path of the state
# being expanded, then 0 for its deadlock or 1 + the index of the step's first occurrence among
# its successors, then the order it was found in.
ProblemKey = tuple[bytes, int, int]
# Where a state stands in the frontier: its discovery path, BFS parent, the label of the step
# that found it, and the state itself (state_pickle).
FrontierRecord = tuple[bytes, int, str, bytes]


class _ProcessExpander:
    """The expander of the model a Python worker process last expanded.

    Spark reuses its Python workers from task to task and level to level, and hands every task
    of a run the same broadcast model object; keeping that model's expander (its interned
    components and remembered group steps) lets a worker answer most steps from memory, as the
    in-process engine does, instead of starting cold in every task. Components and steps are
    pure functions of the model, so what one task remembers is true for the next; the model is
    held, so its identity cannot be reused by another while it is remembered."""

    def __init__(self) -> None:
        self._model: object | None = None
        self._expander: tuple[Expander[Any], ComponentCodec] | None = None

    def of(self, model: Model[Any]) -> tuple[Expander[Any], ComponentCodec]:
        """The expander of `model` (with the liveness edges) and its codec of states, made on
        first use."""
        if self._expander is None or self._model is not model:
            expander: Expander[Any] = Expander(model, graph=True)
            self._model = model
            self._expander = expander, ComponentCodec(expander.values, expander.intern)
        return self._expander


# One per Python worker process: a cache of pure results, never read for anything else.
_PROCESS_EXPANDER = _ProcessExpander()


class InjectedFailure(RuntimeError):
    """The failure `Expand.fail_first_attempt` raises, to test that Spark's retry is harmless."""


# A record's key: a state's fingerprint, or a tag (VISITED, REPORT) and a partition index.
RecordKey = int | tuple[str, int]


def route(key: RecordKey) -> int:
    """The partition routing of every record: a fingerprint by itself, a tagged key by its index."""
    # `type(key) is int` does not narrow the else branch (int has subclasses): it is the tuple.
    return key if type(key) is int else key[1]  # type: ignore[index]


def initial_path(position: int) -> bytes:
    """The discovery path of the `position`-th initial state."""
    return position.to_bytes(STEP_BYTES, "big")


@dataclass(frozen=True)
class KeyedProblem:
    """A problem with its place in merge order and the fingerprint its trace must reach."""

    key: ProblemKey
    at: int
    problem: Problem
    # For a problem of a step: the state the step left (its trace ends with that step).
    via: int | None = None


@dataclass(frozen=True)
class GraphRecord:
    """One expanded state for the liveness graph: its edges' targets and (action, label)."""

    path: bytes
    state: int
    marks: int
    targets: tuple[int, ...]
    kinds: tuple[tuple[str, str], ...]


@dataclass
class ExpansionReport:
    """What expanding one frontier partition counted and found."""

    expanded: int = 0
    transitions: int = 0
    action_counts: dict[str, int] = field(default_factory=dict)
    rule_counts: dict[str, int] = field(default_factory=dict)
    problems: list[KeyedProblem] = field(default_factory=list)
    graph: list[GraphRecord] = field(default_factory=list)
    # Each transition group's (steps from memory, model calls) during this task.
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Why the task stopped before expanding its whole partition: "room" (it found as many
    # new states as the state budget allowed), "max_seconds" (the time limit), or None.
    stopped: str | None = None


@dataclass(frozen=True)
class LevelReport:
    """One fingerprint partition's share of a level: new states, the invariants they violate
    (judged where they were first discovered), parents (when asked for), and the expansion
    reports that were routed to it."""

    new_states: int
    problems: tuple[KeyedProblem, ...]
    parents: tuple[tuple[int, int], ...]
    expansions: tuple[ExpansionReport, ...]


# A successor candidate on its way to deduplication: its frontier record if it is new, and the
# invariants it violates at its first discovery.
Candidate = tuple[bytes, int, str, bytes, tuple[KeyedProblem, ...]]


def first_discovered(left: Candidate, right: Candidate) -> Candidate:
    """Of two discoveries of one state, the one with the smaller path (the BFS parent's)."""
    return left if left[0] <= right[0] else right


def _attempt() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.attemptNumber() if context is not None else 0


@dataclass(frozen=True)
class Expand:
    """Expand a frontier partition (see the module docstring); `model` is a Spark broadcast.

    `graph` asks for the liveness edges. `fail_first_attempt` makes the first attempt of
    partition 0's task fail after it has emitted part of its output (tests of fault tolerance).
    `deadline` (a wall-clock time: executors may run on other machines) stops the task where it
    is when it passes; `room` stops it after the state that brings the successors it emits to
    that many (the new states the state budget still allows). Either way the report says so,
    and a state cut short counts as unexpanded (no edges, no deadlock).
    """

    model: Any
    graph: bool
    fail_first_attempt: bool = False
    deadline: float | None = None
    room: int | None = None

    def __call__(
        self, index: int, records: Iterable[tuple[int, FrontierRecord]]
    ) -> Iterator[tuple[object, object]]:
        model: Model[Any] = self.model.value
        # The in-process engine's expansion, with this worker process's memory of group steps.
        expander, codec = _PROCESS_EXPANDER.of(model)
        frontier = sorted((record[0], fp, record[3]) for fp, record in records)
        report = ExpansionReport()
        before = [(stats.hits, stats.misses) for stats in expander.stats]
        shipped: set[int] = set()
        emitted = 0
        expander.halt = None if self.deadline is None else Halt(self.deadline, clock=time.time)
        for start in range(0, len(frontier), CHUNK):
            chunk = frontier[start : start + CHUNK]
            left = None if self.room is None else self.room - emitted
            if left is not None and left <= 0:
                report.stopped = ROOM
                break
            batch = [(fp, codec.decode(data)) for _, fp, data in chunk]
            result = expander.expand_batch(batch, (), shipped, room=left)
            _count(report, result.action_counts, result.rule_counts, len(result.targets))
            deadlocked = frozenset(result.deadlocked)
            for position, (path, parent, _) in enumerate(chunk[: len(result.parents)]):
                first, last = result.offsets[position], result.offsets[position + 1]
                if last - first > MAX_SUCCESSORS:
                    raise ValueError(f"a state has {last - first} successors; at most 65,536")
                targets = tuple(result.targets[first:last])
                kinds = result.kinds[first:last]
                if self.graph and position < result.complete_parents:
                    report.graph.append(
                        GraphRecord(path, parent, result.marks[position], targets, kinds)
                    )
                if position in deadlocked:
                    deadlock = Problem("deadlock", "Deadlock", "no step is enabled", parent)
                    report.problems.append(KeyedProblem((path, 0, 0), parent, deadlock))
                judged = _keyed(path, parent, targets, result.problems.get(position, ()), report)
                for step, target in enumerate(targets):
                    state = result.candidates.get(first + step)
                    if state is None:
                        continue
                    child = path + step.to_bytes(STEP_BYTES, "big")
                    label = kinds[step][1]
                    yield (
                        target,
                        (
                            child,
                            parent,
                            label,
                            codec.encode(cast("tuple[int, ...]", state)),
                            judged.get(target, ()),
                        ),
                    )
                    emitted += 1
                    if self.fail_first_attempt and index == 0 and emitted == 1 and _attempt() == 0:
                        raise InjectedFailure("injected failure in the first attempt of a task")
            report.expanded += result.complete_parents
            if result.stopped:
                report.stopped = result.stopped
                break
        expander.halt = None
        report.groups = {
            stats.name: (stats.hits - hits, stats.misses - misses)
            for stats, (hits, misses) in zip(expander.stats, before, strict=True)
        }
        yield (REPORT, index), report


def _count(
    report: ExpansionReport, actions: dict[str, int], rules: dict[str, int], transitions: int
) -> None:
    report.transitions += transitions
    for name, count in actions.items():
        report.action_counts[name] = report.action_counts.get(name, 0) + count
    for name, count in rules.items():
        report.rule_counts[name] = report.rule_counts.get(name, 0) + count


def _keyed(
    path: bytes,
    parent: int,
    targets: Sequence[int],
    problems: Sequence[Problem],
    report: ExpansionReport,
) -> dict[int, tuple[KeyedProblem, ...]]:
    """Key one state's problems in merge order; action problems go into `report`, invariant
    problems are returned by target (they count only if the target turns out to be new)."""
    if not problems:
        return {}
    slots: dict[int, int] = {}
    for step, target in enumerate(targets):
        slots.setdefault(target, step)
    judged: dict[int, list[KeyedProblem]] = {}
    for seq, problem in enumerate(problems, start=1):
        at = problem.successor
        if problem.kind == "invariant":
            judged.setdefault(at, []).append(KeyedProblem((path, 1 + slots[at], seq), at, problem))
        else:
            report.problems.append(KeyedProblem((path, 1 + slots[at], seq), at, problem, parent))
    return {target: tuple(found) for target, found in judged.items()}


@dataclass(frozen=True)
class VisitedBlock:
    """One partition's visited states: sorted fingerprints, their BFS parents and depths."""

    fingerprints: np.ndarray
    parents: np.ndarray
    depths: np.ndarray

    @staticmethod
    def of(entries: Sequence[tuple[int, int, int]]) -> VisitedBlock:
        """A block of (fingerprint, parent, depth) entries (a root's parent is itself)."""
        ordered = sorted(entries)
        return VisitedBlock(
            np.array([e[0] for e in ordered], dtype=np.uint64),
            np.array([e[1] for e in ordered], dtype=np.uint64),
            np.array([e[2] for e in ordered], dtype=np.uint32),
        )

    def __len__(self) -> int:
        return len(self.fingerprints)

    def missing(self, fingerprints: np.ndarray) -> np.ndarray:
        """A mask of the `fingerprints` this block does not hold."""
        at = np.searchsorted(self.fingerprints, fingerprints)
        inside = at < len(self.fingerprints)
        found = np.zeros(len(fingerprints), dtype=bool)
        found[inside] = self.fingerprints[at[inside]] == fingerprints[inside]
        return ~found

    def merged(self, other: VisitedBlock) -> VisitedBlock:
        """This block and `other` (disjoint) as one sorted block."""
        fingerprints = np.concatenate((self.fingerprints, other.fingerprints))
        order = np.argsort(fingerprints, kind="stable")
        return VisitedBlock(
            fingerprints[order],
            np.concatenate((self.parents, other.parents))[order],
            np.concatenate((self.depths, other.depths))[order],
        )

    def parent_of(self, fingerprint: int) -> tuple[int, int] | None:
        """(BFS parent, depth) of a state in this block, or None."""
        key = np.uint64(fingerprint)
        at = int(np.searchsorted(self.fingerprints, key))
        if at == len(self.fingerprints) or self.fingerprints[at] != key:
            return None
        return int(self.parents[at]), int(self.depths[at])


@dataclass(frozen=True)
class Deduplicate:
    """Keep a fingerprint partition's candidates its visited set lacks (module docstring).

    `depth` is the depth of the level being formed; `parents` asks for the new states' BFS
    parents in the report (the driver needs them for liveness); `save_to` is the checkpoint
    directory the level's parts go to (spark_checkpoint.py), if any.
    """

    depth: int
    parents: bool
    save_to: str | None = None

    def __call__(self, index: int, records: Iterable[tuple[Any, Any]]) -> Iterator[tuple[Any, Any]]:
        candidates: dict[int, Candidate] = {}
        expansions: list[ExpansionReport] = []
        visited = VisitedBlock.of(())
        for key, value in records:
            if type(key) is int:
                candidates[key] = value
            elif key[0] == VISITED:
                visited = visited.merged(value)
            else:
                expansions.append(value)
        fingerprints = np.fromiter(candidates, dtype=np.uint64, count=len(candidates))
        new = fingerprints[visited.missing(fingerprints)]
        problems: list[KeyedProblem] = []
        entries: list[tuple[int, int, int]] = []
        frontier: list[tuple[int, FrontierRecord]] = []
        labels: list[str] = []
        for key in new.tolist():
            path, parent, label, data, judged = candidates[key]
            entries.append((key, parent, self.depth))
            labels.append(label)
            problems.extend(judged)
            frontier.append((key, (path, parent, label, data)))
        if self.save_to is not None:
            saved_parents = [
                (fp, parent, label) for (fp, parent, _), label in zip(entries, labels, strict=True)
            ]
            write_part(self.save_to, index, frontier, saved_parents)
        yield from frontier
        yield (VISITED, index), visited.merged(VisitedBlock.of(entries))
        parents = tuple((fp, parent) for fp, parent, _ in entries) if self.parents else ()
        yield (
            (REPORT, index),
            LevelReport(len(entries), tuple(problems), parents, tuple(expansions)),
        )
