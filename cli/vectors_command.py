"""`groupspec vectors`: export the conformance vectors, or run an implementation against them."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groupspec.cli.arguments import output_directory
from groupspec.conformance.coordinator_runs import CoordinatorRunsError, explore_coordinator_runs
from groupspec.conformance.kip848_vectors import (
    Kip848VectorError,
    Kip848VectorReport,
    explore_kip848_runs,
    is_kip848_vector_file,
    read_kip848_vectors,
    run_kip848_vectors,
    write_kip848_vectors,
)
from groupspec.conformance.vectors import (
    CoordinatorAdapter,
    SpecAdapter,
    VectorFileError,
    VectorReport,
    read_vectors,
    run_vectors,
    upgrade_vectors,
    write_vectors,
)
from groupspec.models.kip848_world import Kip848World
from groupspec.models.preset_models import (
    GROUP_KIND,
    KIP848_KIND,
    ModelLoadError,
    group_preset_names,
    load_model,
    model_names,
)

from .output import ProgressLine, add_json_option, write_json

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `vectors` subcommand."""
    parser = commands.add_parser(
        "vectors",
        help="export conformance vectors, or run an implementation against them",
        description=(
            "With --out, explore each preset and write one vector file per preset covering "
            "every coordinator transition the model checker explores (format: docs/vectors.md)."
            " With --run, replay vector files on an implementation through an adapter and "
            "report failures and transition coverage. With --upgrade, rewrite vector files in "
            "place as the current format version (replayed on the specification). Exit 0 when "
            "every vector passes with full coverage, 1 otherwise, 2 on bad input."
        ),
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--out", type=output_directory, metavar="DIR", help="write vector files into DIR"
    )
    action.add_argument(
        "--run",
        dest="run_path",
        type=Path,
        metavar="PATH",
        help="a vector file, or a directory of them",
    )
    action.add_argument(
        "--upgrade",
        nargs="+",
        type=Path,
        metavar="FILE",
        help=(
            "rewrite vector files in place as the current version, adding the timers and group "
            "states the specification has after each step (refused unless its replay "
            "reproduces every recorded outcome)"
        ),
    )
    parser.add_argument(
        "presets",
        nargs="*",
        metavar="PRESET",
        help=f"presets to export (default: {' '.join(group_preset_names())})",
    )
    parser.add_argument(
        "--adapter",
        default="spec",
        help=(
            "with --run: 'spec' (the specification itself), 'impl' (groupspec's optimized "
            "coordinator), or MODULE:CALLABLE returning a CoordinatorAdapter"
        ),
    )
    parser.add_argument(
        "--gzip", action="store_true", help="with --out: write PRESET.jsonl.gz (gzip-compressed)"
    )
    add_json_option(parser, "a report (with --run)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.set_defaults(run=run_vectors_command)


def run_vectors_command(args: argparse.Namespace) -> int:
    """Export or run, as asked."""
    if args.out is not None:
        return _export(args)
    if args.presets:
        print("groupspec vectors: presets are only for --out", file=sys.stderr)
        return EXIT_USAGE
    if args.upgrade is not None:
        return _upgrade(args.upgrade)
    return _run(args)


def _upgrade(paths: list[Path]) -> int:
    """Upgrade each file in place; stop at the first that cannot be (the rest untouched)."""
    for path in paths:
        try:
            vectors = upgrade_vectors(path)
        except VectorFileError as error:
            print(f"groupspec vectors: {error}", file=sys.stderr)
            return EXIT_USAGE
        except OSError as error:
            print(f"groupspec vectors: {path}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
        print(
            f"{path}: upgraded to version {vectors.header['version']}, {len(vectors.steps) - 1:,} steps"
        )
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    presets = args.presets or list(group_preset_names())
    known = model_names()
    for preset in presets:
        if preset not in known and not Path(preset).is_file():
            print(f"groupspec vectors: unknown preset {preset!r}", file=sys.stderr)
            return EXIT_USAGE
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"groupspec vectors: {args.out}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    progress = ProgressLine() if not args.quiet else None
    for preset in presets:
        path = args.out / (_file_stem(preset) + (".jsonl.gz" if args.gzip else ".jsonl"))
        try:
            loaded = load_model(preset, {})
            if loaded.kind == KIP848_KIND and isinstance(loaded.model, Kip848World):
                _export_kip848(loaded.preset, loaded.model, path, progress)
                continue
            if loaded.kind != GROUP_KIND:
                raise CoordinatorRunsError(f"{preset}: not a group-world or kip848 preset")
            runs = explore_coordinator_runs(
                loaded, _exploring(progress, preset) if progress else None
            )
        except (ModelLoadError, CoordinatorRunsError) as error:
            if progress:
                progress.close()
            print(f"groupspec vectors: {error}", file=sys.stderr)
            return EXIT_USAGE
        write_vectors(runs, path)
        if progress:
            progress.close()
        print(
            f"{path}: {runs.coordinator_transitions:,} coordinator transitions in "
            f"{len(runs.leaves):,} vectors ({len(runs.nodes) - 1:,} steps) from "
            f"{runs.world_states:,} world states, {runs.elapsed_s:.1f} s"
        )
    return EXIT_OK


def _export_kip848(
    preset: str, world: Kip848World, path: Path, progress: ProgressLine | None
) -> None:
    """Write the KIP-848 vectors of a kip848 preset (conformance/kip848_vectors.py)."""
    runs = explore_kip848_runs(preset, world, _exploring(progress, preset) if progress else None)
    write_kip848_vectors(runs, path)
    if progress:
        progress.close()
    print(
        f"{path}: {len(runs.nodes):,} coordinator transitions in {len(runs.leaves):,} vectors "
        f"from {runs.world_states:,} world states, {runs.elapsed_s:.1f} s"
    )


def _exploring(line: ProgressLine, preset: str) -> Callable[[int, int], None]:
    """Progress of exploring `preset`'s coordinator runs, on `line`."""

    def show(states: int, transitions: int) -> None:
        line.update(f"{preset}: {states:,} states, {transitions:,} transitions")

    return show


def _replaying(line: ProgressLine, name: str) -> Callable[[int], None]:
    """Progress of replaying the vector file `name`, on `line`."""

    def show(vectors: int) -> None:
        line.update(f"{name}: {vectors:,} vectors")

    return show


def _adapter(spec: str) -> CoordinatorAdapter:
    if spec == "spec":
        return SpecAdapter()
    if spec == "impl":
        spec = "groupspec.conformance.impl_adapter:ImplAdapter"
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise ValueError(f"--adapter {spec!r}: expected spec, impl or MODULE:CALLABLE")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"--adapter {spec!r}: {error}") from None
    return factory()


def _run(args: argparse.Namespace) -> int:
    try:
        adapter = _adapter(args.adapter)
        files = (
            sorted([*args.run_path.glob("*.jsonl"), *args.run_path.glob("*.jsonl.gz")])
            if args.run_path.is_dir()
            else [args.run_path]
        )
        if not files:
            raise ValueError(f"{args.run_path}: no .jsonl vector files")
        kip848_files = [read_kip848_vectors(p) for p in files if is_kip848_vector_file(p)]
        vector_files = [read_vectors(p) for p in files if not is_kip848_vector_file(p)]
        if kip848_files and args.adapter not in ("spec", "impl"):
            raise ValueError(f"--adapter {args.adapter!r}: KIP-848 vectors run on spec or impl")
    except (ValueError, VectorFileError, Kip848VectorError) as error:
        print(f"groupspec vectors: {error}", file=sys.stderr)
        return EXIT_USAGE
    kip848_reports: list[Kip848VectorReport] = []
    for kip848 in kip848_files:
        kip848_report = run_kip848_vectors(kip848, args.adapter)
        kip848_reports.append(kip848_report)
        _print_kip848(kip848.path, kip848_report)
    reports: list[VectorReport] = []
    for vectors in vector_files:
        progress = ProgressLine() if not args.quiet else None
        name = vectors.path.name
        report = run_vectors(
            vectors,
            adapter,
            progress=_replaying(progress, name) if progress else None,
        )
        if progress:
            progress.close()
        reports.append(report)
        _print(vectors.path, report)
    if args.json is not None:
        write_json(args, [*map(_kip848_document, kip848_reports), *map(_document, reports)])
    passed = all(r.passed for r in reports) and all(r.passed for r in kip848_reports)
    return EXIT_OK if passed else EXIT_FAILED


def _print_kip848(path: Path, report: Kip848VectorReport) -> None:
    verdict = "pass" if report.passed else "FAIL"
    print(
        f"{path}: {verdict}: {report.vectors:,} vectors, {report.steps:,} steps, "
        f"transitions covered {len(report.covered):,}/{report.transitions:,}, "
        f"{report.diverged:,} left by an allowed choice, {len(report.failures)} failures"
    )
    for failure in report.failures[:3]:
        print(f"  node {failure.node}, step {failure.step}: {json.dumps(failure.actual)}")
        for number, allowed in enumerate(failure.allowed, start=1):
            print(f"    allowed {number}: {json.dumps(allowed)}")


def _kip848_document(report: Kip848VectorReport) -> dict[str, Any]:
    return {
        "preset": report.preset,
        "passed": report.passed,
        "vectors": report.vectors,
        "steps": report.steps,
        "transitions": report.transitions,
        "covered_transitions": len(report.covered),
        "diverged": report.diverged,
        "failures": [
            {"node": f.node, "step": f.step, "actual": f.actual, "allowed": f.allowed}
            for f in report.failures
        ],
    }


def _print(path: Path, report: VectorReport) -> None:
    if report.refused is not None:
        print(f"{path}: NOT RUN: the adapter refused its configuration: {report.refused}")
        return
    verdict = "pass" if report.passed else "FAIL"
    print(
        f"{path}: {verdict}: {report.vectors:,} vectors, {report.steps:,} steps, "
        f"transitions covered {report.covered_transitions:,}/{report.transitions:,}, "
        f"{report.diverged:,} left by an allowed choice, {len(report.failures)} failures"
    )
    if report.state_not_checked is not None:
        print(f"  timers and group states not checked: {report.state_not_checked}")
    for failure in report.failures[:3]:
        print(f"  {failure.detail}")
        print(f"    input: {json.dumps(failure.inputs[-1], sort_keys=True)}")
        print(f"    responses: {json.dumps(failure.actual, sort_keys=True)}")
        for number, expected in enumerate(failure.expected, start=1):
            print(f"    allowed {number}: {json.dumps(expected, sort_keys=True)}")


def _document(report: VectorReport) -> dict[str, Any]:
    return {
        "preset": report.preset,
        "passed": report.passed,
        "vectors": report.vectors,
        "steps": report.steps,
        "transitions": report.transitions,
        "covered_transitions": report.covered_transitions,
        "diverged": report.diverged,
        "timers_and_groups_checked": report.state_not_checked is None,
        "timers_and_groups_not_checked_because": report.state_not_checked,
        "refused": report.refused,
        "failures": [
            {
                "node": f.node,
                "step": f.step,
                "detail": f.detail,
                "inputs": list(f.inputs),
                "actual": f.actual,
                "allowed": list(f.expected),
            }
            for f in report.failures
        ],
    }


def _file_stem(preset: str) -> str:
    """The name a preset's vector file takes: a preset file's stem, or the preset's own name,
    whole (a name such as `kip848-kafka-3.9-1` keeps its dots)."""
    return Path(preset).stem if preset.endswith(".toml") else preset
