"""`groupspec`: the command-line entry point. Each subcommand lives in its own module."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from groupspec.cli import kafka_command, record_command, serve_command, workload_command
from groupspec.cli.arguments import CommandParser
from groupspec.cli.exit_codes import EXIT_INTERRUPTED, EXIT_OK
from groupspec.cli.output import json_stdout

# Commands that start without importing the checker and z3 (servers and proxies start fast).
LIGHT_COMMANDS = {
    "serve": serve_command,
    "record": record_command,
    "workload": workload_command,
    "kafka": kafka_command,
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    # Imported here, not at the top: `groupspec serve` starts without the checker and z3.
    from groupspec.cli import (
        assignors_command,
        bench_command,
        bugs_command,
        campaign_command,
        check_command,
        ci_command,
        coverage_command,
        diagram_command,
        explore_command,
        invariants_command,
        mutation_command,
        partition_command,
        presets_command,
        probe_command,
        reference_command,
        replay_command,
        rules_command,
        simulate_command,
        swarm_command,
        validate_command,
        vectors_command,
    )

    parser = CommandParser(
        prog="groupspec",
        description="An executable, checked specification of Kafka's consumer group protocol.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    simulate_command.register(commands)
    rules_command.register(commands)
    invariants_command.register(commands)
    partition_command.register(commands)
    assignors_command.register(commands)
    check_command.register(commands)
    swarm_command.register(commands)
    coverage_command.register(commands)
    presets_command.register(commands)
    bugs_command.register(commands)
    replay_command.register(commands)
    explore_command.register(commands)
    bench_command.register(commands)
    mutation_command.register(commands)
    vectors_command.register(commands)
    diagram_command.register(commands)
    reference_command.register(commands, build_parser)
    for module in LIGHT_COMMANDS.values():
        module.register(commands)
    validate_command.register(commands)
    probe_command.register(commands)
    campaign_command.register(commands)
    ci_command.register(commands)
    return parser


def _light_parser(name: str) -> argparse.ArgumentParser:
    """A parser with just the light command `name` (see LIGHT_COMMANDS)."""
    parser = CommandParser(prog="groupspec")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    LIGHT_COMMANDS[name].register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `groupspec` with `argv`; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    light = argv[0] if argv and argv[0] in LIGHT_COMMANDS else None
    parser = _light_parser(light) if light is not None else build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:
        # argparse exits 2 on usage errors and 0 for --help; keep its code.
        return int(exit_request.code or 0)
    try:
        with json_stdout(args):
            return int(args.run(args))
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        # Commands that can say what they did so far (check) catch Ctrl-C themselves.
        print(f"groupspec {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def console_main() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
