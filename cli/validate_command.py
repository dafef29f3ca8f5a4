"""`groupspec validate FILE...`: judge recorded coordinator traffic against the specification."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groupspec.cli.arguments import output_directory, output_file
from groupspec.oracle.trace.divergence_text import error_names
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, PASS, TraceInputError, Verdict, validate_trace

from .check_spark import SPARK, SparkRunError, add_engine_options, spark_session_for
from .output import write_atomically

EXIT_PASS, EXIT_DIVERGED, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `validate` subcommand."""
    parser = commands.add_parser(
        "validate",
        help="check recorded traces (groupspec record, or your own) against the specification",
        description=(
            "Replay each trace against the specification, keeping every specification state "
            "consistent with what was observed (requests race across connections, timers fire "
            "late, implementations choose leaders and spell member ids their own way). Reports "
            "a pass, or the first response the specification does not allow with the responses "
            "it does allow, the group as the specification holds it, and the shortest excerpt "
            "of the trace that still leads there. Exit 0 when every trace passes, 1 on a "
            "divergence, 2 on bad input (the error names the file and line), 3 when a trace is "
            "too ambiguous to decide within --max-hypotheses."
        ),
    )
    parser.add_argument(
        "traces", nargs="+", type=Path, metavar="FILE", help="trace files (JSON Lines)"
    )
    parser.add_argument(
        "--json", type=output_file, metavar="REPORT", help="also write the verdicts as JSON"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a coordinator setting (CoordinatorConfig name, e.g. group_initial_rebalance_delay_ms=0), "
        "over the trace header's",
    )
    parser.add_argument(
        "--timer-slack-ms",
        type=int,
        default=OracleSettings.timer_slack_ms,
        help="how late after its deadline a timer may fire (default %(default)s)",
    )
    parser.add_argument(
        "--reorder-window-ms",
        type=int,
        default=OracleSettings.reorder_window_ms,
        help="how long after it was seen a request may take effect (default %(default)s)",
    )
    parser.add_argument(
        "--max-hypotheses",
        type=int,
        default=OracleSettings.max_hypotheses,
        help="give up (exit 3) beyond this many simultaneous hypotheses (default %(default)s)",
    )
    parser.add_argument(
        "--no-shrink",
        action="store_true",
        help="show the divergent group's whole excerpt, unshrunk",
    )
    add_engine_options(
        parser,
        "inprocess (default), or spark: bulk validation of a corpus (FILE is then one directory of "
        "*.jsonl, a glob, or a Parquet dataset of trace lines), one verdict per trace",
    )
    parser.add_argument(
        "--out",
        type=output_directory,
        metavar="REPORT",
        help="with --engine spark: where the verdicts go (a Parquet dataset; required)",
    )
    parser.set_defaults(run=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    """Validate every trace; print one verdict each; exit with the worst outcome."""
    try:
        overrides = _settings(args.set)
        settings = _oracle_settings(args)
    except ValueError as error:
        print(f"groupspec validate: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.engine == SPARK:
        return _run_spark(args, overrides, settings)
    if args.out is not None or args.master is not None:
        print("groupspec validate: --out and --master need --engine spark", file=sys.stderr)
        return EXIT_BAD_INPUT
    verdicts: list[Verdict] = []
    worst = EXIT_PASS
    for path in args.traces:
        try:
            verdict = validate_trace(path, overrides, settings, shrink=not args.no_shrink)
        except (TraceInputError, OSError) as error:
            print(f"groupspec validate: {_describe(error, path)}", file=sys.stderr)
            worst = _worse(worst, EXIT_BAD_INPUT)
            continue
        verdicts.append(verdict)
        _print(verdict)
        code = {PASS: EXIT_PASS, DIVERGED: EXIT_DIVERGED}.get(verdict.status, EXIT_UNDECIDED)
        worst = _worse(worst, code)
    if args.json is not None:
        document = {"verdicts": [v.to_json() for v in verdicts]}
        write_atomically(args.json, json.dumps(document, indent=2) + "\n")
    return worst


def _run_spark(
    args: argparse.Namespace, overrides: dict[str, Any], settings: OracleSettings
) -> int:
    """Validate a corpus on Spark: verdicts as Parquet, a summary table printed."""
    from groupspec.oracle.trace.spark_validate import CorpusError, spark_validate

    if args.out is None or len(args.traces) != 1:
        print(
            "groupspec validate: --engine spark takes one corpus (a directory, glob or Parquet "
            "dataset) and --out REPORT",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        with spark_session_for(args) as context:
            summary = spark_validate(context, str(args.traces[0]), args.out, overrides, settings)
    except (SparkRunError, CorpusError) as error:
        print(f"groupspec validate: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(
        f"{summary.traces} traces, {summary.events} events, {summary.elapsed_s:.1f} s; verdicts in {summary.out}"
    )
    for status, count in sorted(summary.by_status.items()):
        print(f"  {status:10} {count:>8}")
    for trace, line, api in summary.diverged:
        print(f"  diverged: {trace} line {line} ({api})")
    if args.json is not None:
        write_atomically(args.json, json.dumps(summary.to_json(), indent=2) + "\n")
    worst = EXIT_PASS
    for status, code in (
        ("undecided", EXIT_UNDECIDED),
        ("bad-input", EXIT_BAD_INPUT),
        (DIVERGED, EXIT_DIVERGED),
    ):
        if summary.by_status.get(status):
            worst = _worse(worst, code)
    return worst


def _worse(current: int, code: int) -> int:
    # A divergence is the finding that matters most, then bad input, then undecided.
    order = [EXIT_PASS, EXIT_UNDECIDED, EXIT_BAD_INPUT, EXIT_DIVERGED]
    return max(current, code, key=order.index)


def _describe(error: Exception, path: Path) -> str:
    if isinstance(error, OSError):
        return f"{path}: cannot read: {error.strerror or error}"
    return str(error)


def _settings(options: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for option in options:
        name, equals, value = option.partition("=")
        if not equals or not name:
            raise ValueError(f"--set {option!r}: expected NAME=VALUE")
        try:
            settings[name] = int(value)
        except ValueError:
            raise ValueError(f"--set {option!r}: the value must be an integer") from None
    return settings


def _oracle_settings(args: argparse.Namespace) -> OracleSettings:
    for name in ("timer_slack_ms", "reorder_window_ms"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} cannot be negative")
    if args.max_hypotheses < 1:
        raise ValueError("--max-hypotheses must be at least 1")
    return OracleSettings(args.timer_slack_ms, args.reorder_window_ms, args.max_hypotheses)


def _print(verdict: Verdict) -> None:
    counts = verdict.counts
    summary = (
        f"{counts.events} events, {counts.responses_checked} responses checked, "
        f"{counts.skipped} requests not modelled, at most {counts.max_hypotheses} hypotheses, "
        f"{verdict.elapsed_s:.2f} s"
    )
    cut = f" (cut at line {verdict.cut_at_line}: validated up to it)" if verdict.cut_at_line else ""
    print(f"{verdict.source}: {verdict.status.upper()}{cut} — {summary}")
    if verdict.note:
        print(f"  {verdict.note}")
    divergence = verdict.divergence
    if divergence is None:
        return
    print(
        f"  line {divergence.line}: {divergence.api} v{divergence.version} response to "
        f"{divergence.connection}#{divergence.correlation_id}: {divergence.reason}"
    )
    print(f"  observed: {json.dumps(divergence.observed)}  {_names(divergence.observed)}")
    for allowed in divergence.allowed:
        print(f"  allowed:  {json.dumps(allowed)}  {_names(allowed)}")
    if divergence.state:
        print("  the specification's state before the response:")
        for line in divergence.state.splitlines():
            print(f"    {line}")
    print(f"  shortest excerpt found ({len(verdict.excerpt)} lines):")
    for line in verdict.excerpt:
        print(f"    {line}")


def _names(body: Any) -> str:
    names = error_names(body)
    return f"[{', '.join(names)}]" if names else ""
