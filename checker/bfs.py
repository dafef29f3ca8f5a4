"""Exhaustive breadth-first search over a model, in one process or across many.

States are tuples of interned components and steps come from transition groups remembered by
the projection of the state on the slots they read (see `checker.model` and `checker.expand`); the seen
set keeps each state's 64-bit key and its parent's, 16 bytes a state (`checker.store`).

The search is level-synchronous: each level's frontier is cut into batches in a fixed order,
batches are expanded (in this process, or also by worker processes), and the results are
merged in batch order. Deduplication, counting and the choice of the first violation happen
only in the merge, and limits and first violations stop the search only at the same batch
boundaries, so every worker count explores the same states, counts the same transitions and
reports the same shortest counterexample.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
import time
import traceback
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .channel import Channel
from .derived import liveness_properties
from .expand import BatchResult, Expander, GroupStats, Ids, Problem, StepObserver
from .graph import StateGraph
from .interrupt import INTERRUPTED, SearchInterrupted, deferred_interrupts
from .model import Model
from .store import VisitedStore, path_to

S = TypeVar("S")

# A level is merged in batches of this many states, and limits and first violations stop the
# search only between batches; every worker count uses the same batches, so it stops alike.
BATCH_SIZE = 256
# With worker processes, levels are cut into chunks, so that small levels (a group world's
# levels hold a few hundred states) still keep every process busy (see _chunks).
GUIDED = 2
MIN_CHUNK = 8
# Chunks queued per worker process: enough that it rarely waits for the merge to hand out
# work, few enough that the merging process is not left idle at the end of a level while a
# worker still has a queue.
IN_FLIGHT_PER_WORKER = 2
# Fingerprints a worker knows the merge has seen, before it forgets them all (bounds memory).
KNOWN_LIMIT = 4_000_000
# Shared state parts one end of a channel remembers before both ends forget them (between
# levels), to bound memory (see codec.py).
PARTS_LIMIT = 1_000_000
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
    # Every seen state's key and its breadth-first parent (None for an initial state).
    parents: Mapping[int, int | None] = field(default_factory=VisitedStore, repr=False)
    graph: StateGraph | None = field(default=None, repr=False)
    # How often each transition group's steps came from memory (the merging process's).
    group_stats: list[GroupStats] = field(default_factory=list, repr=False)

    @property
    def verdict(self) -> str:
        """ "fail" when a property failed, "pass" when the space was exhausted, else "incomplete"."""
        if self.problems:
            return "fail"
        return "pass" if self.complete else "incomplete"

    def path_to(self, state_fingerprint: int) -> tuple[int, ...]:
        """Keys from an initial state to `state_fingerprint` along BFS parents."""
        return path_to(self.parents, state_fingerprint)


ProgressCallback = Callable[[Progress], None]


class _Search(Generic[S]):
    """The merge side of a search: the seen set, the next frontier, counts and problems."""

    def __init__(self, model: Model[S], limits: Limits, result: SearchResult[S]) -> None:
        self.model = model
        self.limits = limits
        self.result = result
        self.store: VisitedStore = result.parents  # type: ignore[assignment]
        self.next_frontier: list[tuple[int, object]] = []

    def record(self, problem: Problem, at: int, via: int | None = None) -> None:
        """Keep `problem`, found on state `at` (reached by a step from `via`, for a problem of
        that step)."""
        if self.done():
            return
        # A step's problem is shown on that step, even when its successor was first reached
        # from another state.
        path = self.result.path_to(at) if via is None else (*self.result.path_to(via), at)
        self.result.problems.append(FoundProblem(problem, path))

    def done(self) -> bool:
        return bool(self.result.problems) and not self.limits.all_violations

    def merge(self, batch: BatchResult) -> list[int]:
        """Merge one expanded batch: new states join the seen set and the next frontier.
        Returns the positions (in `batch.targets`) of the steps that found a new state."""
        result = self.result
        store = self.store
        frontier = self.next_frontier
        graph = result.graph
        targets, offsets = batch.targets, batch.offsets
        # The expander left out the states it knew; the rest are new unless the store's older
        # levels have them (one batched lookup) or an earlier step of this merge added them.
        candidates = batch.candidates
        old = store.archived([targets[index] for index in candidates])
        fresh = {index for index, seen in zip(candidates, old, strict=True) if not seen}
        problems = batch.problems
        deadlocked = batch.deadlocked
        parents = batch.parents
        # New states first, in order (each step knows its expanded state by the offsets) ...
        found_new: list[int] = []
        position = 0
        in_recent, add, append = store.in_recent, store.add, frontier.append
        for index in candidates:
            if index not in fresh:
                continue
            while offsets[position + 1] <= index:
                position += 1
            target = targets[index]
            if not in_recent(target):
                add(target, parents[position])
                append((target, candidates[index]))
                found_new.append(index)
        # ... then the graph and the problems, state by state.
        if graph is not None:
            for position, parent in enumerate(parents):
                start, end = offsets[position], offsets[position + 1]
                graph.add_state(
                    parent, batch.marks[position], targets[start:end], batch.kinds[start:end]
                )
        if problems or deadlocked:
            new_indices = set(found_new)
            for position in sorted({*problems, *deadlocked}):
                parent = parents[position]
                if position in deadlocked:
                    deadlock = Problem("deadlock", "Deadlock", "no step is enabled", parent)
                    self.record(deadlock, parent)
                found = problems.get(position)
                if found is not None:
                    start, end = offsets[position], offsets[position + 1]
                    new_here = {
                        targets[index]: True for index in range(start, end) if index in new_indices
                    }
                    self.record_judged(parent, found, targets[start:end], new_here)
        result.transitions += len(targets)
        result.action_counts.update(batch.action_counts)
        result.rule_counts.update(batch.rule_counts)
        result.distinct_states = len(store)
        return found_new

    def record_judged(
        self,
        parent: int,
        found: Sequence[Problem],
        targets: Sequence[int],
        new: Mapping[int, bool] | None = None,
    ) -> None:
        """Keep a state's problems in the order of its steps' targets: an action property's
        on every step, an invariant's only where its state was new (all, without `new`)."""
        problems_by_state: dict[int, list[Problem]] = {}
        for problem in found:
            problems_by_state.setdefault(problem.successor, []).append(problem)
        for target in targets:
            for problem in problems_by_state.pop(target, ()):
                # Invariant verdicts come with the first occurrence only; action properties
                # belong to every step, including steps into states already seen.
                if problem.kind == "action":
                    self.record(problem, target, via=parent)
                elif new is None or new.get(target):
                    self.record(problem, target)


