"""Output helpers shared by the subcommands: atomic file writes, generated blocks of docs,
progress lines, and the `--json FILE` convention (`-` for stdout)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any, TextIO

from groupspec.checker.atomic_file import write_bytes_atomically
from groupspec.cli.arguments import output_file


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file, so a failure never leaves half a file."""
    write_bytes_atomically(path, text.encode("utf-8"))


def with_generated_block(document: str, begin: str, end: str, body: str) -> str:
    """`document` with the text between the markers `begin` and `end` replaced by `body`;
    ValueError naming the markers when they are missing."""
    start = document.find(begin)
    stop = document.find(end, start)
    if start < 0 or stop < 0:
        raise ValueError(f"markers {begin!r} ... {end!r} not found")
    return f"{document[: start + len(begin)]}\n{body}{document[stop:]}"


# How often a progress line is drawn: in place on a terminal, as a new line in a log (CI).
TERMINAL_INTERVAL_S = 0.5
LOG_INTERVAL_S = 5.0


class ProgressLine:
    """A status line on stderr, redrawn at most every `interval_s` seconds of `clock`.

    On a terminal the line is rewritten in place; otherwise (a CI log, a pipe, a file) each
    update is a new line, every few seconds, so that a log shows the search moving on.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # sys.stderr as it is now, not as it was at import (tests swap it).
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        default = TERMINAL_INTERVAL_S if self.interactive else LOG_INTERVAL_S
        self.interval_s = interval_s if interval_s is not None else default
        self.clock = clock
        self.last: float | None = None
        self.drawn = False

    def update(self, text: str, *, force: bool = False) -> None:
        """Show `text` if it is the first, `interval_s` passed since the last shown, or `force`."""
        now = self.clock()
        if not force and self.last is not None and now - self.last < self.interval_s:
            return
        self.last = now
        if self.interactive:
            self.stream.write("\r\x1b[2K" + text)
            self.drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the in-place line, if one was drawn."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


# `--json -`: the JSON document goes to stdout, and the command's text to stderr.
JSON_TO_STDOUT = Path("-")
JSON_HELP = "FILE - prints it on stdout (and the text on stderr)"


def json_destination(text: str) -> Path:
    """An argparse type for `--json`: `-` (stdout), or a file the command can write (checked
    while parsing, before any work: see `output_file`)."""
    return JSON_TO_STDOUT if text == str(JSON_TO_STDOUT) else output_file(text)


def add_json_option(parser: Any, what: str) -> None:
    """Add `--json FILE` to `parser` (a parser or an argument group): `what` is written to FILE,
    or printed on stdout with `--json -` (the one convention of every command)."""
    parser.add_argument(
        "--json",
        type=json_destination,
        metavar="FILE",
        help=f"write {what} as JSON to FILE; {JSON_HELP}",
    )


@contextmanager
def json_stdout(args: argparse.Namespace) -> Iterator[None]:
    """Run a command with `--json -`: its text goes to stderr while it runs, so that stdout
    holds the JSON document alone (`write_json` prints it on the stdout kept in `args`)."""
    if getattr(args, "json", None) != JSON_TO_STDOUT:
        yield
        return
    args.json_stdout = sys.stdout
    with redirect_stdout(sys.stderr):
        yield


def write_json(args: argparse.Namespace, document: object) -> None:
    """Write `document` where `--json` says: the file, or stdout for `-` (see `json_stdout`)."""
    text = json.dumps(document, indent=2) + "\n"
    if args.json == JSON_TO_STDOUT:
        stream = getattr(args, "json_stdout", sys.stdout)
        stream.write(text)
        stream.flush()
    else:
        write_atomically(args.json, text)
