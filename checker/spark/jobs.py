"""Spark as a pool of tasks: a picklable function mapped over items, one task per item.

The engines that need nothing of Spark but its executors use this: the swarm (one
configuration's check per task) and, with `tables.py`, bulk trace validation. `context` is a
running SparkContext (see `session.py`); nothing here imports pyspark itself, Spark ships
`function` to its executors with cloudpickle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def run_tasks(
    context: Any,
    function: Callable[[T], R],
    items: Sequence[T],
    *,
    tasks: int | None = None,
) -> list[R]:
    """`function` of every item, computed on Spark's executors, in the order of `items`: one
    task per item, or the items spread over `tasks` tasks."""
    if not items:
        return []
    slices = tasks if tasks is not None else len(items)
    results: list[R] = context.parallelize(list(items), slices).map(function).collect()
    return results


def cores(context: Any) -> int:
    """How many tasks Spark runs at once (its default parallelism)."""
    return int(context.defaultParallelism)
