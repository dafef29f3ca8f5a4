"""What the subcommands' arguments share: one-line usage errors, and checks of the paths a
command will write, of port numbers and of worker counts, made while parsing, before any work.

A bad value is refused by argparse with one line on stderr naming the option and exit 2
(`CommandParser`), so an output path that cannot be written fails at once, not after a search
of several minutes has run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from groupspec.spec.config import KAFKA_VERSIONS

EXIT_USAGE = 2


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line: the command, the problem, where to
    read more (argparse's default repeats the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        """Print `message` as one line on stderr and exit 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def add_kafka_version_option(parser: argparse.ArgumentParser) -> None:
    """Add `--kafka-version`: which release's coordinator the traces are judged against."""
    parser.add_argument(
        "--kafka-version",
        choices=tuple(KAFKA_VERSIONS),
        metavar="VERSION",
        help="judge against this Kafka release's coordinator where releases differ: "
        + "; ".join(f"{version} ({what})" for version, what in KAFKA_VERSIONS.items())
        + " (default: the trace header's, else 4.x; docs/oracle.md)",
    )


def kafka_version_line(version: str) -> str:
    """The report line naming the Kafka version profile a trace was judged against."""
    return f"judged as Kafka {version}: {KAFKA_VERSIONS[version]}"


def output_file(text: str) -> Path:
    """An argparse type: a file the command will write (created or replaced). Refused: a
    directory, a file in a directory that does not exist, a place we may not write."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a directory, not a file")
    parent = path.parent
    if not parent.exists():
        raise argparse.ArgumentTypeError(f"directory {parent} does not exist")
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{parent} is not a directory")
    writable = os.access(path, os.W_OK) if path.exists() else os.access(parent, os.W_OK | os.X_OK)
    if not writable:
        raise argparse.ArgumentTypeError(f"{path} cannot be written (permission denied)")
    return path


def output_directory(text: str) -> Path:
    """An argparse type: a directory the command writes files into (created if missing).
    Refused: an existing file, a path under a file, a place we may not write."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a file, not a directory")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{existing} is a file, not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{existing} cannot be written (permission denied)")
    return path


def document_to_update(text: str) -> Path:
    """An argparse type: an existing text file the command rewrites in place (--update-doc)."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a directory, not a file")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{path}: no such file")
    if not os.access(path, os.R_OK | os.W_OK):
        raise argparse.ArgumentTypeError(f"{path} cannot be rewritten (permission denied)")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{path} is not UTF-8 text") from None
    return path


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port {number} is not in [0, 65535]")
    return number


def positive_count(text: str) -> int:
    """An argparse type: a whole number, at least 1."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is below 1")
    return number


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class WorkerCount(argparse.Action):
    """`--workers N`: at least 1; above the cores available, capped to them with a warning on
    stderr (more processes than cores only contend for them)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Store the worker count, capped to the cores."""
        assert isinstance(values, int)  # type=int converted it
        option = option_string or self.dest
        if values < 1:
            parser.error(f"{option} must be at least 1, got {values}")
        cores = available_cores()
        if values > cores:
            print(
                f"{parser.prog}: warning: {option} {values} is more than the {cores} cores "
                f"available; using {cores}",
                file=sys.stderr,
            )
            values = cores
        setattr(namespace, self.dest, values)
