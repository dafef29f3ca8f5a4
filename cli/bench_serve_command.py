"""`groupspec bench serve`: requests/s and latency of `groupspec serve` under many members.

`register_bench_serve` adds the `serve` subcommand to the `bench` command group. The server runs
as its own process (`groupspec serve --port 0`), so the load generator does not share its core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys

from groupspec.bench.serve_load import LoadReport, run_load
from groupspec.cli.arguments import output_file
from groupspec.cli.output import write_atomically

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register_bench_serve(bench_subcommands: argparse._SubParsersAction) -> None:
    """Add the `serve` subcommand to the `bench` group."""
    parser = bench_subcommands.add_parser(
        "serve",
        help="requests/s and p50/p99 latency of the wire server under many members",
        description=(
            "Start `groupspec serve` on a free loopback port, form GROUPS groups of MEMBERS "
            "members (one connection each), then let every member alternate Heartbeat and "
            "OffsetCommit for DURATION seconds; report requests/s and p50/p99 latency."
        ),
    )
    parser.add_argument("--groups", type=int, default=100, help="groups (default 100)")
    parser.add_argument("--members", type=int, default=10, help="members per group (default 10)")
    parser.add_argument(
        "--duration", type=float, default=10.0, help="measured seconds (default 10)"
    )
    parser.add_argument(
        "--json", type=output_file, metavar="FILE", help="also write the figures as JSON"
    )
    parser.set_defaults(run=run_bench_serve)


def run_bench_serve(args: argparse.Namespace) -> int:
    """Run the load; exit 0 with figures, 1 if the server failed, 2 on bad input."""
    if args.groups < 1 or args.members < 1 or args.duration <= 0:
        print(
            "groupspec bench serve: need --groups ≥ 1, --members ≥ 1, --duration > 0",
            file=sys.stderr,
        )
        return EXIT_USAGE
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "groupspec.cli.main",
            "serve",
            "--port",
            "0",
            "--initial-rebalance-delay-ms",
            "1000",
            "--log-level",
            "WARNING",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if "listening on" not in line:
            print(
                f"groupspec bench serve: the server did not start ({line.strip()!r})",
                file=sys.stderr,
            )
            return EXIT_FAILED
        host, port = line.rsplit(" ", 1)[1].rsplit(":", 1)
        report = asyncio.run(run_load(host, int(port), args.groups, args.members, args.duration))
    finally:
        server.terminate()
        server.wait(30)
    print(format_report(report))
    if args.json is not None:
        write_atomically(
            args.json, json.dumps({"bench": "serve", **report.as_dict()}, indent=2) + "\n"
        )
    return EXIT_OK


def format_report(report: LoadReport) -> str:
    """One line of figures."""
    figures = report.as_dict()
    return (
        f"serve: {report.groups} groups × {report.members_per_group} members, "
        f"{figures['duration_s']} s: {figures['requests']} requests "
        f"({figures['heartbeats']} heartbeats, {figures['commits']} commits), "
        f"{figures['requests_per_s']} requests/s, p50 {figures['p50_ms']} ms, "
        f"p99 {figures['p99_ms']} ms; {figures['rejoins']} rejoins, {figures['errors']} errors"
    )
