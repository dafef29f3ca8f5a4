"""`groupspec bench serve`: requests/s and latency of `groupspec serve` under many members, and
of another broker under the same load (`--target`), side by side.

`register_bench_serve` adds the `serve` subcommand to the `bench` command group. Our server runs
as its own process (`groupspec serve --port 0`), so the load generator does not share its core.
With `--target`, the target is measured first (a target whose groups do not form ends the run
before our server starts), then our server, which is the baseline of the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import math
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from groupspec.bench.broker_cpu import MOCK_THREAD_NAME, CpuClock, process_cpu, threads_cpu
from groupspec.bench.consumer_load import CHURN_EVERY, ConsumerLoadReport, run_consumer_load
from groupspec.bench.load_protocol import FormationError
from groupspec.bench.serve_load import LoadReport, run_load
from groupspec.cli.output import add_json_option, write_json
from groupspec.record.kafka.install import KafkaSetupError
from groupspec.record.workload.targets import KAFKA_TARGETS
from groupspec.wire.address import Address

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MOCK = "mock"
# The initial rebalance delay our server runs with here, and an Apache Kafka target too, so
# that the formation times compare the brokers and not their settings (librdkafka's mock has
# its own, fixed at 3 s).
INITIAL_DELAY_MS = 1000
DEFAULT_FORMATION_TIMEOUT_S = 60.0
PROG = "groupspec bench serve"
CLASSIC, CONSUMER = "classic", "consumer"


def parse_target(text: str) -> str | Address:
    """`mock`, `kafka`, `kafka-3.9` or `HOST:PORT` (an argparse type: ValueError says what is
    wrong)."""
    if text == MOCK or text in KAFKA_TARGETS:
        return text
    try:
        return Address.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected HOST:PORT (a port in 1–65535), mock, kafka or kafka-3.9"
        ) from None


def register_bench_serve(bench_subcommands: argparse._SubParsersAction) -> None:
    """Add the `serve` subcommand to the `bench` group."""
    parser = bench_subcommands.add_parser(
        "serve",
        help=(
            "formation time, requests/s, p50/p99 latency and CPU per request of the wire server "
            "(and another broker) under load"
        ),
        description=(
            "Start `groupspec serve` on a free loopback port, form GROUPS groups of MEMBERS "
            "members (one connection each, as a standard Kafka consumer forms its group), then "
            "let every member alternate Heartbeat and OffsetCommit for DURATION seconds; report "
            "the time the groups took to form, requests/s, p50/p99 latency and the broker's CPU "
            "time per request. With --target, run the same load against another broker "
            "(HOST:PORT; `mock`: librdkafka's mock cluster in this process; `kafka` or "
            "`kafka-3.9`: Apache Kafka's broker, started for the run with our server's initial "
            f"rebalance delay, {INITIAL_DELAY_MS} ms, docs/kafka.md) first, and report its "
            "figures as ratios to our server's. With --protocol consumer, the members speak "
            "KIP-848's consumer protocol instead: each heartbeats with ConsumerGroupHeartbeat "
            f"in a closed loop and leaves and joins again once every {CHURN_EVERY} of its "
            "requests. Exit 1 if a broker's groups do not form as on Kafka within "
            "--formation-timeout."
        ),
    )
    parser.add_argument("--groups", type=int, default=100, help="groups (default 100)")
    parser.add_argument("--members", type=int, default=10, help="members per group (default 10)")
    parser.add_argument(
        "--duration", type=float, default=10.0, help="measured seconds (default 10)"
    )
    parser.add_argument(
        "--target",
        type=parse_target,
        metavar="HOST:PORT|mock|kafka|kafka-3.9",
        help=(
            "also load this broker, compared with ours (mock: librdkafka's mock cluster; kafka, "
            "kafka-3.9: Apache Kafka's broker)"
        ),
    )
    parser.add_argument(
        "--protocol",
        choices=(CLASSIC, CONSUMER),
        default=CLASSIC,
        help=(
            "classic: JoinGroup/SyncGroup, then Heartbeat and OffsetCommit (default); consumer: "
            "KIP-848's ConsumerGroupHeartbeat with joins and leaves"
        ),
    )
    parser.add_argument(
        "--formation-timeout",
        type=float,
        default=DEFAULT_FORMATION_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up if the groups have not formed by then (default {DEFAULT_FORMATION_TIMEOUT_S:g})",
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_serve)


def _usage(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_bench_serve(args: argparse.Namespace) -> int:
    """Run the load; exit 0 with figures, 1 if a broker failed, 2 on bad input."""
    if args.groups < 1 or args.members < 1 or not 0 < args.duration < math.inf:
        return _usage("need --groups ≥ 1, --members ≥ 1, a finite --duration > 0")
    if not 0 < args.formation_timeout < math.inf:
        return _usage("need a finite --formation-timeout > 0")
    if args.json is not None and not args.json.parent.is_dir():
        return _usage(f"--json: directory {args.json.parent} does not exist")
    if args.target == MOCK and args.protocol == CONSUMER:
        return _usage(
            "--protocol consumer cannot run on --target mock: librdkafka's mock cluster aborts "
            "its process on a ConsumerGroupHeartbeat naming topics without a regex "
            "(docs/serve.md)"
        )
    if args.target == MOCK and importlib.util.find_spec("confluent_kafka") is None:
        return _usage("--target mock needs confluent-kafka (pip install 'groupspec[dev]')")
    target: tuple[str, LoadReport] | None = None
    measuring = _target_name(args.target)
    try:
        if args.target is not None:
            with _opened_target(args.target) as (name, address, cpu):
                measuring = name
                target = (name, _load(args, address, cpu))
        measuring = "groupspec serve"
        with _our_server() as (address, cpu):
            baseline = _load(args, address, cpu)
    except (FormationError, _StartError) as error:
        if target is not None:  # measured before our server failed: still worth showing
            print(format_report(target[1], target[0]))
        print(f"{PROG}: {measuring}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KafkaSetupError as error:
        return _usage(f"--target {args.target}: {error}")
    print(format_report(baseline, "groupspec serve"))
    if target is not None:
        print(format_report(target[1], target[0]))
        print(format_ratios(baseline, target[1], target[0]))
    if args.json is not None:
        write_json(args, _as_json(baseline, target, args.protocol))
    return EXIT_OK


def _load(args: argparse.Namespace, address: Address, cpu: CpuClock | None) -> LoadReport:
    run = run_consumer_load if args.protocol == CONSUMER else run_load
    return asyncio.run(
        run(address, args.groups, args.members, args.duration, args.formation_timeout, cpu)
    )


def _target_name(target: str | Address | None) -> str:
    if target == MOCK:
        return "librdkafka's mock cluster"
    if isinstance(target, str) and target in KAFKA_TARGETS:
        return f"Apache Kafka {KAFKA_TARGETS[target]}"
    return f"target {target}"


class _StartError(Exception):
    """A broker the bench starts did not start."""


@contextmanager
def _opened_target(target: str | Address) -> Iterator[tuple[str, Address, CpuClock | None]]:
    """The target's name, address and CPU clock (if visible), started for the run if it is
    the mock or Kafka."""
    if not isinstance(target, str):
        yield f"target {target}", target, None
        return
    if target in KAFKA_TARGETS:
        with _kafka_broker(KAFKA_TARGETS[target]) as opened:
            yield opened
        return
    from groupspec.record.workload.targets import MockTarget

    mock = MockTarget()
    try:
        mock.open()
    except Exception as error:  # librdkafka or the probe: either way the mock is not there
        raise _StartError(f"did not start ({error})") from None
    try:
        yield mock.describe(), mock.upstream, threads_cpu(MOCK_THREAD_NAME)
    finally:
        mock.close()


@contextmanager
def _kafka_broker(line: str) -> Iterator[tuple[str, Address, CpuClock | None]]:
    """Apache Kafka's broker of `line`, started for the run (a temporary data directory)."""
    from groupspec.record.kafka.broker import BrokerStartError, KafkaBroker

    broker = KafkaBroker(line, settings={"group_initial_rebalance_delay_ms": INITIAL_DELAY_MS})
    try:
        broker.start(lambda text: print(f"{PROG}: {text}", file=sys.stderr, flush=True))
    except BrokerStartError as error:
        raise _StartError(str(error)) from None
    try:
        assert broker.pid is not None
        yield broker.describe(), broker.address, process_cpu(broker.pid)
    finally:
        broker.stop()


