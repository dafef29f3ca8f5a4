"""`groupspec bench impl`: the optimized coordinator against the spec, and at scale.

`register_bench_impl` adds the `impl` subcommand to the `bench` command group (the group itself
lives in bench_command.py, which wires this in).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from groupspec.bench.impl_bench import bench_scale, bench_stream, format_report
from groupspec.bench.kip848_impl_bench import bench_kip848, format_kip848
from groupspec.cli.output import ProgressLine, add_json_option, write_json

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2


def register_bench_impl(bench_subcommands: argparse._SubParsersAction) -> None:
    """Add the `impl` subcommand to the `bench` group."""
    parser = bench_subcommands.add_parser(
        "impl",
        help="requests/s of spec and impl on one stream; memory and heartbeats/s at scale",
        description=(
            "Run one deterministic request stream (groups × members: joins, syncs, heartbeats, "
            "commits, fetches, rebalances) through the spec and the optimized coordinator and "
            "report requests/s of each, their ratio and whether their responses agree; then form "
            "many groups in one process on the impl alone and report memory per group and "
            "heartbeats/s on one core; then run a consumer-protocol (KIP-848) load (static members "
            "joining, heartbeating, leaving and rejoining) through spec/kip848 and impl/kip848 "
            "and report the same ratio. Exit 1 if spec and impl answered either load differently."
        ),
    )
    parser.add_argument(
        "--groups", type=int, default=50, help="groups in the shared stream (default 50)"
    )
    parser.add_argument(
        "--members", type=int, default=3, help="members per group in the stream (default 3)"
    )
    parser.add_argument(
        "--rounds", type=int, default=10, help="heartbeat/commit rounds (default 10)"
    )
    parser.add_argument(
        "--scale-groups",
        type=int,
        default=100_000,
        help="groups for the scale run (default 100000; 0 skips it)",
    )
    parser.add_argument(
        "--scale-members", type=int, default=3, help="members per group at scale (default 3)"
    )
    parser.add_argument(
        "--heartbeat-passes", type=int, default=3, help="heartbeats per member at scale (default 3)"
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="measure live bytes with tracemalloc instead of resident-set growth (slower build)",
    )
    parser.add_argument(
        "--kip848-groups",
        type=int,
        default=50,
        help="groups in the consumer-protocol load (default 50; 0 skips it)",
    )
    parser.add_argument(
        "--kip848-members",
        type=int,
        default=10,
        help="static members per group in the consumer-protocol load (default 10)",
    )
    parser.add_argument(
        "--kip848-rounds",
        type=int,
        default=30,
        help="heartbeat rounds of the consumer-protocol load (default 30)",
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_impl)


def run_bench_impl(args: argparse.Namespace) -> int:
    """Run both measurements, print the report, optionally write JSON."""
    problem = _validate(args)
    if problem:
        print(f"groupspec bench impl: {problem}", file=sys.stderr)
        return EXIT_USAGE
    stream = bench_stream(args.groups, args.members, args.rounds)
    scale = None
    if args.scale_groups > 0:
        progress = ProgressLine()
        scale = bench_scale(
            args.scale_groups,
            args.scale_members,
            args.heartbeat_passes,
            use_tracemalloc=args.tracemalloc,
            progress=progress.update,
        )
        progress.close()
    print(format_report(stream, scale))
    kip848 = None
    if args.kip848_groups > 0:
        kip848 = bench_kip848(args.kip848_groups, args.kip848_members, args.kip848_rounds)
        print(format_kip848(kip848))
    if args.json is not None:
        document = {
            "bench": "impl",
            "stream": asdict(stream),
            "scale": asdict(scale) if scale is not None else None,
            "kip848": asdict(kip848) if kip848 is not None else None,
        }
        write_json(args, document)
    differing = stream.responses_differing + (kip848.responses_differing if kip848 else 0)
    return EXIT_OK if differing == 0 else EXIT_MISMATCH


def _validate(args: argparse.Namespace) -> str | None:
    if args.groups < 1 or args.members < 1 or args.rounds < 0:
        return "need --groups ≥ 1, --members ≥ 1 and --rounds ≥ 0"
    if args.scale_groups < 0 or args.scale_members < 1 or args.heartbeat_passes < 1:
        return "need --scale-groups ≥ 0, --scale-members ≥ 1 and --heartbeat-passes ≥ 1"
    if args.kip848_groups < 0 or args.kip848_members < 1 or args.kip848_rounds < 0:
        return "need --kip848-groups ≥ 0, --kip848-members ≥ 1 and --kip848-rounds ≥ 0"
    return None
