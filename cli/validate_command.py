"""`groupspec validate FILE...`: judge recorded coordinator traffic against the specification."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

from groupspec.checker.spark.session import SparkError
from groupspec.cli.arguments import (
    add_kafka_version_option,
    kafka_version_line,
    output_directory,
    output_file,
)
from groupspec.coverage.presets import (
    consumer_protocol_line,
    known_consumer_protocol_rules,
    known_coordinator_rules,
)
from groupspec.coverage.reached import Matrix, never_lines, totals_line
from groupspec.oracle.trace.baseline import (
    Baseline,
    BaselineError,
    GroupKey,
    baseline_toml,
    read_baseline,
)
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
    SHRINK_EFFORT,
    DivergenceGroup,
    TraceInputError,
    Verdict,
    validate_trace,
)
from groupspec.spec.config import KAFKA_4X
from groupspec.verify.engines import SPARK, spark_session
from groupspec.wire.trace_format import TraceFormatError
from groupspec.wire.trace_merge import BROKER_SEPARATOR, merge_traces

from .engine_options import add_engine_options
from .output import add_json_option, write_atomically, write_json
from .probe_tables import single_broker_line, single_broker_rules

EXIT_PASS, EXIT_DIVERGED, EXIT_BAD_INPUT, EXIT_UNDECIDED = 0, 1, 2, 3
# The lines of an excerpt the text report shows: the last ones, up to the divergence.
EXCERPT_SHOWN = 30


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
            "the specification allows, the group as it holds it, and an excerpt of the trace "
            "that still leads there, shrunk until minimal or marked not fully shrunk), "
            "resynchronizing with what was observed after each; "
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
        "--baseline",
        type=Path,
        metavar="FILE",
        help="divergences accepted (TOML [[accepted]] entries: api, kind, field, rule, why): "
        "reported as known; exit 1 only on a kind of divergence it does not accept",
    )
    parser.add_argument(
        "--write-baseline",
        type=output_file,
        metavar="FILE",
        help="write a baseline accepting every kind of divergence seen in this run",
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
        "--merge",
        type=output_file,
        metavar="OUT",
        help="the FILEs are one cluster's brokers, each recorded by its own recorder: merge them "
        "by time into OUT (connections named BROKER|client, BROKER each file's name without "
        ".jsonl) and judge OUT, following groups across coordinators",
    )
    parser.add_argument(
        "--mid-stream",
        action="store_true",
        help="the trace may start with groups already present (recorded mid-stream): each group "
        "is judged from when a leader's JoinGroup response shows its whole membership; its "
        "events before that are counted as not judged",
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
        "--coverage",
        action="store_true",
        help="also report which specification rules each trace exercised (the rules its "
        "accepted hypotheses fired), and all traces together (JSON: `coverage`)",
    )
    shrinking = parser.add_mutually_exclusive_group()
    shrinking.add_argument(
        "--shrink",
        action="store_true",
        help="shrink every excerpt until minimal (no request/response pair can be left out), "
        "however long it takes; by default the shrinking of a trace's excerpts takes at most "
        f"{SHRINK_EFFORT:g} times the work judging it took, and an excerpt it did not finish "
        "is marked not fully shrunk",
    )
    shrinking.add_argument(
        "--no-shrink",
        action="store_true",
        help="show each kind's whole excerpt, unshrunk",
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


# What `options` raises on a bad option (its message names the option or file and line).
OPTION_ERRORS = (ValueError, ProfileError, BaselineError)


def options(
    args: argparse.Namespace,
) -> tuple[dict[str, Any], OracleSettings, DeviationProfile, Baseline | None]:
    """The parsed options read and checked: coordinator overrides, oracle settings, the
    deviation profile, the baseline (one of OPTION_ERRORS if one is bad)."""
    baseline = read_baseline(args.baseline) if args.baseline is not None else None
    overrides = _settings(args.set)
    if args.kafka_version is not None:
        overrides["kafka_version"] = args.kafka_version
    return overrides, _oracle_settings(args), _profile(args), baseline


def run_validate(args: argparse.Namespace) -> int:
    """Validate every trace; print one verdict each; exit with the worst outcome."""
    try:
        overrides, settings, profile, baseline = options(args)
    except OPTION_ERRORS as error:
        print(f"groupspec validate: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.engine == SPARK:
        if args.coverage or args.merge is not None or args.mid_stream or baseline is not None:
            print(
                "groupspec validate: --coverage, --merge, --mid-stream and --baseline need"
                " --engine inprocess",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        return _run_spark(args, overrides, settings)
    if args.out is not None or args.master is not None:
        print("groupspec validate: --out and --master need --engine spark", file=sys.stderr)
        return EXIT_BAD_INPUT
    if overrides:
        # The header of every trace names its coordinator's settings; say which were replaced.
        given = " ".join(f"{name}={value}" for name, value in overrides.items())
        print(f"coordinator settings from --set, over each trace header's: {given}")
    if args.merge is not None:
        try:
            _merge(args.traces, args.merge)
        except (TraceFormatError, OSError, ValueError) as error:
            print(f"groupspec validate: --merge: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        args.traces = [args.merge]
    verdicts: list[Verdict] = []
    worst = EXIT_PASS
    for path in args.traces:
        try:
            verdict = validate_trace(
                path,
                overrides,
                settings,
                shrink=not args.no_shrink,
                profile=profile,
                shrink_effort=None if args.shrink else SHRINK_EFFORT,
            )
        except (TraceInputError, OSError) as error:
            print(f"groupspec validate: {_describe(error, path)}", file=sys.stderr)
            worst = _worse(worst, EXIT_BAD_INPUT)
            continue
        verdicts.append(verdict)
        _print(verdict, baseline)
        if args.coverage:
            known = known_coordinator_rules(verdict.kafka_version)
            print(f"  {totals_line(known, verdict.rules)}")
            if verdict.rules & set(known_consumer_protocol_rules()):
                print(f"  {consumer_protocol_line(verdict.rules)}")
        code = {PASS: EXIT_PASS, DIVERGED: EXIT_DIVERGED}.get(verdict.status, EXIT_UNDECIDED)
        if code == EXIT_DIVERGED and baseline is not None and not _new_groups(verdict, baseline):
            code = EXIT_PASS  # every kind of divergence is one the baseline accepts
        worst = _worse(worst, code)
    # Each trace counts the rules of the profile it was judged under (a 3.x trace cannot
    # reach a rule only the 4.x coordinator has); traces of both profiles count both sets.
    profiles = sorted({v.kafka_version for v in verdicts})
    campaign = Matrix(known_coordinator_rules(*profiles), {v.source: v.rules for v in verdicts})
    # KIP-848's rules apart: the consumer-protocol oracle's (spec/kip848/rules.py).
    consumer_rules = frozenset().union(*(v.rules for v in verdicts)) & set(
        known_consumer_protocol_rules()
    )
    if args.coverage:
        _print_coverage(campaign)
        if consumer_rules:
            print(consumer_protocol_line(consumer_rules) + " by the traces together")
            if any(v.kafka_version == KAFKA_4X for v in verdicts):
                print(single_broker_line(consumer_rules))
    if baseline is not None:
        _print_baseline_summary(verdicts, baseline)
    if args.write_baseline is not None:
        write_atomically(args.write_baseline, baseline_toml(_seen_groups(verdicts)))
        print(f"baseline of {len(_seen_groups(verdicts))} kinds written to {args.write_baseline}")
    if args.json is not None:
        document: dict[str, Any] = {"verdicts": [_verdict_json(v, baseline) for v in verdicts]}
        if args.coverage:
            document["coverage"] = campaign.as_json(runs="traces")
            document["consumer_protocol_coverage"] = {
                "known": list(known_consumer_protocol_rules()),
                "exercised": sorted(consumer_rules),
                "single_broker": list(single_broker_rules()),
            }
        if baseline is not None:
            document["baseline"] = _baseline_json(verdicts, baseline)
        write_json(args, document)
    return worst


def _print_coverage(campaign: Matrix) -> None:
    """The rules the traces exercised together, and those none did, by family."""
    count = len(campaign.reached)
    print(totals_line(campaign.known, campaign.union) + f" by the {count} traces together")
    for line in never_lines(campaign.known, campaign.union, verbose=True):
        print(line)


def _merge(traces: list[Path], out: Path) -> None:
    """Merge `traces` (one broker each, named by the file's stem) into `out`."""
    brokers = [path.stem for path in traces]
    if len(set(brokers)) != len(brokers) or any(BROKER_SEPARATOR in b for b in brokers):
        raise ValueError(
            f"the traces' names {brokers} must differ and hold no {BROKER_SEPARATOR!r}: "
            "each names its broker"
        )
    text = io.StringIO()
    count = merge_traces(list(zip(brokers, traces, strict=True)), text)
    write_atomically(out, text.getvalue())
    print(f"merged {len(traces)} traces ({count} events) into {out}")


def _new_groups(verdict: Verdict, baseline: Baseline) -> list[DivergenceGroup]:
    """The divergence groups of `verdict` that `baseline` does not accept."""
    return [g for g in verdict.groups if baseline.accepts(g.first.group_key) is None]


def _seen_groups(verdicts: list[Verdict]) -> dict[GroupKey, str]:
    """Every kind of divergence of `verdicts`, with where it was first seen."""
    seen: dict[GroupKey, str] = {}
    for verdict in verdicts:
        for group in verdict.groups:
            seen.setdefault(group.first.group_key, f"{verdict.source} line {group.first.line}")
    return seen


def _verdict_json(verdict: Verdict, baseline: Baseline | None) -> dict[str, Any]:
    document = verdict.to_json()
    if baseline is not None:
        for group in document["divergence_groups"]:
            key = (group["api"], group["kind"], group["field"], group["rule"])
            group["accepted_by_baseline"] = baseline.accepts(key) is not None
        document["new_divergence_groups"] = len(_new_groups(verdict, baseline))
    return document


def _baseline_json(verdicts: list[Verdict], baseline: Baseline) -> dict[str, Any]:
    return {
        "file": baseline.source,
        "new_divergence_groups": sum(len(_new_groups(v, baseline)) for v in verdicts),
        "unused": [entry.describe() for entry in baseline.unused(_seen_groups(verdicts))],
    }


def _print_baseline_summary(verdicts: list[Verdict], baseline: Baseline) -> None:
    new = sum(len(_new_groups(v, baseline)) for v in verdicts)
    print(f"baseline {baseline.source}: {new} new kinds of divergence")
    for entry in baseline.unused(_seen_groups(verdicts)):
        print(f"  accepted but not seen in these traces (fixed?): {entry.describe()}")


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
        with spark_session(args.master) as context:
            summary = spark_validate(context, str(args.traces[0]), args.out, overrides, settings)
    except (SparkError, CorpusError) as error:
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
        mid_stream=args.mid_stream,
    )


