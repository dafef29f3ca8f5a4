"""`groupspec assignors`: the scenario suite under our assignors and kafka-python's, side by side."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from groupspec.cli.output import add_json_option, write_json
from groupspec.oracle.assignor.assignor_scenarios import (
    SCENARIO_NAMES,
    ScenarioResult,
    run_suite,
    scenario_named,
)
from groupspec.oracle.assignor.kafka_python import KafkaPythonMissingError, kafka_python_assignors
from groupspec.spec.assignors.base import Assignor
from groupspec.spec.assignors.registry import ASSIGNORS

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
_DETAILS_PER_ROW = 3  # findings printed per (scenario, assignor) under the table; --json has all


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `assignors` subcommand."""
    parser = commands.add_parser(
        "assignors",
        help="run the assignor scenario suite: balance, moves, optimal moves, property violations",
        description=(
            "Run every scenario of the assignor suite under our four assignors and, when "
            "kafka-python is installed, its four beside them. For each pair print the spread "
            "(max − min partitions per member), the sticky isBalanced flag, partition moves against "
            "the ownership before the change, the fewest moves any valid balanced assignment needs "
            "(z3), the gap, the rebalance rounds and the property violations. Exit 1 if one of OUR "
            "assignors violates a property; third-party violations are findings, not failures. "
            f"Scenarios: {', '.join(SCENARIO_NAMES)}."
        ),
    )
    add_json_option(parser, "the results")
    third_party = parser.add_mutually_exclusive_group()
    third_party.add_argument("--no-third-party", action="store_true", help="run our assignors only")
    third_party.add_argument(
        "--require-third-party",
        action="store_true",
        help="fail (exit 2) instead of skipping kafka-python's assignors when it is not installed",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        metavar="NAME",
        help=f"a scenario to run (repeatable; default: all of {', '.join(SCENARIO_NAMES)})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the suite; exit 0, 1 if one of our assignors violates a property, 2 on bad input."""
    try:
        scenarios = [scenario_named(name) for name in args.scenario or SCENARIO_NAMES]
    except KeyError as error:
        print(f"groupspec assignors: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    ours: list[Assignor] = list(ASSIGNORS.values())
    theirs: list[Assignor] = []
    note = None
    if not args.no_third_party:
        try:
            theirs = list(kafka_python_assignors())
        except KafkaPythonMissingError as error:
            if args.require_third_party:
                print(f"groupspec assignors: {error}", file=sys.stderr)
                return EXIT_USAGE
            note = f"note: {error}; showing groupspec's assignors only"
            print(note, file=sys.stderr)
    results = run_suite([*ours, *theirs], scenarios)
    our_names = {assignor.name for assignor in ours}
    failed = any(result.findings for result in results if result.assignor in our_names)
    _print_table(results, our_names)
    if args.json is not None:
        write_json(args, _as_json(results, our_names, note, failed))
    return EXIT_VIOLATION if failed else EXIT_OK


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return str(value)


def table_rows(results: Sequence[ScenarioResult]) -> list[list[str]]:
    """The table body: one row of cells per (scenario, assignor)."""
    return [
        [
            result.scenario,
            result.assignor,
            result.protocol.name.lower(),
            _cell(result.rounds),
            _cell(result.spread),
            _cell(result.balanced),
            _cell(result.moves),
            _cell(result.optimal_moves),
            _cell(result.gap),
            _cell(len(result.findings)),
        ]
        for result in results
    ]


HEADER = [
    "scenario",
    "assignor",
    "protocol",
    "rounds",
    "spread",
    "balanced",
    "moves",
    "optimal",
    "gap",
    "violations",
]


def _print_table(results: Sequence[ScenarioResult], our_names: set[str]) -> None:
    rows = table_rows(results)
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]
    numeric = set(range(3, len(HEADER)))

    def line(cells: list[str]) -> str:
        return "  ".join(
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    print(line(HEADER))
    previous_scenario = None
    for result, row in zip(results, rows, strict=True):
        if previous_scenario is not None and result.scenario != previous_scenario:
            print()
        previous_scenario = result.scenario
        print(line(row))
    findings = [result for result in results if result.findings]
    if findings:
        print()
        print("violations (ours fail the run; third-party ones are findings):")
    for result in findings:
        kind = "VIOLATION" if result.assignor in our_names else "finding"
        for finding in result.findings[:_DETAILS_PER_ROW]:
            print(
                f"  {kind} {result.scenario} / {result.assignor} ({finding.round}): "
                f"{finding.property}: {finding.detail}"
            )
        if len(result.findings) > _DETAILS_PER_ROW:
            print(f"    … and {len(result.findings) - _DETAILS_PER_ROW} more")


def _as_json(
    results: Sequence[ScenarioResult], our_names: set[str], note: str | None, failed: bool
) -> dict[str, Any]:
    return {
        "verdict": "violation" if failed else "pass",
        "note": note,
        "scenarios": list(dict.fromkeys(result.scenario for result in results)),
        "assignors": list(dict.fromkeys(result.assignor for result in results)),
        "results": [
            {
                "scenario": r.scenario,
                "assignor": r.assignor,
                "ours": r.assignor in our_names,
                "protocol": r.protocol.name.lower(),
                "rounds": r.rounds,
                "converged": r.converged,
                "spread": r.spread,
                "balanced": r.balanced,
                "moves": r.moves,
                "optimal_moves": r.optimal_moves,
                "gap": r.gap,
                "violations": [
                    {"property": f.property, "detail": f.detail, "round": f.round}
                    for f in r.findings
                ],
                "assignment": None
                if r.assignment is None
                else {
                    member_id: [str(tp) for tp in partitions]
                    for member_id, partitions in r.assignment.assignments
                },
            }
            for r in results
        ],
    }
