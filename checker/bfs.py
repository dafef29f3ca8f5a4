"""Exhaustive breadth-first search over a model, in one process or across many.

The search is level-synchronous: each level's frontier is cut into batches in a fixed order,
batches are expanded (in this process, or by a pool of worker processes), and the results are
merged in batch order. Deduplication, counting and the choice of the first violation happen
only in the merge, so every worker count explores the same states, counts the same transitions
and reports the same shortest counterexample.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .expand import BatchResult, Problem, expand_for_merge, invariant_problems
from .fingerprint import fingerprint
from .graph import StateGraph
from .model import Model, liveness_properties

S = TypeVar("S")

# Batches small enough to keep both cores busy near the end of a level, large enough that
# shipping a batch to a worker costs little next to expanding it.
BATCH_SIZE = 256
# Batches queued per worker: enough that a worker never waits for the merge to hand out work.
IN_FLIGHT_PER_WORKER = 4
# Fingerprints a worker remembers having sent before it forgets them all (bounds its memory).
SHIPPED_LIMIT = 4_000_000
_PROTOCOL = pickle.HIGHEST_PROTOCOL


@dataclass(frozen=True)
class Limits:
    """When to stop early: state and time budgets, and whether to collect every violation."""

    max_states: int | None = None
    max_seconds: float | None = None
    all_violations: bool = False


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running search, for progress displays."""

    distinct_states: int
    transitions: int
    queue: int
    depth: int
    elapsed_s: float


@dataclass(frozen=True)
class FoundProblem:
    """A violated property and the fingerprints of the path that reaches it, root first."""

    problem: Problem
    path: tuple[int, ...]


@dataclass
class SearchResult(Generic[S]):
    """What a search explored and found.

    `complete` is False when a limit stopped the search; `stopped_by` says which. `graph` is
    the explored graph when the search was asked to record it.
    """

    model: str
    workers: int
    distinct_states: int = 0
    transitions: int = 0
    depth: int = 0
    elapsed_s: float = 0.0
    complete: bool = True
    stopped_by: str | None = None
    problems: list[FoundProblem] = field(default_factory=list)
    action_counts: Counter[str] = field(default_factory=Counter)
    rule_counts: Counter[str] = field(default_factory=Counter)
    parents: dict[int, int | None] = field(default_factory=dict, repr=False)
    graph: StateGraph | None = field(default=None, repr=False)

    @property
    def verdict(self) -> str:
        """ "fail" when a property failed, "pass" when the space was exhausted, else "incomplete"."""
        if self.problems:
            return "fail"
        return "pass" if self.complete else "incomplete"

    def path_to(self, state_fingerprint: int) -> tuple[int, ...]:
        """Fingerprints from an initial state to `state_fingerprint` along BFS parents."""
        path = [state_fingerprint]
        parent = self.parents[state_fingerprint]
        while parent is not None:
            path.append(parent)
            parent = self.parents[parent]
        return tuple(reversed(path))


ProgressCallback = Callable[[Progress], None]


def _batches(frontier: Sequence[tuple[int, S]]) -> Iterator[Sequence[tuple[int, S]]]:
    for start in range(0, len(frontier), BATCH_SIZE):
        yield frontier[start : start + BATCH_SIZE]


