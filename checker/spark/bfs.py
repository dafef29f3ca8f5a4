"""Exhaustive breadth-first search on Spark: the in-process engine's search, level by level.

The driver holds only counts, problems and (when liveness is checked) the state graph; states
and the visited set live on the executors, spread over N partitions by fingerprint (see
spark_tasks.py for the executors' side). Each level is one Spark job:

    frontier ──Expand──► candidates ──reduceByKey (smallest discovery path)──► winners
    winners ∪ visited (co-partitioned, no shuffle of the visited set) ──Deduplicate──►
        next frontier, grown visited set, reports (collected by the driver)

Because every state keeps the discovery path the in-process engine's frontier order is made
of, both engines pick the same BFS parent for every state and find violations in the same
order: the same counts, depth, verdicts and counterexamples. A counterexample's path is rebuilt
from the parents kept in the visited set (or on the driver, when liveness needs the whole
graph there), then replayed by `counterexample.reconstruct` like the in-process engine's.

Each level's result is cached on the executors (and every few levels the lineage is cut there),
so Spark retries a failed task from the cached level. With a checkpoint directory each complete level is also
written to disk (spark_checkpoint.py), and a later run resumes from the newest one.

Limits: when the time limit passes during a level, the driver cancels the level's job (and
each task, polling the limit itself, stops where it is); the level is dropped and the search
reports the levels before it. Each task stops once it has emitted as many new states as the
state budget still allows; the driver then counts what the level found and stops. Tasks cannot
see each other's counts, so the level may find up to that many states per task. When a task
stopped at the state budget but duplicates left the level below it, the driver runs the level
again, whole. A level cut short is never checkpointed: a resumed run starts from the last whole
level.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from groupspec.checker.bfs import (
    WAIT_S,
    FoundProblem,
    Limits,
    Progress,
    ProgressCallback,
    SearchResult,
    limit_reached,
)
from groupspec.checker.budget import STATE_LIMIT, TIME_LIMIT
from groupspec.checker.derived import liveness_properties
from groupspec.checker.expand import ROOM, Expander, GroupStats
from groupspec.checker.graph import StateGraph
from groupspec.checker.model import Model

from .checkpoint import Checkpoint, LevelSummary, read_part, write_part
from .state_pickle import ComponentCodec
from .tasks import (
    REPORT,
    VISITED,
    Deduplicate,
    Expand,
    GraphRecord,
    KeyedProblem,
    LevelReport,
    VisitedBlock,
    first_discovered,
    initial_path,
    route,
)

S = TypeVar("S")
# Every this many levels the level's cached result becomes a local checkpoint, which cuts the
# lineage (so Spark can drop old shuffle files) without a job of its own.
LINEAGE_LEVELS = 8


@dataclass(frozen=True)
class SparkOptions:
    """How the Spark engine runs: partitions, checkpointing, and a failure to inject.

    `partitions` defaults to twice Spark's default parallelism. `identity` says what is being
    checked (preset, overrides, parameters); a checkpoint records it and a resume must match.
    `fail_first_attempt_at_level` makes the first attempt of one task of that level fail
    midway (for tests: the retry must not change the result).
    """

    partitions: int | None = None
    checkpoint: Path | None = None
    resume: bool = False
    identity: Mapping[str, object] = field(default_factory=dict)
    fail_first_attempt_at_level: int | None = None


def _is_state(record: tuple[Any, Any]) -> bool:
    return type(record[0]) is int


def _is_visited(record: tuple[Any, Any]) -> bool:
    return type(record[0]) is tuple and record[0][0] == VISITED


def _is_report(record: tuple[Any, Any]) -> bool:
    return type(record[0]) is tuple and record[0][0] == REPORT


class _SparkSearch(Generic[S]):
    """The driver's side of one search."""

    def __init__(
        self,
        context: Any,
        model: Model[S],
        limits: Limits,
        record_graph: bool,
        options: SparkOptions,
    ) -> None:
        self.context = context
        self.model = model
        self.limits = limits
        self.record_graph = record_graph
        self.options = options
        self.partitions = options.partitions or max(2, 2 * context.defaultParallelism)
        self.result: SearchResult[S] = SearchResult(model.name, context.defaultParallelism)
        if record_graph:
            names = tuple(prop.name for prop in liveness_properties(model))
            self.result.graph = StateGraph(property_names=names)
        # The executors' transition-group figures, summed, in the model's order of groups.
        self.result.group_stats = [GroupStats(group.name) for group in model.groups]
        self.checkpoint = (
            Checkpoint(options.checkpoint, options.identity) if options.checkpoint else None
        )
        self.cached: list[Any] = []
        # This level's liveness edges and parents, for its checkpoint summary.
        self.level_graph: list[GraphRecord] = []
        self.level_parents: list[tuple[int, int]] = []

    # -- the search -----------------------------------------------------------------------

    def run(self, progress: ProgressCallback | None) -> SearchResult[S]:
        started = time.monotonic()
        resume_level = self.checkpoint.open(self.options.resume) if self.checkpoint else None
        if resume_level is None:
            level, size, frontier, visited = self._start()
        else:
            level, size, frontier, visited = self._resume(resume_level)
        result = self.result
        broadcast = self.context.broadcast(self.model)
        max_states, max_seconds = self.limits.max_states, self.limits.max_seconds
        # Executors may run on other machines: they get the deadline on the wall clock.
        deadline = None if max_seconds is None else time.time() + max_seconds - self._since(started)
        try:
            if max_states is not None and result.distinct_states >= max_states:
                result.stopped_by = STATE_LIMIT
            while size and not self._done() and not result.stopped_by:
                room = None if max_states is None else max_states - result.distinct_states
                attempt = self._level(broadcast, frontier, visited, level, deadline, room)
                if attempt is None:
                    result.stopped_by = self._out_of_time(level)
                    break
                out, reports = attempt
                stops = {e.stopped for report in reports for e in report.expansions if e.stopped}
                found = sum(report.new_states for report in reports)
                if stops == {ROOM} and room is not None and found < room:
                    # Duplicates left room for states the tasks did not look for: the level
                    # again, whole.
                    out.unpersist()
                    attempt = self._level(broadcast, frontier, visited, level, deadline, None)
                    if attempt is None:
                        result.stopped_by = self._out_of_time(level)
                        break
                    out, reports = attempt
                    stops = {e.stopped for r in reports for e in r.expansions if e.stopped}
                frontier, visited = out.filter(_is_state), out.filter(_is_visited)
                self._release()
                self.cached.append(out)
                level += 1
                size = self._merge(reports, level, visited)
                if size:
                    result.depth = level
                if stops:
                    # A level cut short: what it found counts, but it is not checkpointed.
                    result.stopped_by = TIME_LIMIT if TIME_LIMIT in stops else STATE_LIMIT
                if self.checkpoint is not None and size and not stops:
                    self._commit(level)
                elif self.checkpoint is not None:
                    self.checkpoint.abandon(level)
                if progress:
                    progress(
                        Progress(
                            result.distinct_states,
                            result.transitions,
                            size,
                            result.depth,
                            time.monotonic() - started,
                        )
                    )
                stop = result.stopped_by or limit_reached(self.limits, result, started)
                if stop:
                    result.stopped_by = stop
                    break
        finally:
            self._release()
            broadcast.destroy()
        result.complete = result.stopped_by is None and not size
        result.elapsed_s = time.monotonic() - started
        return result

    def _level(
        self,
        broadcast: Any,
        frontier: Any,
        visited: Any,
        level: int,
        deadline: float | None,
        room: int | None,
    ) -> tuple[Any, list[LevelReport]] | None:
        """One level's Spark job (module docstring): the RDD it made, cached, and its
        partitions' reports; None when the time limit passed first (the job is cancelled)."""
        from pyspark import StorageLevel

        fail = self.options.fail_first_attempt_at_level == level
        expand = Expand(broadcast, self.record_graph, fail, deadline, room)
        expanded = frontier.mapPartitionsWithIndex(expand)
        winners = expanded.reduceByKey(first_discovered, self.partitions, route)
        both = winners.union(visited)
        if both.getNumPartitions() != self.partitions:
            raise RuntimeError("Spark did not keep the visited set co-partitioned")
        save_to = self.checkpoint.begin(level + 1) if self.checkpoint else None
        out = both.mapPartitionsWithIndex(
            Deduplicate(level + 1, self.record_graph, save_to), preservesPartitioning=True
        )
        out.persist(StorageLevel.MEMORY_AND_DISK)
        if (level + 1) % LINEAGE_LEVELS == 0:
            out.localCheckpoint()
        reports = _collect_before(self.context, out.filter(_is_report).values(), deadline)
        if reports is None:
            out.unpersist()
            return None
        return out, reports

    @staticmethod
    def _since(started: float) -> float:
        return time.monotonic() - started

    def _done(self) -> bool:
        return bool(self.result.problems) and not self.limits.all_violations

    def _out_of_time(self, level: int) -> str:
        """The time budget ran out inside `level`: its partial checkpoint is abandoned."""
        if self.checkpoint is not None:
            self.checkpoint.abandon(level + 1)
        return TIME_LIMIT

    def _release(self) -> None:
        for rdd in self.cached:
            rdd.unpersist()
        self.cached.clear()

    def _start(self) -> tuple[int, int, Any, Any]:
        """Level 0: the initial states, their invariants judged on the driver."""
        result = self.result
        records = []
        entries: list[list[tuple[int, int, int]]] = [[] for _ in range(self.partitions)]
        expander = Expander(self.model)
        codec = ComponentCodec(expander.values, expander.intern)
        for position, (fp, ids, problems) in enumerate(expander.initial()):
            result.parents.add(fp, None)  # type: ignore[attr-defined]
            records.append((fp, (initial_path(position), fp, "", codec.encode(ids))))
            entries[fp % self.partitions].append((fp, fp, 0))
            for problem in problems:
                if not self._done():
                    result.problems.append(FoundProblem(problem, (fp,)))
        result.distinct_states = len(records)
        blocks = [((VISITED, index), VisitedBlock.of(block)) for index, block in enumerate(entries)]
        frontier = self.context.parallelize(records, self.partitions)
        visited = self.context.parallelize(blocks, self.partitions).partitionBy(
            self.partitions, route
        )
        if self.checkpoint is not None:
            directory = self.checkpoint.begin(0)
            write_part(directory, 0, records, [(fp, fp, "") for fp, _ in records])
            roots = [(fp, fp) for fp, _ in records]
            self.checkpoint.commit(LevelSummary(0, len(records), 0, 0, {}, {}, [], [], roots))
        return 0, len(records), frontier, visited

    def _resume(self, level: int) -> tuple[int, int, Any, Any]:
        """The search as the checkpoint left it after `level`."""
        assert self.checkpoint is not None
        result = self.result
        summaries = self.checkpoint.summaries(level)
        last = summaries[-1]
        result.distinct_states, result.transitions = last.distinct_states, last.transitions
        result.depth = last.depth
        result.action_counts.update(last.action_counts)
        result.rule_counts.update(last.rule_counts)
        result.problems.extend(last.problems)
        for summary in summaries:
            for fp, parent in summary.parents:
                result.parents.add(fp, None if summary.level == 0 else parent)  # type: ignore[attr-defined]
            self._add_graph(summary.graph)
        files = self.checkpoint.state_files(level)
        frontier = self.context.parallelize(files, len(files)).flatMap(read_part)
        parents = self.checkpoint.parent_files(level)
        entries = self.context.parallelize(parents, len(parents)).flatMap(
            lambda part: [(fp, (parent, part[0])) for fp, parent, _ in read_part(part[1])]
        )
        partitions = self.partitions

        def blocks(index: int, records: Any) -> Any:
            block = VisitedBlock.of([(fp, parent, depth) for fp, (parent, depth) in records])
            yield (VISITED, index), block

        visited = entries.partitionBy(partitions, route).mapPartitionsWithIndex(
            blocks, preservesPartitioning=True
        )
        return level, frontier.count(), frontier, visited

    # -- merging a level ------------------------------------------------------------------

    def _merge(self, reports: Sequence[LevelReport], level: int, visited: Any) -> int:
        """Add a level's reports to the result; returns how many new states it found."""
        result = self.result
        new = 0
        keyed: list[KeyedProblem] = []
        graph: list[GraphRecord] = []
        for report in reports:
            new += report.new_states
            keyed.extend(report.problems)
            for fp, parent in report.parents:
                result.parents.add(fp, parent)  # type: ignore[attr-defined]
            for expansion in report.expansions:
                result.transitions += expansion.transitions
                result.action_counts.update(expansion.action_counts)
                result.rule_counts.update(expansion.rule_counts)
                keyed.extend(expansion.problems)
                graph.extend(expansion.graph)
                for stats in result.group_stats:
                    hits, misses = expansion.groups.get(stats.name, (0, 0))
                    stats.hits += hits
                    stats.misses += misses
        graph.sort(key=lambda record: record.path)
        self._add_graph(graph)
        self.level_graph = graph
        self.level_parents = [parent for report in reports for parent in report.parents]
        result.distinct_states += new
        for found in sorted(keyed, key=lambda item: item.key):
            if self._done():
                break
            if found.via is None:
                path = self._path_to(found.at, visited)
            else:  # a step's problem: shown on that step (see bfs._Search.record)
                path = (*self._path_to(found.via, visited), found.at)
            result.problems.append(FoundProblem(found.problem, path))
        return new

    def _add_graph(self, records: Sequence[GraphRecord]) -> None:
        graph = self.result.graph
        if graph is not None:
            for record in records:
                graph.add_state(record.state, record.marks, record.targets, record.kinds)

    def _path_to(self, fingerprint: int, visited: Any) -> tuple[int, ...]:
        """The BFS path to a state: from the driver's parents, or looked up partition by
        partition in the visited set."""
        if fingerprint in self.result.parents:
            return self.result.path_to(fingerprint)
        path = [fingerprint]
        while True:
            partition = fingerprint % self.partitions

            def lookup(records: Any, wanted: int = fingerprint) -> list[tuple[int, int] | None]:
                return [block.parent_of(wanted) for _, block in records]

            found = [f for f in self.context.runJob(visited, lookup, [partition]) if f]
            if not found:
                raise RuntimeError(f"state {fingerprint:016x} is not in the visited set")
            parent, depth = found[0]
            if depth == 0:
                return tuple(reversed(path))
            path.append(parent)
            fingerprint = parent

    # -- checkpoints ----------------------------------------------------------------------

    def _commit(self, level: int) -> None:
        """Finish checkpoint level `level` (the executors wrote its states and parents)."""
        assert self.checkpoint is not None
        result = self.result
        summary = LevelSummary(
            level,
            result.distinct_states,
            result.transitions,
            result.depth,
            dict(result.action_counts),
            dict(result.rule_counts),
            list(result.problems),
            self.level_graph,
            self.level_parents,
        )
        self.checkpoint.commit(summary)


