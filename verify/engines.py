"""Which engine explores a preset: this process (with `workers` processes), or Spark.

`groupspec check` and `groupspec simulate` name the engine with their options; this module
turns the choice into the search engine `checker.check.check` runs, or into simulate's random
walks, so every engine feeds the same liveness check, the same verdict and the same result
document. Spark (checker/spark/, the optional extra `groupspec[spark]`) is started only when it
is chosen; when it cannot run, a `SparkError` says why in one line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.checker.bfs import Limits, ProgressCallback, SearchResult
from groupspec.checker.check import SearchEngine, in_process
from groupspec.checker.model import Model
from groupspec.checker.spark.session import DEFAULT_MASTER, SparkSettings, spark_context
from groupspec.checker.walk import WalkReport
from groupspec.models.preset_models import LoadedModel

IN_PROCESS, SPARK = "inprocess", "spark"
ENGINES = (IN_PROCESS, SPARK)


@dataclass(frozen=True)
class EngineChoice:
    """The engine of a check: this process and `workers` processes, or Spark at `master`
    (with `partitions`, and a `checkpoint` directory to write levels to or `resume` from)."""

    engine: str = IN_PROCESS
    workers: int = 1
    master: str | None = None  # None: DEFAULT_MASTER
    partitions: int | None = None  # None: twice Spark's cores
    checkpoint: Path | None = None
    resume: bool = False


def search_engine(loaded: LoadedModel, choice: EngineChoice) -> SearchEngine:
    """The search engine `choice` names, for the preset `loaded`."""
    if choice.engine != SPARK:
        return in_process(choice.workers)

    def on_spark(
        model: Model[Any],
        *,
        limits: Limits,
        progress: ProgressCallback | None,
        record_graph: bool,
    ) -> SearchResult[Any]:
        del model  # the loaded preset's, which Spark rebuilds on its executors
        return spark_search(loaded, choice, limits, progress=progress, record_graph=record_graph)

    return on_spark


def spark_search(
    loaded: LoadedModel,
    choice: EngineChoice,
    limits: Limits,
    *,
    progress: ProgressCallback | None,
    record_graph: bool,
) -> SearchResult[Any]:
    """Search `loaded` on Spark as `choice` says; SparkError when it cannot run."""
    from groupspec.checker.spark.bfs import SparkOptions
    from groupspec.checker.spark.bfs import spark_search as search_on_spark

    options = SparkOptions(
        partitions=choice.partitions,
        checkpoint=choice.checkpoint,
        resume=choice.resume,
        identity={
            "preset": loaded.preset,
            "preset_file": str(loaded.path),
            "overrides": dict(loaded.overrides),
            "parameters": dict(loaded.parameters),
            "liveness": record_graph,
            "all_violations": limits.all_violations,
        },
    )
    with spark_session(choice.master) as context:
        return search_on_spark(
            context,
            loaded.model,
            limits=limits,
            progress=progress,
            record_graph=record_graph,
            options=options,
        )


def spark_walks(
    models: Sequence[LoadedModel],
    master: str | None,
    *,
    seed: int,
    runs: int,
    steps: int,
    stop_at_first: bool,
) -> list[WalkReport]:
    """`simulate --engine spark`: the random walks of each preset, on one Spark context."""
    from groupspec.checker.spark.simulate import spark_random_walks

    with spark_session(master) as context:
        return [
            spark_random_walks(
                context,
                loaded.model,
                seed=seed,
                runs=runs,
                steps=steps,
                stop_at_first=stop_at_first,
            )
            for loaded in models
        ]


@contextmanager
def spark_session(master: str | None) -> Iterator[Any]:
    """A running SparkContext at `master` (DEFAULT_MASTER when None), see
    checker/spark/session.py; SparkError (SparkUnavailable) without Java or pyspark."""
    with spark_context(SparkSettings(master=master or DEFAULT_MASTER)) as context:
        yield context
