"""Swarm simulation on Spark: the random walks of `walk.random_walks`, spread over executors.

Every walk has its own seed (`walk.walk_seeds`), so executors take walks independently with
`walk.one_walk`, and the driver adds them up in walk order exactly as `random_walks` does: the
same seed gives the same report on either engine. With `stop_at_first` every walk still runs
(they run at once), but only the walks up to the first one with a violation are counted, as if
the walks after it had never been taken. The distinct states are counted on the executors
(the union of every counted walk's visited fingerprints), so the driver never holds them.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, TypeVar

from groupspec.checker.model import Model
from groupspec.checker.walk import Walk, WalkReport, add_walk, one_walk, walk_seeds

S = TypeVar("S")


def spark_random_walks(
    context: Any,
    model: Model[S],
    *,
    seed: int,
    runs: int,
    steps: int,
    stop_at_first: bool = True,
) -> WalkReport:
    """`random_walks(model, seed=seed, runs=runs, steps=steps, ...)` on Spark (`context` is a
    running SparkContext, see spark_session.py); the same report but for `elapsed_s`."""
    from pyspark import StorageLevel

    if runs < 1 or steps < 1:
        raise ValueError(f"runs and steps must be at least 1 (got runs={runs}, steps={steps})")
    started = time.perf_counter()
    broadcast = context.broadcast(model)
    slices = min(runs, 4 * context.defaultParallelism)

    def walk(job: tuple[int, int]) -> Walk:
        run, walk_seed = job
        return one_walk(broadcast.value, walk_seed, run, steps)

    walks = context.parallelize(list(enumerate(walk_seeds(seed, runs))), slices).map(walk)
    walks.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        summaries = walks.map(lambda w: replace(w, visited=frozenset())).collect()
        report = WalkReport(seed=seed)
        last = runs - 1
        for summary in sorted(summaries, key=lambda w: w.run):
            add_walk(report, summary)
            if summary.violations and stop_at_first:
                last = summary.run
                break
        counted = walks.filter(lambda w: w.run <= last)
        report.distinct_states = counted.flatMap(lambda w: w.visited).distinct().count()
    finally:
        walks.unpersist()
        broadcast.destroy()
    report.elapsed_s = time.perf_counter() - started
    return report
