"""`groupspec probe`: scripted group exchanges that each isolate one protocol rule, recorded as
traces (and judged with `--validate`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groupspec.cli.arguments import add_kafka_version_option, kafka_version_line, output_directory
from groupspec.record.kafka.broker import BrokerStartError
from groupspec.record.kafka.install import KafkaSetupError
from groupspec.record.workload.probes import PROBES, run_probes
from groupspec.record.workload.targets import TARGET_NAMES, make_target
from groupspec.wire.reachability import NotABrokerError

EXIT_OK, EXIT_DIVERGED, EXIT_USAGE, EXIT_UNDECIDED = 0, 1, 2, 3
EXIT_FAILED = 1


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `probe` subcommand."""
    parser = commands.add_parser(
        "probe",
        help="scripted exchanges isolating one protocol rule each, recorded as traces",
        description=(
            "Run short scripted group exchanges against a broker through the recording proxy, one "
            "trace per probe. Each isolates one rule (see groupspec.record.workload.probes), so a "
            "coordinator that departs from Kafka on one rule still has the others judged. With "
            "--validate, each trace is judged at once; exit 1 if one diverged (a malformed answer "
            "is a divergence) or a Kafka target did not start, 3 if one could not be decided."
        ),
    )
    parser.add_argument(
        "--target",
        default="serve",
        help=(
            "serve (default), mock, kafka or kafka-3.9 (Apache Kafka's broker, started for "
            "each probe: docs/kafka.md), or HOST:PORT"
        ),
    )
    parser.add_argument("--trace-dir", type=output_directory, required=True, metavar="DIR")
    parser.add_argument(
        "--probe", action="append", choices=sorted(PROBES), help="a probe to run (default: all)"
    )
    parser.add_argument("--validate", action="store_true", help="validate each trace")
    add_kafka_version_option(parser)
    parser.set_defaults(run=run_probe)


def run_probe(args: argparse.Namespace) -> int:
    """Run the probes; with --validate print each verdict."""
    if args.kafka_version is not None and not args.validate:
        print("groupspec probe: --kafka-version needs --validate", file=sys.stderr)
        return EXIT_USAGE
    try:
        make_target(args.target)
    except ValueError as error:
        print(f"groupspec probe: --target {args.target}: {error} ({TARGET_NAMES})", file=sys.stderr)
        return EXIT_USAGE
    try:
        results = run_probes(make_target(args.target), args.trace_dir, args.probe)
    except (NotABrokerError, KafkaSetupError) as error:
        print(f"groupspec probe: target: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokerStartError as error:
        print(f"groupspec probe: target: {error}", file=sys.stderr)
        return EXIT_FAILED
    code = EXIT_OK
    for result in results:
        note = f" (stopped: {result.error})" if result.error else ""
        print(f"probe {result.name}: trace {result.trace}{note}")
        if args.validate:
            code = max(code, _judge(result.trace, args.kafka_version))
    return code


def _judge(trace: Path, kafka_version: str | None) -> int:
    """Validate one probe's trace (against `kafka_version`'s coordinator if given) and print its
    verdict; the exit code it calls for. A trace that cannot be validated is reported as such,
    never as a crash."""
    from groupspec.oracle.trace.validate import DIVERGED, PASS, TraceInputError, validate_trace

    overrides = {"kafka_version": kafka_version} if kafka_version is not None else {}
    try:
        verdict = validate_trace(trace, overrides)
    except TraceInputError as error:
        print(f"  unjudged (bad trace): {error}")
        return EXIT_USAGE
    print(f"  {verdict.status} ({verdict.judged_fraction:.0%} of events judged)")
    print(f"  {kafka_version_line(verdict.kafka_version)}")
    for group in verdict.groups:
        divergence = group.first
        print(f"  line {divergence.line}: {divergence.api}: {divergence.reason} (× {group.count})")
        if divergence.observed is not None:
            print(f"  observed: {divergence.observed}")
        for allowed in divergence.allowed:
            print(f"  allowed:  {allowed}")
    return {PASS: EXIT_OK, DIVERGED: EXIT_DIVERGED}.get(verdict.status, EXIT_UNDECIDED)
