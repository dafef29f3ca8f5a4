"""`groupspec reproduce`: drive Apache Kafka's own brokers into the model checker's findings
about the classic protocol, record them, and judge the traces (docs/bugs.md)."""

from __future__ import annotations

import argparse
import sys
import time

from groupspec.cli.arguments import kafka_version_line, output_directory
from groupspec.record.findings.run import BROKERS, FindingCluster, FindingRun
from groupspec.record.findings.scenarios import FINDINGS
from groupspec.record.kafka.broker import BrokerStartError
from groupspec.record.kafka.install import KafkaSetupError, pinned_release
from groupspec.record.workload.targets import KAFKA_TARGETS

EXIT_OK, EXIT_NOT_REPRODUCED, EXIT_USAGE = 0, 1, 2
PROG = "groupspec reproduce"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `reproduce` subcommand."""
    parser = commands.add_parser(
        "reproduce",
        help="drive Apache Kafka into the checker's findings (docs/bugs.md) and record them",
        description=(
            f"Start a cluster of {BROKERS} Apache Kafka brokers per --target (KRaft on loopback, "
            "the offsets topic replicated on both, one recorder in front of each broker), then "
            "run each finding's script: the requests of the model checker's counterexample in "
            "its order, the coordinator moved from one broker to the other where the "
            "counterexample fails over. Prints each answer the finding depends on, what the "
            "specification answers there and what Kafka answered, then judges the merged trace "
            "with the oracle. Exit 0 if every finding was reproduced and every trace passes, 1 "
            "otherwise or if a broker did not start, 2 for bad input or a missing java or mvn."
        ),
    )
    parser.add_argument(
        "--finding",
        action="append",
        choices=sorted(FINDINGS),
        help="a finding to reproduce (repeatable; default: every one)",
    )
    parser.add_argument(
        "--target",
        action="append",
        choices=sorted(KAFKA_TARGETS),
        help="kafka (4.x) or kafka-3.9 (repeatable; default: kafka)",
    )
    parser.add_argument(
        "--trace-dir",
        type=output_directory,
        required=True,
        metavar="DIR",
        help="write DIR/RELEASE/FINDING.jsonl (merged) and DIR/RELEASE/FINDING/bN.jsonl",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Reproduce every finding asked for on every target; print the checks and verdicts."""
    findings = args.finding or sorted(FINDINGS)
    code = EXIT_OK
    for target in args.target or ["kafka"]:
        line = KAFKA_TARGETS[target]
        folder = args.trace_dir / pinned_release(line)
        cluster = FindingCluster(line)
        started = time.monotonic()
        try:
            cluster.start(say=lambda text: print(f"{PROG}: {text}", file=sys.stderr, flush=True))
        except KafkaSetupError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return EXIT_USAGE
        except BrokerStartError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return EXIT_NOT_REPRODUCED
        try:
            print(f"{cluster.cluster.title}: ready after {time.monotonic() - started:.1f} s")
            for finding in findings:
                result = cluster.reproduce(finding, folder)
                code = max(code, _report(result))
        finally:
            cluster.stop()
    return code


def _report(result: FindingRun) -> int:
    """Print one finding's run and its trace's verdict; the exit code it calls for."""
    from groupspec.oracle.trace.validate import PASS, validate_trace

    verdict_word = "REPRODUCED" if result.reproduced else "NOT REPRODUCED"
    print(f"{result.finding} on {result.broker}: {verdict_word}")
    for check in result.checks:
        mark = "  " if check.holds else "✗ "
        print(f"  {mark}{check.steps}: {check.action}")
        print(f"      specification: {check.expected}")
        print(f"      Kafka:         {check.observed}")
    if result.stopped is not None:
        print(f"  stopped: {result.stopped}")
    verdict = validate_trace(result.merged_trace)
    print(f"  trace {result.merged_trace}: validate {verdict.status}")
    print(f"  {kafka_version_line(verdict.kafka_version)}")
    for group in verdict.groups:
        first = group.first
        print(f"  line {first.line}: {first.api}: {first.reason} (× {group.count})")
    ok = result.reproduced and verdict.status == PASS
    return EXIT_OK if ok else EXIT_NOT_REPRODUCED
