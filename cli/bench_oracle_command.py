"""`groupspec bench oracle`: trace events validated per second, on long traces of the impl, by
the optimized oracle and, in the same run, by its plain path (the baseline of the ratio); and
the time a divergent trace takes to judge against a conforming one of the same length."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from groupspec.bench.divergent_traces import write_divergent_trace
from groupspec.bench.oracle_bounds import measure_bounds
from groupspec.cli.arguments import output_directory
from groupspec.cli.output import add_json_option, write_json
from groupspec.conformance.impl_traces import write_impl_trace
from groupspec.oracle.trace.shrink import MINIMAL, NOT_FULLY_SHRUNK, NOT_SHRUNK
from groupspec.oracle.trace.tracker import OracleSettings
from groupspec.oracle.trace.validate import DIVERGED, SHRINK_EFFORT, Verdict, validate_trace

DAY_MS = 86_400_000


def register_bench_oracle(benches: argparse._SubParsersAction) -> None:
    """Add `bench oracle`."""
    parser = benches.add_parser(
        "oracle",
        help="trace events validated per second",
        description=(
            "Write long traces of groupspec.impl serving simulated consumers (a steady group, "
            "and one with churn: members leaving, crashing, arriving, restarting, stalling), then "
            "validate each against the specification and report events/s and the most "
            "hypotheses held at once. Each trace is validated by the optimized oracle and by its "
            "plain path (the baseline), alternately, --repeat times each; the best CPU time of "
            "each gives the figures and their ratio. The two must agree on every verdict. Then "
            "each trace is edited into a divergent one of the same length (--divergence-rate of "
            "its responses answered otherwise), and both are judged as `validate` judges them, "
            "excerpts shrunk, alternately: the divergent one's CPU time over the conforming "
            "one's is the ratio (the target is at most 2)."
        ),
    )
    parser.add_argument(
        "--events", type=int, default=100_000, help="events per trace (default 100000)"
    )
    parser.add_argument(
        "--consumers", type=int, default=5, help="consumers in the group (default 5)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="validations of each trace per path (default 1)"
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the plain path: no baseline and no ratio (faster on long churn traces)",
    )
    parser.add_argument(
        "--bounds",
        action="store_true",
        help=(
            "also judge each trace from events parsed beforehand, with the specification's steps "
            "real and replayed from a recording at no cost: the ceilings of a faster parser and "
            "of any cache of specification steps"
        ),
    )
    parser.add_argument(
        "--divergence-rate",
        type=float,
        default=0.02,
        metavar="SHARE",
        help="the share of responses edited in the divergent traces; 0 skips them (default "
        "%(default)s)",
    )
    parser.add_argument(
        "--shrink-effort",
        type=float,
        default=SHRINK_EFFORT,
        metavar="SHARE",
        help="the work shrinking may take, as a share of judging's (validate's default "
        "%(default)s); a negative value: no limit, as validate --shrink",
    )
    parser.add_argument(
        "--keep", type=output_directory, metavar="DIR", help="keep the traces in DIR"
    )
    add_json_option(parser, "the figures")
    parser.set_defaults(run=run_bench_oracle)


def run_bench_oracle(args: argparse.Namespace) -> int:
    """Generate and validate the traces; exit 1 if one does not pass, or if the two paths
    disagree (the bench found a bug)."""
    if args.events < 1 or args.consumers < 1 or args.repeat < 1:
        print(
            "groupspec bench oracle: need --events ≥ 1, --consumers ≥ 1 and --repeat ≥ 1",
            file=sys.stderr,
        )
        return 2
    if not 0 <= args.divergence_rate <= 1:
        print("groupspec bench oracle: --divergence-rate must be within 0 and 1", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        for name, churn in (("steady", False), ("churn", True)):
            path = directory / f"{name}.jsonl"
            row = _bench_one(path, name, churn, args)
            row["divergent"] = None
            if args.divergence_rate > 0:
                row["divergent"] = _bench_divergent(
                    path, directory / f"{name}-divergent.jsonl", args
                )
            rows.append(row)
    for row in rows:
        print(_row_text(row))
    if args.json is not None:
        write_json(args, {"bench": "oracle", "traces": rows})
    divergent = [row["divergent"] for row in rows if row["divergent"] is not None]
    diverged = all(d["status"] == DIVERGED for d in divergent)
    return 0 if diverged and all(row["status"] == "pass" and row["agree"] for row in rows) else 1


def _bench_divergent(conforming: Path, divergent: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Judge the conforming trace and a divergent copy of it alternately, as validate does:
    the best CPU time of each, their ratio, and what became of the excerpts."""
    edits = write_divergent_trace(conforming, divergent, args.seed, args.divergence_rate)
    effort = None if args.shrink_effort < 0 else args.shrink_effort
    best: dict[Path, tuple[Verdict, float]] = {}
    for _ in range(args.repeat):
        for path in (conforming, divergent):  # alternately, so both see the same load
            cpu = time.process_time()
            verdict = validate_trace(path, shrink_effort=effort)
            cpu = time.process_time() - cpu
            if path not in best or cpu < best[path][1]:
                best[path] = (verdict, cpu)
    base, base_cpu = best[conforming]
    verdict, cpu = best[divergent]
    statuses = [group.shrink.status for group in verdict.groups]
    return {
        "events": verdict.counts.events,
        "divergence_rate": args.divergence_rate,
        "shrink_effort": effort,
        "edits": dict(sorted(edits.items())),
        "status": verdict.status,
        "divergences": len(verdict.divergences),
        "kinds": len(verdict.groups),
        "conforming_cpu_s": round(base_cpu, 3),
        "conforming_status": base.status,
        "divergent_cpu_s": round(cpu, 3),
        "ratio": round(cpu / base_cpu, 3),
        "excerpts": {
            status: statuses.count(status) for status in (MINIMAL, NOT_FULLY_SHRUNK, NOT_SHRUNK)
        },
        "excerpt_lines": sum(len(group.excerpt) for group in verdict.groups),
    }


