"""`groupspec swarm [SPACE]`: swarm verification, many small exhaustive checks drawn from a space."""

from __future__ import annotations

import argparse
import sys
import time

from groupspec.checker.spark.session import DEFAULT_MASTER, SparkError
from groupspec.cli.arguments import WorkerCount
from groupspec.cli.exit_codes import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VIOLATION,
)
from groupspec.cli.output import add_json_option, write_json
from groupspec.models.presets import PresetError
from groupspec.models.swarm_space import DEFAULT_SPACE, Budget, read_space, space_names
from groupspec.swarm.draw import draw
from groupspec.swarm.engines import check_locally, check_on_spark
from groupspec.swarm.report import (
    COLUMNS,
    Plan,
    SwarmReport,
    configuration_line,
    header_lines,
    reference_rules,
    report_json,
    report_lines,
)
from groupspec.swarm.run import ConfigResult
from groupspec.verify.engines import spark_session

LOCAL, SPARK = "local", "spark"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `swarm` subcommand."""
    parser = commands.add_parser(
        "swarm",
        help="swarm verification: many small, differently configured exhaustive checks",
        description=(
            "Draw N distinct configurations (a preset and one value per parameter) from a "
            "declared space, reproducibly from --seed; check each exhaustively within the "
            "space's budget; report each configuration's verdict, the rules they reached "
            "together, and every violation with its counterexample and the `groupspec check` "
            "command that reproduces it. Exit 0 when every configuration passed, 1 when a "
            "property failed, 2 on bad input, 3 when none failed but a budget stopped some "
            "configuration (incomplete). See docs/swarm.md."
        ),
    )
    parser.add_argument(
        "space",
        nargs="?",
        default=DEFAULT_SPACE,
        help=(
            f"a space of models/swarms ({', '.join(space_names())}) or a space file "
            f"(default: {DEFAULT_SPACE})"
        ),
    )
    parser.add_argument(
        "--runs", type=int, default=8, metavar="N", help="configurations to draw (default 8)"
    )
    parser.add_argument(
        "--seed", type=int, default=1, metavar="S", help="seed of the drawing (default 1)"
    )
    parser.add_argument(
        "--max-states",
        type=int,
        metavar="N",
        help="each check's state budget (default: the space's)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        metavar="S",
        help="each check's time budget (default: the space's; makes results depend on speed)",
    )
    parser.add_argument(
        "--liveness",
        action="store_true",
        help="also check liveness where the preset declares it (keeps each state graph)",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print the configurations drawn and check none",
    )
    add_json_option(parser, "the report")
    parser.add_argument(
        "--verbose", action="store_true", help="list every rule no configuration reached"
    )
    parser.add_argument(
        "--engine",
        choices=(LOCAL, SPARK),
        default=LOCAL,
        help="local (default: --workers processes) or spark (one configuration per task)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        action=WorkerCount,
        default=1,
        help="local processes checking configurations (default 1)",
    )
    parser.add_argument(
        "--master",
        metavar="URL",
        help=f"Spark master URL for --engine spark (default {DEFAULT_MASTER})",
    )
    parser.set_defaults(run=run_swarm)


def run_swarm(args: argparse.Namespace) -> int:
    """Draw the configurations, check them on the chosen engine, print and write the report."""
    problem = _refused(args)
    if problem:
        return _usage(problem)
    try:
        space = read_space(args.space)
    except PresetError as error:
        return _usage(str(error))
    budget = Budget(
        args.max_states if args.max_states is not None else space.budget.max_states,
        args.max_seconds if args.max_seconds is not None else space.budget.max_seconds,
    )
    drawn = draw(space, args.runs, args.seed, budget=budget, liveness=args.liveness)
    if not drawn.configurations:
        return _usage(f"{space.path}: no combination of the space is possible")
    # What the reference presets reach, to say what the swarm adds (not needed to --list).
    reference = frozenset() if args.list else reference_rules(space)
    plan = Plan(space, args.seed, drawn, budget, args.liveness, _engine_name(args), reference)
    for line in header_lines(plan):
        print(line, flush=True)
    if args.list:
        for configuration in drawn.configurations:
            print(f"{configuration.number:>3}  {configuration.command()}")
        return EXIT_OK
    print(COLUMNS, flush=True)
    started = time.perf_counter()
    finished: list[ConfigResult] = []
    interrupted = False
    try:
        _check(plan, args, finished)
    except SparkError as error:
        return _usage(str(error))
    except KeyboardInterrupt:
        # Ctrl-C: report (and write) the configurations checked so far, marked incomplete.
        interrupted = True
    report = SwarmReport(plan, tuple(finished), time.perf_counter() - started, interrupted)
    for line in report_lines(report, verbose=args.verbose):
        print(line)
    if args.json is not None:
        write_json(args, report_json(report))
    if interrupted:
        return EXIT_INTERRUPTED
    if report.verdict == "fail":
        return EXIT_VIOLATION
    return EXIT_INCOMPLETE if report.verdict == "incomplete" else EXIT_OK


def _refused(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, or None; checked before any work."""
    if args.runs < 1:
        return f"--runs must be at least 1, got {args.runs}"
    if args.max_states is not None and args.max_states < 1:
        return f"--max-states must be at least 1, got {args.max_states}"
    if args.max_seconds is not None and args.max_seconds <= 0:
        return f"--max-seconds must be positive, got {args.max_seconds}"
    if args.engine == SPARK and args.workers != 1:
        return "--workers is an option of --engine local; Spark uses its executors' cores"
    if args.engine == SPARK:
        from groupspec.checker.spark.session import java_problem, pyspark_problem

        return pyspark_problem() or java_problem()
    if args.engine != SPARK and args.master is not None:
        return "--master is an option of --engine spark"
    return None


def _usage(problem: str) -> int:
    print(f"groupspec swarm: {problem}", file=sys.stderr)
    return EXIT_USAGE


def _engine_name(args: argparse.Namespace) -> str:
    if args.engine == SPARK:
        return f"spark {args.master or DEFAULT_MASTER}, one task per configuration"
    return f"local, {args.workers} process" + ("es" if args.workers > 1 else "")


def _check(plan: Plan, args: argparse.Namespace, finished: list[ConfigResult]) -> None:
    """Check every configuration: each result is printed as soon as it is known and appended
    to `finished` (which keeps them when Ctrl-C stops the swarm)."""

    def show(result: ConfigResult) -> None:
        finished.append(result)
        print(configuration_line(result), flush=True)

    configurations = plan.drawn.configurations
    if args.engine != SPARK:
        check_locally(configurations, workers=args.workers, on_result=show)
        return
    print(f"checking {len(configurations)} configurations on Spark ...", file=sys.stderr)
    with spark_session(args.master) as context:
        results = check_on_spark(context, configurations)
    for result in results:
        show(result)
