"""`groupspec bench spark`: what the Spark engine costs per level and per state, against the
in-process engine on the same preset and machine.

Two figures matter for sizing a cluster (docs/spark.md): the fixed cost of a level (two Spark
stages, a shuffle and a collect, whatever the level holds), measured on levels of a handful of
states, and the cost per state, measured on a real preset: its seconds less its levels' fixed
cost, times the cores Spark used, over its states.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

from groupspec.checker.bfs import Progress, search
from groupspec.checker.spark.bfs import spark_search
from groupspec.checker.spark.jobs import cores

# Levels of one to a handful of states: two-phase commit with one resource manager.
TINY = "two-phase"
TINY_OVERRIDES = {"resource_managers": "1"}


@dataclass(frozen=True)
class EngineFigures:
    """One engine's complete search of the preset."""

    engine: str
    cores: int
    distinct_states: int
    transitions: int
    depth: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        """Distinct states per second of wall time."""
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class SparkBench:
    """The figures of `bench spark`."""

    preset: str
    level_overhead_s: float
    tiny_levels: int
    in_process: EngineFigures
    spark: EngineFigures

    @property
    def consistent(self) -> bool:
        """Whether both engines found the same states, transitions and depth."""
        a, b = self.in_process, self.spark
        return (a.distinct_states, a.transitions, a.depth) == (
            b.distinct_states,
            b.transitions,
            b.depth,
        )

    @property
    def spark_seconds_per_state_core(self) -> float:
        """Spark's cost of one state on one core, the levels' fixed cost taken out."""
        work = self.spark.seconds - self.spark.depth * self.level_overhead_s
        return max(work, 0.0) * self.spark.cores / max(1, self.spark.distinct_states)


def level_times(context: Any, model: Any) -> list[float]:
    """Seconds of each level of a Spark search of `model`."""
    marks = [time.monotonic()]

    def lap(progress: Progress) -> None:
        marks.append(time.monotonic())

    spark_search(context, model, progress=lap)
    return [later - earlier for earlier, later in pairwise(marks)]


def bench_spark(context: Any, preset: str, model: Any, tiny_model: Any) -> SparkBench:
    """Measure the Spark engine (after a warm-up search) and the in-process engine."""
    level_times(context, tiny_model)  # warm-up: the JVM and the executors' Python workers
    tiny = level_times(context, tiny_model)
    started = time.monotonic()
    local = search(model)
    local_figures = EngineFigures(
        "in-process",
        1,
        local.distinct_states,
        local.transitions,
        local.depth,
        time.monotonic() - started,
    )
    started = time.monotonic()
    found = spark_search(context, model)
    spark_figures = EngineFigures(
        "spark",
        cores(context),
        found.distinct_states,
        found.transitions,
        found.depth,
        time.monotonic() - started,
    )
    return SparkBench(preset, statistics.median(tiny), len(tiny), local_figures, spark_figures)


def format_table(bench: SparkBench) -> str:
    """The figures as a table."""
    lines = [
        f"per-level overhead: {bench.level_overhead_s:.3f} s (median of {bench.tiny_levels}"
        f" levels of {TINY} with 1 resource manager)",
        f"{'engine':11} {'cores':>5} {'states':>9} {'transitions':>11} {'depth':>5}"
        f" {'seconds':>8} {'states/s':>9}",
    ]
    for row in (bench.in_process, bench.spark):
        lines.append(
            f"{row.engine:11} {row.cores:5} {row.distinct_states:9,} {row.transitions:11,}"
            f" {row.depth:5} {row.seconds:8.2f} {row.states_per_second:9,.0f}"
        )
    in_process_cost = bench.in_process.seconds / max(1, bench.in_process.distinct_states)
    lines.append(
        f"per state and core: in-process {in_process_cost * 1e6:,.0f} µs, Spark "
        f"{bench.spark_seconds_per_state_core * 1e6:,.0f} µs (level overhead taken out)"
    )
    if not bench.consistent:
        lines.append("MISMATCH: the engines disagree on states, transitions or depth")
    return "\n".join(lines)


def bench_json(bench: SparkBench) -> dict[str, Any]:
    """The figures as the `--json` document."""
    return {
        "bench": "spark",
        "preset": bench.preset,
        "level_overhead_s": round(bench.level_overhead_s, 4),
        "tiny_levels": bench.tiny_levels,
        "engines": [
            {**asdict(row), "states_per_second": round(row.states_per_second, 1)}
            for row in (bench.in_process, bench.spark)
        ],
        "spark_seconds_per_state_core": bench.spark_seconds_per_state_core,
        "consistent": bench.consistent,
    }
