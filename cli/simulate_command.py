"""`groupspec simulate`: seeded random walks over model worlds, checking every property."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groupspec.checker.spark.session import SparkError
from groupspec.checker.walk import WalkReport, random_walks
from groupspec.cli.engine_options import add_engine_options
from groupspec.cli.model_header import header_lines
from groupspec.cli.output import ProgressLine, add_json_option, write_json
from groupspec.models.parameters import ParameterError, parse_set_options
from groupspec.models.preset_models import (
    LoadedModel,
    ModelLoadError,
    load_model,
    random_clients_preset_names,
)
from groupspec.spec.rules import DEFENSIVE_RULE_IDS, REACHABLE_RULE_IDS
from groupspec.verify.engines import IN_PROCESS, SPARK, spark_walks


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `simulate` subcommand."""
    parser = commands.add_parser(
        "simulate",
        help="random walks over the specification, checking every invariant (reproducible by seed)",
        description=(
            "Walk each preset at random, choosing among enabled actions and among the outcomes "
            "the specification allows, and check every invariant and action property at every step. "
            "Without a preset, the random-clients worlds "
            f"({', '.join(random_clients_preset_names())})."
        ),
    )
    parser.add_argument(
        "presets",
        nargs="*",
        metavar="PRESET",
        help="presets to walk (see `groupspec check`); without one, the random-clients worlds",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a preset parameter (repeatable)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--runs", type=int, default=10, help="walks per world (default 10)")
    parser.add_argument("--steps", type=int, default=400, help="steps per walk (default 400)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="collect every violation instead of stopping at the first",
    )
    add_json_option(parser, "the result")
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
    if args.master is not None and args.engine != SPARK:
        print("groupspec simulate: --master is an option of --engine spark", file=sys.stderr)
        return 2
    return walk_presets(args)


def walk_presets(args: argparse.Namespace) -> int:
    """Random walks over model presets; exit 1 on a violation, 2 on bad input."""
    try:
        overrides = parse_set_options(args.overrides)
    except ParameterError as error:
        print(f"groupspec simulate: --set {error}", file=sys.stderr)
        return 2
    models = []
    for preset in args.presets or random_clients_preset_names():
        try:
            models.append(load_model(preset, overrides))
        except ModelLoadError as error:
            print(f"groupspec simulate: {error}", file=sys.stderr)
            return 2
    if args.engine == SPARK:
        try:
            reports = spark_walks(
                models,
                args.master,
                seed=args.seed,
                runs=args.runs,
                steps=args.steps,
                stop_at_first=not args.all,
            )
        except SparkError as error:
            print(f"groupspec simulate: {error}", file=sys.stderr)
            return 2
    else:
        reports = [_walk(loaded, args) for loaded in models]
    documents: dict[str, Any] = {}
    failed = False
    for loaded, report in zip(models, reports, strict=True):
        rate = report.steps / report.elapsed_s if report.elapsed_s > 0 else 0.0
        verdict = f"{len(report.violations)} violation(s)" if report.violations else "ok"
        if loaded.overrides:
            # What was walked is not the preset as shipped: say how it differs.
            for header_line in header_lines(loaded):
                print(header_line)
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
    print(_coverage_line(reports))
    if args.json is not None:
        result = {"seed": args.seed, "verdict": "fail" if failed else "pass", "presets": documents}
        write_json(args, result)
    return 1 if failed else 0


def _coverage_line(reports: list[WalkReport]) -> str:
    """How many of the coordinator's rules the walks fired, all presets together."""
    fired = {rule for report in reports for rule in report.rule_counts}
    reachable = REACHABLE_RULE_IDS
    return (
        f"coordinator rules fired: {len(fired & reachable)}/{len(reachable)} "
        f"(plus {len(fired & DEFENSIVE_RULE_IDS)}/{len(DEFENSIVE_RULE_IDS)} defensive)"
    )


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
