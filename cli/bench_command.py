"""`groupspec bench`: benchmarks reported as figures (never as pass/fail timings).

`bench` is a group of subcommands; `bench stickiness` times the two stickiness oracles (HiGHS and
z3) on seeded scenarios and on the assignor suite's, and compares our sticky assignors' partition
moves with the optimum; `bench checker`
times the exhaustive engine; `bench impl` compares the optimized coordinator with the spec;
`bench serve` loads the wire server with many members heartbeating and committing; `bench spark`
measures the Spark engine's per-level overhead and states/s against the in-process engine;
`bench oracle` validates long traces. (The checker's mutation score, which is not a benchmark,
is `groupspec mutation`.)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from groupspec.bench.stickiness_bench import (
    SCENARIO_KINDS,
    SolverRun,
    StickinessFigures,
    SuiteFigures,
    bench_scenario,
    bench_suite,
    disagreements,
)
from groupspec.cli.bench_checker_command import register_bench_checker
from groupspec.cli.bench_impl_command import register_bench_impl
from groupspec.cli.bench_oracle_command import register_bench_oracle
from groupspec.cli.bench_serve_command import register_bench_serve
from groupspec.cli.bench_spark_command import register_bench_spark
from groupspec.cli.output import add_json_option, write_json


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `bench` subcommand group."""
    parser = commands.add_parser(
        "bench", help="benchmarks, reported as figures", description=__doc__
    )
    benches = parser.add_subparsers(dest="bench", metavar="BENCH", required=True)
    stickiness = benches.add_parser(
        "stickiness",
        help="time the two optimal-stickiness oracles (HiGHS, z3) on seeded scenarios",
        description=(
            "Build seeded groups with previous ownership (identical and uneven subscriptions), "
            "solve the fewest partition moves over valid, complete, balanced assignments with "
            "HiGHS (MILP) and with z3 in the same run, and report each one's wall-clock time and "
            "model size, their ratio, the optimum and our sticky assignors' gap to it; then the "
            "same for the optimum of every scenario of `groupspec assignors`. Exit 1 if the two "
            "solvers disagree or HiGHS finds no optimum; z3 running out of time is reported "
            "(with its time limit), not a failure."
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
        "--timeout",
        type=float,
        default=120.0,
        help="time limit per solver and group, seconds (default 120)",
    )
    stickiness.add_argument(
        "--no-suite",
        action="store_true",
        help="leave out the scenarios of `groupspec assignors`",
    )
    add_json_option(stickiness, "the figures")
    stickiness.set_defaults(run=run_stickiness)
    register_bench_checker(benches)
    register_bench_impl(benches)
    register_bench_serve(benches)
    register_bench_spark(benches)
    register_bench_oracle(benches)


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
            timeout_s=args.timeout,
        )
        for kind in (args.kind or list(SCENARIO_KINDS))
    ]
    for row in figures:
        _print_row(row, args.timeout)
    suite = () if args.no_suite else bench_suite(args.timeout)
    if suite:
        _print_suite(suite, args.timeout)
    if args.json is not None:
        write_json(args, _as_json(figures, suite))
    pairs = [(row.highs, row.z3) for row in figures] + [
        (highs, z3) for entry in suite for _, highs, z3 in entry.runs
    ]
    failed = disagreements(pairs) or any(highs.error for highs, _ in pairs)
    return 1 if failed else 0


def _solver_text(run: SolverRun, timeout: float) -> str:
    if run.error is not None:
        return f"{run.solver} UNSOLVED within its {timeout:g} s limit ({run.error})"
    return (
        f"{run.solver} {run.seconds:.3f} s ({run.variables} variables, "
        f"{run.constraints} constraints)"
    )


def _ratio(highs: SolverRun, z3: SolverRun) -> str:
    if highs.error is not None:
        return "z3/HiGHS: -"
    # An unsolved z3 ran until its limit: the true ratio is at least this.
    bound = "≥ " if z3.error is not None else ""
    return f"z3/HiGHS {bound}{z3.seconds / max(highs.seconds, 1e-6):.1f}×"


def _print_row(row: StickinessFigures, timeout: float) -> None:
    head = f"{row.kind:9} {row.members} members × {row.partitions} partitions, {row.topics} topics, seed {row.seed}:"
    optimum = row.optimum_moves
    owned = row.highs.previously_owned or row.z3.previously_owned
    agree = (
        ""
        if disagreements([(row.highs, row.z3)]) == 0
        else f" DISAGREE (HiGHS {row.highs.optimum_moves}, z3 {row.z3.optimum_moves})"
    )
    gaps = ", ".join(
        f"{name} {moves} (gap {moves - optimum})" if optimum is not None else f"{name} {moves}"
        for name, moves in row.assignor_moves
    )
    print(
        f"{head} optimum {optimum if optimum is not None else '-'} moves of "
        f"{owned if owned is not None else '-'} owned{agree}; "
        f"{_solver_text(row.highs, timeout)}; {_solver_text(row.z3, timeout)}; "
        f"{_ratio(row.highs, row.z3)}; {gaps}"
    )


def _print_suite(suite: tuple[SuiteFigures, ...], timeout: float) -> None:
    runs = [(highs, z3) for entry in suite for _, highs, z3 in entry.runs]
    print()
    print(
        f"the optima of `groupspec assignors` ({len(suite)} scenarios × "
        f"{len(suite[0].runs)} of our assignors), slowest per scenario:"
    )
    header = ["scenario", "HiGHS s", "z3 s", "z3/HiGHS"]
    rows = []
    for entry in suite:
        highs = max(entry.runs, key=lambda run: run[1].seconds)[1]
        z3 = max(entry.runs, key=lambda run: run[2].seconds)[2]
        rows.append(
            [
                entry.scenario,
                f"{highs.seconds:.3f}",
                f"{z3.seconds:.3f}" + ("+" if any(r[2].error for r in entry.runs) else ""),
                _ratio(highs, z3).removeprefix("z3/HiGHS "),
            ]
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for cells in [header, *rows]:
        print(
            "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            )
        )
    total_highs = sum(highs.seconds for highs, _ in runs)
    total_z3 = sum(z3.seconds for _, z3 in runs)
    unsolved = sum(1 for highs, z3 in runs if z3.error)
    verdict = "the optima agree" if disagreements(runs) == 0 else f"{disagreements(runs)} DISAGREE"
    print(
        f"all {len(runs)} optima: HiGHS {total_highs:.3f} s, z3 {total_z3:.3f} s in total "
        f"(z3/HiGHS {total_z3 / max(total_highs, 1e-6):.1f}×); {verdict}"
        + (f"; z3 unsolved within {timeout:g} s: {unsolved}" if unsolved else "")
    )


def _as_json(figures: list[StickinessFigures], suite: tuple[SuiteFigures, ...]) -> dict[str, Any]:
    def run(solver: SolverRun) -> dict[str, Any]:
        return {**asdict(solver), "seconds": round(solver.seconds, 4)}

    return {
        "bench": "stickiness",
        "scenarios": [
            {
                "kind": row.kind,
                "members": row.members,
                "partitions": row.partitions,
                "topics": row.topics,
                "seed": row.seed,
                "optimum_moves": row.optimum_moves,
                "highs": run(row.highs),
                "z3": run(row.z3),
                "assignor_moves": dict(row.assignor_moves),
            }
            for row in figures
        ],
        "suite": [
            {
                "scenario": entry.scenario,
                "runs": [
                    {"assignor": name, "highs": run(highs), "z3": run(z3)}
                    for name, highs, z3 in entry.runs
                ],
            }
            for entry in suite
        ],
    }
