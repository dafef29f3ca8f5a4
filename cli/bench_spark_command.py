"""`groupspec bench spark`: the Spark engine's per-level overhead and states/s against the
in-process engine (bench/spark_bench.py). Wired into the `bench` group by bench_command.py."""

from __future__ import annotations

import argparse
import sys

from groupspec.checker.spark.session import DEFAULT_MASTER, SparkError
from groupspec.cli.output import add_json_option, write_json
from groupspec.models.preset_models import ModelLoadError, load_model
from groupspec.verify.engines import spark_session

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
DEFAULT_PRESET = "static-2"


def register_bench_spark(bench_subcommands: argparse._SubParsersAction) -> None:
    """Add the `spark` subcommand to the `bench` group."""
    parser = bench_subcommands.add_parser(
        "spark",
        help="time the Spark engine: per-level overhead, states/s against the in-process engine",
        description=(
            "Time Spark levels of a few states (the fixed cost of a level), then a complete "
            "search of the preset with the in-process engine (one process) and with the Spark "
            "engine, and report states, seconds, states/s and the cost of a state per core. "
            "Exit 1 if the engines disagree on the counts."
        ),
    )
    parser.add_argument(
        "--preset", default=DEFAULT_PRESET, help=f"the preset to time (default {DEFAULT_PRESET})"
    )
    parser.add_argument(
        "--master", metavar="URL", help=f"Spark master URL (default {DEFAULT_MASTER})"
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_spark)


def run_bench_spark(args: argparse.Namespace) -> int:
    """Run the Spark benchmark; print the table and optionally write JSON."""
    from groupspec.bench.spark_bench import (
        TINY,
        TINY_OVERRIDES,
        bench_json,
        bench_spark,
        format_table,
    )

    try:
        loaded = load_model(args.preset)
    except ModelLoadError as error:
        print(f"groupspec bench spark: {error}", file=sys.stderr)
        return EXIT_USAGE
    tiny = load_model(TINY, TINY_OVERRIDES).model
    try:
        with spark_session(args.master) as context:
            bench = bench_spark(context, loaded.preset, loaded.model, tiny)
    except SparkError as error:
        print(f"groupspec bench spark: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(format_table(bench))
    if args.json is not None:
        write_json(args, bench_json(bench))
    return EXIT_OK if bench.consistent else EXIT_MISMATCH