def _collect_before(context: Any, rdd: Any, deadline: float | None) -> list[Any] | None:
    """`rdd.collect()`, or None when the wall clock passes `deadline` first: the job is then
    cancelled (its tasks interrupted) and left to wind down on its own."""
    if deadline is None:
        return list(rdd.collect())
    from pyspark import InheritableThread

    group = f"groupspec-level-{uuid.uuid4().hex}"
    outcome: list[Any] = []

    def run() -> None:
        context.setJobGroup(group, "a breadth-first level", interruptOnCancel=True)
        try:
            outcome.append(list(rdd.collect()))
        except Exception as error:  # reported below, unless the job was cancelled on purpose
            outcome.append(error)

    thread = InheritableThread(target=run, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(timeout=min(WAIT_S, max(0.0, deadline - time.time())))
        if thread.is_alive() and time.time() >= deadline:
            context.cancelJobGroup(group)
            return None
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return cast("list[Any]", outcome[0])


def spark_search(
    context: Any,
    model: Model[S],
    *,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    record_graph: bool = False,
    options: SparkOptions | None = None,
) -> SearchResult[S]:
    """Explore every reachable state of `model` breadth-first on Spark (`context` is a running
    SparkContext, see spark_session.py), checking every property like `bfs.search` does.

    Same result as `bfs.search` (counts, depth, verdict, counterexamples); `result.workers`
    is Spark's default parallelism. With `record_graph` the driver also builds the state
    graph for `checker.liveness` from the edges the executors report, so the graph must fit in
    the driver's memory, as it must for the in-process engine.
    """
    search = _SparkSearch(
        context, model, limits or Limits(), record_graph, options or SparkOptions()
    )
    return search.run(progress)
