"""`groupspec bench oracle`: trace events validated per second, on long traces of the impl."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from groupspec.cli.arguments import output_directory
from groupspec.cli.output import add_json_option, write_json
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.validate import validate_trace

DAY_MS = 86_400_000


def register_bench_oracle(benches: argparse._SubParsersAction) -> None:
    """Add `bench oracle`."""
    parser = benches.add_parser(
        "oracle",
        help="trace events validated per second",
        description=(
            "Write long traces of groupspec.impl serving simulated consumers (a steady group, "
            "and one with churn: members leaving, crashing, arriving, restarting, stalling), then "
            "validate each against the specification and report events/s and the most "
            "hypotheses held at once."
        ),
    )
    parser.add_argument(
        "--events", type=int, default=100_000, help="events per trace (default 100000)"
    )
    parser.add_argument(
        "--consumers", type=int, default=5, help="consumers in the group (default 5)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--keep", type=output_directory, metavar="DIR", help="keep the traces in DIR"
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_oracle)


def run_bench_oracle(args: argparse.Namespace) -> int:
    """Generate and validate the traces; exit 1 if one does not pass (the bench found a bug)."""
    if args.events < 1 or args.consumers < 1:
        print("groupspec bench oracle: need --events ≥ 1 and --consumers ≥ 1", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        for name, churn in (("steady", False), ("churn", True)):
            rows.append(_bench_one(directory / f"{name}.jsonl", name, churn, args))
    for row in rows:
        print(
            f"{row['trace']:7} {row['events']:>9} events in {row['validate_s']:.1f} s: "
            f"{row['events_per_s']:>8,.0f} events/s validated, at most {row['max_hypotheses']} "
            f"hypotheses; {row['status']} (written at {row['write_events_per_s']:,.0f} events/s)"
        )
    if args.json is not None:
        write_json(args, {"bench": "oracle", "traces": rows})
    return 0 if all(row["status"] == "pass" for row in rows) else 1


def _bench_one(path: Path, name: str, churn: bool, args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    with path.open("w") as out:
        stats = write_impl_trace(
            out,
            seed=args.seed,
            duration_ms=365 * DAY_MS,
            consumers=args.consumers,
            churn=churn,
            max_events=args.events,
        )
    written = time.perf_counter() - started
    verdict = validate_trace(path, shrink=False)
    return {
        "trace": name,
        "events": verdict.counts.events,
        "validate_s": round(verdict.elapsed_s, 3),
        "events_per_s": round(verdict.counts.events / verdict.elapsed_s),
        "max_hypotheses": verdict.counts.max_hypotheses,
        "status": verdict.status,
        "write_events_per_s": round(stats.events / written),
    }
