"""`groupspec workload`: real clients run a group scenario through the recorder, leaving traces
(docs/record.md)."""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys

from groupspec.cli.arguments import output_directory
from groupspec.cli.record_options import (
    COORDINATOR_SETTING_HELP,
    add_coordinator_setting_option,
    coordinator_settings,
    format_counts,
)
from groupspec.record.kafka.broker import BrokerStartError
from groupspec.record.kafka.install import KafkaSetupError, install, java_executable
from groupspec.record.kafka.settings import KAFKA_4X
from groupspec.record.workload.client_scenarios import SCENARIOS
from groupspec.record.workload.runner import WorkloadResult, run_workload
from groupspec.record.workload.targets import TARGET_NAMES, make_target
from groupspec.wire.reachability import NotABrokerError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
CLIENTS = ("kafka-python", "aiokafka", "confluent", "java")
# The import each Python client library (and the mock cluster) needs, for a clear error up
# front; `java` (Kafka's own consumer) needs Java and Kafka's jars instead.
MODULES = {"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent": "confluent_kafka"}


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `workload` subcommand."""
    parser = commands.add_parser(
        "workload",
        help="run real Kafka clients through the recorder and leave one trace per client",
        description=(
            "Start the target (a `groupspec serve`, librdkafka's mock cluster, Apache Kafka's "
            "broker, or a broker at HOST:PORT), put the recording proxy in front of it, and run "
            "a consumer-group "
            "scenario with real consumer processes of each client library (java: Apache "
            "Kafka's own KafkaConsumer); one trace per "
            "client library and scenario goes to --trace-dir. Scenarios: "
            + "; ".join(f"{s.name}: {s.summary}" for s in SCENARIOS.values())
            + ". See docs/record.md."
        ),
    )
    parser.add_argument("--client", choices=[*CLIENTS, "all"], default="all")
    parser.add_argument(
        "--target",
        default="serve",
        help=(
            "serve (default), mock (librdkafka's mock cluster), kafka or kafka-3.9 (Apache "
            "Kafka's broker, started for each workload: docs/kafka.md), or HOST:PORT of a broker"
        ),
    )
    parser.add_argument(
        "--trace-dir", required=True, type=output_directory, help="where the traces go"
    )
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    add_coordinator_setting_option(
        parser,
        COORDINATOR_SETTING_HELP + "; with --target kafka or kafka-3.9, the broker is started "
        "with it (docs/kafka.md)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run every (client, scenario) asked for; exit 1 if one failed, 2 on bad input."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    clients = list(CLIENTS) if args.client == "all" else [args.client]
    scenarios = list(SCENARIOS.values()) if args.scenario == "all" else [SCENARIOS[args.scenario]]
    needed = {MODULES[c] for c in clients if c in MODULES} | (
        {"confluent_kafka"} if args.target == "mock" else set()
    )
    missing = sorted(m for m in needed if importlib.util.find_spec(m) is None)
    if missing:
        return _usage(f"not installed: {', '.join(missing)} (pip install 'groupspec[dev]')")
    try:
        settings = coordinator_settings(args.coordinator_setting)
        make_target(args.target, settings)
    except ValueError as error:
        return _usage(f"--target {args.target}: {error} ({TARGET_NAMES})")
    if "java" in clients:
        try:  # Java and the jars of Kafka's client, before any workload starts
            java_executable()
            install(KAFKA_4X, lambda line: print(f"groupspec: {line}", file=sys.stderr))
        except KafkaSetupError as error:
            return _usage(f"--client java: {error}")
    args.trace_dir.mkdir(parents=True, exist_ok=True)
    failed = False
    for scenario in scenarios:
        for client in clients:
            print(
                f"groupspec workload: {client} / {scenario.name} on {args.target} ...", flush=True
            )
            try:
                result = run_workload(
                    make_target(args.target, settings), client, scenario, args.trace_dir
                )
            except (NotABrokerError, KafkaSetupError) as error:
                return _usage(f"target: {error}")
            except BrokerStartError as error:
                print(f"groupspec workload: target: {error}", file=sys.stderr)
                return EXIT_FAILED
            _report(result)
            failed = failed or result.error is not None
    return EXIT_FAILED if failed else EXIT_OK


def _report(result: WorkloadResult) -> None:
    if result.skipped:
        print(f"  skipped: {result.skipped}", flush=True)
        return
    print(f"  trace {result.trace}: {result.events} events\n{format_counts(result.counts)}")
    for (api, error), count in sorted(result.errors.items()):
        print(f"  answered with an error: {api} {error} × {count}")
    for note in result.notes:
        print(f"  admin {note}")
    if result.error:
        print(f"  FAILED: {result.error}")
    sys.stdout.flush()


def _usage(message: str) -> int:
    print(f"groupspec workload: {message}", file=sys.stderr)
    return EXIT_USAGE
