"""`groupspec ci`: the broker-conformance job of docs/ci/broker-conformance.yml in one command.

It runs, in this order, the commands a user would type: `groupspec workload` (real clients
through the recorder), `groupspec probe` (scripted exchanges through the recorder) and
`groupspec validate` over every trace they left, with the user's baseline and validate options.
Each is parsed before anything runs (bad input exits 2 before a broker is touched), printed as
a shell line, and run in this process by the command's own module, through a parser of just
those three commands (`cli/main.py` builds the whole program, this command included, so it is
not entered again); `commands.sh` in the output folder lists them, so a failing CI run can be
reproduced by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from groupspec.cli.arguments import CommandParser, output_directory
from groupspec.cli.output import json_stdout, write_atomically
from groupspec.record.workload.client_scenarios import SCENARIOS
from groupspec.record.workload.probes import PROBES
from groupspec.record.workload.probes_consumer_all import ALL_CONSUMER_PROBES

from . import ci_report, probe_command, validate_command, workload_command
from .workload_command import CLIENTS

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
TRACE_GLOB = "*.jsonl"
# The target whose broker serves the consumer protocol (KIP-848): the consumer-protocol probes
# run against it too (`groupspec probe --consumer-protocol`).
CONSUMER_PROTOCOL_TARGET = "kafka"
TRACES, REPORT_TEXT, REPORT_JSON, COMMANDS = "traces", "report.txt", "report.json", "commands.sh"
REPORT_HTML = "report.html"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `ci` subcommand."""
    parser = commands.add_parser(
        "ci",
        help="the broker-conformance CI job: workloads, probes, validation, a report",
        description=(
            "Judge a broker as its CI would (docs/oracle.md, 'In a broker's own CI'): run the "
            "real-client workloads and the probes against --target through the recorder (with "
            "--target kafka the consumer-protocol probes too, on a Kafka 4.x broker of their "
            "own), "
            "validate every trace, and write the traces, report.txt (a table of every kind of "
            "divergence across the traces, then each trace's report), report.html (the table, "
            "each kind's first example with a sequence diagram), report.json and commands.sh "
            "(the commands run) to --out. Options after `--` go to `groupspec "
            "validate` (--tolerate, --profile, --set, ...). Exit 0 when nothing new diverged, "
            "1 on a divergence the --baseline does not accept or a workload or probe that did "
            "not finish, 2 on bad input, 3 when a trace was too ambiguous to decide."
        ),
    )
    parser.add_argument(
        "--target",
        required=True,
        help=(
            "HOST:PORT of the broker, serve, mock, or kafka / kafka-3.9 (Apache Kafka's own "
            "broker, started for each workload and per group of probe settings: docs/kafka.md)"
        ),
    )
    parser.add_argument(
        "--out",
        required=True,
        type=output_directory,
        metavar="DIR",
        help="where the traces, report.txt, report.html, report.json and commands.sh go",
    )
    parser.add_argument("--client", choices=[*CLIENTS, "all"], default="all")
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--no-workloads", action="store_true", help="run the probes only")
    parser.add_argument(
        "--probe",
        action="append",
        choices=sorted([*PROBES, *ALL_CONSUMER_PROBES]),
        help="a probe to run (default: all; the consumer-protocol cg-* ones with --target "
        f"{CONSUMER_PROTOCOL_TARGET} only)",
    )
    parser.add_argument("--no-probes", action="store_true", help="run the workloads only")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="the kinds of divergence accepted (validate --baseline); without it any fails",
    )
    parser.add_argument(
        "validate_options",
        nargs=argparse.REMAINDER,
        metavar="-- VALIDATE-OPTION",
        help="options for groupspec validate",
    )
    parser.set_defaults(run=run)


def job_commands(args: argparse.Namespace) -> list[list[str]]:
    """The groupspec commands (argument lists, without `groupspec`) the job runs, in order;
    the last validates `traces/*.jsonl`, expanded when it runs."""
    traces = str(args.out / TRACES)
    found: list[list[str]] = []
    if not args.no_workloads:
        found.append(
            [
                "workload",
                "--target",
                args.target,
                "--trace-dir",
                traces,
                "--client",
                args.client,
                "--scenario",
                args.scenario,
            ]
        )
    if not args.no_probes:
        chosen = args.probe or []
        classic = [part for name in chosen if name in PROBES for part in ("--probe", name)]
        consumer = [part for n in chosen if n in ALL_CONSUMER_PROBES for part in ("--probe", n)]
        if classic or not chosen:
            found.append(["probe", "--target", args.target, "--trace-dir", traces, *classic])
        if args.target == CONSUMER_PROTOCOL_TARGET and (consumer or not chosen):
            found.append(
                [
                    "probe",
                    "--target",
                    args.target,
                    "--consumer-protocol",
                    "--trace-dir",
                    traces,
                    *consumer,
                ]
            )
    validate = ["validate", f"{traces}/{TRACE_GLOB}", "--json", str(args.out / REPORT_JSON)]
    if args.baseline is not None:
        validate += ["--baseline", str(args.baseline)]
    options = list(args.validate_options)
    validate += options[1:] if options[:1] == ["--"] else options
    found.append(validate)
    return found