def _bounds(
    path: Path, settings: OracleSettings, args: argparse.Namespace, cpu: float
) -> dict[str, Any]:
    """The ceilings of `--bounds`, each with its ratio to the optimized path's CPU time."""
    bounds = measure_bounds(path, settings, args.repeat)
    return {
        "steps": bounds.steps,
        "parsed_events_per_cpu_s": round(bounds.events / bounds.parsed_cpu_s),
        "parsed_ratio": round(cpu / bounds.parsed_cpu_s, 3),
        "free_step_events_per_cpu_s": round(bounds.events / bounds.free_step_cpu_s),
        "free_step_ratio": round(cpu / bounds.free_step_cpu_s, 3),
    }


def _row_text(row: dict[str, Any]) -> str:
    line = (
        f"{row['trace']:7} {row['events']:>9} events in {row['validate_s']:.1f} s: "
        f"{row['events_per_s']:>8,.0f} events/s validated ({row['events_per_cpu_s']:,.0f} per "
        f"CPU second), at most {row['max_hypotheses']} hypotheses; {row['status']} "
        f"(written at {row['write_events_per_s']:,.0f} events/s)"
    )
    bounds = row["bounds"]
    if bounds is not None:
        line += (
            f"\n{'':7} ceilings: events parsed beforehand {bounds['parsed_events_per_cpu_s']:,.0f} "
            f"per CPU second (×{bounds['parsed_ratio']:.2f}); and with the "
            f"{bounds['steps']:,} specification steps at no cost (any step cache's best) "
            f"{bounds['free_step_events_per_cpu_s']:,.0f} (×{bounds['free_step_ratio']:.2f})"
        )
    baseline = row["baseline"]
    if baseline is not None:
        agree = "the same verdict" if row["agree"] else "A DIFFERENT VERDICT"
        line += (
            f"\n{'':7} baseline (plain path) {baseline['events_per_cpu_s']:,.0f} events per "
            f"CPU second ({baseline['events_per_s']:,.0f}/s wall): optimized ×{row['ratio']:.2f} "
            f"CPU, ×{row['wall_ratio']:.2f} wall; {agree}"
        )
    divergent = row["divergent"]
    if divergent is not None:
        excerpts = divergent["excerpts"]
        line += (
            f"\n{'':7} divergent copy ({sum(divergent['edits'].values())} responses edited): "
            f"{divergent['status']}, {divergent['divergences']} divergences of "
            f"{divergent['kinds']} kinds, judged in {divergent['divergent_cpu_s']:.2f} CPU s "
            f"against {divergent['conforming_cpu_s']:.2f} for the conforming trace: "
            f"×{divergent['ratio']:.2f}; excerpts {excerpts[MINIMAL]} minimal, "
            f"{excerpts[NOT_FULLY_SHRUNK]} not fully shrunk, {excerpts[NOT_SHRUNK]} not shrunk "
            f"({divergent['excerpt_lines']:,} lines)"
        )
    return line