class _Search(Generic[S]):
    """The merge side of a search: the seen set, the next frontier, counts and problems."""

    def __init__(self, model: Model[S], limits: Limits, result: SearchResult[S]) -> None:
        self.model = model
        self.limits = limits
        self.result = result
        self.next_frontier: list[tuple[int, object]] = []

    def record(self, problem: Problem, at: int) -> None:
        if self.done():
            return
        self.result.problems.append(FoundProblem(problem, self.result.path_to(at)))

    def done(self) -> bool:
        return bool(self.result.problems) and not self.limits.all_violations

    def merge(self, batch: BatchResult[S]) -> None:
        """Merge one expanded batch: new states join the seen set and the next frontier."""
        result = self.result
        parents = result.parents
        frontier = self.next_frontier
        graph = result.graph
        targets, states, offsets = batch.targets, batch.states, batch.offsets
        problems = batch.problems
        deadlocked = frozenset(batch.deadlocked)
        for position, parent in enumerate(batch.parents):
            start, end = offsets[position], offsets[position + 1]
            if graph is not None:
                graph.add_state(
                    parent, batch.marks[position], targets[start:end], batch.kinds[start:end]
                )
            if position in deadlocked:
                self.record(Problem("deadlock", "Deadlock", "no step is enabled", parent), parent)
            found = problems.get(position)
            if found is not None:
                self._merge_judged(parent, found, targets[start:end], states[start:end])
                continue
            # The common case, kept tight: most successors were seen before.
            for index in range(start, end):
                target = targets[index]
                if target not in parents:
                    parents[target] = parent
                    frontier.append((target, _needed(states[index])))
        result.transitions += len(targets)
        result.action_counts.update(batch.action_counts)
        result.rule_counts.update(batch.rule_counts)
        result.distinct_states = len(parents)

    def _merge_judged(
        self,
        parent: int,
        found: Sequence[Problem],
        targets: Sequence[int],
        states: Sequence[object],
    ) -> None:
        parents = self.result.parents
        problems_by_state: dict[int, list[Problem]] = {}
        for problem in found:
            problems_by_state.setdefault(problem.successor, []).append(problem)
        for target, state in zip(targets, states, strict=True):
            is_new = target not in parents
            if is_new:
                parents[target] = parent
                self.next_frontier.append((target, _needed(state)))
            for problem in problems_by_state.pop(target, ()):
                # Invariant verdicts come with the first occurrence only; action properties
                # belong to every step, including steps into states already seen.
                if problem.kind == "action" or is_new:
                    self.record(problem, target)


def _needed(state: object) -> object:
    if state is None:
        # An expander left out a state the merge has not seen: a bug in the engine.
        raise RuntimeError("a new successor arrived without its state")
    return state