def shell_line(command: list[str]) -> str:
    """`command` as a line of sh, the traces' glob left for the shell to expand."""
    parts = ["groupspec"]
    for part in command:
        folder, glob, rest = part.rpartition("/" + TRACE_GLOB)
        is_glob = glob and not rest
        parts.append(f"{shlex.quote(folder)}/{TRACE_GLOB}" if is_glob else shlex.quote(part))
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    """Run the job; the worst exit code of its commands (see the description)."""
    if args.no_workloads and args.no_probes:
        return _usage("--no-workloads and --no-probes leave nothing to validate")
    consumer = sorted(name for name in args.probe or () if name in ALL_CONSUMER_PROBES)
    if consumer and args.target != CONSUMER_PROTOCOL_TARGET:
        return _usage(
            f"--probe {consumer[0]}: the consumer-protocol probes need --target "
            f"{CONSUMER_PROTOCOL_TARGET}"
        )
    commands = job_commands(args)
    (args.out / TRACES).mkdir(parents=True, exist_ok=True)  # validate's --json needs it
    parser = _job_parser()
    for command in commands:
        try:
            # Parsed and read now, so that a bad option fails before the broker is touched.
            with contextlib.redirect_stdout(sys.stderr):
                parsed = parser.parse_args(command)
            if parsed.command == "validate":
                validate_command.options(parsed)
        except SystemExit as refused:
            return int(refused.code or EXIT_USAGE)
        except validate_command.OPTION_ERRORS as error:
            return _usage(f"validate: {error}")
    lines = ["#!/bin/sh"] + [shell_line(command) for command in commands]
    write_atomically(args.out / COMMANDS, "\n".join(lines) + "\n")
    failed = False
    for command in commands[:-1]:
        print(f"$ {shell_line(command)}", flush=True)
        code = _run_command(parser, command)
        if code == EXIT_USAGE:
            return EXIT_USAGE
        failed = failed or code != EXIT_OK
    validate = commands[-1]
    traces = sorted(str(path) for path in (args.out / TRACES).glob(TRACE_GLOB))
    if not traces:
        return _usage(f"no traces in {args.out / TRACES}: nothing to validate")
    print(f"$ {shell_line(validate)}", flush=True)
    details = io.StringIO()
    with _tee(details):
        code = _run_command(parser, [validate[0], *traces, *validate[2:]])
    summary = ci_report.write_reports(
        args.out / REPORT_JSON,
        details.getvalue(),
        args.out / REPORT_TEXT,
        args.out / REPORT_HTML,
        f"groupspec ci: {args.target}",
    )
    print("\n".join(summary) + f"(the top of {args.out / REPORT_TEXT}; also {REPORT_HTML})")
    if failed:
        print("groupspec ci: a workload or probe did not finish (see above)", file=sys.stderr)
        code = code or EXIT_FAILED
    return code


def _job_parser() -> argparse.ArgumentParser:
    """A `groupspec` parser of just the commands the job runs."""
    parser = CommandParser(prog="groupspec")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (workload_command, probe_command, validate_command):
        module.register(commands)
    return parser


def _run_command(parser: argparse.ArgumentParser, command: list[str]) -> int:
    """Run one of the job's commands (already parsed once, so it parses) as `groupspec` would."""
    try:
        parsed = parser.parse_args(command)
    except SystemExit as refused:
        return int(refused.code or EXIT_USAGE)
    with json_stdout(parsed):
        return int(parsed.run(parsed))


class _Tee:
    """Writes go to both streams."""

    def __init__(self, first: TextIO, second: TextIO) -> None:
        self.first, self.second = first, second

    def write(self, text: str) -> int:
        self.second.write(text)
        return self.first.write(text)

    def flush(self) -> None:
        self.first.flush()
        self.second.flush()


@contextlib.contextmanager
def _tee(report: TextIO) -> Iterator[None]:
    """Standard output copied into `report` meanwhile."""
    with contextlib.redirect_stdout(_Tee(sys.stdout, report)):
        yield


def _usage(message: str) -> int:
    print(f"groupspec ci: {message}", file=sys.stderr)
    return EXIT_USAGE
