"""`groupspec probe`: scripted group exchanges that each isolate one protocol rule, recorded as
traces (and judged with `--validate`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from groupspec.cli.arguments import (
    add_kafka_version_option,
    document_to_update,
    kafka_version_line,
    output_directory,
)
from groupspec.cli.output import with_generated_block, write_atomically
from groupspec.record.kafka.broker import BrokerStartError
from groupspec.record.kafka.install import KafkaSetupError
from groupspec.record.workload.probes import PROBES, ProbeResult, run_probes_against
from groupspec.record.workload.probes_consumer_all import ALL_CONSUMER_PROBES
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
            "serve (default), mock, kafka or kafka-3.9 (Apache Kafka's broker: docs/kafka.md), "
            "or HOST:PORT; serve and Kafka are started once per group of broker settings the "
            "probes need"
        ),
    )
    parser.add_argument(
        "--trace-dir", type=output_directory, metavar="DIR", help="where the traces go (needed)"
    )
    parser.add_argument(
        "--probe",
        action="append",
        choices=sorted([*PROBES, *ALL_CONSUMER_PROBES]),
        help="a probe to run (default: all); the cg-* ones need --consumer-protocol",
    )
    parser.add_argument(
        "--consumer-protocol",
        action="store_true",
        help="run the consumer-protocol (KIP-848) probes instead, against a Kafka 4.x broker "
        "started for them (needs --target kafka; docs/kafka.md)",
    )
    parser.add_argument("--validate", action="store_true", help="validate each trace")
    add_kafka_version_option(parser)
    parser.add_argument(
        "--list",
        action="store_true",
        help="run nothing: print every probe (its settings and rules) and, for every "
        "coordinator rule, the probes that exercise it",
    )
    parser.add_argument(
        "--update-doc",
        type=document_to_update,
        metavar="FILE",
        help="with --list: rewrite the generated blocks in FILE (docs/record.md, "
        "docs/coverage.md) instead of printing",
    )
    parser.set_defaults(run=run_probe)


def run_probe(args: argparse.Namespace) -> int:
    """Run the probes; with --validate print each verdict. With --list, describe them."""
    if args.list:
        return _list(args)
    if args.update_doc is not None:
        print("groupspec probe: --update-doc needs --list", file=sys.stderr)
        return EXIT_USAGE
    if args.trace_dir is None:
        print("groupspec probe: --trace-dir is needed to run probes", file=sys.stderr)
        return EXIT_USAGE
    if args.kafka_version is not None and not args.validate:
        print("groupspec probe: --kafka-version needs --validate", file=sys.stderr)
        return EXIT_USAGE
    if args.consumer_protocol:
        return _run_consumer_probes(args)
    if any(name in ALL_CONSUMER_PROBES for name in args.probe or ()):
        print("groupspec probe: the cg-* probes need --consumer-protocol", file=sys.stderr)
        return EXIT_USAGE
    try:
        make_target(args.target)
    except ValueError as error:
        print(f"groupspec probe: --target {args.target}: {error} ({TARGET_NAMES})", file=sys.stderr)
        return EXIT_USAGE
    return _run_and_report(
        args, lambda: run_probes_against(args.target, args.trace_dir, args.probe)
    )


def _run_consumer_probes(args: argparse.Namespace) -> int:
    """The consumer-protocol probes against a Kafka 4.x broker of their own."""
    from groupspec.record.workload.probes_consumer_all import run_all_consumer_probes

    if args.target != "kafka":
        print("groupspec probe: --consumer-protocol needs --target kafka", file=sys.stderr)
        return EXIT_USAGE
    names = list(args.probe or ALL_CONSUMER_PROBES)
    classic = [name for name in names if name not in ALL_CONSUMER_PROBES]
    if classic:
        print(f"groupspec probe: not consumer-protocol probes: {classic}", file=sys.stderr)
        return EXIT_USAGE
    return _run_and_report(args, lambda: run_all_consumer_probes(args.trace_dir, names))


def _run_and_report(args: argparse.Namespace, run: Callable[[], list[ProbeResult]]) -> int:
    """Run the probes (`run` starts the broker they need), print where each trace went and,
    with --validate, its verdict; the exit code it calls for."""
    try:
        results = run()
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


def _list(args: argparse.Namespace) -> int:
    """Print the probe and rule tables, or rewrite the generated blocks of --update-doc."""
    from groupspec.cli.probe_tables import BLOCKS, END

    if args.update_doc is None:
        sys.stdout.write("\n".join(make() for _, make in BLOCKS))
        return EXIT_OK
    try:
        document = args.update_doc.read_text(encoding="utf-8")
        blocks = [(begin, make) for begin, make in BLOCKS if begin in document]
        if not blocks:
            raise ValueError("no generated probe block in it (see docs/record.md)")
        for begin, make in blocks:
            document = with_generated_block(document, begin, END, make())
        write_atomically(args.update_doc, document)
    except (OSError, ValueError) as error:
        print(f"groupspec probe: {args.update_doc}: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"updated the probe tables in {args.update_doc}")
    return EXIT_OK


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
