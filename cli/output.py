"""Output helpers shared by the subcommands: atomic file writes, generated blocks of docs,
progress lines."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from groupspec.checker.atomic_file import write_bytes_atomically


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


class ProgressLine:
    """A status line on stderr, redrawn at most every `interval_s` seconds.

    On a terminal the line is rewritten in place; otherwise (CI logs) each update is a new line,
    so throttle harder there to keep logs short.
    """

    def __init__(self, stream: TextIO | None = None, interval_s: float | None = None) -> None:
        # sys.stderr as it is now, not as it was at import (tests swap it).
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty()
        self.interval_s = (
            interval_s if interval_s is not None else (0.5 if self.interactive else 10.0)
        )
        self.last = 0.0
        self.drawn = False

    def update(self, text: str, *, force: bool = False) -> None:
        """Show `text` if enough time passed since the last update (or `force`)."""
        now = time.monotonic()
        if not force and now - self.last < self.interval_s:
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
