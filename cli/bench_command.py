"""`groupspec bench`: benchmarks reported as figures (never as pass/fail timings).

`bench` is a group of subcommands; `bench stickiness` times the z3 stickiness oracle on seeded
scenarios and compares our sticky assignors' partition moves with the optimum; `bench checker`
times the exhaustive engine; `bench impl` compares the optimized coordinator with the spec;
`bench serve` loads the wire server with many members heartbeating and committing; `bench spark`
measures the Spark engine's per-level overhead and states/s against the in-process engine;
`bench oracle` validates long traces; `bench mutation` measures how many cosmic-ray mutants of
the specification the reference presets' exhaustive checks kill.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from groupspec.bench.stickiness_bench import SCENARIO_KINDS, StickinessFigures, bench_scenario
from groupspec.cli.arguments import output_file
from groupspec.cli.bench_checker_command import register_bench_checker
from groupspec.cli.bench_impl_command import register_bench_impl
from groupspec.cli.bench_mutation_command import register_bench_mutation
from groupspec.cli.bench_oracle_command import register_bench_oracle
from groupspec.cli.bench_serve_command import register_bench_serve
from groupspec.cli.bench_spark_command import register_bench_spark
from groupspec.cli.output import write_atomically


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `bench` subcommand group."""
    parser = commands.add_parser(
        "bench", help="benchmarks, reported as figures", description=__doc__
    )
    benches = parser.add_subparsers(dest="bench", metavar="BENCH", required=True)
    stickiness = benches.add_parser(
        "stickiness",
        help="time the z3 optimal-stickiness oracle on seeded scenarios",
        description=(
            "Build seeded groups with previous ownership (identical and uneven subscriptions), "
            "solve the fewest partition moves over valid, complete, balanced assignments with z3, "
            "and report solve time, model size, the optimum and our sticky assignors' gap to it."
        ),
    )
    stickiness.add_argument("--members", type=int, default=10, help="members (default 10)")
    stickiness.add_argument("--partitions", type=int, default=100, help="partitions (default 100)")
    stickiness.add_argument("--topics", type=int, default=5, help="topics (default 5)")
    stickiness.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    stickiness.add_argument(
        "--kind", action="append", choices=SCENARIO_KINDS, help="scenario kind (default: all)"
    )
    stickiness.add_argument(
        "--timeout", type=float, default=120.0, help="z3 time limit per scenario, seconds"
    )
    stickiness.add_argument(
        "--json", type=output_file, metavar="FILE", help="also write the figures as JSON"
    )
    stickiness.set_defaults(run=run_stickiness)
    register_bench_checker(benches)
    register_bench_impl(benches)
    register_bench_serve(benches)
    register_bench_spark(benches)
    register_bench_oracle(benches)
    register_bench_mutation(benches)


def run_stickiness(args: argparse.Namespace) -> int:
    """Run the stickiness bench; exit 0 when every scenario solved, 1 if one did not, 2 on bad input."""
    if args.members < 1 or args.partitions < 0 or args.topics < 1 or args.timeout <= 0:
        print(
            "groupspec bench stickiness: need --members ≥ 1, --partitions ≥ 0, --topics ≥ 1, --timeout > 0",
            file=sys.stderr,
        )
        return 2
    figures = [
        bench_scenario(
            kind,
            members=args.members,
            partitions=args.partitions,
            topics=args.topics,
            seed=args.seed,
            timeout_ms=int(args.timeout * 1000),
        )
        for kind in (args.kind or list(SCENARIO_KINDS))
    ]
    for row in figures:
        _print_row(row)
    if args.json is not None:
        write_atomically(args.json, json.dumps(_as_json(figures), indent=2) + "\n")
    return 1 if any(row.error for row in figures) else 0


def _print_row(row: StickinessFigures) -> None:
    head = f"{row.kind:9} {row.members} members × {row.partitions} partitions, {row.topics} topics, seed {row.seed}:"
    if row.error is not None:
        print(f"{head} UNSOLVED ({row.error})")
        return
    gaps = ", ".join(
        f"{name} {moves} (gap {moves - (row.optimum_moves or 0)})"
        for name, moves in row.assignor_moves
    )
    print(
        f"{head} optimum {row.optimum_moves} moves of {row.previously_owned} owned; "
        f"{row.variables} variables, {row.constraints} constraints, {row.solve_seconds:.3f} s; {gaps}"
    )


def _as_json(figures: list[StickinessFigures]) -> dict[str, Any]:
    return {
        "bench": "stickiness",
        "scenarios": [
            {
                **asdict(row),
                "assignor_moves": dict(row.assignor_moves),
                "solve_seconds": round(row.solve_seconds, 4),
            }
            for row in figures
        ],
    }
