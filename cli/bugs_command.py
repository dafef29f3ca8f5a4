"""`groupspec bugs`: rediscover every historical bug of the catalog (`models/bugs.py`)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupspec.checker.bfs import Limits, search
from groupspec.checker.liveness import check_liveness
from groupspec.checker.model import liveness_properties
from groupspec.cli.output import write_atomically
from groupspec.models.bugs import BUGS, Bug
from groupspec.models.catalog import load_model

EXIT_OK, EXIT_MISSED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class BugRun:
    """What checking one catalog entry found."""

    bug: Bug
    failed: tuple[str, ...]
    states: int
    length: int
    seconds: float

    @property
    def found(self) -> bool:
        """Whether the expected property, and only it, failed."""
        return self.failed == (self.bug.property_name,)


def run_bug(bug: Bug, workers: int = 1) -> BugRun:
    """Check `bug`'s preset with its fault and bounds; which properties failed, and how."""
    started = time.perf_counter()
    loaded = load_model(bug.preset, bug.all_overrides())
    live = bool(liveness_properties(loaded.model))
    result = search(loaded.model, workers=workers, limits=Limits(), record_graph=live)
    failed = [found.problem.property_name for found in result.problems]
    lengths = [len(found.path) - 1 for found in result.problems]
    if live and not result.problems:
        for item in check_liveness(loaded.model, result):
            if item.verdict == "fail":
                failed.append(item.property_name)
                lengths += [len(v.path) - 1 for v in item.violations[:1]]
    return BugRun(
        bug,
        tuple(dict.fromkeys(failed)),
        result.distinct_states,
        lengths[0] if lengths else 0,
        time.perf_counter() - started,
    )


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `bugs` subcommand."""
    parser = commands.add_parser(
        "bugs",
        help="rediscover every historical bug of the catalog",
        description=(
            "Check every catalog entry (models/bugs.py) with its fault switched on. Exit 0 when "
            "each entry fails exactly its expected property, 1 otherwise."
        ),
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the table as JSON")
    parser.set_defaults(run=run_bugs)


def run_bugs(args: argparse.Namespace) -> int:
    """Run the catalog and print the table."""
    if args.workers < 1:
        print(f"groupspec bugs: --workers must be at least 1, got {args.workers}")
        return EXIT_USAGE
    header = f"{'bug':<14} {'property':<34} {'states':>8} {'length':>6} {'seconds':>8}  found"
    print(header)
    runs = []
    for bug in BUGS:
        run = run_bug(bug, args.workers)
        runs.append(run)
        verdict = "yes" if run.found else f"NO (failed: {', '.join(run.failed) or 'nothing'})"
        print(
            f"{bug.name:<14} {bug.property_name:<34} {run.states:>8,} {run.length:>6} "
            f"{run.seconds:>8.2f}  {verdict}"
        )
    if args.json is not None:
        write_atomically(args.json, json.dumps([_row(run) for run in runs], indent=2) + "\n")
    return EXIT_OK if all(run.found for run in runs) else EXIT_MISSED


def _row(run: BugRun) -> dict[str, Any]:
    bug = run.bug
    return {
        "bug": bug.name,
        "reference": bug.reference,
        "fault": bug.fault,
        "preset": bug.preset,
        "overrides": bug.all_overrides(),
        "expected_property": bug.property_name,
        "failed": list(run.failed),
        "found": run.found,
        "distinct_states": run.states,
        "counterexample_length": run.length,
        "expected_length": bug.counterexample_length,
        "seconds": round(run.seconds, 3),
    }
