"""`groupspec simulate`: seeded random walks over model worlds, checking every property."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groupspec.checker.walk import WalkReport, random_walks
from groupspec.cli.check_spark import (
    IN_PROCESS,
    SPARK,
    SparkRunError,
    add_engine_options,
    spark_walks,
)
from groupspec.cli.output import ProgressLine, write_atomically
from groupspec.models.catalog import LoadedModel, ModelLoadError, load_model
from groupspec.models.random_clients import PRESET_WORLDS, RandomClientsWorld
from groupspec.models.random_simulation import SimulationReport, simulate
from groupspec.spec.rules import DEFENSIVE_RULE_IDS, RULE_IDS


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the `simulate` subcommand."""
    parser = commands.add_parser(
        "simulate",
        help="random walks over the specification, checking every invariant (reproducible by seed)",
        description=(
            "Walk each model world at random, choosing among enabled actions and among the outcomes "
            "the specification allows, and check every invariant and action property at every step. "
            f"Worlds: {', '.join(PRESET_WORLDS)}."
        ),
    )
    parser.add_argument(
        "presets",
        nargs="*",
        metavar="PRESET",
        help="model presets to walk (see `groupspec check`); without one, the random-client worlds",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a preset parameter (repeatable)",
    )
    parser.add_argument(
        "--world",
        action="append",
        choices=sorted(PRESET_WORLDS),
        help="a world to run (repeatable; default: all)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--runs", type=int, default=10, help="walks per world (default 10)")
    parser.add_argument("--steps", type=int, default=400, help="steps per walk (default 400)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="collect every violation instead of stopping at the first",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_engine_options(
        parser,
        f"{IN_PROCESS} (default) or spark: walk presets on Spark executors (docs/spark.md)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the simulation; exit 0 if every property held, 1 if one failed, 2 on bad input."""
    if args.runs < 1 or args.steps < 1:
        print(
            f"groupspec simulate: --runs and --steps must be at least 1 (got {args.runs}, {args.steps})",
            file=sys.stderr,
        )
        return 2
    if args.json is not None and not args.json.parent.exists():
        print(
            f"groupspec simulate: --json: directory {args.json.parent} does not exist",
            file=sys.stderr,
        )
        return 2
    if args.engine == SPARK and not args.presets:
        print("groupspec simulate: --engine spark walks model presets; name one", file=sys.stderr)
        return 2
    if args.master is not None and args.engine != SPARK:
        print("groupspec simulate: --master is an option of --engine spark", file=sys.stderr)
        return 2
    if args.presets:
        return walk_presets(args)
    names = args.world or list(PRESET_WORLDS)
    reports: dict[str, SimulationReport] = {}
    for name in names:
        world = RandomClientsWorld(PRESET_WORLDS[name])

        def show(done: int, report: SimulationReport, name: str = name) -> None:
            if not args.quiet:
                print(
                    f"  {name}: run {done}/{args.runs}, {report.steps} steps, {report.distinct_states} distinct states",
                    file=sys.stderr,
                )

        reports[name] = simulate(
            world,
            seed=args.seed,
            runs=args.runs,
            steps=args.steps,
            stop_at_first=not args.all,
            progress=show,
        )
    _print_summary(reports)
    result = _as_json(reports, args)
    if args.json is not None:
        write_atomically(args.json, json.dumps(result, indent=2) + "\n")
    return 1 if result["verdict"] == "violation" else 0


def _print_summary(reports: dict[str, SimulationReport]) -> None:
    fired: set[str] = set()
    for name, report in reports.items():
        fired |= set(report.rules_fired)
        rate = report.steps / report.elapsed_s if report.elapsed_s > 0 else 0.0
        verdict = "ok" if not report.violations else f"{len(report.violations)} violation(s)"
        print(
            f"{name:16} {report.runs} runs  {report.steps:7} steps  {report.distinct_states:6} distinct states  "
            f"{len(report.rules_fired):3} rules  {rate:8.0f} steps/s  {verdict}"
        )
        for violation in report.violations[:5]:
            print(f"  VIOLATION {violation.property_name}: {violation.detail}")
            print(
                f"    seed {report.seed}, run {violation.run}, step {violation.step}; last actions:"
            )
            for index, label in enumerate(
                violation.trace[-12:], start=max(1, len(violation.trace) - 11)
            ):
                print(f"      {index:4}. {label}")
    reachable = RULE_IDS - DEFENSIVE_RULE_IDS
    print(
        f"rules covered: {len(fired & reachable)}/{len(reachable)} "
        f"(plus {len(fired & DEFENSIVE_RULE_IDS)}/{len(DEFENSIVE_RULE_IDS)} defensive)"
    )
    missing = sorted(reachable - fired)
    if missing:
        print("never fired: " + ", ".join(missing))


def _as_json(reports: dict[str, SimulationReport], args: argparse.Namespace) -> dict[str, Any]:
    violations = [
        {
            "world": name,
            "property": v.property_name,
            "detail": v.detail,
            "run": v.run,
            "step": v.step,
            "trace": list(v.trace),
        }
        for name, report in reports.items()
        for v in report.violations
    ]
    fired: dict[str, int] = {}
    for report in reports.values():
        for rule, count in report.rules_fired.items():
            fired[rule] = fired.get(rule, 0) + count
    return {
        "verdict": "violation" if violations else "pass",
        "seed": args.seed,
        "runs": args.runs,
        "steps_per_run": args.steps,
        "worlds": {
            name: {
                "steps": r.steps,
                "distinct_states": r.distinct_states,
                "elapsed_s": round(r.elapsed_s, 3),
            }
            for name, r in reports.items()
        },
        "violations": violations,
        "coverage": {
            "rules_fired": dict(sorted(fired.items())),
            "never_fired": sorted(RULE_IDS - set(fired)),
        },
    }


def walk_presets(args: argparse.Namespace) -> int:
    """Random walks over model presets; exit 1 on a violation, 2 on bad input."""
    overrides: dict[str, str] = {}
    for option in args.overrides:
        key, separator, value = option.partition("=")
        if not separator or not key.strip():
            print(f"groupspec simulate: --set {option!r}: expected NAME=VALUE", file=sys.stderr)
            return 2
        overrides[key.strip()] = value
    models = []
    for preset in args.presets:
        try:
            models.append(load_model(preset, overrides))
        except ModelLoadError as error:
            print(f"groupspec simulate: {error}", file=sys.stderr)
            return 2
    if args.engine == SPARK:
        try:
            reports = spark_walks(models, args)
        except SparkRunError as error:
            print(f"groupspec simulate: {error}", file=sys.stderr)
            return 2
    else:
        reports = [_walk(loaded, args) for loaded in models]
    documents: dict[str, Any] = {}
    failed = False
    for loaded, report in zip(models, reports, strict=True):
        rate = report.steps / report.elapsed_s if report.elapsed_s > 0 else 0.0
        verdict = f"{len(report.violations)} violation(s)" if report.violations else "ok"
        print(
            f"{loaded.preset:16} {report.runs} walks  {report.steps:7} steps  "
            f"{report.distinct_states:7} distinct states  {rate:8.0f} steps/s  {verdict}"
        )
        for violation in report.violations[:5]:
            failed = True
            print(f"  {violation.kind} {violation.property_name} violated: {violation.detail}")
            print(f"    seed {args.seed}, walk {violation.run + 1}; steps:")
            for number, label in enumerate(violation.trace, start=1):
                print(f"    {number:4}. {label}")
        documents[loaded.preset] = {
            "preset_file": str(loaded.path),
            "overrides": dict(loaded.overrides),
            "walks": report.runs,
            "steps": report.steps,
            "distinct_states": report.distinct_states,
            "elapsed_s": round(report.elapsed_s, 3),
            "actions": dict(sorted(report.action_counts.items())),
            "rules": dict(sorted(report.rule_counts.items())),
            "violations": [
                {
                    "kind": v.kind,
                    "property": v.property_name,
                    "detail": v.detail,
                    "walk": v.run + 1,
                    "trace": [{"step": n, "label": label} for n, label in enumerate(v.trace, 1)],
                }
                for v in report.violations
            ],
        }
    if args.json is not None:
        result = {"seed": args.seed, "verdict": "fail" if failed else "pass", "presets": documents}
        write_atomically(args.json, json.dumps(result, indent=2) + "\n")
    return 1 if failed else 0


def _walk(loaded: LoadedModel, args: argparse.Namespace) -> WalkReport:
    line = ProgressLine()

    def show(report: WalkReport) -> None:
        if not args.quiet:
            line.update(f"{loaded.preset}: walk {report.runs}/{args.runs}, {report.steps} steps")

    try:
        return random_walks(
            loaded.model,
            seed=args.seed,
            runs=args.runs,
            steps=args.steps,
            stop_at_first=not args.all,
            progress=show,
        )
    finally:
        line.close()