@contextmanager
def _our_server() -> Iterator[tuple[Address, CpuClock]]:
    """`groupspec serve` on a free loopback port, as its own process, for the run; its address
    and CPU clock."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "groupspec.cli.main",
            "serve",
            "--port",
            "0",
            "--initial-rebalance-delay-ms",
            str(INITIAL_DELAY_MS),
            "--log-level",
            "WARNING",
            *_consumer_group_settings(),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if "listening on" not in line:
            raise _StartError(f"did not start ({line.strip()!r})")
        yield Address.parse(line.rsplit(" ", 1)[1]), process_cpu(server.pid)
    finally:
        server.terminate()
        server.wait(30)


def _consumer_group_settings() -> list[str]:
    """Our server's consumer-protocol settings: those groupspec gives a Kafka 4.x broker
    (record/kafka/settings.py), so both recompute targets alike (at every epoch bump)."""
    from groupspec.record.kafka.settings import CONSUMER_GROUP_SETTINGS

    return [
        f"--consumer-group-setting={name}={value}"
        for name, _, value in CONSUMER_GROUP_SETTINGS
        if name
    ]


def format_report(report: LoadReport, name: str) -> str:
    """One line of figures for the broker called `name`."""
    figures = report.as_dict()
    stalled = f", {report.stalled} stalled" if report.stalled else ""
    cpu = figures["broker_cpu_us_per_request"]
    stalled += f"; broker CPU {cpu} µs/request" if cpu is not None else ""
    if isinstance(report, ConsumerLoadReport):
        kinds = (
            f"{figures['heartbeats']} heartbeats, {figures['joins']} joins, "
            f"{figures['leaves']} leaves"
        )
        formed = "consumer-protocol members joined"
    else:
        kinds = f"{figures['heartbeats']} heartbeats, {figures['commits']} commits"
        formed = "members formed"
    return (
        f"serve: {name}: {report.groups} groups × {report.members_per_group} {formed} in "
        f"{figures['formation_s']} s; {figures['duration_s']} s: {figures['requests']} requests "
        f"({kinds}), "
        f"{figures['requests_per_s']} requests/s, p50 {figures['p50_ms']} ms, "
        f"p99 {figures['p99_ms']} ms; {figures['rejoins']} rejoins, {figures['errors']} errors"
        f"{stalled}"
    )


def ratios(baseline: LoadReport, target: LoadReport) -> dict[str, float | None]:
    """The target's figures divided by the baseline's (None where either is 0 or unknown):
    formation time, requests/s, p50 and p99 latency, the broker's CPU time per request."""

    def ratio(ours: float | None, theirs: float | None) -> float | None:
        return round(theirs / ours, 3) if ours and theirs is not None else None

    return {
        "formation_s": ratio(baseline.formation_s, target.formation_s),
        "requests_per_s": ratio(baseline.requests_per_s, target.requests_per_s),
        "p50_ms": ratio(baseline.percentile_ms(0.5), target.percentile_ms(0.5)),
        "p99_ms": ratio(baseline.percentile_ms(0.99), target.percentile_ms(0.99)),
        "broker_cpu_us_per_request": ratio(
            baseline.broker_cpu_us_per_request, target.broker_cpu_us_per_request
        ),
    }


def format_ratios(baseline: LoadReport, target: LoadReport, name: str) -> str:
    """One line: the target's figures as multiples of our server's."""
    shown = {k: "n/a" if v is None else f"{v:g}×" for k, v in ratios(baseline, target).items()}
    members = baseline.groups * baseline.members_per_group
    return (
        f"serve: {name} ÷ groupspec serve: formation of {members} members "
        f"{shown['formation_s']}, requests/s {shown['requests_per_s']}, "
        f"p50 {shown['p50_ms']}, p99 {shown['p99_ms']}, "
        f"broker CPU per request {shown['broker_cpu_us_per_request']}"
    )


def _as_json(
    baseline: LoadReport, target: tuple[str, LoadReport] | None, protocol: str
) -> dict[str, Any]:
    figures: dict[str, Any] = {"bench": "serve", "protocol": protocol, **baseline.as_dict()}
    if target is not None:
        name, report = target
        figures["target"] = {"name": name, **report.as_dict()}
        figures["ratios"] = ratios(baseline, report)
    return figures