def _bench_one(path: Path, name: str, churn: bool, args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    with path.open("w") as out:
        stats = write_impl_trace(
            out,
            seed=args.seed,
            duration_ms=365 * DAY_MS,
            consumers=args.consumers,
            churn=churn,
            max_events=args.events,
        )
    written = time.perf_counter() - started
    optimized = OracleSettings()
    paths = {"optimized": optimized}
    if not args.no_baseline:
        paths["baseline"] = replace(optimized, optimized=False)
    best: dict[str, tuple[Verdict, float, float]] = {}
    for _ in range(args.repeat):
        for which, settings in paths.items():  # alternately, so both see the same load
            verdict, wall, cpu = _timed(path, settings)
            if which not in best or cpu < best[which][2]:
                best[which] = (verdict, wall, cpu)
    verdict, wall, cpu = best["optimized"]
    row: dict[str, Any] = {
        "trace": name,
        "events": verdict.counts.events,
        "validate_s": round(wall, 3),
        "validate_cpu_s": round(cpu, 3),
        "events_per_s": round(verdict.counts.events / wall),
        "events_per_cpu_s": round(verdict.counts.events / cpu),
        "max_hypotheses": verdict.counts.max_hypotheses,
        "status": verdict.status,
        "write_events_per_s": round(stats.events / written),
        "baseline": None,
        "ratio": None,
        "wall_ratio": None,
        "agree": True,
    }
    row["bounds"] = _bounds(path, optimized, args, cpu) if args.bounds else None
    if "baseline" in best:
        plain, plain_wall, plain_cpu = best["baseline"]
        row["baseline"] = {
            "validate_s": round(plain_wall, 3),
            "validate_cpu_s": round(plain_cpu, 3),
            "events_per_s": round(plain.counts.events / plain_wall),
            "events_per_cpu_s": round(plain.counts.events / plain_cpu),
            "status": plain.status,
        }
        row["ratio"] = round(plain_cpu / cpu, 3)
        row["wall_ratio"] = round(plain_wall / wall, 3)
        row["agree"] = _judgement(plain) == _judgement(verdict)
    return row


def _timed(path: Path, settings: OracleSettings) -> tuple[Verdict, float, float]:
    """The verdict on the trace at `path`, and the wall and CPU seconds it took."""
    wall, cpu = time.perf_counter(), time.process_time()
    verdict = validate_trace(path, settings=settings, shrink=False)
    return verdict, time.perf_counter() - wall, time.process_time() - cpu


def _judgement(verdict: Verdict) -> dict[str, Any]:
    """Everything the verdict says but how long it took."""
    document = verdict.to_json()
    del document["elapsed_s"]
    return document
