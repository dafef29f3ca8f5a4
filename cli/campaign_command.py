"""`groupspec campaign`: simulated-consumer traces of the impl chosen for the rules they exercise."""

from __future__ import annotations

import argparse

from groupspec.cli.arguments import output_directory, positive_count
from groupspec.conformance.impl_campaign import HARD_CASES, CampaignTrace, run_campaign
from groupspec.conformance.impl_traces import SCENARIOS
from groupspec.coverage.presets import known_coordinator_rules
from groupspec.coverage.reached import Matrix

from .output import add_json_option, write_atomically, write_json

EXIT_OK, EXIT_DIVERGED = 0, 1


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `campaign` subcommand."""
    parser = commands.add_parser(
        "campaign",
        help="impl traces (seeds x scenarios) judged by the oracle, kept for the rules they "
        "exercise",
        description=(
            "Write a trace of groupspec.impl serving simulated consumers for every seed and "
            "scenario, judge each with the oracle, and report which specification rules the "
            "traces exercised (a table of rule families x scenarios, the union, the rules none "
            "did) and the fewest traces that exercise them all. Scenarios: "
            + "; ".join(f"{name} ({s.summary})" for name, s in SCENARIOS.items())
            + ". Exit 1 if a trace diverged (the impl departed from the specification)."
        ),
    )
    parser.add_argument(
        "--scenario",
        dest="scenarios",
        action="append",
        choices=sorted(SCENARIOS),
        metavar="NAME",
        help="a scenario (repeatable; default: every one)",
    )
    for option, default, what in (
        ("--seeds", 3, "seeds 0..N-1"),
        ("--minutes", 10, "simulated minutes per trace"),
        ("--consumers", 4, "consumers at the start"),
    ):
        parser.add_argument(
            option, type=positive_count, default=default, help=f"{what} (default {default})"
        )
    parser.add_argument(
        "--out",
        type=output_directory,
        metavar="DIR",
        help="write the traces kept for coverage to DIR (SCENARIO-SEED.jsonl), for "
        "`groupspec validate --coverage`",
    )
    parser.add_argument("--verbose", action="store_true", help="list every rule never reached")
    add_json_option(parser, "the rules per trace and the traces kept")
    parser.set_defaults(run=run_campaign_command)


def run_campaign_command(args: argparse.Namespace) -> int:
    """Run the campaign, print what it exercised, write the traces kept."""
    names = args.scenarios or list(SCENARIOS)
    campaign = run_campaign(
        [SCENARIOS[name] for name in names],
        range(args.seeds),
        duration_ms=args.minutes * 60_000,
        consumers=args.consumers,
        progress=_print_trace,
    )
    matrix = Matrix(known_coordinator_rules(), campaign.by_scenario())
    for line in matrix.text_lines(verbose=args.verbose, runs="scenarios"):
        print(line)
    covered: frozenset[str] = frozenset()
    kept = []
    for trace in campaign.kept:
        kept.append(f"{trace.name} (+{len(trace.rules - covered)})")
        covered |= trace.rules
    print(f"kept for coverage, {len(campaign.kept)} of {len(campaign.traces)} traces:")
    print("  " + ", ".join(kept))
    for rule, what in HARD_CASES.items():
        by = [trace.name for trace in campaign.traces if rule in trace.rules]
        shown = f"{len(by)} traces, first {by[0]}" if by else "NOT REACHED"
        print(f"hard case {rule} ({what}): {shown}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for trace in campaign.kept:
            write_atomically(args.out / f"{trace.name}.jsonl", trace.text)
        print(f"wrote {len(campaign.kept)} traces to {args.out}")
    if args.json is not None:
        document = {
            "coverage": matrix.as_json(runs="scenarios"),
            "traces": [
                {
                    "trace": trace.name,
                    "status": trace.verdict.status,
                    "events": trace.verdict.counts.events,
                    "rules_exercised": sorted(trace.rules),
                }
                for trace in campaign.traces
            ],
            "kept": [trace.name for trace in campaign.kept],
            "hard_cases": {
                rule: [trace.name for trace in campaign.traces if rule in trace.rules]
                for rule in HARD_CASES
            },
        }
        write_json(args, document)
    return EXIT_DIVERGED if campaign.failed() else EXIT_OK


def _print_trace(trace: CampaignTrace) -> None:
    verdict = trace.verdict
    print(
        f"{trace.name}: {verdict.status.upper()} — {verdict.counts.events} events, "
        f"{verdict.judged_fraction:.1%} judged, {len(trace.rules)} rules exercised",
        flush=True,
    )
