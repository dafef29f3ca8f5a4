"""`groupspec validate FILE...`: judge recorded coordinator traffic against the specification."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groupspec.cli.arguments import add_kafka_version_option, kafka_version_line, output_directory
from groupspec.oracle.trace.divergence_text import error_names
from groupspec.oracle.trace.profiles import (
    TOLERANCES,
    DeviationProfile,
    ProfileError,
    read_profile,
)
from groupspec.oracle.trace.tracker import IGNORE_FOREIGN, JUDGE_FOREIGN, OracleSettings
from groupspec.oracle.trace.validate import (
    DIVERGED,
    PASS,
    DivergenceGroup,
    TraceInputError,
    Verdict,
    validate_trace,
)

from .check_spark import SPARK, SparkRunError, add_engine_options, spark_session_for
from .output import add_json_option, write_json

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
            "a pass, or every divergence grouped by kind (the first of each with the responses "
            "the specification allows, the group as it holds it, and the shortest excerpt of the "
            "trace that still leads there), resynchronizing with what was observed after each; "
            "and the share of events judged. Exit 0 when every trace passes, 1 on a "
            "divergence, 2 on bad input (the error names the file and line), 3 when a trace is "
            "too ambiguous to decide within --max-hypotheses."
        ),
    )
    parser.add_argument(
        "traces", nargs="+", type=Path, metavar="FILE", help="trace files (JSON Lines)"
    )
    add_json_option(parser, "the verdicts")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a coordinator setting (CoordinatorConfig name, e.g. group_initial_rebalance_delay_ms=0), "
        "over the trace header's",
    )
    add_kafka_version_option(parser)
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
        "--tolerate",
        action="append",
        default=[],
        metavar="DEVIATION",
        help="a deviation to tolerate, counted and listed, not a divergence: "
        + "; ".join(f"{name} ({what})" for name, what in TOLERANCES.items())
        + " (docs/oracle.md)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="a deviation profile (TOML: name, tolerate = [...], [coordinator] settings)",
    )
    parser.add_argument(
        "--late-response-ms",
        type=int,
        default=OracleSettings.late_response_ms,
        help="a response seen this long after the specification sent it is late, a request due "
        "an answer this long before the trace ends was never answered (default %(default)s)",
    )
    parser.add_argument(
        "--foreign-groups",
        choices=(IGNORE_FOREIGN, JUDGE_FOREIGN),
        default=IGNORE_FOREIGN,
        help="groups a ListGroups response lists that no request of the trace named so far (a "
        "shared broker's other groups): ignore them, counted (default), or judge them",
    )
    parser.add_argument(
        "--max-divergences",
        type=int,
        default=OracleSettings.max_divergences,
        metavar="N",
        help="stop judging a trace after N divergences; the rest counts as not judged "
        "(default: judge every trace to its end)",
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
        if args.kafka_version is not None:
            overrides["kafka_version"] = args.kafka_version
        settings = _oracle_settings(args)
        profile = _profile(args)
    except (ValueError, ProfileError) as error:
        print(f"groupspec validate: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.engine == SPARK:
        return _run_spark(args, overrides, settings)
    if args.out is not None or args.master is not None:
        print("groupspec validate: --out and --master need --engine spark", file=sys.stderr)
        return EXIT_BAD_INPUT
    if overrides:
        # The header of every trace names its coordinator's settings; say which were replaced.
        given = " ".join(f"{name}={value}" for name, value in overrides.items())
        print(f"coordinator settings from --set, over each trace header's: {given}")
    verdicts: list[Verdict] = []
    worst = EXIT_PASS
    for path in args.traces:
        try:
            verdict = validate_trace(
                path, overrides, settings, shrink=not args.no_shrink, profile=profile
            )
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
        write_json(args, document)
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
        write_json(args, summary.to_json())
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
        if name == "kafka_version":
            raise ValueError(f"--set {option!r}: choose the version with --kafka-version")
        try:
            settings[name] = int(value)
        except ValueError:
            raise ValueError(f"--set {option!r}: the value must be an integer") from None
    return settings


def _profile(args: argparse.Namespace) -> DeviationProfile:
    """The deviation profile of --profile and --tolerate (ProfileError, ValueError naming it)."""
    profile = read_profile(args.profile) if args.profile is not None else DeviationProfile()
    for name in args.tolerate:
        try:
            profile = profile.with_tolerance(name)
        except ValueError as error:
            raise ValueError(f"--tolerate {name}: {error}") from None
    return profile


def _oracle_settings(args: argparse.Namespace) -> OracleSettings:
    for name in ("timer_slack_ms", "reorder_window_ms", "late_response_ms", "max_divergences"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} cannot be negative")
    if args.max_hypotheses < 1:
        raise ValueError("--max-hypotheses must be at least 1")
    return OracleSettings(
        args.timer_slack_ms,
        args.reorder_window_ms,
        args.max_hypotheses,
        args.late_response_ms,
        args.foreign_groups,
        args.max_divergences,
    )


def _print(verdict: Verdict) -> None:
    counts = verdict.counts
    summary = (
        f"{counts.events} events, {verdict.judged_fraction:.1%} judged ({counts.judged}), "
        f"{counts.responses_checked} responses checked, "
        f"{counts.skipped} requests not modelled, at most {counts.max_hypotheses} hypotheses, "
        f"{verdict.elapsed_s:.2f} s"
    )
    cut = f" (cut at line {verdict.cut_at_line}: validated up to it)" if verdict.cut_at_line else ""
    print(f"{verdict.source}: {verdict.status.upper()}{cut} — {summary}")
    print(f"  {kafka_version_line(verdict.kafka_version)}")
    if verdict.note:
        print(f"  {verdict.note}")
    if counts.foreign_groups:
        print(f"  {counts.foreign_groups} groups listed by ListGroups outside the trace, ignored")
    tolerated = verdict.tolerated_by_name()
    if verdict.profile.tolerances:
        name = f" {verdict.profile.name!r}" if verdict.profile.name else ""
        print(
            f"  tolerated by profile{name} ({', '.join(verdict.profile.tolerances)}): "
            f"{len(verdict.tolerated)} deviations"
        )
    for deviation, lines in tolerated.items():
        where = ", ".join(str(line) for line in lines[:10])
        more = f", … ({len(lines) - 10} more)" if len(lines) > 10 else ""
        print(f"    {deviation}: × {len(lines)} (lines {where}{more})")
    if verdict.divergences:
        print(f"  {len(verdict.divergences)} divergences of {len(verdict.groups)} kinds:")
    for number, group in enumerate(verdict.groups, start=1):
        _print_group(number, group)


def _print_group(number: int, group: DivergenceGroup) -> None:
    divergence = group.first
    api, kind, field, rule = divergence.group_key
    where = ", ".join(str(line) for line in group.lines[:10])
    more = f", … ({group.count - 10} more)" if group.count > 10 else ""
    print(
        f"  [{number}] {api} {kind}"
        + (f", field {field}" if field else "")
        + (f", rule {rule}" if rule else "")
        + f": × {group.count} (lines {where}{more})"
    )
    print(
        f"    line {divergence.line}: {divergence.api} v{divergence.version} response to "
        f"{divergence.connection}#{divergence.correlation_id}: {divergence.reason}"
    )
    if divergence.observed is not None:
        print(f"    observed: {json.dumps(divergence.observed)}  {_names(divergence.observed)}")
    for allowed in divergence.allowed:
        print(f"    allowed:  {json.dumps(allowed)}  {_names(allowed)}")
    if divergence.state:
        print("    the specification's state before the response:")
        for line in divergence.state.splitlines():
            print(f"      {line}")
    if divergence.resync:
        print(f"    resynchronized: {divergence.resync}")
    if divergence.tolerable_by:
        options = " ".join(f"--tolerate {name}" for name in divergence.tolerable_by.split(", "))
        print(f"    a deviation profile may tolerate it: {options}")
    print(f"    shortest excerpt found ({len(group.excerpt)} lines):")
    for line in group.excerpt:
        print(f"      {line}")


def _names(body: Any) -> str:
    names = error_names(body)
    return f"[{', '.join(names)}]" if names else ""
