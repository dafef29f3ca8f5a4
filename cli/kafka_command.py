"""`groupspec kafka`: Apache Kafka's own broker (4.x or 3.9), single-node KRaft, in the
foreground until Ctrl-C (docs/kafka.md)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from groupspec.cli.arguments import output_directory, port_number
from groupspec.cli.record_options import add_coordinator_setting_option, coordinator_settings
from groupspec.record.kafka.broker import HOST, BrokerStartError, KafkaBroker
from groupspec.record.kafka.install import KafkaSetupError, install, pinned_releases

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PROG = "groupspec kafka"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `kafka` subcommand."""
    releases = pinned_releases()
    parser = commands.add_parser(
        "kafka",
        help="run Apache Kafka's own broker (4.x or 3.9, single-node KRaft) in the foreground",
        description=(
            "Start Apache Kafka's broker (broker and controller in one JVM) on loopback: its jars "
            "are resolved from Maven Central on first use, its storage formatted in --data-dir. "
            "Prints the bootstrap address once the broker is ready for consumer groups, and "
            "the coordinator settings a recorded trace's header needs; stops the broker on "
            "Ctrl-C or SIGTERM. Needs Java 17 or later (and Maven for the first run). "
            "Releases: "
            + ", ".join(f"{line}: {release}" for line, release in releases.items())
            + ". See docs/kafka.md."
        ),
    )
    parser.add_argument(
        "--kafka-version",
        choices=tuple(releases),
        help=f"the Kafka line (default {next(iter(releases))}; with --install, every line)",
    )
    parser.add_argument(
        "--port", type=port_number, default=0, help="client port on 127.0.0.1 (default 0: any free)"
    )
    parser.add_argument(
        "--data-dir",
        type=output_directory,
        metavar="DIR",
        help=(
            "keep the broker's storage, server.properties and broker.log in DIR, and restart "
            "from it if it holds a broker already (default: a temporary directory, removed at exit)"
        ),
    )
    add_coordinator_setting_option(
        parser,
        "a group setting to start the broker with, in the specification's CoordinatorConfig "
        "names (e.g. group_initial_rebalance_delay_ms=0), written to server.properties as "
        "Kafka's property; repeatable; see docs/kafka.md for the defaults",
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help="only resolve the jars (of --kafka-version, else of every line) into the cache, then exit",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the broker until interrupted; exit 2 on bad input or a missing java or mvn, 1 if the
    broker did not start or stopped by itself."""
    if args.install:
        return _install(args)
    try:
        settings = coordinator_settings(args.coordinator_setting)
        line = args.kafka_version or next(iter(pinned_releases()))
        broker = KafkaBroker(line, args.port, args.data_dir, settings)
    except ValueError as error:
        return _fail(EXIT_USAGE, str(error))
    if args.port and not _free(args.port):
        return _fail(
            EXIT_USAGE, f"--port {args.port}: something already listens on {HOST}:{args.port}"
        )
    with _stop_signals_interrupt():
        try:
            broker.start(say=lambda line: print(f"{PROG}: {line}", file=sys.stderr, flush=True))
        except KafkaSetupError as error:
            return _fail(EXIT_USAGE, str(error))
        except BrokerStartError as error:
            return _fail(EXIT_FAILED, str(error))
        except KeyboardInterrupt:
            return _fail(EXIT_OK, "interrupted while starting; stopped")
        try:
            _announce(broker, args.data_dir is None)
            code = broker.wait()
        except KeyboardInterrupt:
            print(f"{PROG}: stopping", file=sys.stderr, flush=True)
            broker.stop()
            return EXIT_OK
        log = broker.log_path
        broker.stop(keep_data=True)  # it holds the log that says why
        return _fail(EXIT_FAILED, f"the broker exited by itself (exit {code}); see {log}")


def _install(args: argparse.Namespace) -> int:
    lines = [args.kafka_version] if args.kafka_version else list(pinned_releases())
    for line in lines:
        try:
            folder = install(line, lambda text: print(f"{PROG}: {text}", flush=True))
        except KafkaSetupError as error:
            return _fail(EXIT_USAGE, str(error))
        print(f"{PROG}: Kafka {line}: {folder}", flush=True)
    return EXIT_OK


def _announce(broker: KafkaBroker, temporary: bool) -> None:
    """The listening line (scripts and tests read its last word), then what to know."""
    print(f"{PROG}: {broker.title} listening on {broker.bootstrap}")
    rss = _rss_mib(broker.pid)
    memory = f"; broker JVM resident memory {rss} MiB" if rss is not None else ""
    times = broker.startup
    print(
        f"  storage formatted after {times.formatted_s:.1f} s, first request answered after "
        f"{times.answered_s:.1f} s, ready for groups after {times.ready_s:.1f} s{memory}"
    )
    removed = " (removed at exit)" if temporary else ""
    print(f"  data directory {broker.data_dir}{removed}; log {broker.log_path}")
    settings = broker.header_settings()
    print("  coordinator settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    record = [
        "groupspec", "record", "--listen", f"{HOST}:19092", "--upstream", broker.bootstrap,
        "--advertise-self", "--out", "trace.jsonl", "--source", broker.describe(),
    ]  # fmt: skip
    record += [part for k, v in settings.items() for part in ("--coordinator-setting", f"{k}={v}")]
    print(f"  record it: {shlex.join(record)}")
    print("  Ctrl-C stops it", flush=True)


def _rss_mib(pid: int | None) -> int | None:
    """The resident memory of process `pid` in MiB, where /proc tells it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return None


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def _stop_signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt meanwhile, so that either stops the broker as
    Ctrl-C does (also where SIGINT was ignored, as in a shell's background job)."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _fail(code: int, message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    return code
