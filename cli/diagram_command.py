"""`groupspec diagram`: regenerate every diagram of docs/diagrams/ (or check they are current)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from groupspec.cli.arguments import WorkerCount, output_directory
from groupspec.cli.output import ProgressLine
from groupspec.diagrams.generate import (
    FORMATS,
    FULL_KIP848_SOURCES,
    FULL_MACHINE_SOURCES,
    KIP848_SOURCES,
    MACHINE_SOURCES,
    Diagram,
    generate,
    graphviz_outputs,
    rendered_version,
    stale_files,
    write,
)
from groupspec.diagrams.render import DotMissingError, dot_version

EXIT_OK, EXIT_STALE, EXIT_USAGE = 0, 1, 2
DEFAULT_OUT = Path("docs") / "diagrams"


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `diagram` subcommand."""
    parser = commands.add_parser(
        "diagram",
        help="draw the state machines, scenarios and a tiny state graph (docs/diagrams/)",
        description=(
            "Explore the reference presets and draw: the group state machine (with the spec's "
            "legal transitions), the consumer's phases (eager and cooperative), sequence "
            "diagrams of canonical scenarios found by searching the model, and every state of "
            "a tiny world. Graphviz diagrams are written as .dot and rendered with `dot`; "
            "sequence diagrams are always SVG. With --check nothing is written: exit 1 if a "
            "file in DIR differs from what the code generates."
        ),
    )
    parser.add_argument(
        "--out",
        type=output_directory,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"directory to write (or --check) the diagrams in (default: {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="svg",
        help="rendering of the Graphviz diagrams (default svg; dot writes sources only)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        action=WorkerCount,
        default=min(2, os.cpu_count() or 1),
        help="processes exploring presets in parallel (default: up to 2)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=(
            "compare DIR with freshly generated diagrams instead of writing; exit 1 if stale "
            "(with --format dot: the .dot sources and sequence diagrams only, no Graphviz needed)"
        ),
    )
    parser.add_argument(
        "--full-presets",
        action="store_true",
        help=(
            "derive the machines from the presets with their own bounds (several minutes) "
            "instead of the tightened bounds of docs/diagrams/"
        ),
    )
    parser.set_defaults(run=run_diagram)


def run_diagram(args: argparse.Namespace) -> int:
    """Generate the diagrams; write them, or compare them with --out."""
    if args.check and args.format == "png":
        print(
            "groupspec diagram: --check compares SVG (or, with --format dot, sources only)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        if args.format != "dot":
            dot_version()
    except DotMissingError as error:
        print(f"groupspec diagram: {error}", file=sys.stderr)
        return EXIT_USAGE
    started = time.perf_counter()
    line = ProgressLine()
    try:
        files = generate(
            args.format,
            workers=args.workers,
            sources=FULL_MACHINE_SOURCES if args.full_presets else MACHINE_SOURCES,
            kip848_sources=FULL_KIP848_SOURCES if args.full_presets else KIP848_SOURCES,
            progress=lambda what: line.update(f"diagram: {what}"),
        )
    finally:
        line.close()
    elapsed = time.perf_counter() - started
    if args.check:
        return _check(args.out, files, elapsed)
    written = write(args.out, files)
    print(f"wrote {len(written)} files to {args.out} in {elapsed:.1f} s")
    return EXIT_OK


def _check(directory: Path, files: list[Diagram], elapsed: float) -> int:
    """Exit 1 when a committed diagram differs from the generated one."""
    skip = _other_graphviz_versions(directory, files)
    stale = stale_files(directory, files, skip=skip)
    for name in skip:
        print(f"{name}: not compared (rendered by another Graphviz version; its .dot is)")
    if stale:
        print(f"stale diagrams in {directory}: {', '.join(stale)}")
        print(f"regenerate them with: groupspec diagram --out {directory}")
        return EXIT_STALE
    print(f"{len(files) - len(skip)} diagrams in {directory} are current ({elapsed:.1f} s)")
    return EXIT_OK


def _other_graphviz_versions(directory: Path, files: list[Diagram]) -> list[str]:
    """Rendered files whose committed copy another Graphviz version made: layouts differ
    between versions, so only their .dot sources can be compared."""
    rendered = graphviz_outputs(files)
    ours = rendered_version(next((f.content for f in files if f.name in rendered), b""))
    skip = []
    for name in rendered:
        path = directory / name
        if path.exists() and rendered_version(path.read_bytes()) not in (None, ours):
            skip.append(name)
    return skip
