"""`groupspec mutation`: the checker's mutation score over spec/ (docs/mutation.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from groupspec.cli.arguments import WorkerCount
from groupspec.cli.output import add_json_option, write_json
from groupspec.models.preset_models import group_preset_names
from groupspec.mutation.baseline import BaselineError
from groupspec.mutation.campaign import (
    Budget,
    MutantResult,
    MutationRunError,
    run_campaign,
    run_fault_campaign,
)
from groupspec.mutation.faults import FAULTS
from groupspec.mutation.mutant_rules import RuleLocator
from groupspec.mutation.mutants import UnknownMutantError
from groupspec.mutation.report import (
    campaign_json,
    fault_campaign_json,
    format_fault_list,
    format_fault_report,
    format_report,
)

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `mutation` subcommand."""
    parser = commands.add_parser(
        "mutation",
        help="the checker's mutation score: cosmic-ray mutants of spec/ judged by the presets",
        description=(
            "Generate every cosmic-ray mutant of spec/, draw a seeded sample, and judge each "
            "mutant, in a copy of spec/ of its own, by the exhaustive checks (safety and "
            "liveness) of the reference presets that run its code, cheapest first. Report "
            "the mutants killed by a property, by a crash and by a timeout, the survivors, the "
            "kill rate, per-module figures, and each survivor with its mutation and its rules. "
            "Exit 1 if the unmutated spec fails a preset or the machinery breaks."
        ),
    )
    parser.add_argument(
        "--sample", type=int, default=200, metavar="N", help="mutants to draw (default 200)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--workers",
        type=int,
        action=WorkerCount,
        default=1,
        metavar="W",
        help="mutants checked at once (default 1)",
    )
    parser.add_argument(
        "--preset",
        dest="presets",
        action="append",
        metavar="PRESET",
        help="a killer preset (repeatable; default: every reference preset)",
    )
    parser.add_argument(
        "--timeout-factor",
        type=float,
        default=Budget().factor,
        metavar="F",
        help=(
            f"a mutant may spend F times a preset's unmutated seconds (plus {Budget().slack_s:g} s) "
            f"and states before it counts as killed by timeout (default {Budget().factor:g})"
        ),
    )
    parser.add_argument(
        "--faults",
        action="store_true",
        help="judge the hand-written faults of mutation/faults.py instead of cosmic-ray mutants",
    )
    parser.add_argument(
        "--fault",
        dest="fault_names",
        action="append",
        metavar="NAME",
        help="with --faults, only this fault (repeatable)",
    )
    parser.add_argument(
        "--list-faults", action="store_true", help="print the hand-written faults and exit"
    )
    parser.add_argument(
        "--mutant",
        dest="mutant_ids",
        action="append",
        metavar="ID",
        help=(
            "judge this mutant (module:operator:occurrence, as the JSON's `id` names it) instead "
            "of a drawn sample (repeatable): to judge a campaign's survivors again"
        ),
    )
    parser.add_argument(
        "--no-probe",
        action="store_true",
        help=(
            "do not probe the survivors for infection (whether the mutated expression ever "
            "computes another value in the presets' runs; each probe costs about one more run)"
        ),
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_mutation)


def run_mutation(args: argparse.Namespace) -> int:
    """Run the campaign; print the figures and survivors, optionally write JSON."""
    problem = _validate(args)
    if problem:
        print(f"groupspec mutation: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.list_faults:
        print(format_fault_list(FAULTS))
        return EXIT_OK
    if args.faults:
        return _run_faults(args)
    try:
        campaign = run_campaign(
            args.presets or group_preset_names(),
            sample=args.sample,
            seed=args.seed,
            workers=args.workers,
            budget=Budget(factor=args.timeout_factor),
            progress=_progress,
            probe_survivors=not args.no_probe,
            chosen=args.mutant_ids or (),
        )
    except UnknownMutantError as error:
        print(f"groupspec mutation: --mutant: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (BaselineError, MutationRunError) as error:
        print(f"groupspec mutation: {error}", file=sys.stderr)
        return EXIT_BROKEN
    locator = RuleLocator()
    print(format_report(campaign, locator))
    if args.json is not None:
        write_json(args, campaign_json(campaign, locator))
    return EXIT_OK


def _run_faults(args: argparse.Namespace) -> int:
    wanted = set(args.fault_names or ())
    faults = [fault for fault in FAULTS if not wanted or fault.name in wanted]
    try:
        campaign = run_fault_campaign(
            args.presets or group_preset_names(),
            faults,
            workers=args.workers,
            budget=Budget(factor=args.timeout_factor),
            progress=_fault_progress,
        )
    except (BaselineError, MutationRunError) as error:
        print(f"groupspec mutation: {error}", file=sys.stderr)
        return EXIT_BROKEN
    print(format_fault_report(campaign))
    if args.json is not None:
        write_json(args, fault_campaign_json(campaign))
    return EXIT_OK


def _fault_progress(done: int, total: int, result: MutantResult[Any]) -> None:
    by = f" by {result.killer}" if result.killer else ""
    print(
        f"[{done}/{total}] {result.mutant.ident}: {result.kind}{by} ({result.seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def _progress(done: int, total: int, result: MutantResult[Any]) -> None:
    mutant = result.mutant
    by = f" by {result.killer}" if result.killer else ""
    print(
        f"[{done}/{total}] {mutant.module}:{mutant.start_line} {mutant.operator}: "
        f"{result.kind}{by}{_infection_note(result)} ({result.seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def _infection_note(result: MutantResult[Any]) -> str:
    return f", {result.infection.verdict}" if result.infection is not None else ""


def _validate(args: argparse.Namespace) -> str | None:
    if args.sample < 1:
        return "--sample must be at least 1"
    if args.timeout_factor < 1:
        return "--timeout-factor must be at least 1"
    unknown_faults = sorted(set(args.fault_names or ()) - {fault.name for fault in FAULTS})
    if unknown_faults:
        return f"--fault: no hand-written fault named {', '.join(unknown_faults)}"
    if args.fault_names and not args.faults:
        return "--fault needs --faults"
    unknown = sorted(set(args.presets or ()) - set(group_preset_names()))
    if unknown:
        return f"--preset: not a reference preset: {', '.join(unknown)}"
    return None
