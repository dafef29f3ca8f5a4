"""`groupspec record`: a recording proxy in front of any Kafka broker (docs/record.md)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from groupspec.cli.arguments import output_file
from groupspec.cli.record_options import (
    add_coordinator_setting_option,
    coordinator_settings,
    format_counts,
)
from groupspec.cli.service_runtime import configure_logging, until_stopped
from groupspec.record.proxy import ProxyConfig, RecordingProxy
from groupspec.record.recording import TraceSink
from groupspec.wire.address import Address
from groupspec.wire.reachability import NotABrokerError, probe_broker
from groupspec.wire.trace_format import TraceHeader, TraceWriter

EXIT_OK, EXIT_USAGE = 0, 2


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `record` subcommand."""
    parser = commands.add_parser(
        "record",
        help="forward Kafka traffic to a broker and record its group APIs as a trace",
        description=(
            "Listen for Kafka clients, forward every byte to the upstream broker and back "
            "unchanged, and write the group APIs' requests and responses (JoinGroup, SyncGroup, "
            "Heartbeat, OffsetCommit, ...) to a trace (JSON Lines) for `groupspec validate`. "
            "Point clients at --listen, and the broker's advertised address at it too (or use "
            "--advertise-self). Runs until SIGINT or SIGTERM. See docs/record.md."
        ),
    )
    parser.add_argument(
        "--listen", required=True, help="HOST:PORT to accept clients on (port 0: any)"
    )
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the broker to record")
    parser.add_argument("--out", required=True, type=output_file, help="the trace file (replaced)")
    parser.add_argument(
        "--advertise-self",
        action="store_true",
        help=(
            "rewrite the broker address in Metadata and FindCoordinator responses to --listen, "
            "for a broker that cannot be told to advertise the recorder (those two responses "
            "are re-encoded; every other byte is forwarded unchanged)"
        ),
    )
    parser.add_argument(
        "--source", help="what the trace header's source says (default: the upstream address)"
    )
    add_coordinator_setting_option(parser)
    parser.add_argument("--log-level", default="INFO", help="DEBUG logs every connection")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Record until interrupted; exit 2 on bad arguments or an upstream that is not a broker."""
    configure_logging(args.log_level)
    try:
        listen = Address.parse(args.listen, allow_port_zero=True)
        upstream = Address.parse(args.upstream)
        settings = coordinator_settings(args.coordinator_setting)
    except ValueError as error:
        return _usage(str(error))
    if args.advertise_self and listen.host in ("0.0.0.0", "::", ""):
        return _usage(
            "--advertise-self needs a --listen host clients can connect to, not a wildcard"
        )
    try:
        asyncio.run(probe_broker(upstream))
    except NotABrokerError as error:
        return _usage(f"upstream: {error}")
    header = TraceHeader(args.source or f"upstream {upstream}", settings)
    try:
        out = args.out.open("w", encoding="utf-8")
    except OSError as error:
        return _usage(f"cannot write the trace: {error}")
    with out:
        sink = TraceSink(TraceWriter(out, header))
        config = ProxyConfig(listen, upstream, advertise_self=args.advertise_self)
        try:
            connections = asyncio.run(_record(config, sink, args.out))
        except OSError as error:
            return _usage(f"cannot listen on {listen}: {error}")
    print(
        f"groupspec record: {sum(sink.counts.values())} events from {connections} connections "
        f"in {args.out}\n{format_counts(sink.counts)}",
        flush=True,
    )
    for what, count in sorted(sink.not_recorded.items()):
        print(f"  not recorded (undecodable): {what} × {count}", flush=True)
    for what, count in sorted(sink.undecodable.items()):
        print(f"  recorded as undecodable: {what} × {count}", flush=True)
    return EXIT_OK


async def _record(config: ProxyConfig, sink: TraceSink, out: Path) -> int:
    proxy = RecordingProxy(config, sink)
    await proxy.start()
    # The line scripts wait for (with the real port when the listen port is 0).
    print(
        f"groupspec record: listening on {config.listen.host}:{proxy.port}, "
        f"forwarding to {config.upstream}, trace {out}",
        flush=True,
    )
    try:
        await until_stopped()
    finally:
        await proxy.close()
    return proxy.connections


def _usage(message: str) -> int:
    print(f"groupspec record: {message}", file=sys.stderr)
    return EXIT_USAGE
