"""Exhaustive breadth-first search over a model, in one process or across many.

States are tuples of interned components and steps come from transition groups remembered by
the projection of the state on the slots they read (see `checker.model` and `checker.expand`); the seen
set keeps each state's 64-bit key and its parent's, 16 bytes a state (`checker.store`).

The search is level-synchronous: each level's frontier is cut into batches in a fixed order,
batches are expanded (in this process, or also by worker processes), and the results are
merged in batch order. Deduplication, counting and the choice of the first violation happen
only in the merge, and first violations stop the search only at the same batch boundaries, so
every worker count explores the same states, counts the same transitions and reports the same
shortest counterexample.

A state budget (`Limits.max_states`) stops the search at the very step that finds the last
state it allows, wherever that falls in a batch: the merge cuts the batch there (counting only
the steps up to it, from the batch's step log), so every worker count stops alike there too;
an expander told how much room is left stops a batch early, and the rest is expanded only if
duplicates leave room for it. A time limit (`max_seconds`) and Ctrl-C are polled inside
expansions, in the merge's waits and between batches (`budget.Halt`), so they stop the search
within a fraction of a second even when one state takes seconds to expand; where they stop
depends on the machine's speed, and the state being expanded then counts as unexpanded.
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

from .budget import STATE_LIMIT, TIME_LIMIT, Halt, deadline_after
from .channel import Channel
from .derived import liveness_properties
from .expand import (
    ROOM,
    BatchResult,
    Expander,
    GroupStats,
    Ids,
    LoggedStep,
    Problem,
    StepObserver,
)
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
# Seconds the merge waits for a worker's result before it looks at its halt again.
WAIT_S = 0.1
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


@dataclass(frozen=True)
class Merged:
    """What merging a batch did: the positions (in its targets) of the steps that found a new
    state, how many of its steps it kept, and whether the state budget cut it there."""

    new: list[int]
    kept: int
    cut: bool


def _logged_until(batch: BatchResult, index: int) -> list[LoggedStep]:
    """The batch's logged steps up to the one whose successor is `targets[index]`."""
    if batch.steps is None:
        raise ValueError("a batch cut at a state budget needs its step log (Expander.log_steps)")
    return [entry for entry in batch.steps if entry[0] <= index]


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

    def merge(self, batch: BatchResult, room: int | None = None) -> Merged:
        """Merge one expanded batch: new states join the seen set and the next frontier.

        With `room` (how many more states the state budget allows), the merge stops at the step
        that finds the `room`-th new state: the state being expanded counts its steps up to that
        one (from the batch's step log) and stays unexpanded, and the rest of the batch is left
        out. A batch a halt cut (`partial`) leaves its last state unexpanded too."""
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
        cut: int | None = None
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
                if len(found_new) == room:
                    cut = index
                    break
        # Steps kept (up to `kept`), states expanded completely (up to `complete`), and the
        # problems the state cut short found in the steps it kept.
        partial_found: Sequence[Problem] = ()
        if cut is not None:
            kept, complete = cut + 1, position
            taken = _logged_until(batch, cut)
            partial_found = problems.get(position, ())[: taken[-1][2]] if taken else ()
        else:
            kept, complete = len(targets), batch.complete_parents
            if batch.partial:
                partial_found = problems.get(complete, ())
        # ... then the graph and the problems, state by state.
        if graph is not None:
            for position, parent in enumerate(parents[:complete]):
                start, end = offsets[position], offsets[position + 1]
                graph.add_state(
                    parent, batch.marks[position], targets[start:end], batch.kinds[start:end]
                )
        if problems or deadlocked:
            new_indices = set(found_new)
            for position in sorted({*problems, *deadlocked}):
                if position > complete:
                    break
                parent = parents[position]
                if position in deadlocked and position < complete:
                    deadlock = Problem("deadlock", "Deadlock", "no step is enabled", parent)
                    self.record(deadlock, parent)
                found = problems.get(position) if position < complete else partial_found
                if found:
                    start, end = offsets[position], min(offsets[position + 1], kept)
                    new_here = {
                        targets[index]: True for index in range(start, end) if index in new_indices
                    }
                    self.record_judged(parent, found, targets[start:end], new_here)
        result.transitions += kept
        if cut is None:
            result.action_counts.update(batch.action_counts)
            result.rule_counts.update(batch.rule_counts)
        else:
            for _, (action, rules), _, stepped in taken:
                if stepped:
                    result.action_counts[action] += 1
                result.rule_counts.update(rules)
        result.distinct_states = len(store)
        return Merged(found_new, kept, cut is not None)

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
    expander.log_steps = limits.max_states is not None
    result.group_stats = expander.stats
    merger = _Search(model, limits, result)
    store = merger.store

    def room() -> int | None:
        """How many more states the state budget allows."""
        return None if limits.max_states is None else limits.max_states - len(store)

    pool: _Pool[S] | None = None
    with deferred_interrupts() as interrupt_requested:
        halt = Halt(deadline_after(limits.max_seconds, started), interrupted=interrupt_requested)
        expander.halt = halt
        try:
            result.stopped_by = _start(expander, merger, halt, room)
            result.distinct_states = len(store)
            if workers > 1 and not result.stopped_by:
                pool = _Pool(model, expander, workers - 1, record_graph)
            recent = store.recent_levels()
            level = 0
            while merger.next_frontier and not merger.done() and not result.stopped_by:
                frontier, merger.next_frontier = merger.next_frontier, []
                store.next_level()
                expanded: Iterator[_Piece]
                if pool is None and observer is None and expander.explores_fast:
                    expanded = _explore_here(expander, frontier, merger, result, room)
                elif pool is not None:
                    expanded = pool.expand_level(frontier, recent(), room)
                else:
                    expanded = _expand_here(expander, frontier, recent, observer is not None, room)
                for piece in expanded:
                    stop = piece.stopped
                    if piece.batch is not None:
                        merged = merger.merge(piece.batch, room())
                        if merged.cut:
                            stop = STATE_LIMIT
                        elif piece.batch.stopped != ROOM:
                            stop = piece.batch.stopped
                        if observer is not None:
                            _tell(observer, expander, piece.steps[: merged.kept], set(merged.new))
                    if merger.next_frontier:
                        # Depth is that of the deepest state found, even if a stop cuts the level.
                        result.depth = level + 1
                    if not stop and piece.batch_end:
                        # Other stops are decided where a batch ends, so every worker count
                        # stops at the same first violation.
                        stop = limit_reached(limits, result, started) or halt.check()
                    if progress and (stop or piece.batch_end):
                        progress(_snapshot(result, merger, started))
                    if stop or (piece.batch_end and merger.done()):
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
    result.distinct_states = len(store)
    result.complete = result.stopped_by is None and not merger.next_frontier
    store.archive_all()
    result.elapsed_s = time.monotonic() - started
    if result.stopped_by == INTERRUPTED:
        raise SearchInterrupted(result)
    return result