def search(
    model: Model[S],
    *,
    workers: int = 1,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    record_graph: bool = False,
    observer: StepObserver[S] | None = None,
) -> SearchResult[S]:
    """Explore every reachable state of `model` breadth-first, checking every property.

    With `record_graph` the result also holds the explored graph (`SearchResult.graph`) with
    the marks of the model's liveness properties, for `checker.liveness`; it costs memory per
    edge, so safety-only runs leave it off. `observer` is told of every explored step, in
    breadth-first order (see `expand.StepObserver`): diagrams, conformance vectors and coverage build on it
    instead of exploring on their own. It needs one process.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if observer is not None and workers != 1:
        raise ValueError("an observer sees steps in one process: use workers=1")
    limits = limits or Limits()
    started = time.monotonic()
    result: SearchResult[S] = SearchResult(model.name, workers)
    if record_graph:
        names = tuple(prop.name for prop in liveness_properties(model))
        result.graph = StateGraph(property_names=names)
    expander: Expander[S] = Expander(model, graph=record_graph)
    result.group_stats = expander.stats
    merger = _Search(model, limits, result)
    store = merger.store
    for key, ids, problems in expander.initial():
        store.add(key, None)
        merger.next_frontier.append((key, ids))
        for problem in problems:
            merger.record(problem, key)
    result.distinct_states = len(store)

    pool = _Pool(model, expander, workers - 1, record_graph) if workers > 1 else None
    recent = store.recent_levels()
    with deferred_interrupts() as interrupt_requested:
        try:
            level = 0
            while merger.next_frontier and not merger.done():
                frontier, merger.next_frontier = merger.next_frontier, []
                store.next_level()
                expanded: Iterator[tuple[BatchResult | None, bool, list[tuple[int, Ids, Any, int]]]]
                if pool is None and observer is None and expander.explores_fast:
                    expanded = _explore_here(expander, frontier, merger, result)
                elif pool is not None:
                    expanded = (
                        (batch, end, []) for batch, end in pool.expand_level(frontier, recent())
                    )
                else:
                    expanded = _expand_here(expander, frontier, recent, observer is not None)
                for batch_result, batch_end, steps in expanded:
                    new = merger.merge(batch_result) if batch_result is not None else []
                    if observer is not None:
                        _tell(observer, expander, steps, set(new))
                    if merger.next_frontier:
                        # Depth is that of the deepest state found, even if a stop cuts the level.
                        result.depth = level + 1
                    if not batch_end:
                        continue  # a chunk of a batch: stops are decided where the batch ends
                    stop = limit_reached(limits, result, started) or (
                        INTERRUPTED if interrupt_requested() else None
                    )
                    if progress:
                        progress(_snapshot(result, merger, started))
                    if stop or merger.done():
                        result.stopped_by = stop
                        break
                if result.stopped_by or merger.done():
                    break
                level += 1
        except KeyboardInterrupt:
            # Raised by the progress callback, or a second Ctrl-C: stop here all the same.
            result.stopped_by = INTERRUPTED
        finally:
            if pool is not None:
                pool.close()
    result.complete = result.stopped_by is None and not merger.next_frontier
    store.archive_all()
    result.elapsed_s = time.monotonic() - started
    if result.stopped_by == INTERRUPTED:
        raise SearchInterrupted(result)
    return result


def _explore_here(
    expander: Expander[S],
    frontier: Sequence[tuple[int, object]],
    merger: _Search[S],
    result: SearchResult[S],
) -> Iterator[tuple[None, bool, list[tuple[int, Ids, Any, int]]]]:
    """Expand and merge a level in this process at once, batch by batch (`explore_fast`)."""
    for start in range(0, len(frontier), BATCH_SIZE):
        batch = frontier[start : start + BATCH_SIZE]
        result.transitions += expander.explore_fast(
            batch,  # type: ignore[arg-type]
            merger.store,
            merger.next_frontier,
            merger,
            result.graph,
        )
        result.action_counts.update(expander.action_counts)
        result.rule_counts.update(expander.rule_counts)
        expander.action_counts.clear()
        expander.rule_counts.clear()
        result.distinct_states = len(merger.store)
        yield None, True, []


def _expand_here(
    expander: Expander[S],
    frontier: Sequence[tuple[int, object]],
    recent: Any,
    observed: bool,
) -> Iterator[tuple[BatchResult, bool, list[tuple[int, Ids, Any, int]]]]:
    """Expand a level in this process, batch by batch; with `observed`, also every step."""
    for start in range(0, len(frontier), BATCH_SIZE):
        batch = frontier[start : start + BATCH_SIZE]
        steps: list[tuple[int, Ids, Any, int]] = []

        def note(
            parent: int,
            ids: Ids,
            step: Any,
            target: int,
            successor: Any,
            steps: list[tuple[int, Ids, Any, int]] = steps,
        ) -> None:
            steps.append((parent, ids, step, target))

        result = expander.expand_batch(
            batch,  # type: ignore[arg-type]
            recent(),
            set(),
            note if observed else None,
        )
        yield result, True, steps


def _tell(
    observer: StepObserver[S],
    expander: Expander[S],
    steps: list[tuple[int, Ids, Any, int]],
    new: set[int],
) -> None:
    """Tell the observer of a merged batch's steps, in order, with which found a new state."""
    states: dict[Ids, S] = {}
    for index, (parent, ids, step, target) in enumerate(steps):
        state = states.get(ids)
        if state is None:
            state = states[ids] = expander.state(ids)
        observer(parent, state, expander.transition(ids, step), target, index in new)


