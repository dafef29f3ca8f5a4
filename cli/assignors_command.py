"""`groupspec assignors`: the scenario suite under our assignors, kafka-python's and any named with
`--assignor MODULE:ATTRIBUTE`, side by side, on the fixed scenarios and on seeded random groups."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from groupspec.cli.output import add_json_option, write_json
from groupspec.oracle.assignor.assignor_reference import AssignorReferenceError, load_assignors
from groupspec.oracle.assignor.assignor_scenarios import (
    SCENARIO_NAMES,
    Scenario,
    ScenarioResult,
    run_suite,
    scenario_named,
)
from groupspec.oracle.assignor.kafka_python import KafkaPythonMissingError, kafka_python_assignors
from groupspec.oracle.assignor.random_groups import random_scenarios
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
            "kafka-python is installed, its four beside them, plus any assignor named with "
            "--assignor, on the fixed scenarios and on --random N seeded random groups. For each "
            "pair print the spread "
            "(max − min partitions per member), the sticky isBalanced flag, partition moves against "
            "the ownership before the change, the fewest moves any valid balanced assignment needs "
            "(HiGHS), the gap, the rebalance rounds and the property violations; random groups are "
            "summarised per assignor. Exit 1 if one of OUR "
            "assignors violates a property; third-party violations are findings, not failures. "
            f"Scenarios: {', '.join(SCENARIO_NAMES)}."
        ),
    )
    add_json_option(parser, "the results")
    third_party = parser.add_mutually_exclusive_group()
    third_party.add_argument(
        "--no-third-party",
        action="store_true",
        help="leave kafka-python's assignors out (those named with --assignor still run)",
    )
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
    parser.add_argument(
        "--assignor",
        action="append",
        default=[],
        metavar="MODULE:ATTRIBUTE",
        help="also judge this installed assignor, or every assignor this zero-argument factory "
        "returns (repeatable; contract in docs/assignors.md), e.g. "
        "groupspec.oracle.assignor.aiokafka_assignors:aiokafka_assignors",
    )
    parser.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="also run N seeded random groups with a history (default 0)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="the first random group's seed (default 0)"
    )
    parser.set_defaults(run=run)


# The clients' assignors log warnings about inputs the scenarios feed them on purpose (two
# members claiming one partition, unparsable user data); findings report what matters.
_CLIENT_LOGGERS = ("kafka", "aiokafka")


@contextlib.contextmanager
def _quiet_client_loggers() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _CLIENT_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _usage_error(message: str) -> int:
    print(f"groupspec assignors: {message}", file=sys.stderr)
    return EXIT_USAGE


def _named_assignors(references: Sequence[str], taken: set[str]) -> list[Assignor]:
    """The assignors `--assignor` names; AssignorReferenceError on a bad one or a name clash."""
    named: list[Assignor] = []
    for reference in references:
        for assignor in load_assignors(reference):
            if assignor.name in taken:
                raise AssignorReferenceError(
                    f"--assignor {reference!r}: an assignor named {assignor.name!r} is already "
                    "in the run; give yours another name"
                )
            taken.add(assignor.name)
            named.append(assignor)
    return named


def run(args: argparse.Namespace) -> int:
    """Run the suite; exit 0, 1 if one of our assignors violates a property, 2 on bad input."""
    if args.random < 0:
        return _usage_error(f"--random must be ≥ 0, got {args.random}")
    try:
        scenarios: list[Scenario] = [
            scenario_named(name) for name in args.scenario or SCENARIO_NAMES
        ]
    except KeyError as error:
        return _usage_error(error.args[0])
    ours: list[Assignor] = list(ASSIGNORS.values())
    theirs: list[Assignor] = []
    note = None
    if not args.no_third_party:
        try:
            theirs = list(kafka_python_assignors())
        except KafkaPythonMissingError as error:
            if args.require_third_party:
                return _usage_error(str(error))
            note = f"note: {error}; showing groupspec's assignors only"
            print(note, file=sys.stderr)
    try:
        theirs += _named_assignors(args.assignor, {a.name for a in (*ours, *theirs)})
    except AssignorReferenceError as error:
        return _usage_error(str(error))
    randoms = random_scenarios(args.random, args.seed)
    with _quiet_client_loggers():
        results = run_suite([*ours, *theirs], [*scenarios, *randoms])
    our_names = {assignor.name for assignor in ours}
    failed = any(result.findings for result in results if result.assignor in our_names)
    random_names = {scenario.name for scenario in randoms}
    fixed = [r for r in results if r.scenario not in random_names]
    if fixed:
        _print_table(fixed, our_names)
    if randoms:
        if fixed:
            print()
        _print_random_summary([r for r in results if r.scenario in random_names], our_names, args)
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


def _print_random_summary(
    results: Sequence[ScenarioResult], our_names: set[str], args: argparse.Namespace
) -> None:
    last = args.seed + args.random - 1
    print(
        f"random groups: {args.random} (seeds {args.seed}…{last}; `--random 1 --seed K` reruns seed K)"
    )
    header = [
        "assignor",
        "groups",
        "violating",
        "crashed",
        "moves",
        "optimal",
        "properties violated",
    ]
    rows = []
    for name in dict.fromkeys(r.assignor for r in results):
        mine = [r for r in results if r.assignor == name]
        violated: dict[str, int] = {}
        for result in mine:
            for prop in sorted({f.property for f in result.findings}):
                violated[prop] = violated.get(prop, 0) + 1
        measured = [r for r in mine if r.moves is not None and r.optimal_moves is not None]
        rows.append(
            [
                name,
                str(len(mine)),
                str(sum(1 for r in mine if r.findings)),
                str(sum(1 for r in mine if r.moves is None)),
                str(sum(r.moves or 0 for r in measured)),
                str(sum(r.optimal_moves or 0 for r in measured)),
                ", ".join(f"{prop} ×{count}" for prop, count in violated.items()) or "-",
            ]
        )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for cells in [header, *rows]:
        print(
            "  ".join(
                cell.rjust(width) if 0 < i < len(header) - 1 else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()
        )
    firsts: dict[str, ScenarioResult] = {}
    for name in dict.fromkeys(r.assignor for r in results):
        first = next((r for r in results if r.assignor == name and r.findings), None)
        if first is not None:
            firsts[name] = first
    if firsts:
        print()
        print("first violation per assignor (ours fail the run; third-party ones are findings):")
    for name, result in firsts.items():
        kind = "VIOLATION" if name in our_names else "finding"
        finding = result.findings[0]
        print(
            f"  {kind} {result.scenario} / {name} ({finding.round}): "
            f"{finding.property}: {finding.detail}"
        )


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