def _start(
    expander: Expander[S], merger: _Search[S], halt: Halt, room: Callable[[], int | None]
) -> str | None:
    """Add the initial states to the seen set and the first frontier; why the search must
    stop already, if it must (a halt, or a state budget they fill)."""
    store = merger.store
    for key, ids, problems in expander.initial():
        store.add(key, None)
        merger.next_frontier.append((key, ids))
        for problem in problems:
            merger.record(problem, key)
        if room() == 0:
            return STATE_LIMIT
        reason = halt.poll()
        if reason:
            return reason
    return None


@dataclass(frozen=True)
class _Piece:
    """A batch, or a piece of one, as an engine expanded it: its result for the merge (None
    when it was merged already), whether it ends a batch, the steps an observer is told of,
    and why it stopped early, for a piece merged already."""

    batch: BatchResult | None
    batch_end: bool
    steps: list[tuple[int, Ids, Any, int]] = field(default_factory=list)
    stopped: str | None = None


def _halted(reason: str) -> _Piece:
    """A piece with nothing in it, which stops the search for `reason`."""
    return _Piece(None, True, stopped=reason)


def _explore_here(
    expander: Expander[S],
    frontier: Sequence[tuple[int, object]],
    merger: _Search[S],
    result: SearchResult[S],
    room: Callable[[], int | None],
) -> Iterator[_Piece]:
    """Expand and merge a level in this process at once, batch by batch (`explore_fast`)."""
    for start in range(0, len(frontier), BATCH_SIZE):
        batch = frontier[start : start + BATCH_SIZE]
        transitions, stopped = expander.explore_fast(
            batch,  # type: ignore[arg-type]
            merger.store,
            merger.next_frontier,
            merger,
            result.graph,
            room(),
        )
        result.transitions += transitions
        result.action_counts.update(expander.action_counts)
        result.rule_counts.update(expander.rule_counts)
        expander.action_counts.clear()
        expander.rule_counts.clear()
        result.distinct_states = len(merger.store)
        yield _Piece(None, True, stopped=stopped)


