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
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from groupspec.checker.bfs import (
    FoundProblem,
    Limits,
    Progress,
    ProgressCallback,
    SearchResult,
    limit_reached,
)
from groupspec.checker.derived import liveness_properties
from groupspec.checker.expand import Expander, GroupStats
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
        from pyspark import StorageLevel

        started = time.monotonic()
        resume_level = self.checkpoint.open(self.options.resume) if self.checkpoint else None
        if resume_level is None:
            level, size, frontier, visited = self._start()
        else:
            level, size, frontier, visited = self._resume(resume_level)
        result = self.result
        broadcast = self.context.broadcast(self.model)
        try:
            while size and not self._done():
                fail = self.options.fail_first_attempt_at_level == level
                expanded = frontier.mapPartitionsWithIndex(
                    Expand(broadcast, self.record_graph, fail)
                )
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
                reports = out.filter(_is_report).values().collect()
                frontier, visited = out.filter(_is_state), out.filter(_is_visited)
                self._release()
                self.cached.append(out)
                level += 1
                size = self._merge(reports, level, visited)
                if size:
                    result.depth = level
                if self.checkpoint is not None and size:
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
                stop = limit_reached(self.limits, result, started)
                if stop:
                    result.stopped_by = stop
                    break
        finally:
            self._release()
            broadcast.destroy()
        result.complete = result.stopped_by is None and not size
        result.elapsed_s = time.monotonic() - started
        return result

    def _done(self) -> bool:
        return bool(self.result.problems) and not self.limits.all_violations

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
