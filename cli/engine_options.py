"""The engine options of `groupspec check`, `simulate` and `validate`: `--engine` (in-process or
spark) and `--master URL`, and for `check` the Spark options' checks and the `EngineChoice`
they make (verify/engines.py runs it)."""

from __future__ import annotations

import argparse
from typing import Any

from groupspec.checker.spark.session import DEFAULT_MASTER
from groupspec.verify.engines import ENGINES, IN_PROCESS, EngineChoice


def add_engine_options(parser: Any, engine_help: str) -> None:
    """Add `--engine` (in-process or spark) and `--master URL` to a parser or argument group."""
    parser.add_argument("--engine", choices=ENGINES, default=IN_PROCESS, help=engine_help)
    parser.add_argument(
        "--master",
        metavar="URL",
        help=f"Spark master URL for --engine spark (default {DEFAULT_MASTER})",
    )


def spark_options_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the Spark options of `check`'s `args`, or None."""
    if args.workers != 1:
        return "--workers is an option of the in-process engine; Spark uses its executors' cores"
    if args.partitions is not None and args.partitions < 1:
        return f"--partitions must be at least 1, got {args.partitions}"
    if args.resume and args.checkpoint is None:
        return "--resume needs --checkpoint DIR"
    if args.checkpoint is not None and args.checkpoint.exists() and not args.checkpoint.is_dir():
        return f"--checkpoint: {args.checkpoint} is not a directory"
    return None


def engine_choice(args: argparse.Namespace) -> EngineChoice:
    """The engine `check`'s options name."""
    return EngineChoice(
        engine=args.engine,
        workers=args.workers,
        master=args.master,
        partitions=args.partitions,
        checkpoint=args.checkpoint,
        resume=args.resume,
    )