def _expand_here(
    expander: Expander[S],
    frontier: Sequence[tuple[int, object]],
    recent: Any,
    observed: bool,
    room: Callable[[], int | None],
) -> Iterator[_Piece]:
    """Expand a level in this process, batch by batch; with `observed`, also every step. A
    batch the state budget ended early goes on from where it ended once the merge has taken
    the first piece, if the merge still has room."""
    for first in range(0, len(frontier), BATCH_SIZE):
        start, end = first, min(first + BATCH_SIZE, len(frontier))
        while start < end:
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
                frontier[start:end],  # type: ignore[arg-type]
                recent(),
                set(),
                note if observed else None,
                room=room(),
            )
            start += len(result.parents)
            yield _Piece(result, result.stopped != ROOM, steps)


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
        self,
        frontier: Sequence[tuple[int, object]],
        known: Any,
        room: Callable[[], int | None],
    ) -> Iterator[_Piece]:
        """Expand one level, yielding each chunk's result in order with whether it ends a batch.

        `known` holds the keys the merge has seen recently, which chunks expanded here consult;
        `room` says how many more states the merge can take. States travel between processes
        as component values (each process interns them its own way); keys are the same in
        every process. A chunk the state budget ended early goes on in this process, from where
        it ended, once the merge has taken the first piece (if the merge still has room). When
        the halt fires while the merge waits, the level ends with a piece that says why.
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
        halt = self.expander.halt
        for wanted in range(len(chunks)):
            while wanted not in arrived:
                for worker in range(len(self.processes)):
                    while waiting[worker] < IN_FLIGHT_PER_WORKER and assigned < len(chunks):
                        start, end, _ = chunks[assigned]
                        self._send(worker, assigned, frontier[start:end], room())
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
                        room=room(),
                    )
                    assigned += 1
                else:
                    self._collect(arrived, waiting, block=True)
                    reason = halt.check() if halt is not None else None
                    if reason and wanted not in arrived:
                        yield _halted(reason)
                        return
            piece = arrived.pop(wanted)
            start, end, ends_batch = chunks[wanted]
            done = start + len(piece.parents)
            while piece.stopped == ROOM:
                yield _Piece(piece, False)
                # Not `self.shipped`: it may hold successors of later chunks this process
                # expanded ahead, not merged yet; left out here, they would be found new later
                # than one process finds them (and the budget would cut elsewhere).
                piece = self.expander.expand_batch(
                    frontier[done:end],  # type: ignore[arg-type]
                    known,
                    set(),
                    room=room(),
                )
                done += len(piece.parents)
            yield _Piece(piece, ends_batch)

    def _send(
        self, worker: int, index: int, chunk: Sequence[tuple[int, object]], room: int | None
    ) -> None:
        channel = self.channels[worker]
        # The result names its states by these very objects (not copies from the worker), so
        # the seen set shares them with its keys as in one process.
        parents = tuple([fp for fp, _ in chunk])
        self.parents[index] = parents
        fingerprints = array("Q", parents).tobytes()
        data = _encode_states(channel, self.expander, [ids for _, ids in chunk])  # type: ignore[misc]
        self.tasks[worker].put(("chunk", index, fingerprints, data, room))

    def _collect(self, arrived: dict[int, BatchResult], waiting: list[int], block: bool) -> None:
        """Receive every result that has arrived (with `block`, at least one, unless the
        expander's halt fires first)."""
        halt = self.expander.halt
        while True:
            try:
                if block:
                    worker, index, payload = self.results.get(timeout=WAIT_S)
                else:
                    worker, index, payload = self.results.get_nowait()
            except queue.Empty:
                if not block:
                    return
                dead = [p.exitcode for p in self.processes if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"a worker process died (exit code {dead[0]})") from None
                if halt is not None and halt.check():
                    return
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
        _, index, fingerprints, data, room = message
        try:
            parents = _fingerprints(fingerprints)
            states = _decode_states(channel, expander, data)
            known.update(parents)
            expanded = expander.expand_batch(
                list(zip(parents, states, strict=True)), [known], known, room=room
            )
            outcome: object = _pack(expanded, channel, expander)
        except Exception as error:  # reported to the merging process
            outcome = _portable(error)
        results.put((worker, index, outcome))


def _encode_states(
    channel: Channel, expander: Expander[Any], states: Sequence[Ids]
) -> tuple[bytes, bytes]:
    """States (as component ids of this process) for the other end: their distinct components
    once, through the channel, and each state as a row of positions in that table.

    States share most components, so the table is short and the rows are plain integers;
    pickling every component of every state would cost a Python call per component."""
    table = list(set().union(*states))
    place = {component: position for position, component in enumerate(table)}.__getitem__
    rows = array("I")
    for ids in states:
        rows.extend(map(place, ids))
    values = expander.values
    return channel.encode([values[i] for i in table]), rows.tobytes()


def _decode_states(
    channel: Channel, expander: Expander[Any], data: tuple[bytes, bytes]
) -> list[Ids]:
    """The states `_encode_states` sent, as component ids of this process."""
    table, rows = data
    ids = [expander.intern(value) for value in channel.decode(table)]
    positions = array("I")
    positions.frombytes(rows)
    flat = list(map(ids.__getitem__, positions))
    width = expander.slots
    return [tuple(flat[start : start + width]) for start in range(0, len(flat), width)]


def _fingerprints(data: bytes) -> array[int]:
    values = array("Q")
    values.frombytes(data)
    return values


def _pack(batch: BatchResult, channel: Channel, expander: Expander[Any]) -> tuple[object, ...]:
    """A batch result as plain values and bytes; its states go through the channel as
    component values."""
    positions = list(batch.candidates)
    states = _encode_states(channel, expander, [batch.candidates[i] for i in positions])  # type: ignore[misc]
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
        batch.stopped,
        batch.partial,
        batch.steps,
    )


