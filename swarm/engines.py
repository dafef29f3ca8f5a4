"""Running a swarm's checks: in local processes, or one configuration per Spark task.

Both engines map the same pure function (`run.check_configuration`) over the configurations
and return its results in configuration order, so they give the same verdicts, counts and
coverage; only the seconds differ.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from typing import Any

from groupspec.checker.spark.jobs import run_tasks

from .configuration import Configuration
from .run import ConfigResult, check_configuration

ResultCallback = Callable[[ConfigResult], None]


def check_locally(
    configurations: Sequence[Configuration],
    *,
    workers: int = 1,
    on_result: ResultCallback | None = None,
) -> list[ConfigResult]:
    """Check every configuration in `workers` processes (this one alone for 1), each check in
    one process; `on_result` hears of each result in configuration order as it is known."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    results: list[ConfigResult] = []
    if workers == 1 or len(configurations) == 1:
        for configuration in configurations:
            results.append(check_configuration(configuration))
            if on_result is not None:
                on_result(results[-1])
        return results
    # Forked like the search's own workers (checker/bfs.py): they start with the loaded code.
    # They ignore Ctrl-C: this process hears it and, leaving the block, terminates them all,
    # so that no configuration already queued for a worker starts after it.
    context = multiprocessing.get_context("fork")
    processes = min(workers, len(configurations))
    with context.Pool(processes, initializer=_ignore_interrupts) as pool:
        for result in pool.imap(check_configuration, configurations):
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def _ignore_interrupts() -> None:
    """A worker process's start: Ctrl-C is for the process that started it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def check_on_spark(context: Any, configurations: Sequence[Configuration]) -> list[ConfigResult]:
    """Check every configuration on Spark, one task per configuration (`context` is a running
    SparkContext, see checker/spark/session.py), in configuration order."""
    return run_tasks(context, check_configuration, configurations)
