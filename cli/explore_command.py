"""`groupspec explore RESULT.json`: the trace explorer, one self-contained HTML page of a
recorded counterexample (diagrams/trace_explorer.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from groupspec.cli.arguments import output_file
from groupspec.cli.exit_codes import EXIT_OK, EXIT_USAGE
from groupspec.cli.output import write_atomically
from groupspec.cli.replay_command import check_documents
from groupspec.cli.run_titles import check_command_line, run_title
from groupspec.diagrams.trace_explorer import (
    RecordedViolationError,
    explorer_page,
    recorded_violations,
    replay_recorded,
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `explore` subcommand."""
    parser = commands.add_parser(
        "explore",
        help="write a counterexample of `check --json` as an HTML page to click through",
        description=(
            "Replay a counterexample recorded by `groupspec check --json` (or `swarm --json`) "
            "with the current code and write one self-contained HTML page: its sequence "
            "diagram, each step clickable, showing the state after it, what it changed and "
            "the steps the model enables there. Exit 0 when the page is written, 2 on bad "
            "input (a malformed file, no such violation, a trace the code cannot follow)."
        ),
    )
    parser.add_argument("file", type=Path, help="a JSON file written by `groupspec check --json`")
    parser.add_argument(
        "--out",
        type=output_file,
        metavar="FILE",
        help="the page to write (default: the JSON file's name with .html)",
    )
    parser.add_argument(
        "--violation",
        type=int,
        default=1,
        metavar="N",
        help="which recorded violation (default 1: safety violations first, then liveness)",
    )
    parser.set_defaults(run=run_explore)


def run_explore(args: argparse.Namespace) -> int:
    """Write the explorer page of one recorded violation."""
    out = args.out if args.out is not None else args.file.with_suffix(".html")
    try:
        if args.out is None:
            output_file(str(out))
        checks = check_documents(args.file)
        violations = [
            (document, number)
            for _, document in checks
            for number in range(1, len(recorded_violations(document)) + 1)
        ]
        if not 1 <= args.violation <= len(violations):
            raise RecordedViolationError(
                f"no violation {args.violation}: the file records {len(violations)}"
            )
        document, number = violations[args.violation - 1]
        recorded = replay_recorded(document, number)
    except (ValueError, argparse.ArgumentTypeError) as error:
        print(f"groupspec explore: {args.file}: {error}", file=sys.stderr)
        return EXIT_USAGE
    shown = recorded.shown
    note = ""
    if shown.kind in ("invariant", "action", "deadlock") and not recorded.details:
        note = "NOT reproduced: the property holds at the end of this trace with the current code"
        print(f"violation {args.violation}: {note}")
    title = run_title(document["preset"], document["overrides"])
    source = "found by: " + check_command_line(document["preset"], document["overrides"])
    page = explorer_page(shown, title=title, source=source, note=note)
    write_atomically(out, page)
    print(f"trace explorer: {out}")
    return EXIT_OK