def _unpack(
    payload: tuple[Any, ...], channel: Channel, parents: tuple[int, ...], expander: Expander[Any]
) -> BatchResult:
    (offsets, targets, positions, data, problems, deadlocked, actions, rules, kinds, marks) = (
        payload[:10]
    )
    stopped, partial, steps = payload[10:]
    target_fps = _fingerprints(targets)
    candidates: dict[int, object] = {}
    received = _decode_states(channel, expander, data)
    for position, ids in zip(_fingerprints(positions), received, strict=True):
        candidates[position] = ids
    ends = tuple(_fingerprints(offsets))
    return BatchResult(
        # A chunk that stopped early expanded only its first states.
        parents[: len(ends) - 1],
        ends,
        list(target_fps),
        candidates,
        problems,
        deadlocked,
        actions,
        rules,
        kinds,
        marks,
        stopped,
        partial,
        steps,
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
        return STATE_LIMIT
    if limits.max_seconds is not None and time.monotonic() - started >= limits.max_seconds:
        return TIME_LIMIT
    return None


def _snapshot(result: SearchResult[S], merger: _Search[S], started: float) -> Progress:
    return Progress(
        result.distinct_states,
        result.transitions,
        len(merger.next_frontier),
        result.depth,
        time.monotonic() - started,
    )