def _chunks(size: int, processes: int) -> list[tuple[int, int, bool]]:
    """A level of `size` states cut into (start, end, ends_a_batch) chunks for `processes`.

    Chunks shrink as the level is handed out (each is a 1/(GUIDED * processes) share of what
    is left, at least MIN_CHUNK), so the last ones are small and no process waits long for
    another at the end of a level. Chunks never straddle a batch boundary, so the merge can
    stop exactly where one process would.
    """
    chunks = []
    start = 0
    while start < size:
        batch_end = min((start // BATCH_SIZE + 1) * BATCH_SIZE, size)
        length = max(MIN_CHUNK, (size - start) // (processes * GUIDED))
        end = min(start + length, batch_end)
        chunks.append((start, end, end == batch_end))
        start = end
    return chunks


class _Pool(Generic[S]):
    """Worker processes that expand chunks of each level alongside the merging process.

    The merging process is a worker too: whenever the result it needs next has not arrived, it
    expands the next chunk nobody has taken, with no copying at all. Worker processes are
    forked once per search and keep the model (and so its memo tables) for the whole search.
    Each has its own task queue and a `Channel` to the merging process (see codec.py), so a
    state costs only its parts the other end has not seen yet. Every process receives its
    chunks in increasing order and chunks are merged in order, so a state a process has
    already sent is known to the merge by the time any later chunk of that process is merged,
    and the process sends only its fingerprint. At the start of each level every worker learns
    the fingerprints of the level's states, which the merge has all seen.
    """

    def __init__(
        self, model: Model[S], expander: Expander[S], count: int, record_graph: bool
    ) -> None:
        self.model = model
        self.expander = expander
        self.record_graph = record_graph
        context = multiprocessing.get_context("fork")
        # Queues pickle in a feeder thread, so neither side blocks on a full pipe while the
        # other is sending.
        self.tasks: list[Any] = [context.Queue() for _ in range(count)]
        self.results: Any = context.Queue()
        self.channels = [Channel(0) for _ in range(count)]
        self.processes = [
            context.Process(
                target=_work,
                args=(expander, worker, self.tasks[worker], self.results),
                daemon=True,
            )
            for worker in range(count)
        ]
        for process in self.processes:
            process.start()
        # Fingerprints of states this process sent with their state, in its own chunks.
        self.shipped: set[int] = set()
        # The fingerprints of the states of each chunk a worker is expanding, by chunk index.
        self.parents: dict[int, tuple[int, ...]] = {}

    def expand_level(
        self, frontier: Sequence[tuple[int, object]], known: Any
    ) -> Iterator[tuple[BatchResult, bool]]:
        """Expand one level, yielding each chunk's result in order with whether it ends a batch.

        `known` holds the keys the merge has seen recently, which chunks expanded here consult.
        States travel between processes as component values (each process interns them its
        own way); keys are the same in every process.
        """
        fingerprints = array("Q", [fp for fp, _ in frontier]).tobytes()
        for worker, channel in enumerate(self.channels):
            reset = channel.known_parts > PARTS_LIMIT
            if reset:
                channel.reset()
            self.tasks[worker].put(("level", reset, fingerprints))
        chunks = _chunks(len(frontier), len(self.processes) + 1)
        arrived: dict[int, BatchResult] = {}
        waiting = [0] * len(self.processes)
        assigned = 0
        for wanted in range(len(chunks)):
            while wanted not in arrived:
                for worker in range(len(self.processes)):
                    while waiting[worker] < IN_FLIGHT_PER_WORKER and assigned < len(chunks):
                        start, end, _ = chunks[assigned]
                        self._send(worker, assigned, frontier[start:end])
                        waiting[worker] += 1
                        assigned += 1
                self._collect(arrived, waiting, block=False)
                if wanted in arrived:
                    break
                if assigned < len(chunks):
                    start, end, _ = chunks[assigned]
                    arrived[assigned] = self.expander.expand_batch(
                        frontier[start:end],  # type: ignore[arg-type]
                        known,
                        self.shipped,
                    )
                    assigned += 1
                else:
                    self._collect(arrived, waiting, block=True)
            yield arrived.pop(wanted), chunks[wanted][2]

    def _send(self, worker: int, index: int, chunk: Sequence[tuple[int, object]]) -> None:
        channel = self.channels[worker]
        # The result names its states by these very objects (not copies from the worker), so
        # the seen set shares them with its keys as in one process.
        parents = tuple([fp for fp, _ in chunk])
        self.parents[index] = parents
        fingerprints = array("Q", parents).tobytes()
        values = self.expander.values_of
        data = channel.encode([values(ids) for _, ids in chunk])  # type: ignore[arg-type]
        self.tasks[worker].put(("chunk", index, fingerprints, data))

    def _collect(self, arrived: dict[int, BatchResult], waiting: list[int], block: bool) -> None:
        """Receive every result that has arrived (with `block`, at least one)."""
        while True:
            try:
                if block:
                    worker, index, payload = self.results.get(timeout=1.0)
                else:
                    worker, index, payload = self.results.get_nowait()
            except queue.Empty:
                if not block:
                    return
                dead = [p.exitcode for p in self.processes if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"a worker process died (exit code {dead[0]})") from None
                continue
            if isinstance(payload, BaseException):
                raise payload
            # Decode in arrival order: a message may use parts introduced by the one before.
            arrived[index] = _unpack(
                payload, self.channels[worker], self.parents.pop(index), self.expander
            )
            waiting[worker] -= 1
            block = False

    def close(self) -> None:
        """Stop the workers and drop whatever is still queued."""
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.join()
        for channel in (*self.tasks, self.results):
            channel.cancel_join_thread()
            channel.close()


def _work(expander: Expander[S], worker: int, tasks: Any, results: Any) -> None:
    """A worker's loop: expand chunks until the process is stopped."""
    # Ctrl-C reaches every process of the terminal's group; the merging process decides when
    # to stop and then stops the workers, so they must not die on it with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = Channel(1)
    known: set[int] = set()  # keys the merge will have seen before this worker's next chunk
    while True:
        message = tasks.get()
        if message[0] == "level":
            _, reset, fingerprints = message
            if reset:
                channel.reset()
            if len(known) > KNOWN_LIMIT:
                known.clear()  # only a cache: forgetting makes the worker send some states twice
            known.update(_fingerprints(fingerprints))
            continue
        _, index, fingerprints, data = message
        try:
            parents = _fingerprints(fingerprints)
            states = [expander.ids_of(values) for values in channel.decode(data)]
            known.update(parents)
            expanded = expander.expand_batch(
                list(zip(parents, states, strict=True)), [known], known
            )
            outcome: object = _pack(expanded, channel, expander)
        except Exception as error:  # reported to the merging process
            outcome = _portable(error)
        results.put((worker, index, outcome))


def _fingerprints(data: bytes) -> array[int]:
    values = array("Q")
    values.frombytes(data)
    return values


def _pack(batch: BatchResult, channel: Channel, expander: Expander[Any]) -> tuple[object, ...]:
    """A batch result as plain values and bytes; its states go through the channel as
    component values."""
    positions = list(batch.candidates)
    states = channel.encode([expander.values_of(batch.candidates[i]) for i in positions])  # type: ignore[arg-type]
    return (
        array("Q", batch.offsets).tobytes(),
        array("Q", batch.targets).tobytes(),
        array("Q", positions).tobytes(),
        states,
        batch.problems,
        batch.deadlocked,
        batch.action_counts,
        batch.rule_counts,
        batch.kinds,
        batch.marks,
    )


def _unpack(
    payload: tuple[Any, ...], channel: Channel, parents: tuple[int, ...], expander: Expander[Any]
) -> BatchResult:
    offsets, targets, positions, data, problems, deadlocked, actions, rules, kinds, marks = payload
    target_fps = _fingerprints(targets)
    candidates: dict[int, object] = {}
    for position, values in zip(_fingerprints(positions), channel.decode(data), strict=True):
        candidates[position] = expander.ids_of(values)
    return BatchResult(
        parents,
        tuple(_fingerprints(offsets)),
        list(target_fps),
        candidates,
        problems,
        deadlocked,
        actions,
        rules,
        kinds,
        marks,
    )


def _portable(error: Exception) -> Exception:
    """The error itself if it pickles, else a RuntimeError carrying its traceback."""
    try:
        pickle.dumps(error)
    except Exception:  # any pickling failure
        return RuntimeError("a worker failed:\n" + traceback.format_exc())
    return error


def limit_reached(limits: Limits, result: SearchResult[S], started: float) -> str | None:
    """Which limit, if any, a search started at `started` (monotonic seconds) has reached."""
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
