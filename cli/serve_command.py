"""`groupspec serve`: the optimized coordinator behind a Kafka wire-protocol listener."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
from typing import Any

from groupspec.cli.arguments import output_directory, port_number
from groupspec.cli.record_options import add_coordinator_setting_option, coordinator_settings
from groupspec.cli.service_runtime import configure_logging, until_stopped
from groupspec.impl.config import CoordinatorConfig
from groupspec.impl.kip848 import ConsumerGroupConfig
from groupspec.impl.server import ServeConfig, WireServer, parse_topics

LOGGER = logging.getLogger("groupspec.serve")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `serve` subcommand."""
    parser = commands.add_parser(
        "serve",
        help="run a Kafka-protocol broker with the optimized group coordinator",
        description=(
            "Listen for Kafka clients: consumer groups are served by groupspec's optimized "
            "coordinator, records by an in-memory partitioned log. See docs/serve.md."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=9092, help="port (default 9092; 0 = any free)"
    )
    parser.add_argument(
        "--advertised-host", help="host given to clients in Metadata (default: --host)"
    )
    parser.add_argument(
        "--advertised-port",
        type=port_number,
        help=(
            "port given to clients in Metadata and FindCoordinator (default: the bound port); "
            "point it at a recording proxy in front (groupspec record) so every connection "
            "goes through it"
        ),
    )
    parser.add_argument(
        "--data-dir",
        type=output_directory,
        help="keep __consumer_offsets in DIR (without it, groups and offsets are in memory only)",
    )
    parser.add_argument(
        "--topics", default="", help='topics to create at start, e.g. "t:6,u:3" (NAME:PARTITIONS)'
    )
    parser.add_argument(
        "--fsync-interval-ms",
        type=int,
        default=1000,
        help="fsync the offsets file at most this often (0 = after every append; default 1000)",
    )
    parser.add_argument(
        "--initial-rebalance-delay-ms",
        type=int,
        default=3000,
        help="group.initial.rebalance.delay.ms (default 3000, as Kafka)",
    )
    parser.add_argument(
        "--min-session-timeout-ms",
        type=int,
        default=6000,
        help="group.min.session.timeout.ms (default 6000, as Kafka)",
    )
    add_coordinator_setting_option(
        parser,
        "a coordinator setting in the specification's CoordinatorConfig names "
        "(group_max_size=2, offsets_retention_check_interval_ms=500, ...); repeatable; it "
        "overrides the two options above",
    )
    parser.add_argument(
        "--consumer-group-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a consumer-protocol (KIP-848) group setting in impl/kip848's ConsumerGroupConfig "
        "names: session_timeout_ms, heartbeat_interval_ms, max_size, assignment_interval_ms, "
        "regex_refresh_interval_ms, assignors (comma-separated, the first the default); "
        "repeatable (defaults: Kafka 4.3's)",
    )
    parser.add_argument(
        "--max-frame-bytes",
        type=int,
        default=100 * 1024 * 1024,
        help="largest request accepted; a longer frame closes its connection (default 100 MiB)",
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG logs every connection")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit 2 on bad arguments."""
    configure_logging(args.log_level)
    try:
        topics = parse_topics(args.topics)
        config = ServeConfig(
            host=args.host,
            port=args.port,
            advertised_host=args.advertised_host,
            advertised_port=args.advertised_port,
            data_dir=args.data_dir,
            topics=topics,
            fsync_interval_ms=args.fsync_interval_ms,
            max_frame_bytes=args.max_frame_bytes,
            coordinator=coordinator_config(args),
            consumer_groups=consumer_group_config(args.consumer_group_setting),
        )
    except ValueError as error:
        print(f"groupspec serve: {error}", file=sys.stderr)
        return 2
    if (
        args.fsync_interval_ms < 0
        or not 8 <= args.max_frame_bytes <= 2**31 - 1
        or (args.advertised_port is not None and not 1 <= args.advertised_port <= 65535)
    ):
        print(
            "groupspec serve: need --fsync-interval-ms ≥ 0, --max-frame-bytes in [8, 2^31), "
            "--advertised-port in [1, 65535]",
            file=sys.stderr,
        )
        return 2
    try:
        asyncio.run(_serve(config))
    except OSError as error:
        # Mostly an address taken or not ours to bind: bad input, not a finding (exit 1).
        print(f"groupspec serve: {error}", file=sys.stderr)
        return 2
    return 0


def coordinator_config(args: argparse.Namespace) -> CoordinatorConfig:
    """The coordinator's configuration from the options; ValueError names a setting that is not
    one or a value it cannot take."""
    settings: dict[str, Any] = {
        "group_initial_rebalance_delay_ms": args.initial_rebalance_delay_ms,
        "group_min_session_timeout_ms": args.min_session_timeout_ms,
    }
    settings.update(coordinator_settings(args.coordinator_setting))
    known = {field.name for field in dataclasses.fields(CoordinatorConfig)}
    for name in settings:
        if name not in known:
            raise ValueError(
                f"--coordinator-setting {name}: not a coordinator setting; known: "
                + ", ".join(sorted(known))
            )
    return CoordinatorConfig(**settings)


# The consumer-group settings a user may give (the topics come from the topic store).
CONSUMER_GROUP_SETTINGS = (
    "session_timeout_ms",
    "heartbeat_interval_ms",
    "max_size",
    "assignment_interval_ms",
    "regex_refresh_interval_ms",
    "assignors",
)


def consumer_group_config(pairs: list[str]) -> ConsumerGroupConfig:
    """The consumer-protocol groups' settings from `--consumer-group-setting` pairs;
    ValueError names a setting that is not one or a value it cannot take."""
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or key not in CONSUMER_GROUP_SETTINGS:
            raise ValueError(
                f"--consumer-group-setting {pair!r}: expected KEY=VALUE with KEY one of "
                + ", ".join(CONSUMER_GROUP_SETTINGS)
            )
        if key == "assignors":
            settings[key] = tuple(name.strip() for name in text.split(",") if name.strip())
        elif text.lstrip("-").isdigit():
            settings[key] = int(text)
        else:
            raise ValueError(f"--consumer-group-setting {pair!r}: {key} takes an integer")
    return ConsumerGroupConfig(**settings)


async def _serve(config: ServeConfig) -> None:
    server = WireServer(config)
    await server.start()
    # The line tests and scripts wait for (with the real port when --port 0).
    LOGGER.info("listening on %s:%d", config.host, server.port)
    print(f"groupspec serve: listening on {config.host}:{server.port}", flush=True)
    try:
        await until_stopped()
    finally:
        await server.close()