def search(
    model: Model[S],
    *,
    workers: int = 1,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    record_graph: bool = False,
) -> SearchResult[S]:
    """Explore every reachable state of `model` breadth-first, checking every property.

    With `record_graph` the result also holds the explored graph (`SearchResult.graph`) with
    the marks of the model's liveness properties, for `checker.liveness`; it costs memory per
    edge, so safety-only runs leave it off.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    limits = limits or Limits()
    started = time.monotonic()
    result: SearchResult[S] = SearchResult(model.name, workers)
    if record_graph:
        names = tuple(prop.name for prop in liveness_properties(model))
        result.graph = StateGraph(property_names=names)
    merger = _Search(model, limits, result)
    for initial in model.initial_states():
        representative = model.representative(initial)
        initial_fp = fingerprint(representative)
        if initial_fp in result.parents:
            continue
        result.parents[initial_fp] = None
        # The multi-process engine keeps its frontier pickled (see _Workers).
        stored = pickle.dumps(representative, _PROTOCOL) if workers > 1 else representative
        merger.next_frontier.append((initial_fp, stored))
        for problem in invariant_problems(model, initial, initial_fp):
            merger.record(problem, initial_fp)
    result.distinct_states = len(result.parents)

    pool = _Workers(model, workers, record_graph) if workers > 1 else None
    try:
        level = 0
        while merger.next_frontier and not merger.done():
            frontier, merger.next_frontier = merger.next_frontier, []
            batches = list(_batches(frontier))
            if pool is not None:
                expanded: Iterator[BatchResult[S]] = pool.expand_level(batches)
            else:
                expanded = (
                    expand_for_merge(
                        model,
                        batch,  # type: ignore[arg-type]
                        result.parents,
                        set(),
                        graph=record_graph,
                    )
                    for batch in batches
                )
            for batch_result in expanded:
                merger.merge(batch_result)
                if merger.next_frontier:
                    # Depth is that of the deepest state found, even if a stop cuts the level.
                    result.depth = level + 1
                stop = _limit_reached(limits, result, started)
                if progress:
                    progress(_snapshot(result, merger, started))
                if stop or merger.done():
                    result.stopped_by = stop
                    break
            if result.stopped_by or merger.done():
                break
            level += 1
    finally:
        if pool is not None:
            pool.close()
    result.complete = result.stopped_by is None and not merger.next_frontier
    result.elapsed_s = time.monotonic() - started
    return result


class _Workers(Generic[S]):
    """Worker processes that expand batches; results come back in batch order.

    Workers are forked once per search and keep the model (and so its memo tables) for the
    whole search, instead of receiving a pickled model with every batch. They take batches from
    one FIFO queue, so each worker sees its batches in increasing order; since batches are
    merged in order, a state a worker has already sent is known to the merge by the time any
    later batch of that worker is merged, and the worker sends only its fingerprint. States
    travel as pickles, and the merging process never unpickles them: it stores the bytes in
    the next frontier and forwards them to whichever worker expands them.
    """

    def __init__(self, model: Model[S], count: int, record_graph: bool) -> None:
        context = multiprocessing.get_context("fork")
        # Queues pickle in a feeder thread, so neither side blocks on a full pipe while the
        # other is sending.
        self.tasks: Any = context.Queue()
        self.results: Any = context.Queue()
        self.processes = [
            context.Process(
                target=_work,
                args=(model, record_graph, self.tasks, self.results),
                daemon=True,
            )
            for _ in range(count)
        ]
        for process in self.processes:
            process.start()
        self.window = count * IN_FLIGHT_PER_WORKER

    def expand_level(
        self, batches: Sequence[Sequence[tuple[int, object]]]
    ) -> Iterator[BatchResult[S]]:
        """Expand every batch of one level, yielding results in batch order."""
        arrived: dict[int, BatchResult[S]] = {}
        sent = min(self.window, len(batches))
        for index in range(sent):
            self.tasks.put((index, batches[index]))
        for wanted in range(len(batches)):
            while wanted not in arrived:
                index, outcome = self._receive()
                arrived[index] = outcome
                if sent < len(batches):
                    self.tasks.put((sent, batches[sent]))
                    sent += 1
            yield arrived.pop(wanted)

    def _receive(self) -> tuple[int, BatchResult[S]]:
        while True:
            try:
                index, outcome = self.results.get(timeout=1.0)
            except queue.Empty:
                dead = [p.exitcode for p in self.processes if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"a worker process died (exit code {dead[0]})") from None
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            return index, outcome

    def close(self) -> None:
        """Stop the workers and drop whatever is still queued."""
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.join()
        for channel in (self.tasks, self.results):
            channel.cancel_join_thread()
            channel.close()


def _work(model: Model[S], record_graph: bool, tasks: Any, results: Any) -> None:
    """A worker's loop: expand batches of pickled states until the process is stopped."""
    shipped: set[int] = set()
    while True:
        index, batch = tasks.get()
        try:
            if len(shipped) > SHIPPED_LIMIT:
                # Only a cache: forgetting makes the worker send some states twice.
                shipped.clear()
            states = [(parent, pickle.loads(data)) for parent, data in batch]
            outcome: object = expand_for_merge(
                model, states, (), shipped, graph=record_graph, pickled=True
            )
        except Exception as error:  # reported to the merging process
            outcome = _portable(error)
        results.put((index, outcome))


def _portable(error: Exception) -> Exception:
    """The error itself if it pickles, else a RuntimeError carrying its traceback."""
    try:
        pickle.dumps(error)
    except Exception:  # any pickling failure
        return RuntimeError("a worker failed:\n" + traceback.format_exc())
    return error


def _limit_reached(limits: Limits, result: SearchResult[S], started: float) -> str | None:
    if limits.max_states is not None and result.distinct_states >= limits.max_states:
        return "max_states"
    if limits.max_seconds is not None and time.monotonic() - started >= limits.max_seconds:
        return "max_seconds"
    return None


def _snapshot(result: SearchResult[S], merger: _Search[S], started: float) -> Progress:
    return Progress(
        result.distinct_states,
        result.transitions,
        len(merger.next_frontier),
        result.depth,
        time.monotonic() - started,
    )
