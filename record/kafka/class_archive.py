"""A class-data sharing archive of Kafka's broker classes, written by the first broker of a
release and mapped by every later one: the JVM then skips parsing and verifying some ten
thousand classes, which saves a broker one to two seconds of start-up (docs/kafka.md).

The first broker runs with `-XX:ArchiveClassesAtExit` (the JVM writes the classes it loaded when
it exits) into a scratch file, renamed into place once that JVM exited cleanly; later brokers,
and the storage tool, run with `-XX:SharedArchiveFile`. An archive serves only the JVM that
wrote it, so its name carries the `java` executable's path and modification time; a JVM that
cannot map it anyway says so in the broker's log and runs without it. With a JVM older than 13,
which knows neither option, `-XX:+IgnoreUnrecognizedVMOptions` lets it start all the same.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

ARCHIVE_SUFFIX = ".jsa"
TOLERANT = "-XX:+IgnoreUnrecognizedVMOptions"
# How a JVM that wrote its archive exits: normally, or on SIGTERM after its shutdown hooks.
CLEAN_EXITS = frozenset({0, 143})


def archive_path(release_folder: Path, java: str) -> Path:
    """Where the archive of the broker classes in `release_folder`, run by `java`, is kept."""
    real = Path(java).resolve()
    try:
        stamp = f"{real}:{real.stat().st_mtime_ns}"
    except OSError:
        stamp = str(real)
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    return release_folder / f"classes-{digest}{ARCHIVE_SUFFIX}"


class ClassArchive:
    """The archive of one release and JVM, and the scratch file a first broker writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._scratch: Path | None = None

    def use_options(self) -> list[str]:
        """JVM options that map the archive if it exists (for the storage tool)."""
        return [TOLERANT, f"-XX:SharedArchiveFile={self.path}"] if self.path.exists() else []

    def broker_options(self) -> list[str]:
        """JVM options for a broker: map the archive, or write it at exit if there is none."""
        if self.path.exists():
            return self.use_options()
        self._scratch = self.path.with_name(f"{self.path.name}.{uuid.uuid4().hex[:8]}.partial")
        return [TOLERANT, f"-XX:ArchiveClassesAtExit={self._scratch}"]

    def keep(self, exit_code: int | None) -> None:
        """The broker JVM exited with `exit_code`: keep what it wrote if it exited cleanly."""
        scratch, self._scratch = self._scratch, None
        if scratch is None:
            return
        try:
            if exit_code in CLEAN_EXITS and scratch.stat().st_size > 0:
                os.replace(scratch, self.path)
        except OSError:
            pass  # nothing written (an old JVM), or the folder is not ours: run without one
        finally:
            scratch.unlink(missing_ok=True)
