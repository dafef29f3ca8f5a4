"""`groupspec check PRESET`: exhaustive model checking of a preset world."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from groupspec.checker.bfs import Limits, Progress, ProgressCallback, SearchResult
from groupspec.checker.check import CheckResult
from groupspec.checker.check_report import (
    counterexamples,
    format_counterexample,
    format_liveness,
    group_lines,
    summary_lines,
)
from groupspec.checker.interrupt import LIVENESS
from groupspec.checker.liveness import LivenessResult
from groupspec.checker.spark.session import SparkError
from groupspec.cli.arguments import WorkerCount, output_directory, output_file
from groupspec.cli.engine_options import add_engine_options, engine_choice, spark_options_problem
from groupspec.cli.exit_codes import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION
from groupspec.cli.model_header import header_lines
from groupspec.cli.output import ProgressLine, add_json_option, write_atomically, write_json
from groupspec.cli.presets_command import parameter_ranges
from groupspec.cli.run_titles import check_command_line, run_title
from groupspec.coverage.reached import never_lines, totals_line
from groupspec.diagrams.sequence_diagram import render_svg
from groupspec.diagrams.sequence_events import counterexample_diagram, first_violation
from groupspec.diagrams.trace_explorer import explorer_page
from groupspec.models.factory_models import load_factory_model
from groupspec.models.fault_names import ALL_FAULTS, unknown_fault_message
from groupspec.models.preset_models import LoadedModel, ModelLoadError, load_model, model_names
from groupspec.verify.engines import IN_PROCESS, SPARK
from groupspec.verify.preset_check import check_document, check_preset

# The main job (`make run`): the reference classic preset with its embedded settings.
DEFAULT_PRESET = "eager-2"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `check` subcommand."""
    parser = commands.add_parser(
        "check",
        help="exhaustively check a preset model (BFS over every reachable state)",
        description=(
            "Explore every reachable state of a preset model breadth-first, checking every "
            "invariant on every state and every action property on every step. Exit 0 when all "
            "properties hold, 1 when one fails (with a shortest counterexample), 2 on bad input."
        ),
        epilog=parameter_ranges(),
    )
    parser.add_argument(
        "preset",
        nargs="?",
        help=f"a preset name ({', '.join(model_names())}) or a file (default: {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--model",
        metavar="MODULE:FACTORY",
        help="check your own model instead of a preset: the factory FACTORY of the Python module "
        "MODULE (package.module, found on PYTHONPATH); docs/extending.md, Your own model",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a preset parameter, or set a --model factory's (repeatable)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        action=WorkerCount,
        default=1,
        # No core count in the help: docs/cli.md is generated from it on any machine.
        help="worker processes (default 1; more than the machine's cores does not help)",
    )
    parser.add_argument("--max-states", type=int, help="stop after this many distinct states")
    parser.add_argument("--max-seconds", type=float, help="stop after this many seconds")
    parser.add_argument(
        "--all",
        action="store_true",
        help="collect every violation instead of stopping at the first",
    )
    add_json_option(parser, "the result")
    parser.add_argument(
        "--diagram",
        type=output_file,
        metavar="FILE",
        help="write the shortest counterexample as an SVG sequence diagram (if one is found)",
    )
    parser.add_argument(
        "--explore",
        type=output_file,
        metavar="FILE",
        help="write the shortest counterexample as an HTML page to click through, state by "
        "state (see `groupspec explore`)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="print every state of a counterexample whole (by default: what each step changed)",
    )
    parser.add_argument(
        "--no-liveness",
        action="store_true",
        help="check safety only (liveness needs the state graph in memory)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="list every rule never reached (by default: a count per family)",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="also print each transition group's hit rate (steps from memory vs model calls)",
    )
    parser.add_argument(
        "--fault",
        metavar="NAME",
        help=f"re-introduce a historical bug ({', '.join(sorted(ALL_FAULTS))}); see docs/bugs.md",
    )
    spark = parser.add_argument_group("Spark engine (see docs/spark.md)")
    add_engine_options(
        spark, f"{IN_PROCESS} (default: this process and --workers) or spark (needs Java)"
    )
    spark.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="partitions of each level and of the visited set (default: twice Spark's cores)",
    )
    spark.add_argument(
        "--checkpoint",
        type=output_directory,
        metavar="DIR",
        help="write every complete level to DIR (must be empty unless --resume)",
    )
    spark.add_argument(
        "--resume",
        action="store_true",
        help="continue the run checkpointed in --checkpoint DIR from its last complete level",
    )
    parser.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Check the preset; print the summary and any counterexamples."""
    problem = _validate(args)
    if problem:
        print(f"groupspec check: {problem}", file=sys.stderr)
        return EXIT_USAGE
    fault = getattr(args, "fault", None)
    if fault is not None and fault not in ALL_FAULTS:
        print(f"groupspec check: --fault: {unknown_fault_message(fault)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        overrides = _overrides(args.overrides)
        if fault is not None:
            overrides["fault"] = fault
        if args.model is not None:
            loaded = load_factory_model(args.model, overrides)
        else:
            loaded = load_model(args.preset or DEFAULT_PRESET, overrides)
    except ModelLoadError as error:
        print(f"groupspec check: {error}", file=sys.stderr)
        return EXIT_USAGE
    if not loaded.exhaustive:
        print(
            f"groupspec check: {loaded.preset} is a {loaded.kind} world, unbounded: it cannot be "
            f"explored exhaustively; walk it with `groupspec simulate {loaded.preset}`",
            file=sys.stderr,
        )
        return EXIT_USAGE
    limits = Limits(args.max_states, args.max_seconds, all_violations=args.all)
    for header_line in header_lines(loaded):
        print(header_line, flush=True)
    line = ProgressLine()
    try:
        done = check_preset(
            loaded,
            choice=engine_choice(args),
            limits=limits,
            liveness=not args.no_liveness,
            progress=None if args.quiet else _progress_printer(loaded, line),
        )
    except SparkError as error:
        print(f"groupspec check: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        line.close()
    checked = done.checked
    if done.interrupted_in == LIVENESS:
        searched = "complete" if checked.search.complete else "cut short by a limit"
        print(f"interrupted during the liveness check (the search was {searched})")
    _report(loaded, checked, args)
    if checked.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_VIOLATION if checked.verdict == "fail" else EXIT_OK


def _report(loaded: LoadedModel, checked: CheckResult[Any], args: argparse.Namespace) -> None:
    """Print the summary, and write --json and --diagram (for a partial check too)."""
    result, liveness = checked.search, checked.liveness
    _print(loaded, checked, verbose=args.verbose, full=args.full)
    if args.stats:
        for group_line in group_lines(checked.search):
            print(group_line)
    if args.json is not None:
        document = check_document(loaded, checked)
        write_json(args, document)
    if args.diagram is not None:
        _write_diagram(args.diagram, loaded, result, liveness)
    if args.explore is not None:
        _write_explorer(args.explore, loaded, result, liveness)


def _validate(args: argparse.Namespace) -> str | None:
    if args.model is not None and args.preset is not None:
        return f"give a preset ({args.preset}) or --model, not both"
    if args.model is not None and args.fault is not None:
        return "--fault switches a bug of a group world, not of a --model factory's model"
    if args.max_states is not None and args.max_states < 1:
        return f"--max-states must be at least 1, got {args.max_states}"
    if args.max_seconds is not None and args.max_seconds <= 0:
        return f"--max-seconds must be positive, got {args.max_seconds}"
    if args.engine == SPARK:
        return spark_options_problem(args)
    for option, given in (
        ("--master", args.master is not None),
        ("--partitions", args.partitions is not None),
        ("--checkpoint", args.checkpoint is not None),
        ("--resume", args.resume),
    ):
        if given:
            return f"{option} is an option of --engine spark"
    return None


def _write_diagram(
    path: Path,
    loaded: LoadedModel,
    result: SearchResult[Any],
    liveness: tuple[LivenessResult, ...],
) -> None:
    """Write the shortest counterexample as an SVG sequence diagram, or say there is none."""
    title = run_title(loaded.preset, loaded.overrides)
    diagram = counterexample_diagram(loaded.model, result, liveness, title=title)
    if diagram is None:
        print(f"no counterexample: {path} not written", file=sys.stderr)
        return
    write_atomically(path, render_svg(diagram))
    print(f"counterexample diagram: {path}")


def _write_explorer(
    path: Path,
    loaded: LoadedModel,
    result: SearchResult[Any],
    liveness: tuple[LivenessResult, ...],
) -> None:
    """Write the shortest counterexample as the explorer's HTML page, or say there is none."""
    shown = first_violation(loaded.model, result, liveness)
    if shown is None:
        print(f"no counterexample: {path} not written", file=sys.stderr)
        return
    title = run_title(loaded.preset, loaded.overrides)
    # A model of the user's is named by --model, a preset by its name.
    named = f"--model {loaded.preset}" if loaded.declared is not None else loaded.preset
    source = "found by: " + check_command_line(named, loaded.overrides)
    write_atomically(path, explorer_page(shown, title=title, source=source))
    print(f"trace explorer: {path}")