def _print(verdict: Verdict, baseline: Baseline | None = None) -> None:
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
    if verdict.mid_stream:
        print(
            f"  mid-stream: {counts.groups_learned} groups learned (learn.group), "
            f"{counts.pending_members_learned} pending members (learn.pending-member); "
            f"{counts.held} events of groups not learned yet, not judged"
        )
    if counts.coordinator_moves:
        print(
            f"  {counts.coordinator_moves} offsets-partition events followed from the "
            "coordinators' answers (follow.unload, follow.load: docs/oracle.md)"
        )
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
        accepted = baseline.accepts(group.first.group_key) if baseline is not None else None
        known = f" [accepted by the baseline: {accepted.why}]" if accepted is not None else ""
        _print_group(number, group, known)


def _print_group(number: int, group: DivergenceGroup, known: str = "") -> None:
    divergence = group.first
    api, kind, field, rule = divergence.group_key
    where = ", ".join(str(line) for line in group.lines[:10])
    more = f", … ({group.count - 10} more)" if group.count > 10 else ""
    print(
        f"  [{number}] {api} {kind}"
        + (f", field {field}" if field else "")
        + (f", rule {rule}" if rule else "")
        + f": × {group.count} (lines {where}{more}){known}"
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
    print(f"    excerpt ({len(group.excerpt)} lines, {group.shrink.describe()}):")
    shown = group.excerpt
    if len(shown) > EXCERPT_SHOWN:
        hidden = len(shown) - EXCERPT_SHOWN
        print(f"      … {hidden} lines before these (every line is in the --json report)")
        shown = shown[hidden:]
    for line in shown:
        print(f"      {line}")


def _names(body: Any) -> str:
    names = error_names(body)
    return f"[{', '.join(names)}]" if names else ""
