"""`--engine spark` of `groupspec check` and `groupspec simulate`: their work, run on Spark.

Spark's modules are imported only here and only when the Spark engine is asked for, so the
in-process check starts as fast as before.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from groupspec.checker.bfs import Limits, ProgressCallback, SearchResult
from groupspec.checker.walk import WalkReport
from groupspec.models.catalog import LoadedModel

IN_PROCESS, SPARK = "inprocess", "spark"
ENGINES = (IN_PROCESS, SPARK)
# spark_session.DEFAULT_MASTER, repeated so that the commands' help needs no pyspark.
DEFAULT_MASTER = "local[*]"


def add_engine_options(parser: Any, engine_help: str) -> None:
    """Add `--engine` (in-process or spark) and `--master URL` to a parser or argument group."""
    parser.add_argument("--engine", choices=ENGINES, default=IN_PROCESS, help=engine_help)
    parser.add_argument(
        "--master",
        metavar="URL",
        help=f"Spark master URL for --engine spark (default {DEFAULT_MASTER})",
    )


class SparkRunError(Exception):
    """The Spark engine cannot run as asked (no Java, no pyspark, an unusable checkpoint)."""


def validate(args: argparse.Namespace) -> str | None:
    """What is wrong with the Spark options of `args`, or None."""
    if args.workers != 1:
        return "--workers is an option of the in-process engine; Spark uses its executors' cores"
    if args.partitions is not None and args.partitions < 1:
        return f"--partitions must be at least 1, got {args.partitions}"
    if args.resume and args.checkpoint is None:
        return "--resume needs --checkpoint DIR"
    if args.checkpoint is not None and args.checkpoint.exists() and not args.checkpoint.is_dir():
        return f"--checkpoint: {args.checkpoint} is not a directory"
    return None


def search(
    loaded: LoadedModel,
    args: argparse.Namespace,
    limits: Limits,
    *,
    progress: ProgressCallback | None,
    record_graph: bool,
) -> SearchResult[Any]:
    """Check `loaded` on Spark as `args` says; raises SparkRunError when it cannot run."""
    from groupspec.checker.spark.bfs import SparkOptions, spark_search
    from groupspec.checker.spark.checkpoint import CheckpointError

    options = SparkOptions(
        partitions=args.partitions,
        checkpoint=args.checkpoint,
        resume=args.resume,
        identity={
            "preset": loaded.preset,
            "preset_file": str(loaded.path),
            "overrides": dict(loaded.overrides),
            "parameters": dict(loaded.parameters),
            "liveness": record_graph,
            "all_violations": limits.all_violations,
        },
    )
    try:
        with spark_session_for(args) as context:
            return spark_search(
                context,
                loaded.model,
                limits=limits,
                progress=progress,
                record_graph=record_graph,
                options=options,
            )
    except CheckpointError as error:
        raise SparkRunError(str(error)) from None


def spark_walks(models: list[LoadedModel], args: argparse.Namespace) -> list[WalkReport]:
    """`simulate --engine spark`: the random walks of each preset, on one Spark context."""
    from groupspec.checker.spark.simulate import spark_random_walks

    with spark_session_for(args) as context:
        return [
            spark_random_walks(
                context,
                loaded.model,
                seed=args.seed,
                runs=args.runs,
                steps=args.steps,
                stop_at_first=not args.all,
            )
            for loaded in models
        ]


@contextmanager
def spark_session_for(args: argparse.Namespace) -> Iterator[Any]:
    """A SparkContext for `--master` (see checker/spark/session.py); SparkRunError without
    Java or pyspark."""
    from groupspec.checker.spark.session import (
        DEFAULT_MASTER,
        SparkSettings,
        SparkUnavailable,
        spark_context,
    )

    try:
        with spark_context(SparkSettings(master=args.master or DEFAULT_MASTER)) as context:
            yield context
    except SparkUnavailable as error:
        raise SparkRunError(str(error)) from None