def _overrides(options: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for option in options:
        key, separator, value = option.partition("=")
        if not separator or not key.strip():
            raise ModelLoadError(f"--set {option!r}: expected NAME=VALUE")
        overrides[key.strip()] = value
    return overrides


def _progress_printer(loaded: LoadedModel, line: ProgressLine) -> ProgressCallback:
    def show(progress: Progress) -> None:
        rate = progress.distinct_states / progress.elapsed_s if progress.elapsed_s else 0.0
        line.update(
            f"{loaded.preset}: {progress.distinct_states:,} states  "
            f"{progress.transitions:,} transitions  queue {progress.queue:,}  "
            f"depth {progress.depth}  {rate:,.0f} states/s  {progress.elapsed_s:,.0f} s"
        )

    return show


def _print(loaded: LoadedModel, checked: CheckResult[Any], *, verbose: bool, full: bool) -> None:
    result = checked.search
    for example in counterexamples(loaded.model, result):
        print(format_counterexample(loaded.model, example, full=full))
    for item in checked.liveness:
        print(format_liveness(loaded.model, item, full=full))
    for line in summary_lines(result, checked.verdict):
        print(line)
    if loaded.known_rules:
        print(totals_line(loaded.known_rules, result.rule_counts))
        if result.complete:
            for line in never_lines(loaded.known_rules, result.rule_counts, verbose=verbose):
                print(line)
