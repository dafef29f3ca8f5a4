"""Exhaustive breadth-first search over a model, in one process or across many.

The search is level-synchronous: each level's frontier is cut into batches in a fixed order,
batches are expanded (in this process, or by a pool of worker processes), and the results are
merged in batch order. Deduplication, counting and the choice of the first violation happen
only in the merge, so every worker count explores the same states, counts the same transitions
and reports the same shortest counterexample.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .expand import Expansion, Problem, expand_batch, invariant_problems
from .fingerprint import fingerprint
from .graph import StateGraph
from .model import Model, liveness_properties

S = TypeVar("S")

# Batches small enough to keep both cores busy near the end of a level, large enough that
# shipping a batch to a worker costs little next to expanding it.
BATCH_SIZE = 256


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


def _expand_task(
    task: tuple[Model[S], Sequence[tuple[int, S]], bool],
) -> tuple[Expansion[S], ...]:
    model, batch, marks = task
    return expand_batch(model, batch, marks)


class _Search(Generic[S]):
    """The merge side of a search: the seen set, the next frontier, counts and problems."""

    def __init__(self, model: Model[S], limits: Limits, result: SearchResult[S]) -> None:
        self.model = model
        self.limits = limits
        self.result = result
        self.next_frontier: list[tuple[int, S]] = []

    def record(self, problem: Problem, at: int) -> None:
        if self.done():
            return
        self.result.problems.append(FoundProblem(problem, self.result.path_to(at)))

    def done(self) -> bool:
        return bool(self.result.problems) and not self.limits.all_violations

    def merge(self, expansion: Expansion[S]) -> None:
        result = self.result
        parents = result.parents
        if result.graph is not None:
            result.graph.add(expansion)
        problems_by_state: dict[int, list[Problem]] = {}
        for problem in expansion.problems:
            problems_by_state.setdefault(problem.successor, []).append(problem)
        if expansion.deadlocked:
            self.record(
                Problem("deadlock", "Deadlock", "no step is enabled", expansion.parent),
                expansion.parent,
            )
        for successor in expansion.successors:
            result.transitions += 1
            result.action_counts[successor.action] += 1
            result.rule_counts.update(successor.rules)
            is_new = successor.fingerprint not in parents
            if is_new:
                parents[successor.fingerprint] = expansion.parent
                self.next_frontier.append((successor.fingerprint, successor.state))
            for problem in problems_by_state.pop(successor.fingerprint, ()):
                # Invariant verdicts come with the first occurrence only; action properties
                # belong to every step, including steps into states already seen.
                if problem.kind == "action" or is_new:
                    self.record(problem, successor.fingerprint)
        result.distinct_states = len(parents)


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
        merger.next_frontier.append((initial_fp, representative))
        for problem in invariant_problems(model, initial, initial_fp):
            merger.record(problem, initial_fp)
    result.distinct_states = len(result.parents)

    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        level = 0
        while merger.next_frontier and not merger.done():
            frontier, merger.next_frontier = merger.next_frontier, []
            tasks = ((model, batch, record_graph) for batch in _batches(frontier))
            expansions = pool.imap(_expand_task, tasks) if pool else map(_expand_task, tasks)
            for batch_result in expansions:
                for expansion in batch_result:
                    merger.merge(expansion)
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
            pool.terminate()
            pool.join()
    result.complete = result.stopped_by is None and not merger.next_frontier
    result.elapsed_s = time.monotonic() - started
    return result


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
