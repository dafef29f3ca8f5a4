"""`groupspec bench checker`: states/s, transitions/s and bytes per state of the BFS engine.

`register_bench_checker` adds the `checker` subcommand to the `bench` command group (the group
itself lives in bench_command.py, which wires this in).
"""

from __future__ import annotations

import argparse
import sys

from groupspec.bench.checker_bench import (
    QUICK_PRESETS,
    bench_checker,
    bench_json,
    default_presets,
    format_table,
    parse_preset,
)
from groupspec.cli.output import add_json_option, write_json
from groupspec.models.preset_models import ModelLoadError

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2


def register_bench_checker(bench_subcommands: argparse._SubParsersAction) -> None:
    """Add the `checker` subcommand to the `bench` group."""
    parser = bench_subcommands.add_parser(
        "checker",
        help="time the exhaustive checker on reference presets, one process and all cores",
        description=(
            "Run a complete breadth-first search of each preset single-process and with every "
            "core, and report distinct states, transitions, seconds, states/s, transitions/s, "
            "bytes per stored state (the seen set's arrays and filter), the speedup of all "
            "cores over one, and for two-phase commit the ratio to a hand-written breadth-first "
            "search of the same model; for every other preset (classic and KIP-848 worlds) its "
            "states/s as a fraction of that hand-written search's (6 resource managers), timed "
            "just before. Exit 1 if the runs disagree on the counts."
        ),
    )
    parser.add_argument(
        "--preset",
        dest="presets",
        action="append",
        metavar="PRESET",
        help=(
            "a preset, or two-phase:N for N resource managers (repeatable; default: "
            f"{', '.join(default_presets())})"
        ),
    )
    parser.add_argument(
        "--workers",
        type=int,
        action="append",
        metavar="N",
        # No core count in the help: docs/cli.md is generated from it on any machine.
        help="a worker count to run (repeatable; default: 1 and every core of the machine)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run: {', '.join(QUICK_PRESETS)} (unless --preset is given)",
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_checker)


def run_bench_checker(args: argparse.Namespace) -> int:
    """Run the checker benchmark; print the table and optionally write JSON."""
    problem = _validate(args)
    if problem:
        print(f"groupspec bench checker: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        results = bench_checker(args.presets, args.workers, quick=args.quick)
    except ModelLoadError as error:
        print(f"groupspec bench checker: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(format_table(results))
    if args.json is not None:
        write_json(args, bench_json(results))
    return EXIT_OK if all(bench.consistent for bench in results) else EXIT_MISMATCH


def _validate(args: argparse.Namespace) -> str | None:
    if args.workers and min(args.workers) < 1:
        return "--workers must be at least 1"
    for spec in args.presets or ():
        try:
            parse_preset(spec)
        except ValueError as error:
            return f"--preset {error}"
    return None
